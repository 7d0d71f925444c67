package message

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"unsafe"
)

// Magic codes of the record header (spec §5.1, §5.2). Do not change.
const (
	MagicV1    uint32 = 0xDAA320A7 // 1-byte topic length
	MagicV2    uint32 = 0xDAA320AB // 2-byte topic length (RocketMQ 5.x, topics > 127 bytes)
	MagicBlank uint32 = 0xCBD43194 // end-of-file filler
	// BlankLen is the size of the end-of-file filler (END_FILE_MIN_BLANK_LENGTH):
	// int32 bytes left in the file, int32 MagicBlank. A record is written only
	// if recordLen + BlankLen <= space left, so the filler always fits.
	BlankLen = 8
)

// Limits from the record layout.
const (
	MaxTopicLenV1    = 127   // TOPICLENGTH is a signed byte in v1 records
	MaxTopicLen      = 32767 // TOPICLENGTH is an int16 in v2 records
	MaxPropertiesLen = 32767 // PROPERTIESLENGTH is an int16
	// MinRecordSize is the smallest v1 record: empty body, topic and properties.
	MinRecordSize = 91
)

// Fixed positions inside an encoded record (spec §5.1). Positions after the
// born host move by 12 when it is IPv6; use StoreTimestampPos.
const (
	PosTotalSize      = 0
	PosMagic          = 4
	PosBodyCRC        = 8
	PosQueueID        = 12
	PosFlag           = 16
	PosQueueOffset    = 20
	PosPhysicalOffset = 28
	PosSysFlag        = 36
	PosBornTimestamp  = 40
	PosBornHost       = 48
)

// Outcomes of decoding a record, checked with errors.Is. ErrBlank,
// ErrZeroed and ErrTruncated are returned unwrapped (they are expected on
// every segment and must cost nothing); ErrCorrupt is wrapped with what was
// wrong and where.
var (
	// ErrBlank: the end-of-file filler; the rest of the segment is unused
	// and the next record starts the next segment.
	ErrBlank = errors.New("message: end-of-file blank")
	// ErrZeroed: TOTALSIZE and MAGICCODE are zero: the end of the written
	// data in a preallocated (zero-filled) segment.
	ErrZeroed = errors.New("message: zeroed record header")
	// ErrTruncated: the buffer ends inside the record. A reader holding only
	// part of a segment reads more and retries; at the end of a segment it
	// is a torn tail.
	ErrTruncated = errors.New("message: truncated record")
	// ErrCorrupt: bad magic, impossible length, size formula mismatch or (when
	// checked) body CRC mismatch.
	ErrCorrupt = errors.New("message: corrupt record")
)

// Record is one commit-log record (spec §5.1), and one message of a pull
// response body.
type Record struct {
	QueueID                   int32
	Flag                      int32
	QueueOffset               int64
	PhysicalOffset            int64
	SysFlag                   int32
	BornTimestamp             int64
	BornHost                  netip.AddrPort
	StoreTimestamp            int64
	StoreHost                 netip.AddrPort
	ReconsumeTimes            int32
	PreparedTransactionOffset int64
	Body                      []byte
	Topic                     string
	Properties                string // the raw property string (§5.3)
	// BodyCRC is the stored body checksum. AppendRecord writes it as given
	// when non-zero and computes BodyCRC(Body) when zero (a body whose
	// checksum is 0 encodes the same either way), so a caller that computed
	// it outside a lock can pass it in. DecodeRecord fills it from the record.
	BodyCRC uint32
}

// hostFlags returns sysFlag with the IPv6 host bits set for hosts that are
// not IPv4 (or IPv4-mapped). A bit already set is kept: the host is then
// written in 16-byte form whatever its family, which keeps decode/encode
// round trips exact.
func hostFlags(sysFlag int32, born, store netip.AddrPort) int32 {
	if a := born.Addr(); a.IsValid() && !a.Is4() && !a.Is4In6() {
		sysFlag |= SysFlagBornHostV6
	}
	if a := store.Addr(); a.IsValid() && !a.Is4() && !a.Is4In6() {
		sysFlag |= SysFlagStoreHostV6
	}
	return sysFlag
}

