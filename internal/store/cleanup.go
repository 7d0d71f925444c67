package store

import (
	"math"
	"time"
)

// DiskStatus is the disk protection state seen by the last cleanup round.
type DiskStatus struct {
	UsedRatio float64 // percent of the disk holding the CommitLog in use
	Full      bool    // puts are refused
}

// cleanLoop is RocketMQ's CleanCommitLogService + CleanConsumeQueueService.
func (s *Store) cleanLoop(quit <-chan struct{}) {
	s.cfg.Logger.Info("store: cleanup", "interval", s.cfg.CleanInterval,
		"fileReservedTime", s.cfg.FileReservedTime, "deleteWhen", s.cfg.DeleteWhen,
		"diskMaxUsedSpaceRatio", s.cfg.DiskMaxUsedSpaceRatio,
		"diskSpaceCleanForciblyRatio", s.cfg.DiskSpaceCleanForciblyRatio,
		"diskSpaceWarningLevelRatio", s.cfg.DiskSpaceWarningLevelRatio,
		"cleanFileForciblyEnable", !s.cfg.KeepUnexpiredSegments)
	tick := time.NewTicker(s.cfg.CleanInterval)
	defer tick.Stop()
	var lastMin int64 = -1
	for {
		s.cleanOnce(&lastMin)
		select {
		case <-quit:
			return
		case <-tick.C:
		}
	}
}

// cleanOnce runs one cleanup round, deciding as RocketMQ 5.x's
// CleanCommitLogService does (whatever the order of the ratios):
//   - disk use above DiskSpaceWarningLevelRatio (90%) or
//     DiskSpaceCleanForciblyRatio (85%): the round is forcible (refusing
//     puts above the warning ratio is the CommitLog's space guard, on the
//     put path);
//   - above DiskMaxUsedSpaceRatio (75%), at a DeleteWhen hour, in one of
//     the manualDeleteRounds rounds after DeleteExpiredManually, or in a
//     forcible round: segments older than FileReservedTime are deleted
//     (at most DeleteFilesBatchMax, oldest first);
//   - in a forcible round, unless KeepUnexpiredSegments
//     (cleanFileForciblyEnable=false), the oldest segments are deleted
//     whatever their age: a Warn says so, since the store does not know
//     consumer offsets and they may hold messages nobody has read;
//   - then ConsumeQueue files wholly below the new CommitLog min offset go,
//     and every queue's min offset is recomputed; so do index files whose
//     endPhyOffset is below it.
func (s *Store) cleanOnce(lastMin *int64) {
	now := s.cfg.Clock()
	// One look at the disk serves the deletion decisions and the put
	// path's space guard.
	disk := s.log.DiskStatus()
	ratio, ok := disk.UsedPercent, disk.Err == nil
	force := ok && (ratio > float64(s.cfg.DiskSpaceWarningLevelRatio) || ratio > float64(s.cfg.DiskSpaceCleanForciblyRatio))
	s.noteKeptUnexpired(force && s.cfg.KeepUnexpiredSegments, ratio)
	spaceFull := ok && ratio > float64(s.cfg.DiskMaxUsedSpaceRatio)
	manual := s.takeManualDelete()
	if s.deleteHours[now.Hour()] || spaceFull || force || manual {
		s.deleteSegments(now, force && !s.cfg.KeepUnexpiredSegments, ratio)
	}
	if minOff := s.log.MinOffset(); minOff > *lastMin {
		n, err := s.cqs.DeleteBelow(minOff)
		if err != nil {
			s.cfg.Logger.Error("store: delete consume queue files", "err", err)
			return
		}
		if n > 0 {
			s.cfg.Logger.Info("store: deleted consume queue files", "count", n, "commitlogMin", minOff)
		}
		n, err = s.idx.DeleteBelow(minOff)
		if err != nil {
			s.cfg.Logger.Error("store: delete index files", "err", err)
			return
		}
		if n > 0 {
			s.cfg.Logger.Info("store: deleted index files", "count", n, "commitlogMin", minOff)
		}
		// Epochs whose data is all gone (Java's truncateEpochFilePrefix
		// with minPhyOffset - 1).
		if err := s.epochs.TruncatePrefixByOffset(minOff - 1); err != nil {
			s.cfg.Logger.Error("store: epoch file", "err", err)
			return
		}
		*lastMin = minOff
	}
}

