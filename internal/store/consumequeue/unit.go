package consumequeue

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// UnitSize is the size of one ConsumeQueue unit in bytes. Do not change.
const UnitSize = 20

// DefaultUnitsPerFile is RocketMQ's mappedFileSizeConsumeQueue / UnitSize.
const DefaultUnitsPerFile = 300_000

// FillerSize is the size field of a front-padding filler unit.
const FillerSize = math.MaxInt32

// ErrShortUnit reports fewer than UnitSize bytes where a unit was expected.
var ErrShortUnit = errors.New("consumequeue: short unit")

// Unit is one ConsumeQueue entry.
type Unit struct {
	Offset   int64 // CommitLog offset of the record
	Size     int32 // record size
	TagsCode int64 // tag hash, or delivery time for SCHEDULE_TOPIC_XXXX
}

// filler is the front-padding unit of a queue that starts mid-way.
var filler = Unit{Offset: 0, Size: FillerSize, TagsCode: 0}

// Valid reports whether u is a unit recovery keeps (offset >= 0 && size > 0).
func (u Unit) Valid() bool { return u.Offset >= 0 && u.Size > 0 }

// IsFiller reports whether u is a front-padding filler unit.
func (u Unit) IsFiller() bool { return u == filler }

// End is the CommitLog offset just past the record u points at.
func (u Unit) End() int64 { return u.Offset + int64(u.Size) }

// AppendTo appends the 20-byte encoding of u.
func (u Unit) AppendTo(dst []byte) []byte {
	dst = binary.BigEndian.AppendUint64(dst, uint64(u.Offset))
	dst = binary.BigEndian.AppendUint32(dst, uint32(u.Size))
	return binary.BigEndian.AppendUint64(dst, uint64(u.TagsCode))
}

// ParseUnit decodes the unit at the start of b.
func ParseUnit(b []byte) (Unit, error) {
	if len(b) < UnitSize {
		return Unit{}, fmt.Errorf("%w: %d bytes", ErrShortUnit, len(b))
	}
	return unitAt(b, 0), nil
}

// unitAt decodes the unit at byte position pos; REQUIRES pos+UnitSize <= len(b).
func unitAt(b []byte, pos int) Unit {
	return Unit{
		Offset:   int64(binary.BigEndian.Uint64(b[pos:])),
		Size:     int32(binary.BigEndian.Uint32(b[pos+8:])),
		TagsCode: int64(binary.BigEndian.Uint64(b[pos+12:])),
	}
}

// ValidPrefix returns the number of leading valid units in b (recovery's
// rule: stop at the first invalid unit or at a partial unit).
func ValidPrefix(b []byte) int {
	n := 0
	for pos := 0; pos+UnitSize <= len(b); pos += UnitSize {
		if !unitAt(b, pos).Valid() {
			break
		}
		n++
	}
	return n
}

// Units is a run of consecutive units read from one queue file, starting at
// queue offset First. The bytes are owned by the Units until Release.
type Units struct {
	First int64 // queue offset of unit 0
	buf   *[]byte
	b     []byte
}

// Len is the number of units.
func (u *Units) Len() int { return len(u.b) / UnitSize }

// At returns unit i (0 <= i < Len()).
func (u *Units) At(i int) Unit { return unitAt(u.b, i*UnitSize) }

// Bytes returns the raw units (valid until Release).
func (u *Units) Bytes() []byte { return u.b }

// Release returns the read buffer to the pool; u must not be used afterwards.
func (u *Units) Release() {
	if u.buf != nil {
		*u.buf = (*u.buf)[:0]
		readPool.Put(u.buf)
		u.buf = nil
	}
	u.b = nil
}
