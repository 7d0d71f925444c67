package meta

import (
	"fmt"
	"log/slog"
	"maps"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rocketd/rocketd/internal/protocol"
)

// DelayOffsets is the delay-level progress of the schedule service
// (config/delayOffset.json, Java's ScheduleMessageService offsetTable):
// delay level (1-based) -> next offset of that SCHEDULE_TOPIC_XXXX queue
// (queue id = level - 1) to deliver. Safe for concurrent use.
type DelayOffsets struct {
	file *configFile
	log  *slog.Logger

	mu struct {
		sync.RWMutex
		table map[int32]int64
	}
	changes   atomic.Uint64
	persisted uint64 // guarded by file.mu
	wroteOnce bool   // guarded by file.mu
	auto      autoPersist
}

// OpenDelayOffsets loads config/delayOffset.json (or its .bak).
func OpenDelayOffsets(opts Options) (*DelayOffsets, error) {
	if err := opts.ensureDefaults(); err != nil {
		return nil, err
	}
	d := &DelayOffsets{file: opts.file(DelayOffsetFile), log: opts.Logger}
	d.mu.table = map[int32]int64{}
	_, err := d.file.load(func(data []byte) error {
		var f protocol.DelayOffsetTable
		if err := protocol.UnmarshalFastJSON(data, &f); err != nil {
			return err
		}
		if f.OffsetTable != nil {
			d.mu.table = f.OffsetTable
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("meta: delay offsets: %w", err)
	}
	return d, nil
}

// Get returns the next offset to deliver of a delay level.
func (d *DelayOffsets) Get(level int32) (int64, bool) {
	d.mu.RLock()
	off, ok := d.mu.table[level]
	d.mu.RUnlock()
	return off, ok
}

// Set records the next offset to deliver of a delay level.
func (d *DelayOffsets) Set(level int32, offset int64) {
	d.mu.Lock()
	d.mu.table[level] = offset
	d.mu.Unlock()
	d.changes.Add(1)
}

// Snapshot returns a copy in the file form (GET_ALL_DELAY_OFFSET body).
func (d *DelayOffsets) Snapshot() protocol.DelayOffsetTable {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return protocol.DelayOffsetTable{OffsetTable: maps.Clone(d.mu.table)}
}

// Persist writes config/delayOffset.json if anything changed since the
// last successful persist (the first call always writes).
func (d *DelayOffsets) Persist() error {
	d.file.mu.Lock()
	defer d.file.mu.Unlock()
	changes := d.changes.Load()
	if d.wroteOnce && changes == d.persisted {
		return nil
	}
	data, err := protocol.MarshalFastJSONPretty(d.Snapshot())
	if err != nil {
		return fmt.Errorf("meta: encode %s: %w", d.file.path, err)
	}
	if err := writeConfigFile(d.file.fs, d.file.path, data); err != nil {
		return err
	}
	d.persisted, d.wroteOnce = changes, true
	return nil
}

// StartAutoPersist starts the goroutine that persists every interval
// (flushDelayOffsetInterval, 10 s). Close stops it.
func (d *DelayOffsets) StartAutoPersist(interval time.Duration) error {
	return d.auto.start(DelayOffsetFile, interval, d.Persist, d.log)
}

// Close stops the auto-persist goroutine and persists a last time. Later
// calls do nothing and return nil.
func (d *DelayOffsets) Close() error {
	if !d.auto.stop() {
		return nil
	}
	return d.Persist()
}
