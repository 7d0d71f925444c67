package processor_test

import (
	"context"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
	"github.com/rocketd/rocketd/internal/testutil/wait"
)

func heartbeatBody(clientID, group, topic string) []byte {
	hb := protocol.HeartbeatData{
		ClientID:        clientID,
		ProducerDataSet: []protocol.ProducerData{{GroupName: "pg"}},
		ConsumerDataSet: []protocol.ConsumerData{{
			GroupName: group, ConsumeType: protocol.ConsumePassively, MessageModel: protocol.Clustering,
			ConsumeFromWhere: protocol.ConsumeFromFirstOffset,
			SubscriptionDataSet: []protocol.SubscriptionData{
				{Topic: topic, SubString: "*", TagsSet: []string{}, CodeSet: protocol.CodeSet{}, SubVersion: 1, ExpressionType: "TAG"},
			},
		}},
	}
	b, err := protocol.MarshalFastJSON(&hb)
	if err != nil {
		panic(err)
	}
	return b
}

func consumerIDs(t *testing.T, e *env, c *remoting.Client, group string) (int32, []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	r, err := c.Invoke(ctx, e.addr, remoting.NewRequest(protocol.GetConsumerListByGroup,
		protocol.Ext(&protocol.ConsumerGroupRequestHeader{ConsumerGroup: group}), nil))
	must(t, err)
	var body protocol.GetConsumerListByGroupResponseBody
	if r.Code == protocol.Success {
		must(t, protocol.UnmarshalFastJSON(r.Body, &body))
	}
	return r.Code, body.ConsumerIDList
}

// TestHeartbeatMembership: a heartbeat registers the consumer, creates its
// subscription group and %RETRY% topic; a second member makes the first
// one get NOTIFY_CONSUMER_IDS_CHANGED; a closed connection leaves the
// group at once.
func TestHeartbeatMembership(t *testing.T) {
	e := newEnv(t, nil)
	e.createTopic("T", 4)
	if r := e.call(protocol.HeartBeat, nil, heartbeatBody("c1", "cg", "T")); r.Code != protocol.Success {
		t.Fatalf("heartbeat: %d %s", r.Code, r.Remark)
	}
	if !e.topics.Contains("%RETRY%cg") {
		t.Fatal("heartbeat did not create the retry topic")
	}
	if _, ok := e.groups.Get("cg"); !ok {
		t.Fatal("heartbeat did not create the subscription group")
	}
	if code, ids := consumerIDs(t, e, e.rc, "cg"); code != protocol.Success || len(ids) != 1 || ids[0] != "c1" {
		t.Fatalf("consumer list: %d %v", code, ids)
	}
	notified := make(chan string, 4)
	e.rc.Handle(protocol.NotifyConsumerIdsChanged, func(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
		notified <- req.ExtField("consumerGroup")
		return nil
	})

	// A second client (its own connection) joins.
	c2 := remoting.NewClient(remoting.ClientConfig{})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	r, err := c2.Invoke(ctx, e.addr, remoting.NewRequest(protocol.HeartBeat, nil, heartbeatBody("c2", "cg", "T")))
	must(t, err)
	if r.Code != protocol.Success {
		t.Fatal(r.Remark)
	}
	select {
	case g := <-notified:
		if g != "cg" {
			t.Fatalf("notified for %q", g)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("first member not notified of the second")
	}
	if _, ids := consumerIDs(t, e, e.rc, "cg"); len(ids) != 2 {
		t.Fatalf("consumer list: %v", ids)
	}
	// The Go client never unregisters: closing its connection must do.
	must(t, c2.Close())
	wait.For(t, 5*time.Second, "the closed connection to leave the group", func() bool {
		_, ids := consumerIDs(t, e, e.rc, "cg")
		return len(ids) == 1
	})
	// Admin views of the same tables.
	r = e.call(protocol.GetProducerConnectionList, protocol.Ext(&protocol.GetProducerConnectionListRequestHeader{ProducerGroup: "pg"}), nil)
	var pc protocol.ProducerConnection
	must(t, protocol.UnmarshalFastJSON(r.Body, &pc))
	if r.Code != protocol.Success || len(pc.ConnectionSet) != 1 || pc.ConnectionSet[0].ClientID != "c1" {
		t.Fatalf("producer connections: %d %+v", r.Code, pc)
	}
	e.offsets.Commit("offline-group", "T", 0, 1)
	r = e.call(protocol.QueryTopicConsumeByWho, protocol.Ext(&protocol.TopicRequestHeader{Topic: "T"}), nil)
	var gl protocol.GroupList
	must(t, protocol.UnmarshalFastJSON(r.Body, &gl))
	if len(gl.GroupList) != 2 || gl.GroupList[0] != "cg" || gl.GroupList[1] != "offline-group" {
		t.Fatalf("consume by who: %v", gl.GroupList)
	}
	r = e.call(protocol.GetConsumerConnectionList, protocol.Ext(&protocol.ConsumerGroupRequestHeader{ConsumerGroup: "cg"}), nil)
	var cc protocol.ConsumerConnection
	must(t, protocol.UnmarshalFastJSON(r.Body, &cc))
	if len(cc.ConnectionSet) != 1 || cc.SubscriptionTable["T"].SubString != "*" {
		t.Fatalf("consumer connections: %+v", cc)
	}

	// UNREGISTER_CLIENT (Java clients) empties the group.
	u := &protocol.UnregisterClientRequestHeader{ClientID: "c1", ConsumerGroup: "cg", ProducerGroup: "pg"}
	if r := e.call(protocol.UnregisterClient, protocol.Ext(u), nil); r.Code != protocol.Success {
		t.Fatal(r.Remark)
	}
	if code, _ := consumerIDs(t, e, e.rc, "cg"); code != protocol.SystemError {
		t.Fatalf("empty group: code %d", code)
	}
}

func TestLockBatch(t *testing.T) {
	e := newEnv(t, nil)
	mqs := []protocol.MessageQueue{{Topic: "T", BrokerName: "b", QueueID: 0}, {Topic: "T", BrokerName: "b", QueueID: 1}}
	lock := func(clientID string, mqs []protocol.MessageQueue) []protocol.MessageQueue {
		body, err := protocol.MarshalFastJSON(&protocol.LockBatchRequestBody{ConsumerGroup: "g", ClientID: clientID, MQSet: mqs})
		must(t, err)
		r := e.call(protocol.LockBatchMQ, nil, body)
		if r.Code != protocol.Success {
			t.Fatalf("lock: %d %s", r.Code, r.Remark)
		}
		var resp protocol.LockBatchResponseBody
		must(t, protocol.UnmarshalFastJSON(r.Body, &resp))
		return resp.LockOKMQSet
	}
	if got := lock("c1", mqs); len(got) != 2 {
		t.Fatalf("c1 locked %v", got)
	}
	if got := lock("c2", mqs); len(got) != 0 {
		t.Fatalf("c2 locked queues c1 holds: %v", got)
	}
	body, err := protocol.MarshalFastJSON(&protocol.LockBatchRequestBody{ConsumerGroup: "g", ClientID: "c1", MQSet: mqs[:1]})
	must(t, err)
	if r := e.call(protocol.UnlockBatchMQ, nil, body); r.Code != protocol.Success {
		t.Fatal(r.Remark)
	}
	if got := lock("c2", mqs); len(got) != 1 || got[0].QueueID != 0 {
		t.Fatalf("c2 after unlock: %v", got)
	}
}
