package broker_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/rocketd/rocketd/internal/broker"
	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/testutil/wait"
)

// rawPull runs one PullMessage and returns its status, messages and next
// offset (-1: none sent). It may run on a goroutine of its own: a failed
// call is reported with t.Errorf.
func rawPull(t *testing.T, ctx context.Context, cli v2.MessagingServiceClient, req *v2.PullMessageRequest) (*v2.Status, []*v2.Message, int64) {
	t.Helper()
	st, err := cli.PullMessage(ctx, req)
	if err != nil {
		t.Errorf("pull message: %v", err)
		return nil, nil, -1
	}
	var (
		status *v2.Status
		msgs   []*v2.Message
		next   int64 = -1
	)
	for {
		r, err := st.Recv()
		if err != nil {
			break // io.EOF: the server completed the stream
		}
		switch c := r.GetContent().(type) {
		case *v2.PullMessageResponse_Status:
			status = c.Status
		case *v2.PullMessageResponse_Message:
			msgs = append(msgs, c.Message)
		case *v2.PullMessageResponse_NextOffset:
			next = c.NextOffset
		}
	}
	return status, msgs, next
}

func queueOf(topic string, id int32) *v2.MessageQueue {
	return &v2.MessageQueue{Topic: &v2.Resource{Name: topic}, Id: id}
}

