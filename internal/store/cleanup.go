package store

import (
	"time"
)

// DiskStatus is the disk protection state seen by the last cleanup round.
type DiskStatus struct {
	UsedRatio float64 // percent of the disk holding the CommitLog in use
	Full      bool    // puts are refused
}

// cleanLoop is RocketMQ's CleanCommitLogService + CleanConsumeQueueService.
func (s *Store) cleanLoop(quit <-chan struct{}) {
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

// diskUsedRatio returns the percentage of the CommitLog's disk in use.
func (s *Store) diskUsedRatio() (float64, bool) {
	d, err := s.cfg.FS.DiskUsage(s.path(CommitLogDir))
	if err != nil || d.Total == 0 {
		s.cfg.Logger.Warn("store: disk usage unavailable", "err", err)
		return 0, false
	}
	return d.UsedPercent(), true
}

// cleanOnce runs one cleanup round:
//   - disk use above DiskSpaceCleanForciblyRatio (85%): segments are
//     deleted oldest-first whatever their age (refusing puts above
//     DiskSpaceWarningLevelRatio is the CommitLog's space guard, on the put
//     path);
//   - above DiskMaxUsedSpaceRatio (75%) or at a DeleteWhen hour: segments
//     older than FileReservedTime are deleted;
//   - then ConsumeQueue files wholly below the new CommitLog min offset go,
//     and every queue's min offset is recomputed.
func (s *Store) cleanOnce(lastMin *int64) {
	now := s.cfg.Clock()
	ratio, ok := s.diskUsedRatio()
	force := ok && ratio > float64(s.cfg.DiskSpaceCleanForciblyRatio)
	spaceFull := ok && ratio > float64(s.cfg.DiskMaxUsedSpaceRatio)
	if s.deleteHours[now.Hour()] || spaceFull || force {
		n, err := s.log.DeleteExpired(now.Add(-s.cfg.FileReservedTime), force, s.cfg.DeleteFilesBatchMax)
		if err != nil {
			s.cfg.Logger.Error("store: delete expired commitlog segments", "err", err)
		} else if n > 0 {
			s.cfg.Logger.Info("store: deleted commitlog segments", "count", n, "forced", force, "usedPercent", ratio)
		}
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
		*lastMin = minOff
	}
}

// DiskStatus reports the disk use and whether puts are refused for it.
func (s *Store) DiskStatus() DiskStatus {
	st := s.log.DiskStatus()
	return DiskStatus{UsedRatio: st.UsedPercent, Full: st.Full}
}
