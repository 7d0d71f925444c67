package grpc

import (
	"reflect"
	"testing"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	pb "google.golang.org/protobuf/proto"

	"github.com/rocketd/rocketd/internal/auth"
)

// TestResourceChecks: each request message needs the resources and
// actions Java's DefaultAuthorizationContextBuilder gives it, and a
// missing resource is Java's remark.
func TestResourceChecks(t *testing.T) {
	res := func(n string) *v2.Resource { return &v2.Resource{Name: n} }
	pub := func(n string) auth.GRPCCheck { return auth.TopicCheck(n, auth.ActionPub) }
	subT := func(n string) auth.GRPCCheck { return auth.TopicCheck(n, auth.ActionSub) }
	subG := func(n string) auth.GRPCCheck { return auth.GroupCheck(n, auth.ActionSub) }
	for _, tc := range []struct {
		name   string
		m      pb.Message
		want   []auth.GRPCCheck
		remark string
	}{
		{"send", &v2.SendMessageRequest{Messages: []*v2.Message{{Topic: res("t")}, {Topic: res("u")}}}, []auth.GRPCCheck{pub("t")}, ""},
		{"send nothing", &v2.SendMessageRequest{}, nil, "message is null."},
		{"end transaction", &v2.EndTransactionRequest{Topic: res("t")}, []auth.GRPCCheck{pub("t")}, ""},
		{"end transaction, no topic", &v2.EndTransactionRequest{}, nil, "topic is null."},
		{"route", &v2.QueryRouteRequest{Topic: res("t")}, []auth.GRPCCheck{auth.TopicCheck("t", auth.ActionPub, auth.ActionSub)}, ""},
		{"route, no topic", &v2.QueryRouteRequest{}, nil, "topic is null."},
		{"producer heartbeat", &v2.HeartbeatRequest{ClientType: v2.ClientType_PRODUCER}, nil, ""},
		{"consumer heartbeat", &v2.HeartbeatRequest{ClientType: v2.ClientType_SIMPLE_CONSUMER, Group: res("g")}, []auth.GRPCCheck{subG("g")}, ""},
		{"consumer heartbeat, no group", &v2.HeartbeatRequest{ClientType: v2.ClientType_PUSH_CONSUMER}, nil, "group is null."},
		{"receive", &v2.ReceiveMessageRequest{Group: res("g"), MessageQueue: &v2.MessageQueue{Topic: res("t")}}, []auth.GRPCCheck{subG("g"), subT("t")}, ""},
		{"receive, no queue", &v2.ReceiveMessageRequest{Group: res("g")}, nil, "messageQueue is null."},
		{"ack", &v2.AckMessageRequest{Group: res("g"), Topic: res("t")}, []auth.GRPCCheck{subG("g"), subT("t")}, ""},
		{"dlq", &v2.ForwardMessageToDeadLetterQueueRequest{Group: res("g"), Topic: res("t")}, []auth.GRPCCheck{subG("g"), subT("t")}, ""},
		{"assignment", &v2.QueryAssignmentRequest{Group: res("g"), Topic: res("t")}, []auth.GRPCCheck{subG("g"), subT("t")}, ""},
		{"invisible", &v2.ChangeInvisibleDurationRequest{Group: res("g"), Topic: res("t")}, []auth.GRPCCheck{subG("g")}, ""},
		{"terminate producer", &v2.NotifyClientTerminationRequest{}, nil, ""},
		{"terminate consumer", &v2.NotifyClientTerminationRequest{Group: res("%RETRY%g")}, []auth.GRPCCheck{subG("g")}, ""},
		{"telemetry, not settings", &v2.TelemetryCommand{}, nil, ""},
		{"telemetry, publishing", &v2.TelemetryCommand{Command: &v2.TelemetryCommand_Settings{Settings: &v2.Settings{
			PubSub: &v2.Settings_Publishing{Publishing: &v2.Publishing{Topics: []*v2.Resource{res("a"), res("b")}}}}}},
			[]auth.GRPCCheck{pub("a"), pub("b")}, ""},
		{"telemetry, subscription", &v2.TelemetryCommand{Command: &v2.TelemetryCommand_Settings{Settings: &v2.Settings{
			PubSub: &v2.Settings_Subscription{Subscription: &v2.Subscription{Group: res("g"),
				Subscriptions: []*v2.SubscriptionEntry{{Topic: res("a")}}}}}}},
			[]auth.GRPCCheck{subG("g"), subT("a")}, ""},
		{"telemetry, neither", &v2.TelemetryCommand{Command: &v2.TelemetryCommand_Settings{Settings: &v2.Settings{}}},
			nil, "settings command doesn't have publishing or subscription."},
		{"unlisted", &v2.GetOffsetRequest{}, nil, ""},
	} {
		got, remark := resourceChecks(tc.m)
		if remark != tc.remark || (remark == "" && !reflect.DeepEqual(got, tc.want)) {
			t.Errorf("%s: %v %q, want %v %q", tc.name, got, remark, tc.want, tc.remark)
		}
	}
}

// TestRefusalResponse: a refusal is each RPC's own response type with
// the status set (ReceiveMessage's in its oneof).
func TestRefusalResponse(t *testing.T) {
	st := status(v2.Code_UNAUTHORIZED, "no")
	for method, want := range map[string]pb.Message{
		"/apache.rocketmq.v2.MessagingService/QueryRoute":     &v2.QueryRouteResponse{Status: st},
		"/apache.rocketmq.v2.MessagingService/SendMessage":    &v2.SendMessageResponse{Status: st},
		"/apache.rocketmq.v2.MessagingService/ReceiveMessage": &v2.ReceiveMessageResponse{Content: &v2.ReceiveMessageResponse_Status{Status: st}},
		"/apache.rocketmq.v2.MessagingService/Telemetry":      &v2.TelemetryCommand{Status: st},
	} {
		got, err := refusalResponse(method, st)
		if err != nil || !pb.Equal(got, want) {
			t.Errorf("%s: %v %v, want %v", method, got, err, want)
		}
	}
	if _, err := refusalResponse("/apache.rocketmq.v2.MessagingService/Nope", st); err == nil {
		t.Error("unknown method: no error")
	}
}
