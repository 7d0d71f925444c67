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