// RecordSize is TOTALSIZE of a record with these lengths (spec §5.1):
// 91 + body + topic + properties, +12 per IPv6 host (sysFlag bits 0x10,
// 0x20), +1 for the v2 magic used when the topic is longer than 127 bytes.
func RecordSize(bodyLen, topicLen, propsLen int, sysFlag int32) int {
	n := MinRecordSize + bodyLen + topicLen + propsLen
	if sysFlag&SysFlagBornHostV6 != 0 {
		n += 12
	}
	if sysFlag&SysFlagStoreHostV6 != 0 {
		n += 12
	}
	if topicLen > MaxTopicLenV1 {
		n++
	}
	return n
}

// EncodedSysFlag is the SYSFLAG AppendRecord will write for r: r.SysFlag
// plus the IPv6 bits its hosts need.
func (r *Record) EncodedSysFlag() int32 { return hostFlags(r.SysFlag, r.BornHost, r.StoreHost) }

// Size is the TOTALSIZE AppendRecord will write for r.
func (r *Record) Size() int {
	return RecordSize(len(r.Body), len(r.Topic), len(r.Properties), r.EncodedSysFlag())
}

// AppendRecord appends the encoded record to dst and returns the extended
// slice. It allocates only if dst lacks capacity. The magic is v1, or v2 when
// the topic is longer than 127 bytes (RocketMQ 5.x; 4.x clients cannot read
// it, so the commit log refuses such topics before encoding). SYSFLAG gets
// the IPv6 bits the hosts need (EncodedSysFlag); an invalid (zero) host is
// written as 0.0.0.0:0.
//
// REQUIRES: len(r.Topic) <= MaxTopicLen and len(r.Properties) <=
// MaxPropertiesLen (CheckLimits); the put path checks both first and answers
// MESSAGE_ILLEGAL / PROPERTIES_SIZE_EXCEEDED. AppendRecord panics otherwise:
// the fields could not be represented.
func AppendRecord(dst []byte, r *Record) []byte {
	dst = AppendRecordHeader(dst, r)
	dst = append(dst, r.Body...)
	dst = AppendRecordTopic(dst, r)
	return append(dst, r.Properties...)
}

// MaxRecordHeaderLen is the longest record header (AppendRecordHeader):
// 88 bytes, plus 12 for each IPv6 host.
const MaxRecordHeaderLen = 112

// AppendRecordHeader appends the fields of r's record that precede BODY,
// TOTALSIZE to BODYLENGTH: 88 bytes, +12 per IPv6 host. With
// AppendRecordTopic it lets a caller place the record in parts, copying
// the body and the properties straight from r (AppendRecord is header,
// body, topic part, properties). Same rules and REQUIRES as AppendRecord.
func AppendRecordHeader(dst []byte, r *Record) []byte {
	if len(r.Topic) > MaxTopicLen || len(r.Properties) > MaxPropertiesLen {
		panic(fmt.Sprintf("message: AppendRecord: topic %d / properties %d bytes exceed the format", len(r.Topic), len(r.Properties)))
	}
	sysFlag := r.EncodedSysFlag()
	size := RecordSize(len(r.Body), len(r.Topic), len(r.Properties), sysFlag)
	crc := r.BodyCRC
	if crc == 0 {
		crc = BodyCRC(r.Body)
	}
	magic := MagicV1
	if len(r.Topic) > MaxTopicLenV1 {
		magic = MagicV2
	}
	be := binary.BigEndian
	dst = be.AppendUint32(dst, uint32(size))
	dst = be.AppendUint32(dst, magic)
	dst = be.AppendUint32(dst, crc)
	dst = be.AppendUint32(dst, uint32(r.QueueID))
	dst = be.AppendUint32(dst, uint32(r.Flag))
	dst = be.AppendUint64(dst, uint64(r.QueueOffset))
	dst = be.AppendUint64(dst, uint64(r.PhysicalOffset))
	dst = be.AppendUint32(dst, uint32(sysFlag))
	dst = be.AppendUint64(dst, uint64(r.BornTimestamp))
	dst = appendHost(dst, r.BornHost, sysFlag&SysFlagBornHostV6 != 0)
	dst = be.AppendUint64(dst, uint64(r.StoreTimestamp))
	dst = appendHost(dst, r.StoreHost, sysFlag&SysFlagStoreHostV6 != 0)
	dst = be.AppendUint32(dst, uint32(r.ReconsumeTimes))
	dst = be.AppendUint64(dst, uint64(r.PreparedTransactionOffset))
	return be.AppendUint32(dst, uint32(len(r.Body)))
}

