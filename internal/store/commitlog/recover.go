package commitlog

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/store/segment"
)

// recoverChunk is the read size of the recovery scan.
const recoverChunk = 4 << 20

// maxScanRecord bounds the TOTALSIZE the scan believes before reading that
// much (a corrupt length must not make recovery allocate a gigabyte).
const maxScanRecord = 64 << 20

// RecordFunc receives each valid record found by Recover, with its offset
// and size. The record's Body, Topic and Properties alias a scan buffer and
// are valid only during the call (copy what is kept). An error aborts
// Recover.
type RecordFunc func(rec *message.Record, offset int64, size int32) error

// Recover finds the end of the valid data and makes it the write, commit
// and flush position, and must be called once after Open, before Start.
//
// The scan starts at from: NormalRecovery (-1) means the start of the
// third-to-last segment (RocketMQ's normal recovery); abnormal recovery
// passes the start of the segment the checkpoint selects (spec §7); any
// other offset than a segment start is refused (offsets below the first
// segment mean the first segment). From
// there it walks records checking magic code, length and body CRC, passing
// each to fn (nil: none) and following BLANK fillers to the next segment,
// and stops at the first invalid record (torn or corrupt tail, zeroed
// preallocated space, a record whose PHYSICALOFFSET is not its position).
// The log is truncated there: later segments are deleted. It returns the end.
func (l *Log) Recover(from int64, fn RecordFunc) (int64, error) {
	if l.started.Load() || l.closed.Load() {
		return 0, errors.New("commitlog: Recover after Start or Close")
	}
	files := l.segs.Files()
	if len(files) == 0 {
		l.setPositionsLocked(0)
		l.recovered.Store(true)
		return 0, nil
	}
	if from == NormalRecovery {
		from = files[max(0, len(files)-3)].Start()
	}
	first, last := files[0], files[len(files)-1]
	if from < first.Start() {
		from = first.Start()
	}
	if from > last.End() {
		return 0, fmt.Errorf("commitlog: recover from %d: beyond the last segment end %d", from, last.End())
	}
	if (from-first.Start())%l.cfg.SegmentSize != 0 {
		// A scan from the middle of a record would find garbage and
		// truncate valid data: only segment starts are record boundaries
		// known without reading.
		return 0, fmt.Errorf("commitlog: recover from %d: not the start of a segment", from)
	}
	end, lastTS, err := l.scan(from, fn)
	if err != nil {
		return 0, err
	}
	if err := l.segs.Truncate(end); err != nil {
		return 0, fmt.Errorf("commitlog: recover: %w", err)
	}
	if err := l.zeroStaleTail(end); err != nil {
		return 0, err
	}
	// The scanned data may have come from the page cache of a process that
	// died before syncing it; sync it now so that Flushed() = end is true.
	for _, f := range l.segs.Files() {
		if f.End() <= from {
			continue
		}
		if err := f.Sync(); err != nil {
			return 0, fmt.Errorf("commitlog: recover: %w", err)
		}
	}
	l.setPositionsLocked(end)
	l.mu.lastPutTime = lastTS
	l.lastPutTime.Store(lastTS)
	l.flushedTime.Store(lastTS)
	l.recovered.Store(true)
	l.cfg.Logger.Info("commitlog: recovered", "from", from, "end", end)
	return end, nil
}

// NormalRecovery asks Recover to scan the last three segments.
const NormalRecovery = -1

// scan walks valid records from offset and returns the end of the last one
// and its store timestamp.
func (l *Log) scan(offset int64, fn RecordFunc) (end, lastTS int64, err error) {
	var buf []byte // grown by scanSegment to at most recoverChunk (or one record)
	for {
		f := l.segs.FindHeld(offset)
		if f == nil {
			return offset, lastTS, nil
		}
		next, ts, stop, err := l.scanSegment(f, offset, &buf, fn)
		f.Release()
		if err != nil {
			return 0, 0, err
		}
		if ts != 0 {
			lastTS = ts
		}
		offset = next
		if stop {
			return offset, lastTS, nil
		}
	}
}

