package processor_test

import (
	"context"
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/broker/client"
	"github.com/rocketd/rocketd/internal/broker/longpoll"
	"github.com/rocketd/rocketd/internal/broker/meta"
	"github.com/rocketd/rocketd/internal/broker/processor"
	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
	"github.com/rocketd/rocketd/internal/store"
	"github.com/rocketd/rocketd/internal/testutil/wait"
)

// env is the processors on a real store, metadata, registry and holder,
// served by a remoting server on loopback and called through rocketd's
// remoting client.
type env struct {
	t       testing.TB
	cfg     config.BrokerConfig
	store   *store.Store
	topics  *meta.Topics
	groups  *meta.Groups
	offsets *meta.Offsets
	clients *client.Registry
	holder  *longpoll.Holder
	srv     *remoting.Server
	rc      *remoting.Client
	addr    string
}

// newEnv builds an env; tune may adjust the broker config and the deps.
func newEnv(t testing.TB, tune func(*config.BrokerConfig, *processor.Deps)) *env {
	t.Helper()
	dir := t.TempDir()
	e := &env{t: t, cfg: config.NewBrokerConfig()}
	e.cfg.BrokerIP1 = "127.0.0.1"
	e.cfg.StorePathRootDir = dir
	e.cfg.EnsureDefaults()
	deps := processor.Deps{StoreHost: netip.MustParseAddrPort("127.0.0.1:10911")}
	if tune != nil {
		tune(&e.cfg, &deps)
	}
	var err error
	e.store, err = store.Open(store.Config{Dir: dir, SegmentSize: 8 << 20, CQUnitsPerFile: 1000,
		StoreHost: deps.StoreHost, MaxMessageSize: e.cfg.MaxMessageSize, MaxHashSlotNum: 4096, MaxIndexNum: 40000})
	must(t, err)
	mopts := meta.Options{Dir: meta.ConfigDir(dir)}
	e.topics, err = meta.OpenTopics(mopts, &e.cfg)
	must(t, err)
	e.groups, err = meta.OpenGroups(mopts, &e.cfg)
	must(t, err)
	e.offsets, err = meta.OpenOffsets(mopts)
	must(t, err)
	e.clients, err = client.New(client.Config{})
	must(t, err)
	must(t, e.clients.Start())
	e.holder, err = longpoll.New(longpoll.Config{MaxOffset: e.store.MaxOffset})
	must(t, err)
	must(t, e.holder.Start())
	e.store.AddArrivalListener(func(topic string, q int32, off, tags, _ int64) { e.holder.Notify(topic, q, off+1, tags) })

	deps.Config, deps.Store, deps.Topics, deps.Groups, deps.Offsets = &e.cfg, e.store, e.topics, e.groups, e.offsets
	deps.Clients, deps.Holder = e.clients, e.holder
	if deps.RequestModes == nil {
		deps.RequestModes, err = meta.OpenRequestModes(mopts)
		must(t, err)
	}
	if deps.Mappings == nil {
		deps.Mappings, err = meta.OpenMappings(mopts, e.cfg.BrokerName)
		must(t, err)
	}
	p, err := processor.New(deps)
	must(t, err)
	e.srv = remoting.NewServer(remoting.ServerConfig{Addr: "127.0.0.1:0"})
	p.Register(e.srv, processor.Families{
		Send: e.srv.NewFamily("send", 2, 64), Pull: e.srv.NewFamily("pull", 4, 64),
		Offset: e.srv.NewFamily("offset", 2, 64), Client: e.srv.NewFamily("client", 2, 64),
		Admin: e.srv.NewFamily("admin", 2, 64),
	})
	e.srv.OnConnClose(func(c *remoting.Conn) { e.clients.RemoveChannel(c); e.holder.DropConn(c) })
	must(t, e.srv.Start())
	e.addr = e.srv.Addr().String()
	e.rc = remoting.NewClient(remoting.ClientConfig{})
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = e.rc.Close()
		_ = e.srv.Shutdown(ctx)
		_ = e.holder.Close()
		_ = e.clients.Close()
		_ = e.offsets.Close()
		if err := e.store.Close(); err != nil {
			t.Error(err)
		}
	})
	return e
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// call invokes code with raw ext fields and body.
func (e *env) call(code int32, ext map[string]string, body []byte) *remoting.Command {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := e.rc.Invoke(ctx, e.addr, remoting.NewRequest(code, ext, body))
	if err != nil {
		e.t.Fatalf("invoke %d: %v", code, err)
	}
	return resp
}

// createTopic creates a topic with n queues.
func (e *env) createTopic(topic string, n int32) {
	e.t.Helper()
	h := protocol.CreateTopicRequestHeader{Topic: topic, ReadQueueNums: n, WriteQueueNums: n, Perm: 6,
		TopicFilterType: protocol.SingleTag}
	if r := e.call(protocol.UpdateAndCreateTopic, protocol.Ext(&h), nil); r.Code != protocol.Success {
		e.t.Fatalf("create topic: %d %s", r.Code, r.Remark)
	}
}

// sendHeader is a SEND_MESSAGE header to queue q of topic.
func sendHeader(topic string, q int32, props string) *protocol.SendMessageRequestHeader {
	return &protocol.SendMessageRequestHeader{ProducerGroup: "pg", Topic: topic, DefaultTopic: "TBW102",
		DefaultTopicQueueNums: 4, QueueID: q, BornTimestamp: time.Now().UnixMilli(), Properties: props}
}

// send stores one message and returns the response.
func (e *env) send(h *protocol.SendMessageRequestHeader, body string) *remoting.Command {
	e.t.Helper()
	return e.call(protocol.SendMessage, protocol.Ext(h), []byte(body))
}

// pullHeader is a PULL_MESSAGE header carrying its own subscription.
func pullHeader(group, topic string, q int32, offset int64, expr string) *protocol.PullMessageRequestHeader {
	return &protocol.PullMessageRequestHeader{ConsumerGroup: group, Topic: topic, QueueID: q, QueueOffset: offset,
		MaxMsgNums: 32, SysFlag: protocol.PullFlagSubscription, Subscription: expr}
}

// waitMaxOffset waits until dispatch made the queue's max offset n.
func (e *env) waitMaxOffset(topic string, q int32, n int64) {
	e.t.Helper()
	wait.For(e.t, 10*time.Second, fmt.Sprintf("%s/%d max offset %d", topic, q, n), func() bool { return e.store.MaxOffset(topic, q) >= n })
}

// waitReadable polls until the record at CommitLog offset off is readable.
// A send answers once the record is appended (and, with WAIT=false or async
// flush, before the committer has written it), so a test that reads right
// after a send must wait for it as a consumer's pull would.
func (e *env) waitReadable(off int64) {
	e.t.Helper()
	wait.For(e.t, 10*time.Second, fmt.Sprintf("the record at %d to be readable", off), func() bool {
		_, buf, err := e.store.LookMessageByOffset(off)
		if err == nil {
			buf.Release()
		}
		return err == nil
	})
}

// pullHeaderOf decodes a pull response header.
func pullHeaderOf(t testing.TB, r *remoting.Command) protocol.PullMessageResponseHeader {
	t.Helper()
	for _, k := range []string{"nextBeginOffset", "minOffset", "maxOffset", "suggestWhichBrokerId"} {
		if _, ok := r.ExtFields[k]; !ok {
			t.Fatalf("pull response (%d %s) lacks %s: %v", r.Code, r.Remark, k, r.ExtFields)
		}
	}
	var h protocol.PullMessageResponseHeader
	must(t, h.Decode(r.ExtFields))
	return h
}