// AppendRecordTopic appends the fields between BODY and PROPERTIES:
// TOPICLENGTH (1 byte, or 2 with the v2 magic of a topic longer than 127
// bytes), TOPIC and PROPERTIESLENGTH. At most 130 bytes for a v1 record.
func AppendRecordTopic(dst []byte, r *Record) []byte {
	if len(r.Topic) > MaxTopicLenV1 {
		dst = binary.BigEndian.AppendUint16(dst, uint16(len(r.Topic)))
	} else {
		dst = append(dst, byte(len(r.Topic)))
	}
	dst = append(dst, r.Topic...)
	return binary.BigEndian.AppendUint16(dst, uint16(len(r.Properties)))
}

// appendHost writes an address (4 or 16 bytes) and its port as an int32.
func appendHost(dst []byte, h netip.AddrPort, v6 bool) []byte {
	a := h.Addr()
	switch {
	case v6 && a.IsValid():
		b := a.As16()
		dst = append(dst, b[:]...)
	case v6:
		dst = append(dst, make([]byte, 16)...)
	case a.IsValid():
		b := a.Unmap().As4()
		dst = append(dst, b[:]...)
	default:
		dst = append(dst, 0, 0, 0, 0)
	}
	return binary.BigEndian.AppendUint32(dst, uint32(h.Port()))
}

// CheckLimits reports whether a topic and property string of these lengths
// fit a v1 record: ErrTopicTooLong above 127 bytes, ErrPropertiesTooLong
// above 32767 bytes (spec §5.1; MESSAGE_ILLEGAL and PROPERTIES_SIZE_EXCEEDED).
func CheckLimits(topicLen, propsLen int) error {
	if topicLen > MaxTopicLenV1 {
		return ErrTopicTooLong
	}
	if propsLen > MaxPropertiesLen {
		return ErrPropertiesTooLong
	}
	return nil
}

// Limit violations reported by CheckLimits.
var (
	ErrTopicTooLong      = errors.New("message: topic longer than 127 bytes")
	ErrPropertiesTooLong = errors.New("message: properties longer than 32767 bytes")
)

// DecodeRecord decodes the record at the start of b and returns it with the
// number of bytes it occupies (TOTALSIZE; BlankLen for ErrBlank; 0 for other
// errors). It never reads past b and never panics.
//
// Body aliases b: it is valid while b is. Topic and Properties are copied
// (strings must not change under their holders; see DecodeRecordNoCopy).
// With checkCRC the body checksum is verified (recovery does; the runtime
// dispatcher does not).
//
// Outcomes: nil; ErrBlank; ErrZeroed; ErrTruncated; ErrCorrupt (wrapped).
func DecodeRecord(b []byte, checkCRC bool) (Record, int, error) {
	return decodeRecord(b, checkCRC, false)
}

// DecodeRecordNoCopy is DecodeRecord without any allocation: Topic and
// Properties also alias b (unsafe.String). They are valid only while b is
// neither modified nor reused: use them for lookups during the call that
// owns b, and strings.Clone anything kept (a map key, a queue name).
func DecodeRecordNoCopy(b []byte, checkCRC bool) (Record, int, error) {
	return decodeRecord(b, checkCRC, true)
}

