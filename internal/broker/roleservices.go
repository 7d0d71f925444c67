package broker

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"time"

	"github.com/rocketd/rocketd/internal/broker/meta"
	"github.com/rocketd/rocketd/internal/broker/timer"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/vfs"
)

// MasterTimerCheckpointFile is where a slave keeps its master's timer
// checkpoint (under the config directory): Java's 56-byte TimerCheckpoint
// as GET_TIMER_CHECK_POINT answers it (protocol.TimerCheckpoint), copied
// by the role's metadata copy. A promoted slave's timer goes on from it.
const MasterTimerCheckpointFile = "masterTimerCheckpoint"

// masterServices are the services a master runs beside replication and
// that follow the runtime role (role.MasterServices): the delay-level
// and timer delivery and the transaction check-back. The Role calls it
// under its lock, so StartMaster and StopMaster never overlap.
type masterServices struct {
	b     *Broker
	mopts meta.Options
	fs    vfs.FS
}

// StartMaster starts the delivery, its timer going on from the old
// master's checkpoint, and the transaction check-back, which goes on from
// the half and op queue progress in the consumer offsets the slave copied.
func (m masterServices) StartMaster() error {
	b := m.b
	if b.delivery.Load() == nil {
		takeover, err := m.timerTakeover()
		if err != nil {
			return err
		}
		d, err := b.startDelivery(m.mopts, m.fs, takeover)
		if err != nil {
			return err
		}
		b.delivery.Store(d)
	}
	if !b.txn.Running() {
		if err := b.txn.Start(); err != nil {
			return fmt.Errorf("broker: %w", err)
		}
	}
	return nil
}

// StopMaster stops the check-back and the delivery, which save their
// progress (delayOffset.json, the timer checkpoint) while the store
// still takes their last puts.
func (m masterServices) StopMaster() error {
	b := m.b
	b.txn.Stop()
	return b.closeDelivery()
}

// closeDelivery stops the running delivery, if any, and drops it.
func (b *Broker) closeDelivery() error {
	d := b.delivery.Load()
	if d == nil {
		return nil
	}
	err := d.close()
	b.timerRates.retire(d.timer.Stats(), func() { b.delivery.Store(nil) })
	return err
}

// timerTakeover prepares the timer directory of a promoted slave and
// returns the progress its timer goes on from. The directory's own state
// is dropped: it is of an earlier term as master, whose successor may
// have delivered since. The old master's checkpoint, as the slave last
// copied it, says what it delivered: the held messages below its queue
// offset due before its watermark. Without a copy (the master had no
// timer, or the copy never succeeded) every held message already due is
// taken as delivered.
func (m masterServices) timerTakeover() (*timer.Checkpoint, error) {
	b := m.b
	dir := b.timerDir()
	if err := m.fs.RemoveAll(dir); err != nil {
		return nil, fmt.Errorf("broker: clear %s: %w", dir, err)
	}
	path := filepath.Join(m.mopts.Dir, MasterTimerCheckpointFile)
	body, err := vfs.ReadFile(m.fs, path)
	if errors.Is(err, fs.ErrNotExist) {
		cp := &timer.Checkpoint{EnqueueOffset: b.store.MaxOffset(timer.Topic, 0), WatermarkMs: time.Now().UnixMilli()}
		b.log.Warn("broker: promoted without the old master's timer checkpoint: held messages already due are taken as delivered",
			"timerQueueOffset", cp.EnqueueOffset)
		return cp, nil
	}
	if err != nil {
		return nil, fmt.Errorf("broker: %w", err)
	}
	c, err := protocol.DecodeTimerCheckpoint(body)
	if err != nil {
		return nil, fmt.Errorf("broker: %s: %w", path, err)
	}
	b.log.Info("broker: timer takes over", "timerQueueOffset", c.LastTimerQueueOffset, "watermarkMs", c.LastReadTimeMs)
	return &timer.Checkpoint{EnqueueOffset: c.LastTimerQueueOffset, WatermarkMs: c.LastReadTimeMs}, nil
}