// scanSegment scans one segment from offset. It returns where the scan
// continues (the next segment's start after a BLANK, or the end of the
// valid data) and stop = true when the valid data ends.
func (l *Log) scanSegment(f *segment.File, offset int64, bufp *[]byte, fn RecordFunc) (next, lastTS int64, stop bool, err error) {
	pos := offset - f.Start() // position of the next record in the file
	buf := (*bufp)[:0]
	bufStart := pos // file position of buf[0]
	defer func() { *bufp = buf[:0] }()

	// need makes buf hold the file bytes [pos, pos+n); false at the end of the file.
	need := func(n int64) (bool, error) {
		if pos+n > f.Size() {
			return false, nil
		}
		if pos >= bufStart && pos+n <= bufStart+int64(len(buf)) {
			return true, nil
		}
		want := max(n, min(int64(recoverChunk), f.Size()-pos))
		if int64(cap(buf)) < want {
			buf = make([]byte, want)
		}
		buf = buf[:want]
		if _, err := f.ReadAt(buf, pos); err != nil {
			return false, fmt.Errorf("commitlog: recover: %w", err)
		}
		bufStart = pos
		return true, nil
	}

	for {
		ok, err := need(8)
		if err != nil {
			return 0, 0, true, err
		}
		if !ok {
			// Fewer than 8 bytes left without a BLANK: never written by us.
			return f.Start() + pos, lastTS, true, nil
		}
		hdr := buf[pos-bufStart:]
		size := int64(int32(binary.BigEndian.Uint32(hdr)))
		if binary.BigEndian.Uint32(hdr[4:]) == message.MagicBlank {
			// The rest of the segment is filler: continue in the next one.
			return f.End(), lastTS, false, nil
		}
		if size < message.MinRecordSize || size > maxScanRecord {
			return f.Start() + pos, lastTS, true, nil
		}
		if ok, err = need(size); err != nil {
			return 0, 0, true, err
		} else if !ok {
			return f.Start() + pos, lastTS, true, nil // torn: runs past the file
		}
		b := buf[pos-bufStart : pos-bufStart+size]
		rec, n, derr := message.DecodeRecordNoCopy(b, true)
		if derr != nil || int64(n) != size || rec.PhysicalOffset != f.Start()+pos {
			return f.Start() + pos, lastTS, true, nil
		}
		if fn != nil {
			if err := fn(&rec, f.Start()+pos, int32(size)); err != nil {
				return 0, 0, true, fmt.Errorf("commitlog: recover at %d: %w", f.Start()+pos, err)
			}
		}
		lastTS = rec.StoreTimestamp
		pos += size
	}
}

// staleProbe is the read size of zeroStaleTail; a probe of only zeros ends
// the stale region.
const staleProbe = 1 << 20

// zeroStaleTail overwrites with zeros what lies after end in its segment up
// to the last non-zero byte: records cut off by the truncation (written
// after a torn one, never acknowledged). Left in place, a later append of
// exactly the torn record's length would make the next of them look valid
// again at the next recovery, with a queue offset already reused. The
// stale region ends at the first all-zero probe, so the cost is bounded by
// what the crash left behind, not by the segment size.
func (l *Log) zeroStaleTail(end int64) error {
	f := l.segs.FindHeld(end)
	if f == nil {
		return nil
	}
	defer f.Release()
	var buf []byte
	staleEnd := end - f.Start() // relative; grows to just past the last non-zero byte
	for pos := staleEnd; pos < f.Size(); {
		n := min(int64(staleProbe), f.Size()-pos)
		if buf == nil {
			buf = make([]byte, staleProbe)
		}
		if _, err := f.ReadAt(buf[:n], pos); err != nil {
			return fmt.Errorf("commitlog: recover: %w", err)
		}
		last := -1
		for i := int(n) - 1; i >= 0; i-- {
			if buf[i] != 0 {
				last = i
				break
			}
		}
		if last < 0 {
			break
		}
		staleEnd = pos + int64(last) + 1
		pos += n
	}
	from := end - f.Start()
	if staleEnd <= from {
		return nil
	}
	l.cfg.Logger.Warn("commitlog: zeroing data after the recovered end", "from", end, "bytes", staleEnd-from)
	clear(buf)
	for pos := from; pos < staleEnd; {
		n := min(int64(len(buf)), staleEnd-pos)
		if _, err := f.WriteAt(buf[:n], pos); err != nil {
			return fmt.Errorf("commitlog: recover: %w", err)
		}
		pos += n
	}
	return nil // synced with the rest of the scanned segments by Recover
}
