package commitlog

import (
	"fmt"
	"log/slog"
	"math"
	"sync/atomic"
	"time"

	"github.com/rocketd/rocketd/internal/lograte"
	"github.com/rocketd/rocketd/internal/vfs"
)

// spaceCheckInterval is the longest a put trusts the last statfs: the put
// path looks at the disk at most this often, and the committer's
// accounting of what it wrote since covers the time between.
const spaceCheckInterval = 100 * time.Millisecond

// spaceGuard refuses puts before the disk holding the log fills, so that a
// write never meets ENOSPC in the normal course (one that does anyway, say
// because another program filled the disk, is taken back and refused:
// rollbackLocked).
//
// Puts are refused when the disk's use (df's Use%) is above FullPercent or
// fewer than reserve bytes are available, and accepted again once use is at
// or below ResumePercent and the reserve is free (RocketMQ's hysteresis
// between diskSpaceWarningLevelRatio and diskSpaceCleanForciblyRatio). The
// reserve covers what a put may still add after the check: the ring's
// bytes in flight, at most a twentieth of the disk.
//
// The state is refreshed by a statfs at most every spaceCheckInterval,
// from the put path (one put does it, the others read the result); in
// between, the committer subtracts what it wrote into sparse segments from
// the available bytes, and when that estimate falls below the reserve the
// next put looks at the disk at once.
type spaceGuard struct {
	fs                         vfs.FS
	dir                        string
	fullPercent, resumePercent float64 // 0: no ratio limit
	ringSize                   int64
	sparse                     bool // committed bytes take new blocks (ASYNC_FLUSH segments are sized with ftruncate)
	logger                     *slog.Logger
	now                        func() int64 // mono ns

	checkAt  atomic.Int64 // mono ns of the next statfs; 0: at once
	checking atomic.Bool
	avail    atomic.Int64  // available bytes: the last statfs minus what was committed since
	reserve  atomic.Int64  // set by each statfs
	usedPct  atomic.Uint64 // float64 bits of the last Use%
	full     atomic.Pointer[string]
	errLog   lograte.Limiter
}

func (g *spaceGuard) init(cfg *Config, now func() int64) {
	g.fs, g.dir = cfg.FS, cfg.Dir
	g.fullPercent, g.resumePercent = float64(cfg.DiskFullPercent), float64(cfg.DiskResumePercent)
	if g.resumePercent == 0 || g.resumePercent > g.fullPercent {
		g.resumePercent = g.fullPercent
	}
	g.ringSize = int64(cfg.RingSize)
	g.sparse = !cfg.FlushSync
	g.logger = cfg.Logger
	g.now = now
	g.avail.Store(math.MaxInt64)
}

// admit reports whether a put may go on; it looks at the disk when the
// last look is older than spaceCheckInterval. now is the put's clock
// reading (mono ns).
func (g *spaceGuard) admit(now int64) bool {
	if now >= g.checkAt.Load() {
		g.check(now)
	}
	return g.full.Load() == nil
}

// check runs statfs and updates the state; concurrent callers leave it to
// the first. It returns the statfs error (nil when another caller looks).
func (g *spaceGuard) check(now int64) error {
	if !g.checking.CompareAndSwap(false, true) {
		return nil
	}
	defer g.checking.Store(false)
	g.checkAt.Store(now + int64(spaceCheckInterval))
	d, err := g.fs.DiskUsage(g.dir)
	if err == nil && d.Total == 0 {
		err = fmt.Errorf("statfs %s: a file system of size 0", g.dir)
	}
	if err != nil {
		g.errLog.Log(g.logger, slog.LevelWarn, "commitlog: disk usage unavailable; keeping the last state", "dir", g.dir, "err", err)
		return err
	}
	pct := d.UsedPercent()
	reserve := min(g.ringSize, int64(d.Total/20))
	avail := int64(min(d.Avail, math.MaxInt64))
	g.usedPct.Store(math.Float64bits(pct))
	g.reserve.Store(reserve)
	g.avail.Store(avail)
	if g.full.Load() != nil {
		if pct <= g.resumePercent || g.resumePercent == 0 {
			if avail >= reserve {
				g.full.Store(nil)
				g.logger.Info("commitlog: disk space back; accepting puts", "dir", g.dir,
					"usedPercent", round1(pct), "availMiB", avail>>20)
			}
		}
		return nil
	}
	switch {
	case g.fullPercent > 0 && pct > g.fullPercent:
		g.setFull(fmt.Sprintf("disk full: %.1f%% of the disk holding %s is used, above the %.0f%% limit (diskSpaceWarningLevelRatio); puts are refused until use is back to %.0f%%",
			pct, g.dir, g.fullPercent, g.resumePercent))
	case avail < reserve:
		g.setFull(fmt.Sprintf("disk full: %d MiB available on the disk holding %s, below the %d MiB the log keeps in reserve; puts are refused until space is freed",
			avail>>20, g.dir, reserve>>20))
	}
	return nil
}

func (g *spaceGuard) setFull(reason string) {
	if g.full.Swap(&reason) == nil {
		g.logger.Error("commitlog: refusing puts", "reason", reason)
	}
}

// consumed accounts for n bytes the committer wrote. In a sparse segment
// they took new blocks: when the estimate falls below the reserve, the
// next put looks at the disk.
func (g *spaceGuard) consumed(n int64) {
	if !g.sparse || n <= 0 {
		return
	}
	if g.avail.Add(-n) < g.reserve.Load() {
		g.checkAt.Store(0)
	}
}

// markFull refuses puts after a write failed for lack of space, until a
// statfs shows space back.
func (g *spaceGuard) markFull(err error) {
	g.setFull("disk full: a CommitLog write failed (" + err.Error() + "); puts are refused until space is freed")
	g.checkAt.Store(g.now() + int64(spaceCheckInterval))
}

// reason is why puts are refused, or "".
func (g *spaceGuard) reason() string {
	if r := g.full.Load(); r != nil {
		return *r
	}
	return ""
}

// usedPercent is the Use% of the last statfs.
func (g *spaceGuard) usedPercent() float64 { return math.Float64frombits(g.usedPct.Load()) }

func round1(f float64) float64 { return math.Round(f*10) / 10 }

// DiskStatus is the space guard's view of the disk.
type DiskStatus struct {
	UsedPercent float64 // df's Use% of the disk holding the log, at the last look
	Full        bool    // puts are refused for lack of space
	Reason      string  // why, when Full
	Err         error   // this look failed: UsedPercent and Full are the last known
}

// DiskStatus looks at the disk now and reports what the space guard makes
// of it (the put path looks at most every spaceCheckInterval; the store's
// cleanup round and the admin commands call this).
func (l *Log) DiskStatus() DiskStatus {
	err := l.space.check(l.clock.mono())
	r := l.space.reason()
	return DiskStatus{UsedPercent: l.space.usedPercent(), Full: r != "", Reason: r, Err: err}
}
