package stats

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rocketd/rocketd/internal/lifecycle"
)

// Config configures Stats.
type Config struct {
	// Cluster is brokerClusterName: the key of the BROKER_* items.
	Cluster string
	// IsSystemTopic tells the topics the *_WITHOUT_SYSTEM_TOPIC totals
	// (msgPutTotalTodayNow...) leave out; it is asked once per topic (and
	// group), the first time one is counted. Nil: none is.
	IsSystemTopic func(topic string) bool
	// Now is the clock (default time.Now). The sampler reads it every
	// second.
	Now func() time.Time
	// NoSampler: New starts no sampler goroutine; the caller drives the
	// samplings with Sample (tests with a fake clock).
	NoSampler bool
}

// Stats counts what the broker puts and serves and samples the counts into
// Java's statistics windows. Counting (TopicPut, GroupGet, ...) is a few
// atomic adds on a striped counter found without allocation; the one
// sampler goroutine, started by New and stopped by Close, does the rest.
//
// A nil *Stats counts nothing and reads zero: only for benchmarks that
// measure the cost of counting.
type Stats struct {
	cfg    Config
	topics table[string]
	groups table[groupKey]
	broker *entry

	mu sync.Mutex // guards what the sampler keeps besides the windows
	// sec is the broker entry sampled every second, the last
	// storeKeep+1 samples (StoreStatsService's put/get lists).
	sec                                  []point
	nextMinute, nextHour, nextDay        int64 // unix ms of the next samplings
	nextMorning                          time.Time
	putTodayMorning, putYesterdayMorning uint64
	getTodayMorning, getYesterdayMorning uint64
	bootMillis                           int64

	putFailed atomic.Uint64 // puts the store refused (a failure path: one counter)
	lat       latency
	rates     []*Rate // NewRate's, sampled every second

	sampler lifecycle.Loop
}

// storeKeep is StoreStatsService's MAX_RECORDS_OF_SAMPLING (ten minutes
// of one-second samples).
const storeKeep = 600

// New returns a Stats whose sampler runs until Close.
func New(cfg Config) *Stats {
	s := newStats(cfg)
	if cfg.NoSampler {
		return s
	}
	s.sampler.Start("broker-stats", s.run)
	return s
}

// newStats returns a Stats without its sampler (tests call tick).
func newStats(cfg Config) *Stats {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.IsSystemTopic == nil {
		cfg.IsSystemTopic = func(string) bool { return false }
	}
	now := cfg.Now()
	ms := now.UnixMilli()
	s := &Stats{
		cfg: cfg, broker: newEntry(), bootMillis: ms,
		sec:        make([]point, 0, storeKeep+2),
		nextMinute: ms, nextHour: ms, nextDay: ms,
		nextMorning: nextMorning(now),
	}
	s.topics.system = cfg.IsSystemTopic
	s.groups.system = func(k groupKey) bool { return cfg.IsSystemTopic(k.topic) }
	return s
}

// Close stops the sampler. It is safe to call more than once; counting
// after Close still works (the windows just stop moving).
func (s *Stats) Close() error {
	if s != nil {
		s.sampler.Close()
	}
	return nil
}

func (s *Stats) run(ctx context.Context) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	s.tick(s.cfg.Now())
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			s.tick(s.cfg.Now())
		}
	}
}

// Sample does the samplings due at now, as the sampler does every second:
// for a Stats made with NoSampler.
func (s *Stats) Sample(now time.Time) {
	if s != nil {
		s.tick(now)
	}
}

// tick does every sampling due at now: the one-second store sample always,
// the 10 s / 10 min / 1 h windows when their period has come, and the
// morning record (BrokerStats.record) once midnight has passed.
func (s *Stats) tick(now time.Time) {
	ms := now.UnixMilli()
	p := point{at: ms, v: s.broker.c.load()}
	s.mu.Lock()
	s.sec = append(s.sec, p)
	if len(s.sec) > storeKeep+1 {
		copy(s.sec, s.sec[1:])
		s.sec = s.sec[:len(s.sec)-1]
	}
	s.sampleLatency(ms)
	rates := s.rates
	minute, hour, day := due(&s.nextMinute, ms, minutePeriod), due(&s.nextHour, ms, hourPeriod), due(&s.nextDay, ms, dayPeriod)
	if !now.Before(s.nextMorning) {
		s.putYesterdayMorning, s.putTodayMorning = s.putTodayMorning, p.v[fPutNoSys]
		s.getYesterdayMorning, s.getTodayMorning = s.getTodayMorning, p.v[fGetNoSys]
		s.nextMorning = nextMorning(now)
	}
	s.mu.Unlock()
	for _, r := range rates {
		r.sample(ms) // outside s.mu: read calls into other services
	}
	if !minute && !hour && !day {
		return
	}
	sample := func(e *entry) {
		p := point{at: ms, v: e.c.load()}
		e.mu.Lock()
		if minute {
			e.minute.add(p)
		}
		if hour {
			e.hour.add(p)
		}
		if day {
			e.day.add(p)
		}
		e.mu.Unlock()
	}
	sample(s.broker)
	s.topics.each(func(_ string, e *entry) { sample(e) })
	s.groups.each(func(_ groupKey, e *entry) { sample(e) })
}

