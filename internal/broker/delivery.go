package broker

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/rocketd/rocketd/internal/broker/meta"
	"github.com/rocketd/rocketd/internal/broker/schedule"
	"github.com/rocketd/rocketd/internal/broker/stats"
	"github.com/rocketd/rocketd/internal/broker/timer"
	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/store"
	"github.com/rocketd/rocketd/internal/vfs"
)

// TimerDirName is the timer's directory under the store root (bucket
// files and checkpoint; see package timer). Not RocketMQ 5's timerlog or
// timerwheel: the format differs, and a store directory carried over from
// a Java broker must not be misread.
const TimerDirName = "timerbuckets"

// delivery runs the services that put parked messages back: delay levels
// (SCHEDULE_TOPIC_XXXX) and timer messages (rmq_sys_wheel_timer). Masters
// only: a slave holds copies of the parked messages and receives
// delayOffset.json and the timer checkpoint from its master; it delivers
// nothing. A role change starts a new one or closes the running one
// (roleservices.go).
type delivery struct {
	schedule *schedule.Service
	timer    *timer.Service
	offsets  *meta.DelayOffsets // the schedule's progress per level
	store    *store.Store
	rates    *timerRates
}

// timerRates are the timer's enqueued and delivered messages per second
// over the broker's life: a role change replaces the timer, whose
// counters start again at 0, so the counts of the closed ones are kept.
type timerRates struct {
	in, out *stats.Rate
	// mu orders a read after a closed timer's counts moved to done.
	mu              sync.Mutex
	cur             func() *delivery
	doneIn, doneOut uint64
}

func newTimerRates(s *stats.Stats, cur func() *delivery) *timerRates {
	r := &timerRates{cur: cur}
	r.in = s.NewRate(func() uint64 { return r.read(func(ts timer.Stats) int64 { return ts.Enqueued }, &r.doneIn) })
	r.out = s.NewRate(func() uint64 { return r.read(func(ts timer.Stats) int64 { return ts.Delivered }, &r.doneOut) })
	return r
}

func (r *timerRates) read(field func(timer.Stats) int64, done *uint64) uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := *done
	if d := r.cur(); d != nil {
		n += uint64(field(d.timer.Stats()))
	}
	return n
}

// retire adds a closed timer's final counts; detach then drops it from
// the broker, both under mu so that no read counts it twice or not at all.
func (r *timerRates) retire(ts timer.Stats, detach func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.doneIn += uint64(ts.Enqueued)
	r.doneOut += uint64(ts.Delivered)
	detach()
}

// startDelivery opens delayOffset.json and the timer directory and starts
// both services. takeover (a promoted slave) gives the timer the old
// master's progress (see Broker.timerTakeover); nil: its own.
func (b *Broker) startDelivery(mopts meta.Options, fs vfs.FS, takeover *timer.Checkpoint) (*delivery, error) {
	levels, err := b.cfg.DelayLevels()
	if err != nil {
		return nil, fmt.Errorf("broker: messageDelayLevel: %w", err)
	}
	offsets, err := meta.OpenDelayOffsets(mopts)
	if err != nil {
		return nil, fmt.Errorf("broker: %w", err)
	}
	d := &delivery{offsets: offsets, store: b.store, rates: b.timerRates}
	counted := countedStore{Store: b.store, stats: b.stats}
	d.schedule, err = schedule.New(schedule.Config{
		Store: counted, Offsets: offsets, Levels: levels,
		PersistInterval: b.cfg.FlushDelayOffsetInterval, Logger: b.log,
	})
	if err != nil {
		return nil, fmt.Errorf("broker: %w", err)
	}
	d.timer, err = timer.New(timer.Config{
		Store: counted, Dir: b.timerDir(), FS: fs, Logger: b.log, Takeover: takeover,
		// Far messages are copied well before CommitLog retention could
		// delete them.
		CopyAfter: max(time.Minute, min(timer.DefaultCopyAfter, b.cfg.FileReservedDuration()/4)),
	})
	if err != nil {
		return nil, errors.Join(fmt.Errorf("broker: %w", err), offsets.Close())
	}
	if err := d.schedule.Start(); err != nil {
		return nil, errors.Join(fmt.Errorf("broker: %w", err), d.timer.Close(), offsets.Close())
	}
	if err := d.timer.Start(); err != nil {
		return nil, errors.Join(fmt.Errorf("broker: %w", err), d.schedule.Close())
	}
	return d, nil
}

// timerDir is the timer's directory.
func (b *Broker) timerDir() string { return filepath.Join(b.store.Dir(), TimerDirName) }