func decodeRecord(b []byte, checkCRC, noCopy bool) (Record, int, error) {
	var r Record
	if len(b) < 8 {
		return r, 0, ErrTruncated
	}
	be := binary.BigEndian
	size := int32(be.Uint32(b[PosTotalSize:]))
	magic := be.Uint32(b[PosMagic:])
	switch magic {
	case MagicV1, MagicV2:
	case MagicBlank:
		return r, BlankLen, ErrBlank
	case 0:
		if size == 0 {
			return r, 0, ErrZeroed
		}
		return r, 0, fmt.Errorf("%w: magic 0x%08X with size %d", ErrCorrupt, magic, size)
	default:
		return r, 0, fmt.Errorf("%w: magic 0x%08X", ErrCorrupt, magic)
	}
	if size < MinRecordSize {
		return r, 0, fmt.Errorf("%w: size %d below the minimum %d", ErrCorrupt, size, MinRecordSize)
	}
	if int64(size) > int64(len(b)) {
		return r, 0, ErrTruncated
	}
	rec := b[:size]
	r.BodyCRC = be.Uint32(rec[PosBodyCRC:])
	r.QueueID = int32(be.Uint32(rec[PosQueueID:]))
	r.Flag = int32(be.Uint32(rec[PosFlag:]))
	r.QueueOffset = int64(be.Uint64(rec[PosQueueOffset:]))
	r.PhysicalOffset = int64(be.Uint64(rec[PosPhysicalOffset:]))
	r.SysFlag = int32(be.Uint32(rec[PosSysFlag:]))
	r.BornTimestamp = int64(be.Uint64(rec[PosBornTimestamp:]))

	// From here on positions depend on the host widths; every read is
	// bounds-checked against the record (size >= 91 covers the v4/v4 fixed
	// part only).
	pos := PosBornHost
	var ok bool
	if r.BornHost, pos, ok = readHost(rec, pos, r.SysFlag&SysFlagBornHostV6 != 0); !ok {
		return r, 0, fmt.Errorf("%w: size %d too small for its hosts", ErrCorrupt, size)
	}
	if pos+8 > len(rec) {
		return r, 0, fmt.Errorf("%w: size %d too small for its hosts", ErrCorrupt, size)
	}
	r.StoreTimestamp = int64(be.Uint64(rec[pos:]))
	pos += 8
	if r.StoreHost, pos, ok = readHost(rec, pos, r.SysFlag&SysFlagStoreHostV6 != 0); !ok {
		return r, 0, fmt.Errorf("%w: size %d too small for its hosts", ErrCorrupt, size)
	}
	if pos+16 > len(rec) {
		return r, 0, fmt.Errorf("%w: size %d too small for its hosts", ErrCorrupt, size)
	}
	r.ReconsumeTimes = int32(be.Uint32(rec[pos:]))
	r.PreparedTransactionOffset = int64(be.Uint64(rec[pos+4:]))
	bodyLen := int64(int32(be.Uint32(rec[pos+12:])))
	pos += 16
	if bodyLen < 0 || int64(pos)+bodyLen > int64(len(rec)) {
		return r, 0, fmt.Errorf("%w: body length %d exceeds record size %d", ErrCorrupt, bodyLen, size)
	}
	body := rec[pos : pos+int(bodyLen) : pos+int(bodyLen)]
	pos += int(bodyLen)

	var topicLen int
	if magic == MagicV1 {
		if pos+1 > len(rec) {
			return r, 0, fmt.Errorf("%w: record size %d ends before the topic", ErrCorrupt, size)
		}
		tl := int8(rec[pos])
		if tl < 0 {
			return r, 0, fmt.Errorf("%w: negative topic length %d", ErrCorrupt, tl)
		}
		topicLen = int(tl)
		pos++
	} else {
		if pos+2 > len(rec) {
			return r, 0, fmt.Errorf("%w: record size %d ends before the topic", ErrCorrupt, size)
		}
		tl := int16(be.Uint16(rec[pos:]))
		if tl < 0 {
			return r, 0, fmt.Errorf("%w: negative topic length %d", ErrCorrupt, tl)
		}
		topicLen = int(tl)
		pos += 2
	}
	topicStart := pos
	if pos+topicLen+2 > len(rec) {
		return r, 0, fmt.Errorf("%w: topic length %d exceeds record size %d", ErrCorrupt, topicLen, size)
	}
	pos += topicLen
	propsLen := int(int16(be.Uint16(rec[pos:])))
	if propsLen < 0 {
		return r, 0, fmt.Errorf("%w: negative properties length %d", ErrCorrupt, propsLen)
	}
	pos += 2
	if pos+propsLen != len(rec) {
		return r, 0, fmt.Errorf("%w: size %d, fields add up to %d", ErrCorrupt, size, pos+propsLen)
	}
	// Like Java's checker, an empty body is not checked (its CRC is 0 when
	// written by any RocketMQ encoder).
	if checkCRC && bodyLen > 0 {
		if crc := BodyCRC(body); crc != r.BodyCRC {
			return r, 0, fmt.Errorf("%w: body crc 0x%08X, stored 0x%08X", ErrCorrupt, crc, r.BodyCRC)
		}
	}
	r.Body = body
	// Topic and properties are adjacent (separated by the 2-byte length):
	// one string covers both, so the copying decode allocates once.
	both := rec[topicStart:]
	var s string
	if noCopy {
		s = unsafe.String(unsafe.SliceData(both), len(both))
	} else {
		s = string(both)
	}
	r.Topic = s[:topicLen]
	r.Properties = s[topicLen+2:]
	return r, int(size), nil
}

