package commitlog

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"strconv"
	"strings"

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

// NormalRecovery asks Recover to scan the last three segments.
const NormalRecovery = -1

// CorruptionAction is what RecoverWith does with corruption: an invalid
// record before data known to be durable (doc.go, "Recovery").
type CorruptionAction int

const (
	// CorruptionRefuse (the zero value) fails recovery with a
	// *CorruptionError and leaves every file as it was.
	CorruptionRefuse CorruptionAction = iota
	// CorruptionTruncate cuts the log at the invalid record, as after a
	// torn write, and logs at Error what is cut.
	CorruptionTruncate
)

var corruptionActionNames = [...]string{CorruptionRefuse: "refuse", CorruptionTruncate: "truncate"}

// String returns the action's configuration name: refuse or truncate.
func (a CorruptionAction) String() string {
	if a >= 0 && int(a) < len(corruptionActionNames) {
		return corruptionActionNames[a]
	}
	return "CorruptionAction(" + strconv.Itoa(int(a)) + ")"
}

// ParseCorruptionAction parses "refuse" or "truncate" (any case).
func ParseCorruptionAction(s string) (CorruptionAction, error) {
	for a, name := range corruptionActionNames {
		if strings.EqualFold(s, name) {
			return CorruptionAction(a), nil
		}
	}
	return 0, fmt.Errorf("commitlog: corruption action %q: want refuse or truncate", s)
}

// RecoverOptions says where recovery starts and what is known to be durable.
type RecoverOptions struct {
	// From is NormalRecovery or the start of a segment (see Recover), or
	// with FromRecord the start of a record.
	From int64
	// FromRecord: From is the start of a record known to be durable with
	// everything before it (the checkpoint's resume record); the scan
	// starts there instead of at a segment start.
	FromRecord bool
	// CleanShutdown: the previous run closed the log (every record was
	// synced), so valid records after an invalid one mean corruption.
	CleanShutdown bool
	// DurableTimestamp is the store time of a record known to be durable
	// (the checkpoint's physicMsgTimestamp; 0: none known). Store times
	// never decrease along the log, so the valid data must reach a record
	// stored at or after it; ending earlier means corruption.
	DurableTimestamp int64
	// OnCorruption: refuse (default) or truncate.
	OnCorruption CorruptionAction
	// SkipBodyCRC is checkCRCOnRecover=false: the scan does not compare
	// bodies with their BODYCRC (a body flip then goes unnoticed). The
	// search for valid records after an invalid one (resync) still does:
	// there the CRC is what tells a record from garbage.
	SkipBodyCRC bool
	// OnRecord receives every valid record scanned (nil: none).
	OnRecord RecordFunc
}

// RecoverResult describes the recovered log.
type RecoverResult struct {
	// End is the end of the valid data: the write, commit and flush position.
	End int64
	// LastTimestamp is the store time of the last valid record scanned (0
	// if none).
	LastTimestamp int64
	// Corruption is set when corruption was found and, as asked, truncated.
	Corruption *CorruptionError
}

// CorruptionError reports an invalid record before data known to be
// durable. Recovery with CorruptionRefuse returns it and changes nothing.
type CorruptionError struct {
	// Segment is the path of the file holding the invalid record.
	Segment string
	// Offset is the invalid record's CommitLog offset; FileOffset its
	// position in Segment.
	Offset, FileOffset int64
	// Reason says what is wrong with the bytes there (which field: the
	// position class).
	Reason string
	// Durable says why the data after Offset is known to be durable.
	Durable string
	// Resume is the offset of the next valid record after the invalid one
	// (-1: none found). ValidAfter records (ValidAfterBytes bytes) follow
	// from there without another gap.
	Resume          int64
	ValidAfter      int
	ValidAfterBytes int64
	// LaterSegments are the files after Segment, all lost by a truncation.
	LaterSegments []string
}

func (e *CorruptionError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "commitlog: corrupt record at offset %d (%s, position %d): %s; %s",
		e.Offset, e.Segment, e.FileOffset, e.Reason, e.Durable)
	if e.Resume >= 0 {
		fmt.Fprintf(&b, "; valid records resume at offset %d (%d records, %d bytes, before the next gap)",
			e.Resume, e.ValidAfter, e.ValidAfterBytes)
	}
	fmt.Fprintf(&b, "; truncating here would delete %d later segment files", len(e.LaterSegments))
	b.WriteString("; restore the segment from a replica or backup, or recover with the truncate action to cut the log at this offset")
	return b.String()
}

// Recover is RecoverWith without durability knowledge (a crash with no
// checkpoint): every invalid record ends the log. It returns the end.
func (l *Log) Recover(from int64, fn RecordFunc) (int64, error) {
	res, err := l.RecoverWith(RecoverOptions{From: from, OnRecord: fn})
	return res.End, err
}

