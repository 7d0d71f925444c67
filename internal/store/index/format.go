package index

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/rocketd/rocketd/internal/message"
)

// Sizes of the on-disk structures (doc.go). Do not change.
const (
	HeaderSize = 40
	SlotSize   = 4
	ItemSize   = 20
)

// DirName is the index directory under the store root.
const DirName = "index"

// ErrShort reports a header or item buffer shorter than its size.
var ErrShort = errors.New("index: short buffer")

// Header is an index file's 40-byte header.
type Header struct {
	BeginTimestamp int64
	EndTimestamp   int64
	BeginPhyOffset int64
	EndPhyOffset   int64
	HashSlotCount  int32
	// IndexCount is the next index number (1 in an empty file).
	IndexCount int32
}

// ParseHeader decodes a header. An indexCount <= 0 reads as 1, as Java's
// IndexHeader.load does.
func ParseHeader(b []byte) (Header, error) {
	if len(b) < HeaderSize {
		return Header{}, fmt.Errorf("%w: header of %d bytes", ErrShort, len(b))
	}
	be := binary.BigEndian
	h := Header{
		BeginTimestamp: int64(be.Uint64(b[0:])),
		EndTimestamp:   int64(be.Uint64(b[8:])),
		BeginPhyOffset: int64(be.Uint64(b[16:])),
		EndPhyOffset:   int64(be.Uint64(b[24:])),
		HashSlotCount:  int32(be.Uint32(b[32:])),
		IndexCount:     int32(be.Uint32(b[36:])),
	}
	if h.IndexCount <= 0 {
		h.IndexCount = 1
	}
	return h, nil
}

// AppendTo appends the 40-byte encoding of h.
func (h Header) AppendTo(dst []byte) []byte {
	be := binary.BigEndian
	dst = be.AppendUint64(dst, uint64(h.BeginTimestamp))
	dst = be.AppendUint64(dst, uint64(h.EndTimestamp))
	dst = be.AppendUint64(dst, uint64(h.BeginPhyOffset))
	dst = be.AppendUint64(dst, uint64(h.EndPhyOffset))
	dst = be.AppendUint32(dst, uint32(h.HashSlotCount))
	return be.AppendUint32(dst, uint32(h.IndexCount))
}

// Item is one 20-byte index item.
type Item struct {
	KeyHash   int32
	PhyOffset int64
	TimeDiff  int32 // seconds after the header's beginTimestamp
	PrevIndex int32 // older item of the same slot; 0 ends the chain
}

// ParseItem decodes an item.
func ParseItem(b []byte) (Item, error) {
	if len(b) < ItemSize {
		return Item{}, fmt.Errorf("%w: item of %d bytes", ErrShort, len(b))
	}
	be := binary.BigEndian
	return Item{
		KeyHash:   int32(be.Uint32(b[0:])),
		PhyOffset: int64(be.Uint64(b[4:])),
		TimeDiff:  int32(be.Uint32(b[12:])),
		PrevIndex: int32(be.Uint32(b[16:])),
	}, nil
}

// AppendTo appends the 20-byte encoding of it.
func (it Item) AppendTo(dst []byte) []byte {
	be := binary.BigEndian
	dst = be.AppendUint32(dst, uint32(it.KeyHash))
	dst = be.AppendUint64(dst, uint64(it.PhyOffset))
	dst = be.AppendUint32(dst, uint32(it.TimeDiff))
	return be.AppendUint32(dst, uint32(it.PrevIndex))
}

// FileSize is the size of every index file with these dimensions.
func FileSize(hashSlotNum, indexNum int) int64 {
	return HeaderSize + int64(hashSlotNum)*SlotSize + int64(indexNum)*ItemSize
}

// KeyHash is Java's indexKeyHashMethod of topic+"#"+key:
// abs(String.hashCode), with Integer.MIN_VALUE mapped to 0. It builds no
// string.
func KeyHash(topic, key string) int32 {
	h := message.JavaHashFrom(0, topic)
	h = 31*h + '#'
	h = message.JavaHashFrom(h, key)
	if h == math.MinInt32 {
		return 0
	}
	if h < 0 {
		return -h
	}
	return h
}

// nameLayout is Java's timeMillisToHumanString (yyyyMMddHHmmssSSS, local
// time), without separators.
const nameLayout = "20060102150405.000"

// FileName is the name of an index file created at t.
func FileName(t time.Time) string {
	s := t.Format(nameLayout)
	return s[:14] + s[15:]
}

// validName reports whether name looks like an index file name (17 digits).
func validName(name string) bool {
	if len(name) != 17 {
		return false
	}
	for i := 0; i < len(name); i++ {
		if name[i] < '0' || name[i] > '9' {
			return false
		}
	}
	return true
}
