package broker_test

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	rmq "github.com/apache/rocketmq-clients/golang/v5"
	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/testutil/proc"
)

func startGRPCRecallCluster(t *testing.T) *cluster {
	t.Helper()
	rmq.EnableSsl = false
	c := startCluster(t, func(bc *config.BrokerConfig) { bc.GrpcServerEnable, bc.RecallMessageEnable = true, true })
	if c.b.GRPCAddr() == "" {
		t.Fatal("gRPC service not started")
	}
	return c
}

// delayedQueueTotal is the number of messages delivered to topic's
// queues (the held ones are not there yet).
func delayedQueueTotal(c *cluster, topic string, queues int32) int64 {
	n := int64(0)
	for q := range queues {
		n += c.b.Store().MaxOffset(topic, q)
	}
	return n
}

// TestGRPCRecallSDK: the Go v5 SDK's Producer.Recall (v5.1.4). A delay
// message's send receipt carries its recall handle; recalled before its
// time it is never received, while the message due right after it is;
// recalling after delivery fails with the proxy's INTERNAL_SERVER_ERROR
// and the broker's remark.
func TestGRPCRecallSDK(t *testing.T) {
	if raceEnabled {
		// As TestGRPCProducerAndSimpleConsumer: the SDK's producer races
		// with itself under -race; the server side of recall runs under
		// -race in TestGRPCRecallRaw.
		proc.RerunWithoutRace(t)
		return
	}
	c := startGRPCRecallCluster(t)
	topic := uniq(t, "GrpcRecall")
	c.createTypedTopic(topic, 2, protocol.MessageTypeDelay)
	ctx := context.Background()
	p := startSDKProducer(t, c, topic)
	at := time.Now().Add(3 * time.Second)
	send := func(body string, at time.Time) *rmq.SendReceipt {
		m := &rmq.Message{Topic: topic, Body: []byte(body)}
		m.SetDelayTimestamp(at)
		rs, err := p.Send(ctx, m)
		if err != nil || len(rs) != 1 {
			t.Fatalf("send %s: %v %+v", body, err, rs)
		}
		return rs[0]
	}
	gone := send("gone", at)
	kept := send("kept", at.Add(time.Millisecond))
	if gone.RecallHandle == "" || kept.RecallHandle == "" {
		t.Fatalf("send receipts without recall handle: %+v %+v", gone, kept)
	}
	id, err := p.Recall(ctx, topic, gone.RecallHandle)
	if err != nil || id != gone.MessageID {
		t.Fatalf("recall: %q %v, want message id %s", id, err, gone.MessageID)
	}
	sc := startSDKSimpleConsumer(t, c, uniq(t, "GrpcRecallGroup"), topic)
	got := receiveN(t, sc, 1, 10*time.Second, 30*time.Second)
	if string(got[0].GetBody()) != "kept" {
		t.Fatalf("received %q, want kept (gone was recalled)", got[0].GetBody())
	}
	// gone was due first: had it been delivered it would be in a queue
	// before kept.
	if n := delayedQueueTotal(c, topic, 2); n != 1 {
		t.Fatalf("%d messages delivered to %s, want only kept", n, topic)
	}
	if err := sc.Ack(ctx, got[0]); err != nil {
		t.Fatalf("ack: %v", err)
	}
	_, err = p.Recall(ctx, topic, kept.RecallHandle)
	var st *rmq.ErrRpcStatus
	if !errors.As(err, &st) || st.Code != int32(v2.Code_INTERNAL_SERVER_ERROR) || st.Message != "recall failed, timestamp invalid" {
		t.Fatalf("recall after delivery: %v, want INTERNAL_SERVER_ERROR recall failed, timestamp invalid", err)
	}
}

