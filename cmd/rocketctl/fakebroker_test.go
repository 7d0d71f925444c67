package main

import (
	"context"
	"hash/crc32"
	"net/netip"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
)

// fakeBroker is a small in-memory stand-in for a broker: enough of topic
// creation, send, pull and offsets to exercise rocketctl's side of each call
// (flags, queue choice, paging, offset commits, output) without the real
// broker. The real one is exercised by the e2e and newcomer tests.
type fakeBroker struct {
	t       *testing.T
	srv     *remoting.Server
	ns      string
	reg     *remoting.Client
	mu      sync.Mutex
	topics  map[string]protocol.TopicConfig
	queues  map[string][][]byte // "topic@id" -> encoded records
	offsets map[string]int64    // "group@topic@id" -> committed offset
	phys    int64
	// badPull, when set, answers every pull with FOUND, this body and a
	// next offset that does not advance (a broken or hostile broker).
	badPull []byte
}

func startFakeBroker(t *testing.T, ns string) *fakeBroker {
	t.Helper()
	b := &fakeBroker{t: t, ns: ns, topics: map[string]protocol.TopicConfig{},
		queues: map[string][][]byte{}, offsets: map[string]int64{},
		srv: remoting.NewServer(remoting.ServerConfig{Addr: "127.0.0.1:0"}),
		reg: remoting.NewClient(remoting.ClientConfig{})}
	f := b.srv.NewFamily("all", 2, 64)
	b.srv.Handle(protocol.UpdateAndCreateTopic, f, b.createTopic)
	b.srv.Handle(protocol.SendMessageV2, f, b.send)
	b.srv.Handle(protocol.PullMessage, f, b.pull)
	b.srv.Handle(protocol.GetMinOffset, f, func(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
		return b.offsetReply(0)
	})
	b.srv.Handle(protocol.GetMaxOffset, f, func(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
		var h protocol.QueueRequestHeader
		if err := h.Decode(req.ExtFields); err != nil {
			return remoting.NewResponse(protocol.SystemError, err.Error())
		}
		b.mu.Lock()
		defer b.mu.Unlock()
		return b.offsetReply(int64(len(b.queues[h.Topic+"@"+strconv.Itoa(int(h.QueueID))])))
	})
	b.srv.Handle(protocol.QueryConsumerOffset, f, b.queryOffset)
	b.srv.Handle(protocol.UpdateConsumerOffset, f, b.updateOffset)
	if err := b.srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = b.srv.Shutdown(ctx)
		b.reg.Close()
	})
	b.register()
	return b
}

func (b *fakeBroker) addr() string { return b.srv.Addr().String() }

func (b *fakeBroker) offsetReply(off int64) *remoting.Command {
	resp := remoting.NewResponse(protocol.Success, "")
	resp.ExtFields = protocol.Ext(&protocol.OffsetResponseHeader{Offset: off})
	return resp
}

// register announces the broker and its topics to the NameServer.
func (b *fakeBroker) register() {
	b.mu.Lock()
	table := make(map[string]protocol.TopicConfig, len(b.topics))
	for k, v := range b.topics {
		table[k] = v
	}
	b.mu.Unlock()
	body := protocol.RegisterBrokerBody{FilterServerList: []string{}}
	body.TopicConfigSerializeWrapper.TopicConfigTable = table
	body.TopicConfigSerializeWrapper.DataVersion = protocol.DataVersion{Timestamp: time.Now().UnixMilli(), Counter: int64(len(table))}
	raw := body.MarshalFastJSON()
	h := protocol.RegisterBrokerRequestHeader{BrokerName: "fake-a", BrokerAddr: b.addr(), ClusterName: "FakeCluster",
		BrokerID: 0, BodyCrc32: int32(crc32.ChecksumIEEE(raw) & 0x7FFFFFFF)}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := b.reg.Invoke(ctx, b.ns, remoting.NewRequest(protocol.RegisterBroker, protocol.Ext(&h), raw))
	if err != nil || resp.Code != protocol.Success {
		b.t.Errorf("fake broker register: %v %+v", err, resp)
	}
}