// RecoverWith finds the end of the valid data and makes it the write,
// commit and flush position, and must be called once after Open, before
// Start.
//
// The scan starts at opts.From: NormalRecovery (-1) means the start of the
// third-to-last segment (RocketMQ's normal recovery); abnormal recovery
// passes the start of the segment the checkpoint selects (spec §7), or with
// opts.FromRecord the checkpoint's resume record; any other offset than a
// segment start is refused without FromRecord (offsets below the first
// segment mean the first segment). From there it walks records checking
// magic code, length, body CRC and PHYSICALOFFSET, passing each to
// opts.OnRecord and following BLANK fillers to the next segment, and stops
// at the first invalid record or zeros.
//
// If the data after that point is known to be durable (opts.CleanShutdown
// and a valid record follows, or the last valid record is older than
// opts.DurableTimestamp) it is corruption: a *CorruptionError, nothing
// changed, unless opts.OnCorruption is CorruptionTruncate. Otherwise (a
// torn tail) and with CorruptionTruncate, the log is truncated there:
// later segments are deleted and the rest of the segment zeroed.
func (l *Log) RecoverWith(opts RecoverOptions) (RecoverResult, error) {
	if l.started.Load() || l.closed.Load() {
		return RecoverResult{}, errors.New("commitlog: Recover after Start or Close")
	}
	files := l.segs.Files()
	if len(files) == 0 {
		l.setPositionsLocked(0)
		l.recovered.Store(true)
		return RecoverResult{}, nil
	}
	from := opts.From
	if from == NormalRecovery {
		from = files[max(0, len(files)-3)].Start()
	}
	first, last := files[0], files[len(files)-1]
	if from < first.Start() {
		from = first.Start()
	}
	if from > last.End() {
		return RecoverResult{}, fmt.Errorf("commitlog: recover from %d: beyond the last segment end %d", from, last.End())
	}
	if (from-first.Start())%l.cfg.SegmentSize != 0 && !opts.FromRecord {
		// A scan from the middle of a record would find garbage and
		// truncate valid data: only segment starts are record boundaries
		// known without reading.
		return RecoverResult{}, fmt.Errorf("commitlog: recover from %d: not the start of a segment", from)
	}
	stop, lastTS, err := l.scan(from, opts.OnRecord, !opts.SkipBodyCRC, true)
	if err != nil {
		return RecoverResult{}, err
	}
	end := stop.at
	res := RecoverResult{End: end, LastTimestamp: lastTS}
	if cerr, err := l.checkCorruption(stop, lastTS, opts); err != nil {
		return RecoverResult{}, err
	} else if cerr != nil {
		if opts.OnCorruption != CorruptionTruncate {
			l.cfg.Logger.Error("commitlog: corruption: refusing to recover", "segment", cerr.Segment,
				"offset", cerr.Offset, "filePosition", cerr.FileOffset, "reason", cerr.Reason, "durable", cerr.Durable,
				"resume", cerr.Resume, "validRecordsAfter", cerr.ValidAfter, "laterSegments", len(cerr.LaterSegments))
			return RecoverResult{}, cerr
		}
		l.cfg.Logger.Error("commitlog: corruption: truncating as configured", "segment", cerr.Segment,
			"offset", cerr.Offset, "filePosition", cerr.FileOffset, "reason", cerr.Reason, "durable", cerr.Durable,
			"resume", cerr.Resume, "validRecordsCut", cerr.ValidAfter, "validBytesCut", cerr.ValidAfterBytes,
			"segmentsDeleted", cerr.LaterSegments)
		res.Corruption = cerr
	} else if stop.reason != "" {
		// After a crash: a torn tail. After a clean shutdown: garbage after
		// the last record, with nothing valid behind it.
		l.cfg.Logger.Warn("commitlog: invalid bytes end the log (torn tail or garbage after the end); cut",
			"offset", end, "reason", stop.reason, "cleanShutdown", opts.CleanShutdown)
	}
	if err := l.segs.Truncate(end); err != nil {
		return RecoverResult{}, fmt.Errorf("commitlog: recover: %w", err)
	}
	if err := l.zeroStaleTail(end); err != nil {
		return RecoverResult{}, err
	}
	// The scanned data may have come from the page cache of a process that
	// died before syncing it; sync it now so that Flushed() = end is true.
	for _, f := range l.segs.Files() {
		if f.End() <= from {
			continue
		}
		if err := f.Sync(); err != nil {
			return RecoverResult{}, fmt.Errorf("commitlog: recover: %w", err)
		}
	}
	l.setPositionsLocked(end)
	l.mu.lastPutTime = lastTS
	l.lastPutTime.Store(lastTS)
	l.committedTime.Store(lastTS)
	l.flushedTime.Store(lastTS)
	l.recovered.Store(true)
	l.cfg.Logger.Info("commitlog: recovered", "from", from, "end", end)
	return res, nil
}

