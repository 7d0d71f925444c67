package store

import (
	"encoding/binary"
	"path/filepath"

	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/store/segment"
)

// abnormalRecoveryStart picks the segment abnormal recovery starts from
// (spec §7): the newest segment whose first record is valid (magic) and has
// a non-zero store timestamp at or before the checkpoint's recovery time,
// min(physic, logics) - 3 s, with messageIndexSafe also bounded by the
// index timestamp; the first segment when none qualifies.
func (s *Store) abnormalRecoveryStart() int64 {
	segs := s.log.Segments()
	if len(segs) == 0 {
		return 0
	}
	limit := s.ckpt.State().RecoveryTimestamp(s.cfg.MessageIndexSafe && !s.cfg.MessageIndexDisabled)
	for i := len(segs) - 1; i >= 0; i-- {
		ts, ok := s.firstStoreTimestamp(segs[i])
		if ok && ts != 0 && ts <= limit {
			s.cfg.Logger.Info("store: abnormal recovery", "from", segs[i], "checkpoint", limit)
			return segs[i]
		}
	}
	s.cfg.Logger.Info("store: abnormal recovery from the first segment", "from", segs[0], "checkpoint", limit)
	return segs[0]
}

// firstStoreTimestamp reads the store timestamp of the first record of the
// segment starting at start, straight from the file (the log is not
// recovered yet, so its read path serves nothing).
func (s *Store) firstStoreTimestamp(start int64) (int64, bool) {
	path := filepath.Join(s.path(CommitLogDir), segment.Name(start))
	f, err := s.cfg.FS.Open(path)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	var hdr [128]byte
	n, _ := f.ReadAt(hdr[:], 0)
	b := hdr[:n]
	if len(b) < message.PosSysFlag+4 {
		return 0, false
	}
	if m := binary.BigEndian.Uint32(b[message.PosMagic:]); m != message.MagicV1 && m != message.MagicV2 {
		return 0, false
	}
	pos := message.StoreTimestampPos(int32(binary.BigEndian.Uint32(b[message.PosSysFlag:])))
	if pos < 0 || pos+8 > len(b) {
		return 0, false
	}
	return int64(binary.BigEndian.Uint64(b[pos:])), true
}

// resumeRecord returns where abnormal recovery may start instead of the
// segment starting at segStart, and where that record ends: the checkpoint's resume
// record, the last record the flushers saw durable in both the CommitLog and
// the ConsumeQueues, so that the time to recover is bounded by the unflushed
// tail rather than by the segment size. It is used only when it is later
// than segStart, when no index replay depends on the older start
// (messageIndexSafe), and when the bytes there are a record that names its
// own offset: a checkpoint whose extension outlived a change of the log
// (another broker's recovery, a truncation) falls back to segStart.
func (s *Store) resumeRecord(segStart int64) (rec, recEnd int64, ok bool) {
	st := s.ckpt.State()
	if !st.HasResume || (s.cfg.MessageIndexSafe && !s.cfg.MessageIndexDisabled) {
		return 0, 0, false
	}
	segs := s.log.Segments()
	rec = st.ResumeRecord
	if len(segs) == 0 || rec <= segStart {
		return 0, 0, false
	}
	i := len(segs) - 1
	for i >= 0 && segs[i] > rec {
		i--
	}
	if i < 0 || rec >= segs[i]+s.log.SegmentSize() {
		return 0, 0, false
	}
	size, found := s.recordAt(segs[i], rec)
	if !found {
		s.cfg.Logger.Warn("store: checkpoint resume record not found; recovering from the segment", "resumeRecord", rec, "from", segStart)
		return 0, 0, false
	}
	s.cfg.Logger.Info("store: abnormal recovery from the checkpoint's resume record", "resumeRecord", rec, "insteadOf", segStart)
	return rec, rec + size, true
}

// recordAt reports the size of the record at offset in the segment
// starting at start, if there is a record header there that names offset
// as its physical offset and fits the segment (the scan then checks the
// whole record).
func (s *Store) recordAt(start, offset int64) (int64, bool) {
	path := filepath.Join(s.path(CommitLogDir), segment.Name(start))
	f, err := s.cfg.FS.Open(path)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	var hdr [message.PosPhysicalOffset + 8]byte
	if n, _ := f.ReadAt(hdr[:], offset-start); n < len(hdr) {
		return 0, false
	}
	if m := binary.BigEndian.Uint32(hdr[message.PosMagic:]); m != message.MagicV1 && m != message.MagicV2 {
		return 0, false
	}
	size := int64(int32(binary.BigEndian.Uint32(hdr[message.PosTotalSize:])))
	ok := size >= int64(len(hdr)) && offset+size <= start+s.log.SegmentSize() &&
		int64(binary.BigEndian.Uint64(hdr[message.PosPhysicalOffset:])) == offset
	return size, ok
}