func (b *fakeBroker) createTopic(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	var h protocol.CreateTopicRequestHeader
	if err := h.Decode(req.ExtFields); err != nil {
		return remoting.NewResponse(protocol.SystemError, err.Error())
	}
	b.mu.Lock()
	b.topics[h.Topic] = h.TopicConfig()
	b.mu.Unlock()
	b.register()
	return remoting.NewResponse(protocol.Success, "")
}

func (b *fakeBroker) send(conn *remoting.Conn, req *remoting.Command) *remoting.Command {
	var h protocol.SendMessageRequestHeader
	if err := h.DecodeV2(req.ExtFields); err != nil {
		return remoting.NewResponse(protocol.SystemError, err.Error())
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.topics[h.Topic]; !ok {
		return remoting.NewResponse(protocol.TopicNotExist, "no topic "+h.Topic)
	}
	key := h.Topic + "@" + strconv.Itoa(int(h.QueueID))
	host := netip.MustParseAddrPort(b.addr())
	rec := message.Record{QueueID: h.QueueID, QueueOffset: int64(len(b.queues[key])), PhysicalOffset: b.phys,
		BornTimestamp: h.BornTimestamp, BornHost: host, StoreTimestamp: time.Now().UnixMilli(), StoreHost: host,
		Body: req.Body, Topic: h.Topic, Properties: h.Properties}
	raw := message.AppendRecord(nil, &rec)
	b.phys += int64(len(raw))
	b.queues[key] = append(b.queues[key], raw)
	resp := remoting.NewResponse(protocol.Success, "")
	resp.ExtFields = protocol.Ext(&protocol.SendMessageResponseHeader{MsgID: message.OffsetMsgID(host, rec.PhysicalOffset),
		QueueID: h.QueueID, QueueOffset: rec.QueueOffset})
	return resp
}

func (b *fakeBroker) pull(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	var h protocol.PullMessageRequestHeader
	if err := h.Decode(req.ExtFields); err != nil {
		return remoting.NewResponse(protocol.SystemError, err.Error())
	}
	if h.SysFlag&protocol.PullFlagSubscription == 0 {
		return remoting.NewResponse(protocol.SystemError, "subscription flag not set")
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.badPull != nil {
		resp := remoting.NewResponse(protocol.Success, "")
		resp.ExtFields = protocol.Ext(&protocol.PullMessageResponseHeader{NextBeginOffset: h.QueueOffset})
		resp.Body = b.badPull
		return resp
	}
	q := b.queues[h.Topic+"@"+strconv.Itoa(int(h.QueueID))]
	max := int64(len(q))
	code, next := protocol.PullNotFound, h.QueueOffset
	var body []byte
	for off := h.QueueOffset; off < max && int32(off-h.QueueOffset) < h.MaxMsgNums; off++ {
		code, next = protocol.Success, off+1
		body = append(body, q[off]...)
	}
	resp := remoting.NewResponse(code, "")
	resp.ExtFields = protocol.Ext(&protocol.PullMessageResponseHeader{NextBeginOffset: next, MinOffset: 0, MaxOffset: max})
	resp.Body = body
	return resp
}

func (b *fakeBroker) queryOffset(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	var h protocol.QueryConsumerOffsetRequestHeader
	if err := h.Decode(req.ExtFields); err != nil {
		return remoting.NewResponse(protocol.SystemError, err.Error())
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	off, ok := b.offsets[h.ConsumerGroup+"@"+h.Topic+"@"+strconv.Itoa(int(h.QueueID))]
	if !ok {
		return remoting.NewResponse(protocol.QueryNotFound, "no offset")
	}
	return b.offsetReply(off)
}

func (b *fakeBroker) updateOffset(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	var h protocol.UpdateConsumerOffsetRequestHeader
	if err := h.Decode(req.ExtFields); err != nil {
		return remoting.NewResponse(protocol.SystemError, err.Error())
	}
	b.mu.Lock()
	b.offsets[h.ConsumerGroup+"@"+h.Topic+"@"+strconv.Itoa(int(h.QueueID))] = h.CommitOffset
	b.mu.Unlock()
	return remoting.NewResponse(protocol.Success, "")
}
