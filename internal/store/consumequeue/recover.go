package consumequeue

import (
	"fmt"
	"io"
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
func readFull(f *file, b []byte, off int64) error {
	n, err := f.h.ReadAt(b, off)
	if n == len(b) {
		return nil
	}
	if err == nil {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("consumequeue: read %s at %d: %w", f.path(), off, err)
}

// Recover finds the end of the queue after a restart (spec §7 step 4): files
// before the third-to-last are taken as full; from there units are scanned
// while valid, and the queue ends at the first invalid unit. Files after the
// end are deleted, and stale bytes right after the end (units of an earlier
// life of the queue, left by a torn write) are zeroed so that they can never
// reappear as valid units.
func (q *Queue) Recover() error {
	q.pending = q.pending[:0]
	q.mu.RLock()
	files := append([]*file(nil), q.mu.files...)
	q.mu.RUnlock()
	if len(files) == 0 {
		q.written.Store(0)
		q.minLogic.Store(0)
		q.maxPhysic.Store(0)
		return nil
	}
	q.minLogic.Store(files[0].start)
	from := max(0, len(files)-3)
	for _, f := range files[:from] {
		f.wrote.Store(q.fileSize)
		f.flushed.Store(q.fileSize)
	}
	buf := make([]byte, min(scanChunk, q.fileSize))
	size := firstScanChunk
	var lastEnd int64 = -1
	endFile := len(files) - 1
	var endPos int64 = q.fileSize
scan:
	for i := from; i < len(files); i++ {
		f := files[i]
		// Held for the scan: one open, however many chunks.
		if err := f.h.Hold(); err != nil {
			return fmt.Errorf("consumequeue: recover %s: %w", f.path(), err)
		}
		for pos := int64(0); pos < q.fileSize; pos, size = pos+int64(size), nextChunk(size) {
			chunk := buf[:min(int64(size), q.fileSize-pos)]
			if err := readFull(f, chunk, pos); err != nil {
				f.h.Release()
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
				f.h.Release()
				break scan
			}
		}
		f.h.Release()
		f.wrote.Store(q.fileSize)
		f.flushed.Store(q.fileSize)
	}
	// Drop files after the end file.
	for _, f := range files[endFile+1:] {
		if err := q.removeFile(f); err != nil {
			return err
		}
	}
	f := files[endFile]
	if err := q.zeroStaleTail(f, endPos); err != nil {
		return err
	}
	f.wrote.Store(endPos)
	f.flushed.Store(endPos)
	q.written.Store(f.start + endPos)
	if lastEnd < 0 {
		lastEnd = q.lastUnitEndBefore(f.start + endPos)
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
func (q *Queue) zeroStaleTail(f *file, pos int64) error {
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
	q.log.Info("consumequeue: zeroing stale units after the end", "path", f.path(), "from", pos, "to", end)
	if _, err := f.h.WriteAt(make([]byte, end-pos), pos); err != nil {
		return fmt.Errorf("consumequeue: zero %s at %d: %w", f.path(), pos, err)
	}
	if err := f.h.Sync(); err != nil {
		return fmt.Errorf("consumequeue: sync %s: %w", f.path(), err)
	}
	return nil
}

// removeFile drops f from the list and deletes it.
func (q *Queue) removeFile(f *file) error {
	q.mu.Lock()
	for i, g := range q.mu.files {
		if g == f {
			q.mu.files = append(q.mu.files[:i:i], q.mu.files[i+1:]...)
			break
		}
	}
	q.mu.Unlock()
	f.h.Forget()
	if err := q.fs.Remove(f.path()); err != nil && !isNotExist(err) {
		return fmt.Errorf("consumequeue: remove %s: %w", f.path(), err)
	}
	return nil
}

// Truncate removes every unit whose record does not end at or before phyEnd
// (the recovered CommitLog end): files whose first unit is past it are
// deleted, the cut inside the last kept file is zeroed and synced. Fillers
// are kept. The writer's method: not concurrent with Append/Commit.
func (q *Queue) Truncate(phyEnd int64) error {
	q.pending = q.pending[:0]
	for {
		f := q.lastFile()
		if f == nil {
			q.written.Store(0)
			q.minLogic.Store(0)
			q.maxPhysic.Store(0)
			return nil
		}
		wrote := f.wrote.Load()
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
		if keep == 0 && wrote > 0 || keep == 0 && q.fileCount() > 1 {
			q.log.Info("consumequeue: delete file past the commitlog end", "path", f.path(), "commitlogEnd", phyEnd)
			if err := q.removeFile(f); err != nil {
				return err
			}
			continue
		}
		if int64(keep) < wrote {
			q.log.Info("consumequeue: truncate", "path", f.path(), "from", wrote, "to", keep, "commitlogEnd", phyEnd)
			if _, err := f.h.WriteAt(make([]byte, wrote-int64(keep)), int64(keep)); err != nil {
				return fmt.Errorf("consumequeue: zero %s at %d: %w", f.path(), keep, err)
			}
			if err := f.h.Sync(); err != nil {
				return fmt.Errorf("consumequeue: sync %s: %w", f.path(), err)
			}
			f.wrote.Store(int64(keep))
			f.flushed.Store(int64(keep))
		}
		q.written.Store(f.start + int64(keep))
		if q.minLogic.Load() > q.written.Load() {
			q.minLogic.Store(q.written.Load())
		}
		if lastEnd < 0 {
			lastEnd = q.lastUnitEndBefore(f.start)
		}
		q.maxPhysic.Store(max(lastEnd, 0))
		return nil
	}
}

// DeleteBelow deletes the files (never the last one) whose units all point
// below phyMin, the CommitLog's new min offset, then recomputes MinOffset.
// It returns the number of files deleted.
func (q *Queue) DeleteBelow(phyMin int64) (int, error) {
	deleted := 0
	for {
		q.mu.RLock()
		var f *file
		if len(q.mu.files) > 1 {
			f = q.mu.files[0]
		}
		q.mu.RUnlock()
		if f == nil {
			break
		}
		var last [UnitSize]byte
		if err := readFull(f, last[:], q.fileSize-UnitSize); err != nil {
			return deleted, err
		}
		if u := unitAt(last[:], 0); !u.IsFiller() && u.Offset >= phyMin {
			break
		}
		if err := q.removeFile(f); err != nil {
			return deleted, err
		}
		deleted++
	}
	return deleted, q.CorrectMinOffset(phyMin)
}

// CorrectMinOffset sets MinOffset to the first unit whose record is at or
// after phyMin: the first file whose last unit reaches phyMin, then a
// binary search inside it (units are in CommitLog order). A queue with no
// such unit gets MinOffset == MaxOffset.
func (q *Queue) CorrectMinOffset(phyMin int64) error {
	q.mu.RLock()
	files := append([]*file(nil), q.mu.files...)
	q.mu.RUnlock()
	end := q.written.Load()
	from := q.minLogic.Load()
	below := func(u Unit) bool { return u.IsFiller() || !u.Valid() || u.Offset < phyMin }
	for _, f := range files {
		lo := max(f.start, from) / UnitSize
		hi := min(f.start+q.fileSize, end) / UnitSize // exclusive
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
func (q *Queue) unitIn(f *file, off int64) (Unit, error) {
	var b [UnitSize]byte
	if err := readFull(f, b[:], off*UnitSize-f.start); err != nil {
		return Unit{}, err
	}
	return unitAt(b[:], 0), nil
}

// Destroy closes and deletes every file of the queue and its directory.
func (q *Queue) Destroy() error {
	q.destroyed.Store(true)
	q.mu.Lock()
	files := q.mu.files
	q.mu.files = nil
	q.mu.Unlock()
	var firstErr error
	for _, f := range files {
		f.h.Forget()
	}
	if err := q.fs.RemoveAll(q.dir); err != nil {
		firstErr = fmt.Errorf("consumequeue: remove %s: %w", q.dir, err)
	}
	q.written.Store(0)
	q.minLogic.Store(0)
	q.maxPhysic.Store(0)
	return firstErr
}
