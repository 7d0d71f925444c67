package consumequeue

import (
	"fmt"
	"io"

	"github.com/rocketd/rocketd/internal/store/segment"
)

// Recovery reads a file firstScanChunk bytes first, doubling up to
// scanChunk: most queues of a store with many queues hold a few units, and
// reading 64 KiB (twice: the end, then the stale tail) of each of 100,000
// files dominated startup. Both are whole units: a chunk that cut a unit
// in two would end the scan there (64 KiB did: recovery kept 3,276 units
// of a fuller file and zeroed the rest).
const (
	firstScanChunk = 200 * UnitSize  // 4,000 bytes
	scanChunk      = 3276 * UnitSize // 65,520 bytes
)

// nextChunk is the size of the read after one of n bytes.
func nextChunk(n int) int { return min(2*n, scanChunk) }

// readFull reads b at off from f, treating io.EOF after a full read as success.
func readFull(f *segment.File, b []byte, off int64) error {
	n, err := f.ReadAt(b, off)
	if n == len(b) {
		return nil
	}
	if err == nil {
		err = fmt.Errorf("read %s at %d: %w", f.Path(), off, io.ErrUnexpectedEOF)
	}
	return fmt.Errorf("consumequeue: %w", err)
}

// Recover finds the end of the queue after a restart (spec §7 step 4): files
// before the third-to-last are taken as full; from there units are scanned
// while valid, and the queue ends at the first invalid unit. Files after the
// end are deleted, and stale bytes right after the end (units of an earlier
// life of the queue, left by a torn write) are zeroed so that they can never
// reappear as valid units.
func (q *Queue) Recover() error {
	q.bumpGen()
	defer q.bumpGen()
	q.pending = q.pending[:0]
	q.clearMarks()
	files := q.seg.Files() // each full, as loaded
	if len(files) == 0 {
		q.written.Store(0)
		q.minLogic.Store(0)
		q.maxPhysic.Store(0)
		return nil
	}
	q.minLogic.Store(files[0].Start())
	from := max(0, len(files)-3)
	buf := make([]byte, min(scanChunk, q.fileSize))
	size := firstScanChunk
	var lastEnd int64 = -1
	endFile := len(files) - 1
	var endPos int64 = q.fileSize
scan:
	for i := from; i < len(files); i++ {
		f := files[i]
		// Held for the scan: one open, however many chunks.
		h := cacheFile(f)
		if err := h.Hold(); err != nil {
			return fmt.Errorf("consumequeue: recover %s: %w", f.Path(), err)
		}
		for pos := int64(0); pos < q.fileSize; pos, size = pos+int64(size), nextChunk(size) {
			chunk := buf[:min(int64(size), q.fileSize-pos)]
			if err := readFull(f, chunk, pos); err != nil {
				h.Release()
				return err
			}
			n := ValidPrefix(chunk)
			for k := 0; k < n; k++ {
				if u := unitAt(chunk, k*UnitSize); !u.IsFiller() {
					lastEnd = u.End()
				}
			}
			if n*UnitSize < len(chunk) {
				endFile, endPos = i, pos+int64(n*UnitSize)
				h.Release()
				break scan
			}
		}
		h.Release()
	}
	// Drop the files after the end file (durably, last first) and set the
	// end file's positions to the end.
	f := files[endFile]
	if err := q.seg.Truncate(f.Start() + endPos); err != nil {
		return fmt.Errorf("consumequeue: recover %s/%d: %w", q.topic, q.queueID, err)
	}
	if err := q.zeroStaleTail(f, endPos); err != nil {
		return err
	}
	q.written.Store(f.Start() + endPos)
	if lastEnd < 0 {
		lastEnd = q.lastUnitEndBefore(f.Start() + endPos)
	}
	q.maxPhysic.Store(max(lastEnd, 0))
	return nil
}

// lastUnitEndBefore returns the End of the last non-filler unit before logical
// byte pos, looking one unit back only (-1 if none).
func (q *Queue) lastUnitEndBefore(pos int64) int64 {
	if pos < UnitSize {
		return -1
	}
	u, err := q.UnitAt(pos/UnitSize - 1)
	if err != nil || u.IsFiller() || !u.Valid() {
		return -1
	}
	return u.End()
}

// zeroStaleTail zeroes the non-zero bytes that follow pos in f, up to the
// first all-zero chunk, and syncs them. A queue's writes are sequential, so
// stale units form one run right after the end.
func (q *Queue) zeroStaleTail(f *segment.File, pos int64) error {
	buf := make([]byte, min(scanChunk, q.fileSize))
	end := pos
	size := firstScanChunk
	for p := pos; p < q.fileSize; p, size = p+int64(size), nextChunk(size) {
		chunk := buf[:min(int64(size), q.fileSize-p)]
		if err := readFull(f, chunk, p); err != nil {
			return err
		}
		k := len(chunk)
		for k > 0 && chunk[k-1] == 0 {
			k--
		}
		if k == 0 {
			break
		}
		end = p + int64(k)
		if k < len(chunk) {
			break
		}
	}
	if end == pos {
		return nil
	}
	q.log.Info("consumequeue: zeroing stale units after the end", "path", f.Path(), "from", pos, "to", end)
	return zeroAndSync(f, pos, end)
}