// readHost reads a 4- or 16-byte address and an int32 port at pos. Ports
// outside 0-65535 (never written by RocketMQ) keep their low 16 bits.
func readHost(rec []byte, pos int, v6 bool) (netip.AddrPort, int, bool) {
	n := 4
	if v6 {
		n = 16
	}
	if pos+n+4 > len(rec) {
		return netip.AddrPort{}, pos, false
	}
	var a netip.Addr
	if v6 {
		a = netip.AddrFrom16([16]byte(rec[pos : pos+16]))
	} else {
		a = netip.AddrFrom4([4]byte(rec[pos : pos+4]))
	}
	port := binary.BigEndian.Uint32(rec[pos+n:])
	return netip.AddrPortFrom(a, uint16(port)), pos + n + 4, true
}

// StoreTimestampPos is the position of STORETIMESTAMP for a record with this
// sysFlag: 56, or 68 when the born host is IPv6.
func StoreTimestampPos(sysFlag int32) int {
	if sysFlag&SysFlagBornHostV6 != 0 {
		return 68
	}
	return 56
}

// The fixed-position helpers below read and patch fields of an encoded
// record in place; the commit log encodes a record outside its lock and
// patches QUEUEOFFSET, PHYSICALOFFSET and STORETIMESTAMP under it.
// REQUIRES: rec holds at least a complete record header (as written by
// AppendRecord or accepted by DecodeRecord); they panic on a shorter slice
// like binary.BigEndian does.

// PatchQueueOffset sets QUEUEOFFSET.
func PatchQueueOffset(rec []byte, v int64) {
	binary.BigEndian.PutUint64(rec[PosQueueOffset:], uint64(v))
}

// PatchPhysicalOffset sets PHYSICALOFFSET.
func PatchPhysicalOffset(rec []byte, v int64) {
	binary.BigEndian.PutUint64(rec[PosPhysicalOffset:], uint64(v))
}

// PatchStoreTimestamp sets STORETIMESTAMP (its position depends on SYSFLAG).
func PatchStoreTimestamp(rec []byte, v int64) {
	binary.BigEndian.PutUint64(rec[StoreTimestampPos(RecordSysFlag(rec)):], uint64(v))
}

// RecordTotalSize reads TOTALSIZE.
func RecordTotalSize(rec []byte) int32 { return int32(binary.BigEndian.Uint32(rec[PosTotalSize:])) }

// RecordMagic reads MAGICCODE.
func RecordMagic(rec []byte) uint32 { return binary.BigEndian.Uint32(rec[PosMagic:]) }

// RecordQueueID reads QUEUEID.
func RecordQueueID(rec []byte) int32 { return int32(binary.BigEndian.Uint32(rec[PosQueueID:])) }

// RecordQueueOffset reads QUEUEOFFSET.
func RecordQueueOffset(rec []byte) int64 {
	return int64(binary.BigEndian.Uint64(rec[PosQueueOffset:]))
}

// RecordPhysicalOffset reads PHYSICALOFFSET.
func RecordPhysicalOffset(rec []byte) int64 {
	return int64(binary.BigEndian.Uint64(rec[PosPhysicalOffset:]))
}

// RecordSysFlag reads SYSFLAG.
func RecordSysFlag(rec []byte) int32 { return int32(binary.BigEndian.Uint32(rec[PosSysFlag:])) }

// RecordStoreTimestamp reads STORETIMESTAMP.
func RecordStoreTimestamp(rec []byte) int64 {
	return int64(binary.BigEndian.Uint64(rec[StoreTimestampPos(RecordSysFlag(rec)):]))
}

// AppendBlank appends the end-of-file filler for a segment with left bytes
// of space remaining at the write position (left >= BlankLen).
func AppendBlank(dst []byte, left int32) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(left))
	return binary.BigEndian.AppendUint32(dst, MagicBlank)
}
