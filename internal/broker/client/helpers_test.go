package client

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
)

// fakeChan is a Channel that records what the registry sends it.
type fakeChan struct {
	addr string

	mu       sync.Mutex
	notified []string // consumerGroup of each NOTIFY_CONSUMER_IDS_CHANGED
	closed   bool
	// block, when set, makes InvokeOneway wait until the channel is closed
	// (a peer that stopped reading).
	block   bool
	closeCh chan struct{}
	sends   atomic.Int32
	// closeAfterChecks > 0 closes the channel on that call of Closed: a
	// connection closing while a heartbeat is being registered. Only for
	// single-goroutine use.
	closeAfterChecks, checks int
}

var fakePort atomic.Int32

func newFakeChan() *fakeChan {
	return &fakeChan{addr: "10.0.0.1:" + strconv.Itoa(int(20000+fakePort.Add(1))), closeCh: make(chan struct{})}
}

func (f *fakeChan) RemoteAddr() string { return f.addr }

func (f *fakeChan) InvokeOneway(req *remoting.Command) error {
	f.sends.Add(1)
	if !req.IsOneway() || req.Code != protocol.NotifyConsumerIdsChanged {
		panic("unexpected request")
	}
	f.mu.Lock()
	block := f.block
	f.mu.Unlock()
	if block {
		<-f.closeCh
		return remoting.ErrConnClosed
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return remoting.ErrConnClosed
	}
	f.notified = append(f.notified, req.ExtField("consumerGroup"))
	return nil
}

func (f *fakeChan) Invoke(context.Context, *remoting.Command) (*remoting.Command, error) {
	return nil, errors.New("fake: not supported")
}

func (f *fakeChan) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.closed {
		f.closed = true
		close(f.closeCh)
	}
	return nil
}

func (f *fakeChan) Closed() <-chan struct{} {
	if f.closeAfterChecks > 0 {
		if f.checks++; f.checks == f.closeAfterChecks {
			_ = f.Close()
		}
	}
	return f.closeCh
}

func (f *fakeChan) isClosed() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.closed
}

func (f *fakeChan) notifications() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.notified...)
}

// fakeClock is a settable clock.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{t: time.Unix(1_700_000_000, 0)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// newRegistry returns a started registry closed when the test ends.
func newRegistry(t *testing.T, cfg Config) *Registry {
	t.Helper()
	r, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	return r
}

func sub(topic, expr string, version int64) protocol.SubscriptionData {
	return protocol.SubscriptionData{Topic: topic, SubString: expr, SubVersion: version, ExpressionType: protocol.ExpressionTag}
}

func consumerData(group string, subs ...protocol.SubscriptionData) *protocol.ConsumerData {
	return &protocol.ConsumerData{
		GroupName:           group,
		ConsumeType:         protocol.ConsumePassively,
		MessageModel:        protocol.Clustering,
		ConsumeFromWhere:    protocol.ConsumeFromFirstOffset,
		SubscriptionDataSet: subs,
	}
}

func info(id string) ClientInfo { return ClientInfo{ClientID: id, Language: remoting.GO, Version: 317} }