// checkCorruption decides whether the scan stopped before durable data
// (see RecoverWith) and if so describes it; nil when the stop is a torn
// tail or the end of the written data.
func (l *Log) checkCorruption(stop scanStop, lastTS int64, opts RecoverOptions) (*CorruptionError, error) {
	var durable string
	if opts.DurableTimestamp > 0 && lastTS < opts.DurableTimestamp {
		// The record stored at DurableTimestamp ended at or below the
		// flushed offset when the checkpoint was written: it is on disk,
		// and being no older than any record before it, it lies after
		// the last valid one.
		durable = fmt.Sprintf("the checkpoint records a durable message stored at %d ms but the valid data ends with one stored at %d ms",
			opts.DurableTimestamp, lastTS)
	}
	if durable == "" && (stop.reason == "" || !opts.CleanShutdown) {
		return nil, nil
	}
	resume, err := l.resync(stop.at + 1)
	if err != nil {
		return nil, err
	}
	switch {
	case opts.CleanShutdown && resume >= 0:
		durable = "the last shutdown was clean (every record was synced) and valid records follow"
	case durable == "":
		return nil, nil // garbage after the end, nothing valid behind it
	}
	reason := stop.reason
	if reason == "" {
		reason = "zeros where a record was expected"
	}
	e := &CorruptionError{Offset: stop.at, Reason: reason, Durable: durable, Resume: resume}
	for _, f := range l.segs.Files() {
		switch {
		case f.Contains(stop.at) || (f.End() == stop.at && e.Segment == ""):
			e.Segment, e.FileOffset = f.Path(), stop.at-f.Start()
		case f.Start() > stop.at:
			e.LaterSegments = append(e.LaterSegments, f.Path())
		}
	}
	if resume >= 0 {
		var n int
		rstop, _, err := l.scan(resume, func(*message.Record, int64, int32) error { n++; return nil }, !opts.SkipBodyCRC, false)
		if err != nil {
			return nil, err
		}
		e.ValidAfter, e.ValidAfterBytes = n, rstop.at-resume
	}
	return e, nil
}

// scanStop is where a scan ended and why.
type scanStop struct {
	at int64
	// reason says why the bytes at `at` are not a record; "" when they
	// are zeros (the end of the written data) or there is no segment.
	reason string
}

// scan walks valid records from offset and returns where the valid data
// ends and the last record's store timestamp. checkCRC: compare each body
// with its BODYCRC. report: log repairable damage (a BLANK filler with a
// damaged length or magic) at Error.
func (l *Log) scan(offset int64, fn RecordFunc, checkCRC, report bool) (stop scanStop, lastTS int64, err error) {
	var buf []byte // grown by scanSegment to at most recoverChunk (or one record)
	for {
		f := l.segs.FindHeld(offset)
		if f == nil {
			return scanStop{at: offset}, lastTS, nil
		}
		next, ts, reason, stopped, err := l.scanSegment(f, offset, &buf, fn, checkCRC, report)
		f.Release()
		if err != nil {
			return scanStop{}, 0, err
		}
		if ts != 0 {
			lastTS = ts
		}
		offset = next
		if stopped {
			return scanStop{at: offset, reason: reason}, lastTS, nil
		}
	}
}

