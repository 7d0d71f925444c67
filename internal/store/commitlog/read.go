package commitlog

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"sync"

	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/store/segment"
)

// Buffer holds bytes read from the log. Bytes is valid until Release, which
// returns the memory to a pool; Release is safe to call on the zero Buffer
// and more than once.
type Buffer struct {
	Bytes  []byte
	pooled *[]byte
}

// Release gives the buffer back. Bytes must not be used afterwards.
func (b *Buffer) Release() {
	if b.pooled != nil {
		putReadBuf(b.pooled)
		b.pooled = nil
	}
	b.Bytes = nil
}

// Read buffers come from power-of-two size classes (256 B .. 8 MiB); larger
// reads allocate.
const (
	minReadClass = 8
	maxReadClass = 23
)

var readPools [maxReadClass + 1]sync.Pool

func readClass(n int) int {
	if n <= 1<<minReadClass {
		return minReadClass
	}
	return bits.Len(uint(n - 1))
}

func getReadBuf(n int) *[]byte {
	c := readClass(n)
	if c > maxReadClass {
		b := make([]byte, n)
		return &b
	}
	if p, ok := readPools[c].Get().(*[]byte); ok {
		*p = (*p)[:n]
		return p
	}
	b := make([]byte, n, 1<<c)
	return &b
}

func putReadBuf(p *[]byte) {
	c := bits.Len(uint(cap(*p))) - 1
	if cap(*p) != 1<<c || c < minReadClass || c > maxReadClass {
		return
	}
	readPools[c].Put(p)
}

// Read returns size bytes at offset: a record, or consecutive records, as
// stored. The range must lie in [MinOffset, Committed) and in one segment
// (records never span segments). The segment is held for the read, so
// retention cannot close it underneath.
func (l *Log) Read(offset int64, size int32) (Buffer, error) {
	if size <= 0 {
		return Buffer{}, fmt.Errorf("commitlog: read %d bytes at %d: %w", size, offset, ErrOffsetNotAvailable)
	}
	if offset < 0 || offset+int64(size) > l.committed.Load() {
		return Buffer{}, fmt.Errorf("commitlog: read [%d,%d) beyond committed %d: %w", offset, offset+int64(size), l.committed.Load(), ErrOffsetNotAvailable)
	}
	f := l.segs.FindHeld(offset)
	if f == nil {
		return Buffer{}, fmt.Errorf("commitlog: read at %d: no segment (min offset %d): %w", offset, l.MinOffset(), ErrOffsetNotAvailable)
	}
	defer f.Release()
	if offset+int64(size) > f.End() {
		return Buffer{}, fmt.Errorf("commitlog: read [%d,%d) crosses the end of segment %d: %w", offset, offset+int64(size), f.Start(), ErrOffsetNotAvailable)
	}
	return readHeld(f, offset, int(size))
}

// readHeld reads n bytes at the global offset from a held segment.
func readHeld(f *segment.File, offset int64, n int) (Buffer, error) {
	p := getReadBuf(n)
	if _, err := f.ReadAt(*p, offset-f.Start()); err != nil {
		putReadBuf(p)
		return Buffer{}, fmt.Errorf("commitlog: %w", err)
	}
	return Buffer{Bytes: *p, pooled: p}, nil
}

