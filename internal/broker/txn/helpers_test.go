package txn

import (
	"context"
	"fmt"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/broker/meta"
	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
	"github.com/rocketd/rocketd/internal/store"
	"github.com/rocketd/rocketd/internal/testutil/wait"
)

var storeHost = netip.MustParseAddrPort("127.0.0.1:10911")

// env is a Service over a real store and metadata, with a fake producer
// connection and a clock the test moves.
type env struct {
	t       testing.TB
	dir     string
	bc      config.BrokerConfig
	store   *store.Store
	topics  *meta.Topics
	offsets *meta.Offsets
	svc     *Service
	prod    *fakeProducer
	mu      sync.Mutex
	now     time.Time
}

func newEnv(t testing.TB, tune func(*Config)) *env {
	t.Helper()
	e := &env{t: t, dir: t.TempDir(), bc: config.NewBrokerConfig(), prod: &fakeProducer{}, now: time.Now()}
	e.bc.BrokerIP1 = "127.0.0.1"
	e.bc.StorePathRootDir = e.dir
	e.bc.EnsureDefaults()
	var err error
	e.store, err = store.Open(store.Config{Dir: e.dir, SegmentSize: 8 << 20, CQUnitsPerFile: 1000,
		StoreHost: storeHost, MaxMessageSize: e.bc.MaxMessageSize})
	must(t, err)
	t.Cleanup(func() { _ = e.store.Close() })
	e.openMeta()
	e.newService(tune)
	return e
}

// openMeta (re)opens topics and offsets from the config files.
func (e *env) openMeta() {
	mopts := meta.Options{Dir: meta.ConfigDir(e.dir)}
	var err error
	e.topics, err = meta.OpenTopics(mopts, &e.bc)
	must(e.t, err)
	e.offsets, err = meta.OpenOffsets(mopts)
	must(e.t, err)
	offs := e.offsets
	e.t.Cleanup(func() { _ = offs.Close() })
}

// newService replaces the Service (a restart of the check-back).
func (e *env) newService(tune func(*Config)) {
	cfg := Config{
		Store: e.store, Topics: e.topics, Offsets: e.offsets,
		PickProducer: func(group string) (Producer, bool) {
			if group != "pg" {
				return nil, false
			}
			return e.prod, true
		},
		StoreHost: storeHost, Timeout: 6 * time.Second, CheckMax: 15, CheckInterval: time.Minute,
		Now: e.clock,
	}
	if tune != nil {
		tune(&cfg)
	}
	svc, err := New(cfg)
	must(e.t, err)
	e.svc = svc
}

func (e *env) clock() time.Time {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.now
}

func (e *env) advance(d time.Duration) {
	e.mu.Lock()
	e.now = e.now.Add(d)
	e.mu.Unlock()
}

// putHalf stores a prepared send of body to topic T queue 3.
func (e *env) putHalf(body, uniq string) store.PutResult {
	e.t.Helper()
	return e.putHalfWith(body, uniq, nil)
}

// putHalfWith is putHalf with extra properties.
func (e *env) putHalfWith(body, uniq string, extra map[string]string) store.PutResult {
	e.t.Helper()
	m := map[string]string{
		message.PropertyTransactionPrepared: "true", message.PropertyProducerGroup: "pg",
		message.PropertyUniqClientMessageIDKeyIdx: uniq, message.PropertyTags: "tagA", "k": "v",
	}
	for k, v := range extra {
		m[k] = v
	}
	props := message.EncodeProperties(m)
	r := message.Record{
		Topic: "T", QueueID: 3, SysFlag: message.TransactionPreparedType,
		BornTimestamp: e.clock().UnixMilli(), BornHost: netip.MustParseAddrPort("10.0.0.1:5000"),
		Body: []byte(body), Properties: props,
	}
	res := e.svc.PutHalf(context.Background(), &r, store.PutOptions{})
	if res.Status != store.PutOK {
		e.t.Fatalf("put half: %v", res.Status)
	}
	return res
}

// end sends END_TRANSACTION for the half message at (commitLogOffset, queueOffset).
func (e *env) end(commitLogOffset, queueOffset int64, how int32) (int32, string) {
	return e.svc.End(context.Background(), &protocol.EndTransactionRequestHeader{
		ProducerGroup: "pg", CommitLogOffset: commitLogOffset, TranStateTableOffset: queueOffset,
		CommitOrRollback: how,
	})
}

// waitQueue waits until topic's queue q has n dispatched messages.
func (e *env) waitQueue(topic string, q int32, n int64) {
	e.t.Helper()
	wait.For(e.t, 5*time.Second, fmt.Sprintf("%d messages in %s/%d", n, topic, q),
		func() bool { return e.store.MaxOffset(topic, q) >= n })
}

// messages returns the records of topic's queue q.
func (e *env) messages(topic string, q int32) []message.Record {
	e.t.Helper()
	var out []message.Record
	for off := int64(0); off < e.store.MaxOffset(topic, q); {
		res, err := e.store.GetMessage("test", topic, q, off, 32, nil)
		must(e.t, err)
		if res.Status != store.Found {
			res.Release()
			e.t.Fatalf("get %s/%d@%d: %v", topic, q, off, res.Status)
		}
		for _, m := range res.Messages {
			r, _, err := message.DecodeRecord(m.Bytes, true)
			must(e.t, err)
			out = append(out, r)
		}
		off = res.NextBeginOffset
		res.Release()
	}
	return out
}

// round runs one check round with the store's dispatch caught up.
func (e *env) round() {
	e.t.Helper()
	e.waitDispatched()
	e.svc.checkRound()
	e.waitDispatched()
}

func (e *env) waitDispatched() {
	e.t.Helper()
	wait.For(e.t, 5*time.Second, "dispatch to catch up",
		func() bool { return e.store.DispatchedOffset() >= e.store.CommitLogMaxOffset() })
}

// fakeProducer records the checks it is sent.
type fakeProducer struct {
	mu     sync.Mutex
	checks []*remoting.Command
}

func (f *fakeProducer) RemoteAddr() string { return "127.0.0.1:1" }

func (f *fakeProducer) InvokeOneway(req *remoting.Command) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.checks = append(f.checks, req)
	return nil
}

// take returns and forgets the checks received so far.
func (f *fakeProducer) take() []*remoting.Command {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.checks
	f.checks = nil
	return c
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