// TestGRPCRawPullAndOffsets sends three messages to queue 0 over gRPC,
// pulls them from an offset, commits, reads back and queries offsets by
// policy, all with raw gRPC calls.
func TestGRPCRawPullAndOffsets(t *testing.T) {
	c := startGRPCCluster(t)
	topic, group := uniq(t, "GrpcPull"), uniq(t, "GrpcPullGroup")
	c.createTopic(topic, 1)
	cli, ctx := rawGRPC(t, c)
	res, grp := &v2.Resource{Name: topic}, &v2.Resource{Name: group}

	// Nothing yet: MESSAGE_NOT_FOUND after the long poll, next offset 0.
	began := time.Now()
	st, msgs, next := rawPull(t, ctx, cli, &v2.PullMessageRequest{Group: grp, MessageQueue: queueOf(topic, 0), BatchSize: 8,
		LongPollingTimeout: durationpb.New(300 * time.Millisecond)})
	if st.GetCode() != v2.Code_MESSAGE_NOT_FOUND || len(msgs) != 0 || next != 0 {
		t.Fatalf("pull of an empty queue: %v, %d messages, next %d", st, len(msgs), next)
	}
	if d := time.Since(began); d < 300*time.Millisecond {
		t.Fatalf("pull of an empty queue answered after %v, before its long polling time", d)
	}

	// A held pull is answered when a message arrives.
	type pulled struct {
		st   *v2.Status
		msgs []*v2.Message
		next int64
	}
	held := make(chan pulled, 1)
	go func() {
		st, msgs, next := rawPull(t, ctx, cli, &v2.PullMessageRequest{Group: grp, MessageQueue: queueOf(topic, 0), BatchSize: 8,
			LongPollingTimeout: durationpb.New(20 * time.Second)})
		held <- pulled{st, msgs, next}
	}()
	wait.For(t, 10*time.Second, "the pull to be held", func() bool { return broker.HeldRequests(c.b) == 1 })
	beforeSend := time.Now().Add(-time.Second)
	for i := range 3 {
		m := &v2.Message{Topic: res, Body: fmt.Appendf(nil, "pull-%d", i), UserProperties: map[string]string{"i": fmt.Sprint(i)},
			SystemProperties: &v2.SystemProperties{MessageId: fmt.Sprintf("PULLID%d", i), MessageType: v2.MessageType_NORMAL, Tag: proto("T")}}
		sr, err := cli.SendMessage(ctx, &v2.SendMessageRequest{Messages: []*v2.Message{m}})
		if err != nil || sr.GetStatus().GetCode() != v2.Code_OK || sr.GetEntries()[0].GetOffset() != int64(i) {
			t.Fatalf("send %d: %v %v", i, err, sr)
		}
	}
	select {
	case p := <-held:
		if p.st.GetCode() != v2.Code_OK || len(p.msgs) == 0 || string(p.msgs[0].GetBody()) != "pull-0" || p.next != int64(len(p.msgs)) {
			t.Fatalf("held pull: %v, %d messages, next %d", p.st, len(p.msgs), p.next)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("held pull not answered after a send")
	}

	// From offset 1: the two last messages, next offset 3. A send is
	// answered once stored; its unit reaches the queue right after
	// (dispatch), as in Java: wait for it rather than race it.
	wait.For(t, 10*time.Second, "the three units in the queue", func() bool { return c.b.Store().MaxOffset(topic, 0) == 3 })
	st, msgs, next = rawPull(t, ctx, cli, &v2.PullMessageRequest{Group: grp, MessageQueue: queueOf(topic, 0), Offset: 1, BatchSize: 8})
	if st.GetCode() != v2.Code_OK || len(msgs) != 2 || next != 3 {
		t.Fatalf("pull from 1: %v, %d messages, next %d", st, len(msgs), next)
	}
	for i, m := range msgs {
		sp := m.GetSystemProperties()
		if string(m.GetBody()) != fmt.Sprintf("pull-%d", i+1) || sp.GetQueueOffset() != int64(i+1) || sp.GetMessageId() != fmt.Sprintf("PULLID%d", i+1) ||
			sp.GetTag() != "T" || m.GetUserProperties()["i"] != fmt.Sprint(i+1) || m.GetTopic().GetName() != topic || sp.ReceiptHandle != nil {
			t.Fatalf("pulled message %d: %v", i, m)
		}
	}
	// A batch of one, and a tag filter that matches nothing.
	if st, msgs, next = rawPull(t, ctx, cli, &v2.PullMessageRequest{Group: grp, MessageQueue: queueOf(topic, 0), Offset: 0, BatchSize: 1}); st.GetCode() != v2.Code_OK || len(msgs) != 1 || next != 1 {
		t.Fatalf("pull of one: %v, %d messages, next %d", st, len(msgs), next)
	}
	st, msgs, next = rawPull(t, ctx, cli, &v2.PullMessageRequest{Group: grp, MessageQueue: queueOf(topic, 0), BatchSize: 8,
		FilterExpression: &v2.FilterExpression{Type: v2.FilterType_TAG, Expression: "OTHER"}})
	if st.GetCode() != v2.Code_MESSAGE_NOT_FOUND || len(msgs) != 0 || next != 3 {
		t.Fatalf("pull with an unmatched tag: %v, %d messages, next %d", st, len(msgs), next)
	}
	// Beyond the end: ILLEGAL_OFFSET and the corrected offset.
	st, _, next = rawPull(t, ctx, cli, &v2.PullMessageRequest{Group: grp, MessageQueue: queueOf(topic, 0), Offset: 100, BatchSize: 8})
	if st.GetCode() != v2.Code_ILLEGAL_OFFSET || next != 3 {
		t.Fatalf("pull from 100: %v, next %d", st, next)
	}

	// Offsets of the group: the pull committed nothing; update then get.
	get := func() *v2.GetOffsetResponse {
		r, err := cli.GetOffset(ctx, &v2.GetOffsetRequest{Group: grp, MessageQueue: queueOf(topic, 0)})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if r := get(); r.GetStatus().GetCode() != v2.Code_OK || r.GetOffset() != 0 {
		t.Fatalf("get offset before any commit (queue starts at 0, in memory): %v", r)
	}
	for _, off := range []int64{3, 2} { // a lower offset is a reset, stored too
		r, err := cli.UpdateOffset(ctx, &v2.UpdateOffsetRequest{Group: grp, MessageQueue: queueOf(topic, 0), Offset: off})
		if err != nil || r.GetStatus().GetCode() != v2.Code_OK {
			t.Fatalf("update offset %d: %v %v", off, err, r)
		}
		if r := get(); r.GetStatus().GetCode() != v2.Code_OK || r.GetOffset() != off {
			t.Fatalf("get offset after update to %d: %v", off, r)
		}
	}

	// Query by policy.
	query := func(p v2.QueryOffsetPolicy, ts *timestamppb.Timestamp) *v2.QueryOffsetResponse {
		r, err := cli.QueryOffset(ctx, &v2.QueryOffsetRequest{MessageQueue: queueOf(topic, 0), QueryOffsetPolicy: p, Timestamp: ts})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	for _, tc := range []struct {
		name   string
		policy v2.QueryOffsetPolicy
		ts     *timestamppb.Timestamp
		want   int64
	}{
		{"beginning", v2.QueryOffsetPolicy_BEGINNING, nil, 0},
		{"end", v2.QueryOffsetPolicy_END, nil, 3},
		{"timestamp before the sends", v2.QueryOffsetPolicy_TIMESTAMP, timestamppb.New(beforeSend), 0},
		// Past the last message the lower-boundary search answers the
		// last message's offset, as the store's SEARCH_OFFSET_BY_TIMESTAMP.
		{"timestamp after the sends", v2.QueryOffsetPolicy_TIMESTAMP, timestamppb.New(time.Now().Add(time.Hour)), 2},
	} {
		if r := query(tc.policy, tc.ts); r.GetStatus().GetCode() != v2.Code_OK || r.GetOffset() != tc.want {
			t.Errorf("query offset %s: %v, want %d", tc.name, r, tc.want)
		}
	}
	if r := query(v2.QueryOffsetPolicy_TIMESTAMP, nil); r.GetStatus().GetCode() != v2.Code_BAD_REQUEST {
		t.Errorf("query offset by timestamp without one: %v", r)
	}
}

// TestGRPCPullAndOffsetsBadInput: unknown topics and queues, illegal
// names and offsets get the proxy's codes.
func TestGRPCPullAndOffsetsBadInput(t *testing.T) {
	c := startCluster(t, func(bc *config.BrokerConfig) {
		bc.GrpcServerEnable, bc.EnablePropertyFilter, bc.AutoCreateSubscriptionGroup = true, true, false
	})
	topic, group := uniq(t, "GrpcPullBad"), uniq(t, "GrpcPullBadGroup")
	c.createTopic(topic, 2)
	gc := protocol.NewSubscriptionGroupConfig(group)
	body, err := protocol.MarshalFastJSON(&gc)
	if err != nil {
		t.Fatal(err)
	}
	if r := c.invoke(c.b.Addr(), protocol.UpdateAndCreateSubscriptionGroup, nil, body); r.Code != protocol.Success {
		t.Fatalf("create group: %d %s", r.Code, r.Remark)
	}
	noGroup := uniq(t, "GrpcNoSuchGroup")
	cli, ctx := rawGRPC(t, c)
	grp := &v2.Resource{Name: group}
	pull := func(req *v2.PullMessageRequest) v2.Code {
		st, _, _ := rawPull(t, ctx, cli, req)
		return st.GetCode()
	}
	update := func(mq *v2.MessageQueue, g string, off int64) v2.Code {
		r, err := cli.UpdateOffset(ctx, &v2.UpdateOffsetRequest{Group: &v2.Resource{Name: g}, MessageQueue: mq, Offset: off})
		if err != nil {
			t.Fatal(err)
		}
		return r.GetStatus().GetCode()
	}
	get := func(mq *v2.MessageQueue) v2.Code {
		r, err := cli.GetOffset(ctx, &v2.GetOffsetRequest{Group: grp, MessageQueue: mq})
		if err != nil {
			t.Fatal(err)
		}
		return r.GetStatus().GetCode()
	}
	query := func(mq *v2.MessageQueue, p v2.QueryOffsetPolicy) v2.Code {
		r, err := cli.QueryOffset(ctx, &v2.QueryOffsetRequest{MessageQueue: mq, QueryOffsetPolicy: p})
		if err != nil {
			t.Fatal(err)
		}
		return r.GetStatus().GetCode()
	}
	unknown := queueOf("NoSuchTopic_"+group, 0)
	for _, tc := range []struct {
		name string
		got  v2.Code
		want v2.Code
	}{
		{"pull of an unknown topic", pull(&v2.PullMessageRequest{Group: grp, MessageQueue: unknown}), v2.Code_TOPIC_NOT_FOUND},
		{"pull of queue 2 of 2", pull(&v2.PullMessageRequest{Group: grp, MessageQueue: queueOf(topic, 2)}), v2.Code_BAD_REQUEST},
		{"pull of queue -1", pull(&v2.PullMessageRequest{Group: grp, MessageQueue: queueOf(topic, -1)}), v2.Code_BAD_REQUEST},
		{"pull with an illegal topic name", pull(&v2.PullMessageRequest{Group: grp, MessageQueue: queueOf("bad topic", 0)}), v2.Code_ILLEGAL_TOPIC},
		{"pull without a group", pull(&v2.PullMessageRequest{MessageQueue: queueOf(topic, 0)}), v2.Code_ILLEGAL_CONSUMER_GROUP},
		{"pull from a negative offset", pull(&v2.PullMessageRequest{Group: grp, MessageQueue: queueOf(topic, 0), Offset: -1}), v2.Code_ILLEGAL_OFFSET},
		{"pull of a negative batch", pull(&v2.PullMessageRequest{Group: grp, MessageQueue: queueOf(topic, 0), BatchSize: -1}), v2.Code_BAD_REQUEST},
		{"pull with bad SQL", pull(&v2.PullMessageRequest{Group: grp, MessageQueue: queueOf(topic, 0),
			FilterExpression: &v2.FilterExpression{Type: v2.FilterType_SQL, Expression: "a >"}}), v2.Code_ILLEGAL_FILTER_EXPRESSION},
		{"update of an unknown topic", update(unknown, group, 1), v2.Code_TOPIC_NOT_FOUND},
		{"update of queue 5 of 2", update(queueOf(topic, 5), group, 1), v2.Code_BAD_REQUEST},
		{"update to a negative offset", update(queueOf(topic, 0), group, -1), v2.Code_ILLEGAL_OFFSET},
		{"update with an illegal group", update(queueOf(topic, 0), "bad group", 1), v2.Code_ILLEGAL_CONSUMER_GROUP},
		{"update of an unknown group", update(queueOf(topic, 0), noGroup, 1), v2.Code_CONSUMER_GROUP_NOT_FOUND},
		{"pull of an unknown group", pull(&v2.PullMessageRequest{Group: &v2.Resource{Name: noGroup}, MessageQueue: queueOf(topic, 0)}), v2.Code_CONSUMER_GROUP_NOT_FOUND},
		{"get of a group without an offset, queue empty", get(queueOf(topic, 1)), v2.Code_OK},
		{"get of an unknown topic", get(unknown), v2.Code_TOPIC_NOT_FOUND},
		{"get of queue 2 of 2", get(queueOf(topic, 2)), v2.Code_BAD_REQUEST},
		{"query of an unknown topic", query(unknown, v2.QueryOffsetPolicy_END), v2.Code_TOPIC_NOT_FOUND},
		{"query of queue -1", query(queueOf(topic, -1), v2.QueryOffsetPolicy_BEGINNING), v2.Code_BAD_REQUEST},
		{"query with an unknown policy", query(queueOf(topic, 0), v2.QueryOffsetPolicy(9)), v2.Code_BAD_REQUEST},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: code %v, want %v", tc.name, tc.got, tc.want)
		}
	}
}