// deleteSegments deletes expired CommitLog segments, and with forced the
// oldest unexpired ones too, logging each kind as what it is.
func (s *Store) deleteSegments(now time.Time, forced bool, usedPercent float64) {
	usedPercent = math.Round(usedPercent*10) / 10
	rm, err := s.log.DeleteExpired(now.Add(-s.cfg.FileReservedTime), forced, s.cfg.DeleteFilesBatchMax)
	if err != nil {
		s.cfg.Logger.Error("store: delete commitlog segments", "err", err)
	}
	if n := rm.Files - rm.Unexpired; n > 0 {
		s.cfg.Logger.Info("store: deleted expired commitlog segments", "count", n,
			"fileReservedTime", s.cfg.FileReservedTime, "usedPercent", usedPercent)
	}
	if rm.Unexpired > 0 {
		s.cfg.Logger.Warn("store: disk nearly full: deleted commitlog segments before their retention time;"+
			" they may hold messages not yet consumed (the store does not know consumer offsets)."+
			" cleanFileForciblyEnable=false refuses puts instead",
			"count", rm.Unexpired, "fromOffset", rm.UnexpiredFrom, "toOffset", rm.UnexpiredTo,
			"usedPercent", usedPercent, "diskSpaceCleanForciblyRatio", s.cfg.DiskSpaceCleanForciblyRatio,
			"fileReservedTime", s.cfg.FileReservedTime)
	}
}

// noteKeptUnexpired warns once when a forcible round may not delete
// unexpired segments (KeepUnexpiredSegments), and re-arms when the disk is
// back below the forcible ratio.
func (s *Store) noteKeptUnexpired(kept bool, usedPercent float64) {
	if !kept {
		s.keptUnexpired.Store(false)
		return
	}
	usedPercent = math.Round(usedPercent*10) / 10
	if !s.keptUnexpired.Swap(true) {
		s.cfg.Logger.Warn("store: disk nearly full, but cleanFileForciblyEnable=false keeps segments younger than"+
			" fileReservedTime: only expired ones are deleted, and puts are refused above diskSpaceWarningLevelRatio"+
			" until space is freed",
			"usedPercent", usedPercent, "diskSpaceCleanForciblyRatio", s.cfg.DiskSpaceCleanForciblyRatio,
			"diskSpaceWarningLevelRatio", s.cfg.DiskSpaceWarningLevelRatio, "fileReservedTime", s.cfg.FileReservedTime)
	}
}

// DiskStatus reports the disk use and whether puts are refused for it.
func (s *Store) DiskStatus() DiskStatus {
	st := s.log.DiskStatus()
	return DiskStatus{UsedRatio: st.UsedPercent, Full: st.Full}
}

// manualDeleteRounds is how many cleanup rounds DeleteExpiredManually
// affects (Java's MAX_MANUAL_DELETE_FILE_TIMES).
const manualDeleteRounds = 20

// DeleteExpiredManually makes the next manualDeleteRounds cleanup rounds
// delete CommitLog segments older than FileReservedTime whatever the hour
// (DELETE_EXPIRED_COMMITLOG, Java's executeDeleteFilesManually). Younger
// segments stay.
func (s *Store) DeleteExpiredManually() {
	s.manualDeletes.Store(manualDeleteRounds)
	s.cfg.Logger.Info("store: expired commitlog segments will be deleted in the next cleanup rounds",
		"rounds", manualDeleteRounds, "fileReservedTime", s.cfg.FileReservedTime)
}

// takeManualDelete uses up one manual round; false when none is left.
func (s *Store) takeManualDelete() bool {
	for {
		n := s.manualDeletes.Load()
		if n <= 0 {
			return false
		}
		if s.manualDeletes.CompareAndSwap(n, n-1) {
			return true
		}
	}
}