// scanSegment scans one segment from offset. It returns where the scan
// continues (the next segment's start after a BLANK, or the end of the
// valid data) and stopped = true, with the reason, when the valid data ends.
func (l *Log) scanSegment(f *segment.File, offset int64, bufp *[]byte, fn RecordFunc, checkCRC, report bool) (next, lastTS int64, reason string, stopped bool, err error) {
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
	stopAt := func(format string, args ...any) (int64, int64, string, bool, error) {
		return f.Start() + pos, lastTS, fmt.Sprintf(format, args...), true, nil
	}

	for {
		ok, err := need(8)
		if err != nil {
			return 0, 0, "", true, err
		}
		if !ok {
			// Fewer than 8 bytes left without a BLANK: never written by us.
			return stopAt("the segment file ends %d bytes after the last record without a BLANK filler", f.Size()-pos)
		}
		hdr := buf[pos-bufStart:]
		size := int64(int32(binary.BigEndian.Uint32(hdr)))
		magic := binary.BigEndian.Uint32(hdr[4:])
		left := l.cfg.SegmentSize - pos
		switch {
		case size == 0 && magic == 0:
			return f.Start() + pos, lastTS, "", true, nil // zeros: the end of the written data
		case magic == message.MagicBlank:
			if size != left && report {
				// The magic alone marks the segment end (readers and
				// Java's checker ignore the length): nothing is lost.
				l.cfg.Logger.Error("commitlog: BLANK filler with a damaged length; ignored, the magic code marks the segment end",
					"segment", f.Path(), "position", pos, "offset", f.Start()+pos, "length", size, "want", left)
			}
			return f.End(), lastTS, "", false, nil // the rest of the segment is filler
		case size == left && bits.OnesCount32(magic^message.MagicBlank) <= maxBlankMagicFlips:
			// No record is as long as the space left (a record needs 8
			// more), so this is a BLANK whose magic lost a bit or two; a
			// torn write leaves whole bytes zero, never this.
			if report {
				l.cfg.Logger.Error("commitlog: BLANK filler with a damaged magic code; treated as the segment end",
					"segment", f.Path(), "position", pos, "offset", f.Start()+pos, "magic", fmt.Sprintf("0x%08X", magic))
			}
			return f.End(), lastTS, "", false, nil
		case magic != message.MagicV1 && magic != message.MagicV2:
			if size == left {
				return stopAt("header: MAGICCODE 0x%08X (a BLANK filler's length, but not its magic code)", magic)
			}
			return stopAt("header: MAGICCODE 0x%08X", magic)
		case size < message.MinRecordSize || size > maxScanRecord:
			return stopAt("header: TOTALSIZE %d", size)
		}
		if ok, err = need(size); err != nil {
			return 0, 0, "", true, err
		} else if !ok {
			return stopAt("header: TOTALSIZE %d runs past the end of the file (%d bytes left)", size, f.Size()-pos)
		}
		b := buf[pos-bufStart : pos-bufStart+size]
		rec, n, derr := message.DecodeRecordNoCopy(b, checkCRC)
		switch {
		case derr != nil:
			return stopAt("%s: %v", decodeErrorClass(derr), derr)
		case int64(n) != size:
			return stopAt("header: TOTALSIZE %d, decoded %d", size, n)
		case rec.PhysicalOffset != f.Start()+pos:
			return stopAt("header: PHYSICALOFFSET %d is not the record's offset", rec.PhysicalOffset)
		}
		if fn != nil {
			if err := fn(&rec, f.Start()+pos, int32(size)); err != nil {
				return 0, 0, "", true, fmt.Errorf("commitlog: recover at %d: %w", f.Start()+pos, err)
			}
		}
		lastTS = rec.StoreTimestamp
		pos += size
	}
}

// maxBlankMagicFlips is how many bits a BLANK's magic may differ in and
// still be recognised (when its length is the space left in the segment).
const maxBlankMagicFlips = 2

// decodeErrorClass names the part of a record a decode error points at.
func decodeErrorClass(err error) string {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "body crc"):
		return "body (or its BODYCRC field)"
	case strings.Contains(msg, "properties length"), strings.Contains(msg, "fields add up"):
		return "properties length or another length field"
	default:
		return "header"
	}
}

// resync looks for the next valid record at or after offset, in this and
// the later segments: a position p whose magic code is a record's, whose
// PHYSICALOFFSET is p, whose TOTALSIZE fits and whose body CRC matches
// (12 exact header bytes and a CRC: garbage does not pass by chance). It
// returns -1 when there is none.
func (l *Log) resync(offset int64) (int64, error) {
	const hdrLen = message.PosPhysicalOffset + 8
	buf := make([]byte, min(recoverChunk, l.cfg.SegmentSize))
	var rec []byte
	for _, f := range l.segs.Files() {
		if f.End() <= offset {
			continue
		}
		for pos := max(offset-f.Start(), 0); pos+hdrLen <= f.Size(); {
			n := min(int64(len(buf)), f.Size()-pos)
			if _, err := f.ReadAt(buf[:n], pos); err != nil {
				return 0, fmt.Errorf("commitlog: recover: %w", err)
			}
			for i := int64(0); i+hdrLen <= n; i++ {
				magic := binary.BigEndian.Uint32(buf[i+message.PosMagic:])
				if magic != message.MagicV1 && magic != message.MagicV2 {
					continue
				}
				at := f.Start() + pos + i
				if int64(binary.BigEndian.Uint64(buf[i+message.PosPhysicalOffset:])) != at {
					continue
				}
				size := int64(int32(binary.BigEndian.Uint32(buf[i:])))
				if size < message.MinRecordSize || size > maxScanRecord || pos+i+size > f.Size() {
					continue
				}
				if int64(cap(rec)) < size {
					rec = make([]byte, size)
				}
				rec = rec[:size]
				if _, err := f.ReadAt(rec, pos+i); err != nil {
					return 0, fmt.Errorf("commitlog: recover: %w", err)
				}
				if _, m, err := message.DecodeRecordNoCopy(rec, true); err == nil && int64(m) == size {
					return at, nil
				}
			}
			pos += max(n-hdrLen+1, 1)
		}
	}
	return -1, nil
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
			buf = make([]byte, min(staleProbe, f.Size()))
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