// TestGRPCRecallRaw: the RecallMessage RPC's checks and codes as Java's
// proxy in Local mode answers them, over a raw client (under -race).
func TestGRPCRecallRaw(t *testing.T) {
	c := startGRPCRecallCluster(t)
	topic, normal := uniq(t, "GrpcRecallRaw"), uniq(t, "GrpcRecallNormal")
	c.createTypedTopic(topic, 1, protocol.MessageTypeDelay)
	c.createTopic(normal, 1)
	cli, ctx := rawGRPC(t, c)
	res := &v2.Resource{Name: topic}
	at := time.Now().Add(time.Hour)
	sr, err := cli.SendMessage(ctx, &v2.SendMessageRequest{Messages: []*v2.Message{{Topic: res, Body: []byte("later"),
		SystemProperties: &v2.SystemProperties{MessageId: "RAW-RECALL-1", MessageType: v2.MessageType_DELAY,
			DeliveryTimestamp: timestamppb.New(at)}}}})
	if err != nil || sr.GetStatus().GetCode() != v2.Code_OK {
		t.Fatalf("send: %v %v", err, sr)
	}
	handle := sr.GetEntries()[0].GetRecallHandle()
	if want := handleOf("v1", topic, c.brokerConfig().BrokerName, strconv.FormatInt(at.UnixMilli()+1, 10), "RAW-RECALL-1"); handle != want {
		t.Fatalf("recall handle %q, want %q", handle, want)
	}
	sr, err = cli.SendMessage(ctx, &v2.SendMessageRequest{Messages: []*v2.Message{{Topic: &v2.Resource{Name: normal}, Body: []byte("now"),
		SystemProperties: &v2.SystemProperties{MessageId: "RAW-NORMAL-1", MessageType: v2.MessageType_NORMAL}}}})
	if err != nil || sr.GetStatus().GetCode() != v2.Code_OK || sr.GetEntries()[0].GetRecallHandle() != "" {
		t.Fatalf("normal send: %v %v (a normal message has no recall handle)", err, sr)
	}
	recall := func(topic, handle string) *v2.Status {
		r, err := cli.RecallMessage(ctx, &v2.RecallMessageRequest{Topic: &v2.Resource{Name: topic}, RecallHandle: handle})
		if err != nil {
			t.Fatalf("RecallMessage: %v", err)
		}
		return r.GetStatus()
	}
	for _, tc := range []struct {
		name, topic, handle string
		code                v2.Code
		msg                 string
	}{
		{"illegal topic", "bad topic!", handle, v2.Code_ILLEGAL_TOPIC, ""},
		{"NORMAL topic", normal, handle, v2.Code_MESSAGE_PROPERTY_CONFLICT_WITH_TYPE,
			"TopicMessageType validate failed, the expected type is NORMAL, but actual type is DELAY"},
		{"unknown topic", "NoSuchRecallTopic", handle, v2.Code_MESSAGE_PROPERTY_CONFLICT_WITH_TYPE,
			"TopicMessageType validate failed, the expected type is UNSPECIFIED, but actual type is DELAY"},
		{"malformed handle", topic, "%%%", v2.Code_INTERNAL_SERVER_ERROR, "recall handle is invalid"},
		{"empty handle", topic, "", v2.Code_INTERNAL_SERVER_ERROR, "recall handle is invalid"},
		{"forged broker", topic, handleOf("v1", topic, "other-broker", strconv.FormatInt(at.UnixMilli(), 10), "X"),
			v2.Code_INTERNAL_SERVER_ERROR, "recall failed, broker service not available"},
		{"past time", topic, handleOf("v1", topic, c.brokerConfig().BrokerName, "1", "X"),
			v2.Code_INTERNAL_SERVER_ERROR, "recall failed, timestamp invalid"},
		{"recall", topic, handle, v2.Code_OK, "OK"},
	} {
		st := recall(tc.topic, tc.handle)
		if st.GetCode() != tc.code || (tc.msg != "" && st.GetMessage() != tc.msg) {
			t.Errorf("%s: %v %q, want %v %q", tc.name, st.GetCode(), st.GetMessage(), tc.code, tc.msg)
		}
	}
	r, err := cli.RecallMessage(ctx, &v2.RecallMessageRequest{Topic: res, RecallHandle: handle})
	if err != nil || r.GetStatus().GetCode() != v2.Code_OK || r.GetMessageId() != "RAW-RECALL-1" {
		t.Fatalf("second recall: %v %v, want OK with the message id", err, r)
	}
}