// zeroAndSync writes zeros over [from, to) of f and syncs it.
func zeroAndSync(f *segment.File, from, to int64) error {
	if _, err := f.WriteAt(make([]byte, to-from), from); err != nil {
		return fmt.Errorf("consumequeue: zero: %w", err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("consumequeue: %w", err)
	}
	return nil
}

// Truncate removes every unit whose record does not end at or before phyEnd
// (the recovered CommitLog end): files whose first unit is past it are
// deleted, the cut inside the last kept file is zeroed and synced. Fillers
// are kept. The writer's method: not concurrent with Append/Commit.
func (q *Queue) Truncate(phyEnd int64) error {
	q.bumpGen()
	defer q.bumpGen()
	q.pending = q.pending[:0]
	q.clearMarks()
	for {
		f := q.seg.Last()
		if f == nil {
			q.written.Store(0)
			q.minLogic.Store(0)
			q.maxPhysic.Store(0)
			return nil
		}
		wrote := f.Wrote()
		data := make([]byte, wrote)
		if err := readFull(f, data, 0); err != nil {
			return err
		}
		keep := 0
		lastEnd := int64(-1)
		for pos := 0; pos+UnitSize <= len(data); pos += UnitSize {
			u := unitAt(data, pos)
			if !u.IsFiller() {
				if u.End() > phyEnd {
					break
				}
				lastEnd = u.End()
			}
			keep = pos + UnitSize
		}
		if keep == 0 && (wrote > 0 || q.seg.Len() > 1) {
			// As RocketMQ: a file whose first unit is past the end goes.
			q.log.Info("consumequeue: delete file past the commitlog end", "path", f.Path(), "commitlogEnd", phyEnd)
			if err := q.seg.TruncateDropEmpty(f.Start()); err != nil {
				return fmt.Errorf("consumequeue: truncate %s/%d: %w", q.topic, q.queueID, err)
			}
			continue
		}
		if int64(keep) < wrote {
			q.log.Info("consumequeue: truncate", "path", f.Path(), "from", wrote, "to", keep, "commitlogEnd", phyEnd)
			if err := zeroAndSync(f, int64(keep), wrote); err != nil {
				return err
			}
			f.SetWrote(int64(keep))
			f.SetCommitted(int64(keep))
			f.SetFlushed(int64(keep))
		}
		q.written.Store(f.Start() + int64(keep))
		if q.minLogic.Load() > q.written.Load() {
			q.minLogic.Store(q.written.Load())
		}
		if lastEnd < 0 {
			lastEnd = q.lastUnitEndBefore(f.Start())
		}
		q.maxPhysic.Store(max(lastEnd, 0))
		return nil
	}
}

// DeleteBelow deletes the files (never the last one) whose units all point
// below phyMin, the CommitLog's new min offset, then recomputes MinOffset.
// It returns the number of files deleted.
func (q *Queue) DeleteBelow(phyMin int64) (int, error) {
	files := q.seg.Files()
	cut := int64(-1) // the end of the last head file wholly below phyMin
	for _, f := range files[:max(len(files)-1, 0)] {
		var last [UnitSize]byte
		if err := readFull(f, last[:], f.Size()-UnitSize); err != nil {
			return 0, err
		}
		if u := unitAt(last[:], 0); !u.IsFiller() && u.Offset >= phyMin {
			break
		}
		cut = f.End()
	}
	deleted := 0
	if cut >= 0 {
		n, err := q.seg.DeleteBelow(cut)
		if err != nil {
			return n, fmt.Errorf("consumequeue: %s/%d: %w", q.topic, q.queueID, err)
		}
		deleted = n
	}
	return deleted, q.CorrectMinOffset(phyMin)
}

// CorrectMinOffset sets MinOffset to the first unit whose record is at or
// after phyMin: the first file whose last unit reaches phyMin, then a
// binary search inside it (units are in CommitLog order). A queue with no
// such unit gets MinOffset == MaxOffset.
func (q *Queue) CorrectMinOffset(phyMin int64) error {
	files := q.seg.Files()
	end := q.written.Load()
	from := q.minLogic.Load()
	below := func(u Unit) bool { return u.IsFiller() || !u.Valid() || u.Offset < phyMin }
	for _, f := range files {
		lo := max(f.Start(), from) / UnitSize
		hi := min(f.End(), end) / UnitSize // exclusive
		if lo >= hi {
			continue
		}
		last, err := q.unitIn(f, hi-1)
		if err != nil {
			return err
		}
		if below(last) {
			continue
		}
		for lo < hi {
			mid := lo + (hi-lo)/2
			u, err := q.unitIn(f, mid)
			if err != nil {
				return err
			}
			if below(u) {
				lo = mid + 1
			} else {
				hi = mid
			}
		}
		q.minLogic.Store(lo * UnitSize)
		return nil
	}
	q.minLogic.Store(end)
	return nil
}

// unitIn reads the unit at queue offset off from f (held by the caller).
func (q *Queue) unitIn(f *segment.File, off int64) (Unit, error) {
	var b [UnitSize]byte
	if err := readFull(f, b[:], off*UnitSize-f.Start()); err != nil {
		return Unit{}, err
	}
	return unitAt(b[:], 0), nil
}

// Destroy closes and deletes every file of the queue and its directory.
func (q *Queue) Destroy() error {
	q.bumpGen()
	defer q.bumpGen()
	q.destroyed.Store(true)
	q.closeFiles()
	q.clearMarks()
	var firstErr error
	if err := q.fs.RemoveAll(q.dir); err != nil {
		firstErr = fmt.Errorf("consumequeue: remove %s: %w", q.dir, err)
	}
	q.written.Store(0)
	q.minLogic.Store(0)
	q.maxPhysic.Store(0)
	return firstErr
}