// due reports whether the sampling scheduled at *next is due at ms and, if
// so, schedules the next one a period later (or a period after ms when the
// sampler fell behind, as a fixed-rate executor would run late ones once).
func due(next *int64, ms, period int64) bool {
	if ms < *next {
		return false
	}
	*next += period
	if *next <= ms {
		*next = ms + period
	}
	return true
}

// nextMorning is the next local midnight after t (UtilAll.computeNextMorningTimeMillis).
func nextMorning(t time.Time) time.Time {
	y, m, d := t.Date()
	return time.Date(y, m, d+1, 0, 0, 0, 0, t.Location())
}

// TopicPut counts msgs messages of bytes stored bytes put to topic by one
// request: TOPIC_PUT_NUMS, TOPIC_PUT_SIZE, BROKER_PUT_NUMS and, unless
// topic is a system topic, BROKER_PUT_NUMS_WITHOUT_SYSTEM_TOPIC.
func (s *Stats) TopicPut(topic string, msgs, bytes int) {
	if s == nil {
		return
	}
	i := stripe()
	e := s.topics.get(topic)
	c := &e.c.cells[i]
	c.v[fTimes].Add(1)
	c.v[fMsgs].Add(uint64(msgs))
	c.v[fBytes].Add(uint64(bytes))
	b := &s.broker.c.cells[i]
	b.v[fPut].Add(uint64(msgs))
	b.v[fStorePut].Add(uint64(msgs))
	if !e.system {
		b.v[fPutNoSys].Add(uint64(msgs))
	}
}

// SendBack counts a message group sent back (CONSUMER_SEND_MSG_BACK) that
// was stored: SNDBCK_PUT_NUMS of topic@group, topic being the message's
// original topic. The stored message counts for putTps only, as Java's
// store counts every put and the broker no TOPIC_PUT_NUMS for it.
func (s *Stats) SendBack(group, topic string) {
	if s == nil {
		return
	}
	i := stripe()
	s.groups.get(groupKey{group, topic}).c.cells[i].v[fSendBack].Add(1)
	s.broker.c.cells[i].v[fStorePut].Add(1)
}

// GroupGet counts one pull of group on topic that found msgs messages of
// bytes bytes in latency: GROUP_GET_NUMS, GROUP_GET_SIZE,
// GROUP_GET_LATENCY, BROKER_GET_NUMS (and without system topics), and
// the store's getFoundTps and getTransferredTps.
func (s *Stats) GroupGet(group, topic string, msgs, bytes int, latency time.Duration) {
	if s == nil {
		return
	}
	i := stripe()
	e := s.groups.get(groupKey{group, topic})
	c := &e.c.cells[i]
	c.v[fTimes].Add(1)
	c.v[fMsgs].Add(uint64(msgs))
	c.v[fBytes].Add(uint64(bytes))
	c.v[fLatency].Add(uint64(max(latency.Milliseconds(), 0)))
	b := &s.broker.c.cells[i]
	b.v[fGet].Add(uint64(msgs))
	b.v[fGetFound].Add(1)
	b.v[fTransferred].Add(uint64(msgs))
	if !e.system {
		b.v[fGetNoSys].Add(uint64(msgs))
	}
}

// PutFailed counts a put the store did not store (putMessageFailedTimes).
func (s *Stats) PutFailed() {
	if s != nil {
		s.putFailed.Add(1)
	}
}

// GetMiss counts a pull that found no message (getMissTps).
func (s *Stats) GetMiss() {
	if s == nil {
		return
	}
	s.broker.c.cells[stripe()].v[fGetMiss].Add(1)
}

// EachTopicPut calls fn with every topic's cumulative put messages and
// bytes since the broker started.
func (s *Stats) EachTopicPut(fn func(topic string, msgs, bytes uint64)) {
	if s == nil {
		return
	}
	s.topics.each(func(t string, e *entry) {
		v := e.c.load()
		fn(t, v[fMsgs], v[fBytes])
	})
}