// ReadRecordAt reads and decodes the record at offset (no CRC check: the
// bytes were checked when written or recovered). The record's Body aliases
// the returned Buffer; release it when done with the record.
func (l *Log) ReadRecordAt(offset int64) (message.Record, Buffer, error) {
	committed := l.committed.Load()
	if offset < 0 || offset+8 > committed {
		return message.Record{}, Buffer{}, fmt.Errorf("commitlog: record at %d beyond committed %d: %w", offset, committed, ErrOffsetNotAvailable)
	}
	f := l.segs.FindHeld(offset)
	if f == nil {
		return message.Record{}, Buffer{}, fmt.Errorf("commitlog: record at %d: no segment: %w", offset, ErrOffsetNotAvailable)
	}
	defer f.Release()
	var hdr [8]byte
	if _, err := f.ReadAt(hdr[:], offset-f.Start()); err != nil {
		return message.Record{}, Buffer{}, fmt.Errorf("commitlog: record at %d: %w", offset, err)
	}
	size := int64(int32(binary.BigEndian.Uint32(hdr[:4])))
	if binary.BigEndian.Uint32(hdr[4:]) == message.MagicBlank {
		return message.Record{}, Buffer{}, fmt.Errorf("commitlog: record at %d: %w", offset, message.ErrBlank)
	}
	if size < message.MinRecordSize || offset+size > min(committed, f.End()) {
		return message.Record{}, Buffer{}, fmt.Errorf("commitlog: record at %d: size %d: %w", offset, size, message.ErrCorrupt)
	}
	buf, err := readHeld(f, offset, int(size))
	if err != nil {
		return message.Record{}, Buffer{}, err
	}
	rec, _, err := message.DecodeRecord(buf.Bytes, false)
	if err != nil {
		buf.Release()
		return message.Record{}, Buffer{}, fmt.Errorf("commitlog: record at %d: %w", offset, err)
	}
	return rec, buf, nil
}

// ReadRaw returns up to max committed bytes from offset, stopping at the end
// of offset's segment (HA transfer). At the committed end it returns an empty
// Buffer and no error.
func (l *Log) ReadRaw(offset int64, max int) (Buffer, error) {
	committed := l.committed.Load()
	if offset < 0 || offset > committed {
		return Buffer{}, fmt.Errorf("commitlog: raw read at %d beyond committed %d: %w", offset, committed, ErrOffsetNotAvailable)
	}
	if offset == committed || max <= 0 {
		return Buffer{}, nil
	}
	f := l.segs.FindHeld(offset)
	if f == nil {
		return Buffer{}, fmt.Errorf("commitlog: raw read at %d: no segment (min offset %d): %w", offset, l.MinOffset(), ErrOffsetNotAvailable)
	}
	defer f.Release()
	n := min(int64(max), committed-offset, f.End()-offset)
	return readHeld(f, offset, int(n))
}

// AppendRaw appends bytes copied from a master's log at offset, which must
// be the end of this log (HA slave). The bytes are records, BLANK fillers and
// the zeros after them, exactly as the master stored them; a segment is
// rolled (without writing a filler) when they reach its end. The queue
// offset table is not touched: the store rebuilds it by dispatching.
func (l *Log) AppendRaw(offset int64, data []byte) error {
	if l.closed.Load() {
		return ErrClosed
	}
	if !l.recovered.Load() {
		return ErrNotRecovered
	}
	l.lock()
	defer func() {
		l.unlock()
		if l.cfg.FlushSync {
			l.flusher.Kick()
		} else {
			l.kickCommitter()
		}
	}()
	if err := l.writeErr(); err != nil {
		return err
	}
	if l.closed.Load() {
		return ErrClosed
	}
	if l.segs.Len() == 0 && offset >= 0 {
		// An empty slave starts wherever its master's data starts.
		l.commitMu.Lock()
		l.setPositionsLocked(offset)
		l.commitMu.Unlock()
	}
	if head := l.head.Load(); offset != head {
		return fmt.Errorf("commitlog: append raw at %d, log ends at %d: %w", offset, head, ErrOffsetMismatch)
	}
	chunk := len(l.ring) / 2
	for len(data) > 0 {
		cur := l.cur.Load()
		if cur == nil || l.head.Load() >= cur.End() {
			if st := l.rollLocked(false); st != PutOK {
				return fmt.Errorf("commitlog: append raw at %d: roll: %s", l.head.Load(), st)
			}
			cur = l.cur.Load()
		}
		n := int(min(int64(len(data)), cur.End()-l.head.Load(), int64(chunk)))
		if st := l.ensureRingLocked(n); st != PutOK {
			err := l.writeErr()
			if err == nil {
				err = errors.New("the write failed and was taken back")
			}
			return fmt.Errorf("commitlog: append raw at %d: %w", l.head.Load(), err)
		}
		l.writeRingLocked(data[:n])
		data = data[n:]
	}
	return nil
}
