package processor_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/broker/meta"
	"github.com/rocketd/rocketd/internal/broker/processor"
	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
)

func queryAssignment(t *testing.T, e *env, c *remoting.Client, b protocol.QueryAssignmentRequestBody) (*remoting.Command, *protocol.QueryAssignmentResponseBody) {
	t.Helper()
	body, err := protocol.MarshalFastJSON(&b)
	must(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	r, err := c.Invoke(ctx, e.addr, remoting.NewRequest(protocol.QueryAssignment, nil, body))
	must(t, err)
	if r.Code != protocol.Success {
		return r, nil
	}
	var rb protocol.QueryAssignmentResponseBody
	must(t, protocol.UnmarshalFastJSON(r.Body, &rb))
	return r, &rb
}

func assignedIDs(rb *protocol.QueryAssignmentResponseBody) ([]int32, protocol.MessageRequestMode) {
	var out []int32
	var mode protocol.MessageRequestMode
	if rb.MessageQueueAssignments == nil {
		return nil, ""
	}
	for _, a := range *rb.MessageQueueAssignments {
		out = append(out, a.MessageQueue.QueueID)
		mode = a.Mode
	}
	slices.Sort(out)
	return out, mode
}

// TestQueryAssignment: two clients of a clustering group split the topic's
// queues by the named strategy (together all, each its share); a
// broadcasting client gets all; SET_MESSAGE_REQUEST_MODE POP changes the
// mode and the split; what Java answers null (unknown strategy or topic)
// is SUCCESS without a list.
func TestQueryAssignment(t *testing.T) {
	e := newEnv(t, nil)
	e.createTopic("T", 5)
	c2 := remoting.NewClient(remoting.ClientConfig{})
	t.Cleanup(func() { _ = c2.Close() })
	if r := e.call(protocol.HeartBeat, nil, heartbeatBody("c1", "cg", "T")); r.Code != protocol.Success {
		t.Fatal(r.Remark)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if r, err := c2.Invoke(ctx, e.addr, remoting.NewRequest(protocol.HeartBeat, nil, heartbeatBody("c2", "cg", "T"))); err != nil || r.Code != protocol.Success {
		t.Fatalf("heartbeat c2: %v", err)
	}
	q := protocol.QueryAssignmentRequestBody{Topic: "T", ConsumerGroup: "cg", ClientID: "c1", StrategyName: "AVG", MessageModel: protocol.Clustering}
	_, rb := queryAssignment(t, e, e.rc, q)
	got1, mode := assignedIDs(rb)
	if !slices.Equal(got1, []int32{0, 1, 2}) || mode != protocol.RequestModePull {
		t.Fatalf("c1 AVG: %v %s", got1, mode)
	}
	q.ClientID = "c2"
	_, rb = queryAssignment(t, e, c2, q)
	if got2, _ := assignedIDs(rb); !slices.Equal(got2, []int32{3, 4}) {
		t.Fatalf("c2 AVG: %v", got2)
	}
	q.StrategyName = "AVG_BY_CIRCLE"
	_, rb = queryAssignment(t, e, c2, q)
	if got, _ := assignedIDs(rb); !slices.Equal(got, []int32{1, 3}) {
		t.Fatalf("c2 AVG_BY_CIRCLE: %v", got)
	}
	for _, b := range []protocol.QueryAssignmentRequestBody{
		{Topic: "T", ConsumerGroup: "cg", ClientID: "c1", StrategyName: "CONSISTENT_HASH", MessageModel: protocol.Clustering},
		{Topic: "Nope", ConsumerGroup: "cg", ClientID: "c1", StrategyName: "AVG", MessageModel: protocol.Clustering},
		{Topic: "Nope", ConsumerGroup: "cg", ClientID: "c1", StrategyName: "AVG", MessageModel: protocol.Broadcasting},
		{Topic: "T", ConsumerGroup: "nobody", ClientID: "c1", StrategyName: "AVG", MessageModel: protocol.Clustering},
	} {
		r, rb := queryAssignment(t, e, e.rc, b)
		if r.Code != protocol.Success || rb.MessageQueueAssignments != nil || string(r.Body) != "{}" {
			t.Fatalf("%+v: %d %s %s, want SUCCESS and {}", b, r.Code, r.Remark, r.Body)
		}
	}
	// A client that is not a member gets an empty list: drop everything.
	r, rb := queryAssignment(t, e, e.rc, protocol.QueryAssignmentRequestBody{Topic: "T", ConsumerGroup: "cg", ClientID: "c9", StrategyName: "AVG", MessageModel: protocol.Clustering})
	if rb.MessageQueueAssignments == nil || len(*rb.MessageQueueAssignments) != 0 || !strings.Contains(string(r.Body), `"messageQueueAssignments":[]`) {
		t.Fatalf("stranger: %s", r.Body)
	}
	_, rb = queryAssignment(t, e, e.rc, protocol.QueryAssignmentRequestBody{Topic: "T", ConsumerGroup: "cg", ClientID: "c1", StrategyName: "AVG", MessageModel: protocol.Broadcasting})
	if got, _ := assignedIDs(rb); !slices.Equal(got, []int32{0, 1, 2, 3, 4}) {
		t.Fatalf("broadcasting: %v", got)
	}

	// POP with popShareQueueNum 0: each client may pop every queue.
	mode0, _ := protocol.MarshalFastJSON(&protocol.SetMessageRequestModeRequestBody{Topic: "T", ConsumerGroup: "cg", Mode: protocol.RequestModePop})
	if r := e.call(protocol.SetMessageRequestMode, nil, mode0); r.Code != protocol.Success {
		t.Fatalf("set mode: %d %s", r.Code, r.Remark)
	}
	_, rb = queryAssignment(t, e, e.rc, protocol.QueryAssignmentRequestBody{Topic: "T", ConsumerGroup: "cg", ClientID: "c1", StrategyName: "AVG", MessageModel: protocol.Clustering})
	if got, mode := assignedIDs(rb); len(got) != 5 || got[0] != -1 || mode != protocol.RequestModePop {
		t.Fatalf("pop: %v %s", got, mode)
	}
}

// TestSetMessageRequestModePersists: the mode survives a reopen of
// messageRequestMode.json, written in Java's form.
func TestSetMessageRequestModePersists(t *testing.T) {
	var modes *meta.RequestModes
	e := newEnv(t, func(c *config.BrokerConfig, d *processor.Deps) {
		var err error
		modes, err = meta.OpenRequestModes(meta.Options{Dir: meta.ConfigDir(c.StorePathRootDir)})
		must(t, err)
		d.RequestModes = modes
	})
	e.createTopic("T", 2)
	body, _ := protocol.MarshalFastJSON(&protocol.SetMessageRequestModeRequestBody{Topic: "T", ConsumerGroup: "cg", Mode: protocol.RequestModePop, PopShareQueueNum: 2})
	if r := e.call(protocol.SetMessageRequestMode, nil, body); r.Code != protocol.Success {
		t.Fatalf("set mode: %d %s", r.Code, r.Remark)
	}
	again, err := meta.OpenRequestModes(meta.Options{Dir: meta.ConfigDir(e.cfg.StorePathRootDir)})
	must(t, err)
	m, ok := again.Get("T", "cg")
	if !ok || m.Mode != protocol.RequestModePop || m.PopShareQueueNum != 2 {
		t.Fatalf("reopened: %+v %v", m, ok)
	}
}

// TestAssignmentBadInput: each malformed or refused body gets a clear
// code and remark.
func TestAssignmentBadInput(t *testing.T) {
	e := newEnv(t, func(c *config.BrokerConfig, _ *processor.Deps) { c.AutoCreateSubscriptionGroup = false })
	e.createTopic("T", 2)
	for _, c := range []struct {
		name   string
		code   int32
		body   string
		want   int32
		remark string
	}{
		{"query no body", protocol.QueryAssignment, "", protocol.SystemError, "no body"},
		{"query not JSON", protocol.QueryAssignment, "{topic", protocol.SystemError, "QueryAssignmentRequestBody"},
		{"query no topic", protocol.QueryAssignment, `{"consumerGroup":"cg","messageModel":"CLUSTERING"}`, protocol.SystemError, "topic is missing"},
		{"query no group", protocol.QueryAssignment, `{"topic":"T","messageModel":"CLUSTERING"}`, protocol.SystemError, "consumerGroup is missing"},
		{"query no model", protocol.QueryAssignment, `{"topic":"T","consumerGroup":"cg"}`, protocol.SystemError, "messageModel"},
		{"query bad model", protocol.QueryAssignment, `{"topic":"T","consumerGroup":"cg","messageModel":"X"}`, protocol.SystemError, "messageModel"},
		{"mode no body", protocol.SetMessageRequestMode, "", protocol.SystemError, "no body"},
		{"mode not JSON", protocol.SetMessageRequestMode, "[", protocol.SystemError, "SetMessageRequestModeRequestBody"},
		{"mode no topic", protocol.SetMessageRequestMode, `{"consumerGroup":"cg"}`, protocol.SystemError, "topic is missing"},
		{"mode bad mode", protocol.SetMessageRequestMode, `{"topic":"T","consumerGroup":"cg","mode":"PUSH"}`, protocol.SystemError, "mode"},
		{"mode retry topic", protocol.SetMessageRequestMode, `{"topic":"%RETRY%cg","consumerGroup":"cg"}`, protocol.NoPermission, "retry topic is not allowed"},
		{"mode unknown topic", protocol.SetMessageRequestMode, `{"topic":"Nope","consumerGroup":"cg"}`, protocol.TopicNotExist, "topic[Nope] not exist"},
		{"mode unknown group", protocol.SetMessageRequestMode, `{"topic":"T","consumerGroup":"cg"}`, protocol.SubscriptionGroupNotExist, "subscription group does not exist"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var body []byte
			if c.body != "" {
				body = []byte(c.body)
			}
			r := e.call(c.code, nil, body)
			if r.Code != c.want || !strings.Contains(r.Remark, c.remark) {
				t.Fatalf("%d %q, want %d with %q", r.Code, r.Remark, c.want, c.remark)
			}
		})
	}
}

// TestQueryAssignmentUsesRoute: with a route lookup the queues of every
// readable broker of the route are split (sorted by broker name, then
// queue id); an unknown topic or a failed lookup answers no list.
func TestQueryAssignmentUsesRoute(t *testing.T) {
	route := func(_ context.Context, topic string) (protocol.TopicRouteData, bool, error) {
		switch topic {
		case "T":
			return protocol.TopicRouteData{QueueDatas: []protocol.QueueData{
				{BrokerName: "broker-b", ReadQueueNums: 2, WriteQueueNums: 2, Perm: 6},
				{BrokerName: "broker-a", ReadQueueNums: 2, WriteQueueNums: 2, Perm: 6},
				{BrokerName: "broker-c", ReadQueueNums: 3, WriteQueueNums: 3, Perm: 2}, // write only
			}}, true, nil
		case "Broken":
			return protocol.TopicRouteData{}, false, errors.New("namesrv down")
		}
		return protocol.TopicRouteData{}, false, nil
	}
	e := newEnv(t, func(_ *config.BrokerConfig, d *processor.Deps) { d.TopicRoute = route })
	e.createTopic("T", 1)
	c2 := remoting.NewClient(remoting.ClientConfig{})
	t.Cleanup(func() { _ = c2.Close() })
	if r := e.call(protocol.HeartBeat, nil, heartbeatBody("c1", "cg", "T")); r.Code != protocol.Success {
		t.Fatal(r.Remark)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if r, err := c2.Invoke(ctx, e.addr, remoting.NewRequest(protocol.HeartBeat, nil, heartbeatBody("c2", "cg", "T"))); err != nil || r.Code != protocol.Success {
		t.Fatalf("heartbeat c2: %v", err)
	}
	for cid, want := range map[string]string{"c1": "broker-a/0 broker-a/1", "c2": "broker-b/0 broker-b/1"} {
		_, rb := queryAssignment(t, e, e.rc, protocol.QueryAssignmentRequestBody{Topic: "T", ConsumerGroup: "cg", ClientID: cid, StrategyName: "AVG", MessageModel: protocol.Clustering})
		var got []string
		for _, a := range *rb.MessageQueueAssignments {
			got = append(got, fmt.Sprintf("%s/%d", a.MessageQueue.BrokerName, a.MessageQueue.QueueID))
		}
		slices.Sort(got)
		if strings.Join(got, " ") != want {
			t.Errorf("%s: %v, want %s", cid, got, want)
		}
	}
	for _, topic := range []string{"Broken", "Unknown"} {
		r, rb := queryAssignment(t, e, e.rc, protocol.QueryAssignmentRequestBody{Topic: topic, ConsumerGroup: "cg", ClientID: "c1", StrategyName: "AVG", MessageModel: protocol.Broadcasting})
		if r.Code != protocol.Success || rb.MessageQueueAssignments != nil {
			t.Errorf("%s: %d %s, want SUCCESS {}", topic, r.Code, r.Body)
		}
	}
}

// TestQueryAssignmentBrokerKeys: serverLoadBalancerEnable=false gives a
// clustering client every queue; defaultMessageRequestMode=POP answers POP
// (popShareQueueNum -1: every queue, id -1) except for a retry topic,
// which stays PULL.
func TestQueryAssignmentBrokerKeys(t *testing.T) {
	e := newEnv(t, func(c *config.BrokerConfig, _ *processor.Deps) { c.ServerLoadBalancerEnable = false })
	e.createTopic("T", 3)
	if r := e.call(protocol.HeartBeat, nil, heartbeatBody("c1", "cg", "T")); r.Code != protocol.Success {
		t.Fatal(r.Remark)
	}
	_, rb := queryAssignment(t, e, e.rc, protocol.QueryAssignmentRequestBody{Topic: "T", ConsumerGroup: "cg", ClientID: "c9", StrategyName: "AVG", MessageModel: protocol.Clustering})
	if got, _ := assignedIDs(rb); !slices.Equal(got, []int32{0, 1, 2}) {
		t.Fatalf("serverLoadBalancerEnable=false: %v", got)
	}

	e = newEnv(t, func(c *config.BrokerConfig, _ *processor.Deps) { c.DefaultMessageRequestMode = "POP" })
	e.createTopic("T", 3)
	if r := e.call(protocol.HeartBeat, nil, heartbeatBody("c1", "cg", "T")); r.Code != protocol.Success {
		t.Fatal(r.Remark)
	}
	_, rb = queryAssignment(t, e, e.rc, protocol.QueryAssignmentRequestBody{Topic: "T", ConsumerGroup: "cg", ClientID: "c1", StrategyName: "AVG", MessageModel: protocol.Clustering})
	if got, mode := assignedIDs(rb); !slices.Equal(got, []int32{-1, -1, -1}) || mode != protocol.RequestModePop {
		t.Fatalf("default POP: %v %s", got, mode)
	}
	_, rb = queryAssignment(t, e, e.rc, protocol.QueryAssignmentRequestBody{Topic: "%RETRY%cg", ConsumerGroup: "cg", ClientID: "c1", StrategyName: "AVG", MessageModel: protocol.Clustering})
	if got, mode := assignedIDs(rb); len(got) != 1 || got[0] != 0 || mode != protocol.RequestModePull {
		t.Fatalf("retry topic: %v %s", got, mode)
	}
}