// EachGroupGet calls fn with every group and topic's cumulative pulled
// messages and bytes since the broker started (pairs that only sent
// messages back report 0, 0).
func (s *Stats) EachGroupGet(fn func(group, topic string, msgs, bytes uint64)) {
	if s == nil {
		return
	}
	s.groups.each(func(k groupKey, e *entry) {
		v := e.c.load()
		fn(k.group, k.topic, v[fMsgs], v[fBytes])
	})
}

// BrokerPutTotal is the number of messages put since the broker started
// (BROKER_PUT_NUMS: every topic, system ones included).
func (s *Stats) BrokerPutTotal() uint64 {
	if s == nil {
		return 0
	}
	return s.broker.c.sum(fPut)
}

// BrokerGetTotal is the number of messages pulled since the broker started
// (BROKER_GET_NUMS).
func (s *Stats) BrokerGetTotal() uint64 {
	if s == nil {
		return 0
	}
	return s.broker.c.sum(fGet)
}

// GroupGetTPS is the messages per second group pulled from topic over the
// last minute (BrokerStatsManager.tpsGroupGetNums: consumeTps).
func (s *Stats) GroupGetTPS(group, topic string) float64 {
	if s == nil {
		return 0
	}
	e, ok := s.groups.lookup(groupKey{group, topic})
	if !ok {
		return 0
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.minute.snapshot(fMsgs, fTimes).TPS
}

// Names of the items Item serves (Java's Stats and BrokerStatsManager
// constants, VIEW_BROKER_STATS_DATA's statsName).
const (
	TopicPutNums                    = "TOPIC_PUT_NUMS"
	TopicPutSize                    = "TOPIC_PUT_SIZE"
	GroupGetNums                    = "GROUP_GET_NUMS"
	GroupGetSize                    = "GROUP_GET_SIZE"
	GroupGetLatency                 = "GROUP_GET_LATENCY"
	SndbckPutNums                   = "SNDBCK_PUT_NUMS"
	BrokerPutNums                   = "BROKER_PUT_NUMS"
	BrokerGetNums                   = "BROKER_GET_NUMS"
	BrokerPutNumsWithoutSystemTopic = "BROKER_PUT_NUMS_WITHOUT_SYSTEM_TOPIC"
	BrokerGetNumsWithoutSystemTopic = "BROKER_GET_NUMS_WITHOUT_SYSTEM_TOPIC"
)

// Windows are one item's snapshots over the last minute, hour and day
// (BrokerStatsData).
type Windows struct {
	Minute, Hour, Day Snapshot
}

// Item returns the windows of the item statsName has for statsKey: a topic
// for TOPIC_*, "topic@group" for GROUP_* and SNDBCK_PUT_NUMS, the cluster
// name for BROKER_*. false: no such item (nothing was counted under that
// key yet, or the name is not one of the constants above).
func (s *Stats) Item(statsName, statsKey string) (Windows, bool) {
	if s == nil {
		return Windows{}, false
	}
	var e *entry
	vf, tf := fMsgs, fTimes
	switch statsName {
	case TopicPutNums, TopicPutSize:
		e, _ = s.topics.lookup(statsKey)
		if statsName == TopicPutSize {
			vf = fBytes
		}
	case GroupGetNums, GroupGetSize, GroupGetLatency, SndbckPutNums:
		topic, group, ok := strings.Cut(statsKey, "@")
		if !ok {
			return Windows{}, false
		}
		e, _ = s.groups.lookup(groupKey{group, topic})
		switch statsName {
		case GroupGetSize:
			vf = fBytes
		case GroupGetLatency:
			vf = fLatency
		case SndbckPutNums:
			vf, tf = fSendBack, fSendBack
		}
		// Java keeps gets and send-backs in separate item sets: a
		// group@topic that only pulled has no SNDBCK_PUT_NUMS item (the
		// answer is "not exist", and rocketmq-exporter yields no
		// rocketmq_send_back_nums series), one that only sent back no
		// GROUP_GET_* item.
		if e != nil && e.c.sum(tf) == 0 {
			e = nil
		}
	case BrokerPutNums, BrokerGetNums, BrokerPutNumsWithoutSystemTopic, BrokerGetNumsWithoutSystemTopic:
		if statsKey != s.cfg.Cluster {
			return Windows{}, false
		}
		e, tf = s.broker, -1
		vf = map[string]int{BrokerPutNums: fPut, BrokerGetNums: fGet,
			BrokerPutNumsWithoutSystemTopic: fPutNoSys, BrokerGetNumsWithoutSystemTopic: fGetNoSys}[statsName]
	}
	if e == nil {
		return Windows{}, false
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return Windows{Minute: e.minute.snapshot(vf, tf), Hour: e.hour.snapshot(vf, tf), Day: e.day.snapshot(vf, tf)}, true
}
