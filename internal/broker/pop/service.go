package pop

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rocketd/rocketd/internal/broker/meta"
	"github.com/rocketd/rocketd/internal/lifecycle"
	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/store"
	"github.com/rocketd/rocketd/internal/vfs"
)

const (
	// MaxPopNums is the most messages one POP_MESSAGE may ask for.
	MaxPopNums = 32
	// initModeMin is ConsumeInitMode.MIN (MAX, 0, is the default).
	initModeMin = 1
)

// Config describes a Service.
type Config struct {
	Store   *store.Store
	Topics  *meta.Topics
	Groups  *meta.Groups
	Offsets *meta.Offsets
	// BrokerName goes into check points and receipt handles; Cluster
	// names the revive topic.
	BrokerName, Cluster string
	StoreHost           netip.AddrPort
	// ReviveQueueNum is reviveQueueNum: the revive topic's queue count.
	ReviveQueueNum int32
	// ReviveInterval is reviveInterval: how often the revive service
	// scans the revive log.
	ReviveInterval time.Duration
	// RetryV2 is enableRetryTopicV2: pop retry topics are named
	// %RETRY%group+topic instead of %RETRY%group_topic.
	RetryV2 bool
	// RetryProbability is popFromRetryProbability: the percentage of pops
	// that read the retry topic first.
	RetryProbability int
	// OrderInfoPath is the orderly pops' state file
	// (<config dir>/consumerOrderInfo.json); "" keeps it in memory only.
	OrderInfoPath string
	FS            vfs.FS // default vfs.Default
	// Now is the clock (tests: a fake one). Default time.Now.
	Now func() time.Time
	// Notify wakes the pops held on topic and hold queue (see HoldQueue)
	// whose filter may match tagsCode (WakeAll: every one).
	Notify func(topic string, holdQueue int32, tagsCode int64)
	// SentToDLQ, when set, is told of each message the revive service
	// stored in group's DLQ (topic: the popped topic); it must not block.
	SentToDLQ func(group, topic string)
	// RevivedToRetry, when set, is told of each put of a revived message
	// into its retry topic and the put's status (PUT_OK, ...); it must
	// not block (rocketmq_pop_revive_retry_messages_total).
	RevivedToRetry func(group, topic, putStatus string)
	// ReviveLog, when set, is told of each check point and ack record
	// put into the revive log and read back by the revive service
	// (rocketmq_pop_revive_in/out_message_total); it must not block.
	ReviveLog ReviveObserver
	Logger    *slog.Logger
}

// ReviveObserver follows the revive log's records (PopMetricsManager's
// incPopRevive*PutCount and incPopRevive*GetCount): ck is true for a
// check point, false for an ack or batch ack record.
type ReviveObserver interface {
	// RevivePut: a record of group and topic was put, with the put's
	// status (PUT_OK, ...), stored or not.
	RevivePut(group, topic string, ck bool, putStatus string)
	// ReviveGot: the revive service read a record of group and topic
	// from revive queue queueID.
	ReviveGot(group, topic string, queueID int32, ck bool)
}

// Service serves POP consumption: pops, acks, invisibility changes, the
// orderly pops' state and the revive service that makes unacked messages
// visible again.
type Service struct {
	cfg         Config
	reviveTopic string
	log         *slog.Logger
	locks       queueLocks
	ckCounter   atomic.Int64
	order       *orderInfo
	// popped maps each topic pops have read, and each pop retry topic,
	// to the topic its waiters hold on (arrivals wake them).
	popped sync.Map // string -> string

	reviver *reviver
	loop    lifecycle.Loop // the revive service
	closed  sync.Once
}

