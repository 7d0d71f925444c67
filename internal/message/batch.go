package message

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
)

// BatchItem is one message of a batch send body (spec §5.5). Body and
// Properties alias the body they were decoded from.
type BatchItem struct {
	Flag       int32
	Body       []byte
	Properties []byte // the item's own property string
}

// batchItemFixed is the size of a batch item without body and properties:
// TOTALSIZE, MAGICCODE, BODYCRC, FLAG, BODYLENGTH (4 each), PROPERTIESLENGTH (2).
const batchItemFixed = 22

// NextBatchItem decodes the item at the start of b and returns it with its
// size. MAGICCODE and BODYCRC are ignored (the broker computes the CRC);
// TOTALSIZE must equal the size of the fields, as every client writes it.
// Errors wrap ErrCorrupt; it never reads past b and never panics.
func NextBatchItem(b []byte) (BatchItem, int, error) {
	var it BatchItem
	if len(b) < batchItemFixed {
		return it, 0, fmt.Errorf("%w: batch item of %d bytes, need at least %d", ErrCorrupt, len(b), batchItemFixed)
	}
	be := binary.BigEndian
	size := int64(int32(be.Uint32(b)))
	if size < batchItemFixed || size > int64(len(b)) {
		return it, 0, fmt.Errorf("%w: batch item size %d with %d bytes left", ErrCorrupt, size, len(b))
	}
	item := b[:size]
	it.Flag = int32(be.Uint32(item[12:]))
	bodyLen := int64(int32(be.Uint32(item[16:])))
	if bodyLen < 0 || 20+bodyLen+2 > size {
		return it, 0, fmt.Errorf("%w: batch item body length %d in size %d", ErrCorrupt, bodyLen, size)
	}
	pos := 20 + int(bodyLen)
	it.Body = item[20:pos:pos]
	propsLen := int(int16(be.Uint16(item[pos:])))
	pos += 2
	if propsLen < 0 || int64(pos+propsLen) != size {
		return it, 0, fmt.Errorf("%w: batch item properties length %d in size %d", ErrCorrupt, propsLen, size)
	}
	it.Properties = item[pos : pos+propsLen : pos+propsLen]
	return it, int(size), nil
}

// DecodeBatch decodes a whole batch body. An empty body is an error: a batch
// has at least one message.
func DecodeBatch(body []byte) ([]BatchItem, error) {
	if len(body) == 0 {
		return nil, fmt.Errorf("%w: empty batch body", ErrCorrupt)
	}
	// Count first so the result is allocated once.
	count := 0
	for rest := body; len(rest) > 0; count++ {
		_, n, err := NextBatchItem(rest)
		if err != nil {
			return nil, fmt.Errorf("message: batch item %d at byte %d: %w", count, len(body)-len(rest), err)
		}
		rest = rest[n:]
	}
	items := make([]BatchItem, 0, count)
	for rest := body; len(rest) > 0; {
		it, n, _ := NextBatchItem(rest)
		items = append(items, it)
		rest = rest[n:]
	}
	return items, nil
}

// AppendBatchItem appends one batch item as clients encode it (MAGICCODE and
// BODYCRC zero); props is a string or bytes. REQUIRES: len(props) <=
// MaxPropertiesLen.
func AppendBatchItem[S ~string | ~[]byte](dst []byte, flag int32, body []byte, props S) []byte {
	be := binary.BigEndian
	dst = be.AppendUint32(dst, uint32(batchItemFixed+len(body)+len(props)))
	dst = be.AppendUint32(dst, 0)
	dst = be.AppendUint32(dst, 0)
	dst = be.AppendUint32(dst, uint32(flag))
	dst = be.AppendUint32(dst, uint32(len(body)))
	dst = append(dst, body...)
	dst = be.AppendUint16(dst, uint16(len(props)))
	return append(dst, props...)
}

// BatchRecordProperties builds the stored property string of a batch item
// (spec §5.5): the item's properties, then, when both are non-empty and the
// item's do not already end with \x02, one \x02, then the batch-level
// properties (the header's properties plus CLUSTER).
func BatchRecordProperties(item []byte, batch string) string {
	b := make([]byte, 0, len(item)+1+len(batch))
	b = append(b, item...)
	if len(item) > 0 && len(batch) > 0 && item[len(item)-1] != PropertySeparator {
		b = append(b, PropertySeparator)
	}
	return string(append(b, batch...))
}

// AppendBatchRecords decodes a whole batch body (as DecodeBatch) into the
// records the broker stores, appended to recs: each a copy of proto with
// the item's Flag and Body (aliasing body) and its stored property string
// (BatchRecordProperties of the item's and batch's). The property strings
// of all items are cut from one string, so a batch of any size costs one
// allocation besides recs' growth, where a string per item and the items'
// slice cost two or more per message. Errors are DecodeBatch's (wrapping
// ErrCorrupt); recs is then returned unchanged.
func AppendBatchRecords(recs []Record, body []byte, batchProps string, proto *Record) ([]Record, error) {
	if len(body) == 0 {
		return recs, fmt.Errorf("%w: empty batch body", ErrCorrupt)
	}
	// One pass checks every item and sizes the property strings.
	count, propsLen := 0, 0
	for rest := body; len(rest) > 0; count++ {
		it, n, err := NextBatchItem(rest)
		if err != nil {
			return recs, fmt.Errorf("message: batch item %d at byte %d: %w", count, len(body)-len(rest), err)
		}
		propsLen += len(it.Properties) + 1 + len(batchProps)
		rest = rest[n:]
	}
	var b strings.Builder
	b.Grow(propsLen)
	from := len(recs)
	recs = slices.Grow(recs, count)
	var small [64]int // where each item's string ends in all
	ends := small[:0]
	for rest := body; len(rest) > 0; {
		it, n, _ := NextBatchItem(rest)
		rest = rest[n:]
		b.Write(it.Properties)
		if len(it.Properties) > 0 && len(batchProps) > 0 && it.Properties[len(it.Properties)-1] != PropertySeparator {
			b.WriteByte(PropertySeparator)
		}
		b.WriteString(batchProps)
		ends = append(ends, b.Len())
		recs = append(recs, *proto)
		r := &recs[len(recs)-1]
		r.Flag, r.Body = it.Flag, it.Body
	}
	all := b.String()
	start := 0
	for i, end := range ends {
		recs[from+i].Properties = all[start:end]
		start = end
	}
	return recs, nil
}