// timerCheckpoint maps the timer's saved progress onto Java's
// TimerCheckpoint (GET_TIMER_CHECK_POINT): lastReadTimeMs is the
// watermark (every message due before it is delivered), the timer queue
// offsets are the next offset to file (a master's own), the data version
// counts the saves; lastTimerLogFlushPos is 0: rocketd has no timerlog
// (its buckets are a different format, see package timer). False on a
// slave, which runs no timer.
func (d *delivery) timerCheckpoint() (protocol.TimerCheckpoint, bool) {
	if d == nil {
		return protocol.TimerCheckpoint{}, false
	}
	c := d.timer.Checkpoint()
	return protocol.TimerCheckpoint{
		LastReadTimeMs: c.WatermarkMs, LastTimerQueueOffset: c.EnqueueOffset, MasterTimerQueueOffset: c.EnqueueOffset,
		Timestamp: c.SavedAtMs, Counter: c.Saves + 1,
	}, true
}

// timerRecall recalls a held timer message (RECALL_MESSAGE); false on a
// slave, which runs no timer.
func (d *delivery) timerRecall(topic, uniqKey string, deliverMs int64) (timer.RecallStatus, bool) {
	if d == nil {
		return 0, false
	}
	return d.timer.Recall(topic, uniqKey, deliverMs), true
}

// timerMetrics is GET_TIMER_METRICS's body: the timer's pending counts
// per topic, the data version counting the checkpoint saves (the counts
// are saved with it). False on a slave.
func (d *delivery) timerMetrics() (protocol.TimerMetrics, bool) {
	if d == nil {
		return protocol.TimerMetrics{}, false
	}
	c := d.timer.Checkpoint()
	m := protocol.TimerMetrics{DataVersion: protocol.DataVersion{Timestamp: c.SavedAtMs, Counter: c.Saves + 1},
		TimingCount: map[string]protocol.TimerMetric{}}
	for topic, tm := range d.timer.Metrics() {
		m.TimingCount[topic] = protocol.TimerMetric{Count: tm.Count, TimeStamp: tm.TimeStamp}
	}
	return m, true
}

// close stops both services and saves their progress (before the store
// closes: their last puts must reach it).
func (d *delivery) close() error {
	if d == nil {
		return nil
	}
	return errors.Join(d.schedule.Close(), d.timer.Close())
}

// runningStats adds ScheduleMessageService.buildRunningStats' keys to the
// runtime info: scheduleMessageOffset_<level> = "delivered,max" offsets of
// every level with progress; and the timer's figures as Java's
// TimerMessageStore reports them: timerOffsetBehind (messages in the timer
// queue not read yet), timerReadBehind (seconds between now and the time
// up to which every held message was delivered), timerEnqueueTps and
// timerDequeueTps (over the last 10 s). timerCongestNum stays 0: rocketd's
// timer has no per-slot limit to congest.
func (d *delivery) runningStats(kv map[string]string) {
	if d == nil {
		return
	}
	ts := d.timer.Stats()
	kv["timerOffsetBehind"] = strconv.FormatInt(max(d.store.MaxOffset(timer.Topic, 0)-ts.EnqueueOffset, 0), 10)
	kv["timerReadBehind"] = strconv.FormatInt(max(time.Now().UnixMilli()-ts.WatermarkMs, 0)/1000, 10)
	kv["timerEnqueueTps"] = stats.JavaFloat(float32(d.rates.in.PerSecond()))
	kv["timerDequeueTps"] = stats.JavaFloat(float32(d.rates.out.PerSecond()))
	for level, off := range d.offsets.Snapshot().OffsetTable {
		kv[fmt.Sprintf("scheduleMessageOffset_%d", level)] = fmt.Sprintf("%d,%d", off, d.store.MaxOffset(message.ScheduleTopic, level-1))
	}
}

// countedStore is the store as the delivery services see it: a message
// they put back counts as a put of its real topic (TOPIC_PUT_NUMS,
// TOPIC_PUT_SIZE, BROKER_PUT_NUMS), as Java's ScheduleMessageService and
// TimerMessageStore count their deliveries.
type countedStore struct {
	*store.Store
	stats *stats.Stats
}

func (c countedStore) PutMessage(ctx context.Context, r *message.Record, opts store.PutOptions) store.PutResult {
	res := c.Store.PutMessage(ctx, r, opts)
	if res.Status.Stored() {
		c.stats.TopicPut(r.Topic, int(max(res.MsgNum, 1)), int(res.WroteBytes))
	}
	return res
}