// New builds a Service; Start runs its revive service.
func New(cfg Config) (*Service, error) {
	if cfg.Store == nil || cfg.Topics == nil || cfg.Groups == nil || cfg.Offsets == nil {
		return nil, errors.New("pop: Store, Topics, Groups and Offsets are required")
	}
	if cfg.ReviveQueueNum <= 0 || cfg.ReviveQueueNum >= OrderReviveQueue {
		return nil, fmt.Errorf("pop: reviveQueueNum %d: want 1..%d", cfg.ReviveQueueNum, OrderReviveQueue-1)
	}
	if cfg.ReviveInterval <= 0 {
		return nil, fmt.Errorf("pop: reviveInterval %v: want > 0", cfg.ReviveInterval)
	}
	if cfg.RetryProbability < 0 || cfg.RetryProbability > 100 {
		return nil, fmt.Errorf("pop: popFromRetryProbability %d: want 0..100", cfg.RetryProbability)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Notify == nil {
		cfg.Notify = func(string, int32, int64) {}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Service{cfg: cfg, reviveTopic: ReviveTopic(cfg.Cluster), log: cfg.Logger}
	order, err := openOrderInfo(cfg.FS, cfg.OrderInfoPath)
	if err != nil {
		return nil, err
	}
	s.order = order
	if _, _, err := cfg.Topics.EnsureTopic(s.reviveTopic, cfg.ReviveQueueNum, meta.PermReadWrite, 0); err != nil {
		return nil, fmt.Errorf("pop: revive topic %s: %w", s.reviveTopic, err)
	}
	s.reviver = newReviver(s)
	return s, nil
}

// Start runs the revive service until Close.
func (s *Service) Start() {
	s.loop.Start("pop-revive", func(ctx context.Context) {
		t := time.NewTicker(s.cfg.ReviveInterval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				s.reviver.runOnce(s.cfg.Now())
				if err := s.order.persistIfChanged(); err != nil {
					s.reviver.failed(err)
				}
			}
		}
	})
}

// Close stops the revive service and saves the orderly pops' state.
func (s *Service) Close() error {
	var err error
	s.closed.Do(func() {
		s.loop.Close()
		err = s.order.persist()
	})
	return err
}

// Revive runs one revive round at now (tests drive it with a fake clock).
func (s *Service) Revive(now time.Time) { s.reviver.runOnce(now) }

// PersistOrderInfo writes consumerOrderInfo.json (the broker's periodic
// flush and Close).
func (s *Service) PersistOrderInfo() error { return s.order.persist() }

// HoldQueue is the long-polling queue key a pop of queueID holds on: pops
// share the Holder with pulls, so their keys are negative (-1: a pop of
// every queue; -2-q: a pop of queue q), never a real queue's.
func HoldQueue(queueID int32) int32 {
	if queueID < 0 {
		return -1
	}
	return -2 - queueID
}

// WakeAll is the tags code of a wake-up that is not an arrival (an
// orderly queue unblocked by an ack): a held pop's match must accept it
// whatever its filter. Real tags codes are 32-bit hashes.
const WakeAll int64 = math.MinInt64

// Arrived is the store's arrival listener: it wakes the pops held on the
// topic whose filter may match tagsCode (a pop retry topic wakes the pops
// of its topic).
func (s *Service) Arrived(topic string, queueID int32, tagsCode int64) {
	v, ok := s.popped.Load(topic)
	if !ok {
		return
	}
	target := v.(string)
	s.cfg.Notify(target, -1, tagsCode)
	if target == topic {
		s.cfg.Notify(target, HoldQueue(queueID), tagsCode)
	}
}

// Request is a decoded POP_MESSAGE after the processor's checks.
type Request struct {
	Group, Topic  string
	QueueID       int32 // -1: all readable queues
	MaxMsgNums    int
	InvisibleTime int64
	InitMode      int32
	Order         bool
	AttemptID     string
	// Filter is the pull path's filter of the request's expression; it
	// applies to the retry topic too.
	Filter store.MessageFilter
}

// Result is what a pop found. Release it once Parts are written.
type Result struct {
	Header protocol.PopMessageResponseHeader
	Parts  [][]byte // stored records, in order
	gets   []*store.GetResult
}

// Release returns the store's read buffers.
func (r *Result) Release() {
	for _, g := range r.gets {
		g.Release()
	}
	r.gets, r.Parts = nil, nil
}

// Pop follows PopMessageProcessor: the retry topic first in
// RetryProbability percent of the pops, then the topic's queue(s), then
// the retry topic again if the batch is not full (never for an orderly
// pop). tc is the topic's config.
func (s *Service) Pop(r *Request, tc protocol.TopicConfig) *Result {
	res := &Result{}
	s.popped.LoadOrStore(r.Topic, r.Topic)
	retryTopic := RetryTopic(r.Topic, r.Group, s.cfg.RetryV2)
	s.popped.LoadOrStore(retryTopic, r.Topic)
	popTime := s.cfg.Now().UnixMilli()
	reviveQid := int32(OrderReviveQueue)
	if !r.Order {
		reviveQid = int32(s.ckCounter.Add(1) % int64(s.cfg.ReviveQueueNum))
	}
	randomQ := rand.IntN(100)
	needRetry := randomQ < s.cfg.RetryProbability
	var info offsetInfo
	var rest int64
	if needRetry && !r.Order {
		rest += s.popRetry(r, retryTopic, randomQ, popTime, reviveQid, res, &info)
	}
	if r.QueueID < 0 {
		rest += s.popQueues(r, r.Topic, tc.ReadQueueNums, randomQ, popTime, reviveQid, res, &info)
	} else {
		rest += s.popQueue(r, r.Topic, r.QueueID, popTime, reviveQid, res, &info)
	}
	if !needRetry && !r.Order && len(res.Parts) < r.MaxMsgNums {
		rest += s.popRetry(r, retryTopic, randomQ, popTime, reviveQid, res, &info)
	}
	res.Header = protocol.PopMessageResponseHeader{
		PopTime: popTime, InvisibleTime: r.InvisibleTime, ReviveQid: reviveQid, RestNum: rest,
		StartOffsetInfo: info.start.String(), MsgOffsetInfo: info.msg.String(), OrderCountInfo: info.order.String(),
	}
	return res
}

// popRetry pops the group's pop retry topic, if it exists yet.
func (s *Service) popRetry(r *Request, topic string, randomQ int, popTime int64, reviveQid int32, res *Result, info *offsetInfo) int64 {
	tc, ok := s.cfg.Topics.Get(topic)
	if !ok {
		return 0
	}
	return s.popQueues(r, topic, tc.ReadQueueNums, randomQ, popTime, reviveQid, res, info)
}

// popQueues pops the n readable queues of topic, starting at a random one.
func (s *Service) popQueues(r *Request, topic string, n int32, randomQ int, popTime int64, reviveQid int32, res *Result, info *offsetInfo) int64 {
	var rest int64
	for i := range max(n, 0) {
		q := (int32(randomQ) + i) % n
		rest += s.popQueue(r, topic, q, popTime, reviveQid, res, info)
	}
	return rest
}

// popQueue pops one queue under its lock and returns the messages left in
// it (restNum).
func (s *Service) popQueue(r *Request, topic string, qid int32, popTime int64, reviveQid int32, res *Result, info *offsetInfo) int64 {
	st := s.cfg.Store
	key := lockKey(topic, r.Group, qid)
	if !s.locks.tryLock(key) {
		return max(0, st.MaxOffset(topic, qid)-s.popOffset(r.Group, topic, qid, r.InitMode, false))
	}
	defer s.locks.unlock(key)
	offset := s.popOffset(r.Group, topic, qid, r.InitMode, true)
	if r.Order {
		if s.order.blocked(topic, r.Group, qid, r.AttemptID, s.cfg.Now().UnixMilli()) {
			return 0
		}
	}
	need := r.MaxMsgNums - len(res.Parts)
	if need <= 0 {
		return max(0, st.MaxOffset(topic, qid)-offset)
	}
	g, err := st.GetMessage(r.Group, topic, qid, offset, need, r.Filter)
	if err != nil {
		s.log.Warn("pop: read failed", "topic", topic, "queue", qid, "err", err)
		return 0
	}
	switch g.Status {
	case store.OffsetTooSmall, store.OffsetOverflowBadly, store.OffsetFoundNull:
		// Java's "pop initial offset, because store is no correct".
		s.cfg.Offsets.Commit(r.Group, topic, qid, g.NextBeginOffset)
		offset = g.NextBeginOffset
		g.Release()
		if g, err = st.GetMessage(r.Group, topic, qid, offset, need, r.Filter); err != nil {
			s.log.Warn("pop: read failed", "topic", topic, "queue", qid, "err", err)
			return 0
		}
	}
	restNum := max(0, g.MaxOffset-g.NextBeginOffset)
	if len(g.Messages) == 0 {
		switch g.Status {
		case store.NoMatchedMessage, store.OffsetFoundNull, store.MessageWasRemoving, store.NoMatchedLogicQueue:
			// Nothing to hand out between offset and the next one:
			// nothing to revive either, so the offset moves at once.
			if g.NextBeginOffset > offset {
				s.cfg.Offsets.Commit(r.Group, topic, qid, g.NextBeginOffset)
			}
		}
		g.Release()
		return restNum
	}
	offsets := make([]int64, len(g.Messages))
	for i, m := range g.Messages {
		offsets[i] = m.QueueOffset
	}
	if r.Order {
		counts := s.order.update(topic, r.Group, qid, r.AttemptID, popTime, r.InvisibleTime, offsets)
		for i, c := range counts {
			if c > 0 {
				info.addOrderCount(topic, qid, offsets[i], c)
			}
		}
		s.cfg.Offsets.Commit(r.Group, topic, qid, offset)
	} else {
		ck := &CheckPoint{
			StartOffset: offset, PopTime: popTime, InvisibleTime: r.InvisibleTime, Num: int8(len(offsets)),
			QueueID: qid, Topic: topic, CID: r.Group, BrokerName: s.cfg.BrokerName,
		}
		for _, o := range offsets {
			ck.OffsetDiff = append(ck.OffsetDiff, int32(o-offset))
		}
		if err := s.putCheckPoint(ck, reviveQid); err != nil {
			// Not handed out: no check point would bring them back.
			s.log.Warn("pop: check point not stored, messages not handed out", "topic", topic, "queue", qid, "err", err)
			g.Release()
			return restNum + int64(len(offsets))
		}
		s.cfg.Offsets.Commit(r.Group, topic, qid, g.NextBeginOffset)
	}
	info.add(topic, qid, offset, offsets)
	for _, m := range g.Messages {
		res.Parts = append(res.Parts, m.Bytes)
	}
	res.gets = append(res.gets, g)
	return restNum
}

// popOffset is getPopOffset: the group's committed offset, or the initial
// one (committed when init).
func (s *Service) popOffset(group, topic string, qid int32, initMode int32, init bool) int64 {
	if init {
		// An admin reset (resetOffsetByTime) applies to pops as to pulls.
		if reset, ok := s.cfg.Offsets.TakeReset(group, topic, qid); ok {
			s.cfg.Offsets.Commit(group, topic, qid, reset)
			return reset
		}
	}
	if off, ok := s.cfg.Offsets.Query(group, topic, qid); ok && off >= 0 {
		return off
	}
	var off int64
	st := s.cfg.Store
	switch {
	case initMode == initModeMin || strings.HasPrefix(topic, retryPrefix):
		off = st.MinOffset(topic, qid)
	case st.MinOffset(topic, qid) <= 0:
		// initPopOffsetByCheckMsgInMem (Java's default): a queue that
		// still starts at 0 is read from its start.
		off = 0
	default:
		off = max(0, st.MaxOffset(topic, qid)-1)
	}
	if init {
		s.cfg.Offsets.Commit(group, topic, qid, off)
	}
	return off
}

func lockKey(topic, group string, qid int32) string {
	return topic + keySplit + group + keySplit + strconv.Itoa(int(qid))
}

// putCheckPoint writes a "ck" record into the revive log and waits for it
// to be stored: a pop hands out nothing its check point does not cover.
func (s *Service) putCheckPoint(ck *CheckPoint, reviveQid int32) error {
	uniq := ck.key() + keySplit + ckTag
	props := message.AppendProperty(nil, message.PropertyTags, ckTag)
	props = message.AppendProperty(props, message.PropertyUniqClientMessageIDKeyIdx, uniq)
	return s.putReviveRecord(reviveQid, marshalCK(ck), string(props), ck.CID, ck.Topic, true)
}

// putAck writes an "ack" (or "bAck") record into the revive log and waits
// for it to be stored. One is written per acknowledged message: its body
// and properties are built in a pooled buffer, not through reflection.
func (s *Service) putAck(a *AckMsg, reviveQid int32) error {
	tag := ackTag
	if a.AckOffsetList != nil {
		tag = batchAckTag
	}
	bp := ackBufs.Get().(*[]byte)
	defer ackBufs.Put(bp)
	b := appendAckJSON((*bp)[:0], a)
	body := len(b)
	b = message.AppendProperty(b, message.PropertyTags, tag)
	b = append(b, message.PropertySeparator)
	b = append(b, message.PropertyUniqClientMessageIDKeyIdx...)
	b = append(b, message.NameValueSeparator)
	b = a.appendUniqKey(b)
	*bp = b
	return s.putReviveRecord(reviveQid, b[:body:body], string(b[body:]), a.ConsumerGroup, a.Topic, false)
}

// ackBufs holds putAck's scratch buffers (body and properties).
var ackBufs = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

// putReviveRecord stores one revive log record of group and topic (a
// check point when ck); the store copies body, so it may be reused once
// this returns.
func (s *Service) putReviveRecord(reviveQid int32, body []byte, props, group, topic string, ck bool) error {
	rec := message.Record{
		Topic: s.reviveTopic, QueueID: reviveQid, Body: body, Properties: props,
		BornTimestamp: s.cfg.Now().UnixMilli(), BornHost: s.cfg.StoreHost,
	}
	// An ack gathers (PutOptions.Gather): consumers ack each message of a
	// batch they received, many consumers at once, each on its own
	// connection one request at a time; the put's one yield lets the
	// acks already read append first, and one write takes them all.
	res := s.cfg.Store.PutMessage(context.Background(), &rec, store.PutOptions{NoDelayRewrite: true, Gather: !ck})
	if s.cfg.ReviveLog != nil {
		s.cfg.ReviveLog.RevivePut(group, topic, ck, res.Status.String())
	}
	if !res.Status.Stored() {
		return fmt.Errorf("revive log %s queue %d: %s", s.reviveTopic, reviveQid, res.Status)
	}
	return nil
}

// queueLocks is QueueLockManager: one pop at a time per topic@group@queue;
// a pop that finds the queue busy skips it.
type queueLocks struct {
	mu   sync.Mutex
	held map[string]struct{}
}

func (l *queueLocks) tryLock(key string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, busy := l.held[key]; busy {
		return false
	}
	if l.held == nil {
		l.held = make(map[string]struct{})
	}
	l.held[key] = struct{}{}
	return true
}

// lock waits for the key (acks of orderly pops, which must not be lost).
func (l *queueLocks) lock(key string) {
	for !l.tryLock(key) {
		time.Sleep(time.Millisecond)
	}
}

func (l *queueLocks) unlock(key string) {
	l.mu.Lock()
	delete(l.held, key)
	l.mu.Unlock()
}
