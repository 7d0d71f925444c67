package segment

import (
	"errors"
	"fmt"
	"syscall"
)

// roomMargin is the free space a zero-filled file leaves for everything
// else on the disk (consume queues, index, checkpoint, metadata): an
// eighth of the file, at most 64 MiB.
func roomMargin(size int64) int64 { return min(size/8, 64<<20) }

// DiskFullError: the disk lacks the room for a new zero-filled file; the
// check fails before anything is written. It matches syscall.ENOSPC in
// errors.Is.
type DiskFullError struct {
	Avail uint64 // bytes an unprivileged writer may still use
	Need  uint64 // the file plus roomMargin
}

func (e *DiskFullError) Error() string {
	return fmt.Sprintf("disk full: %s available, a new segment needs %s", bytesText(e.Avail), bytesText(e.Need))
}

// bytesText is n in MiB when it is at least that, else in bytes.
func bytesText(n uint64) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d B", n)
}

// Is makes errors.Is(err, syscall.ENOSPC) true.
func (e *DiskFullError) Is(target error) bool { return target == syscall.ENOSPC }

// IsDiskFull reports whether err comes from a full disk or an exhausted
// quota: the free-space check or the file system itself (ENOSPC, EDQUOT).
func IsDiskFull(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}

// checkRoom fails with a *DiskFullError when the disk holding the queue has
// less than a file plus roomMargin available. When the usage cannot be read
// it lets the caller go on: the writes then tell.
func (q *Queue) checkRoom() error {
	d, err := q.cfg.FS.DiskUsage(q.cfg.Dir)
	if err != nil {
		q.cfg.Logger.Warn("segment: disk usage unavailable; creating the file unchecked", "dir", q.cfg.Dir, "err", err)
		return nil
	}
	need := uint64(q.cfg.Size + roomMargin(q.cfg.Size))
	if d.Avail < need {
		return &DiskFullError{Avail: d.Avail, Need: need}
	}
	return nil
}
