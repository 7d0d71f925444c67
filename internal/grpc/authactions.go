package grpc

import (
	"strings"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	pb "google.golang.org/protobuf/proto"

	"github.com/rocketd/rocketd/internal/auth"
)

// resourceChecks is what a request message needs with authorization on,
// as RocketMQ 5.3's DefaultAuthorizationContextBuilder.build(Metadata,
// GeneratedMessageV3) builds it: the gRPC rows beside the remoting table
// of internal/auth (codeactions.go). A message not listed needs nothing;
// a missing resource is refused with Java's remark.
//
//	SendMessage                  Topic(first message's) PUB
//	RecallMessage, EndTransaction Topic PUB
//	Heartbeat (consumers only)   Group SUB
//	ReceiveMessage               Group SUB, Topic SUB (message_queue's)
//	AckMessage, ForwardMessageToDeadLetterQueue, QueryAssignment
//	                             Group SUB, Topic SUB
//	NotifyClientTermination      Group SUB when named
//	ChangeInvisibleDuration      Group SUB
//	QueryRoute                   Topic PUB or SUB
//	Telemetry Settings           Topic PUB per published topic; Group SUB
//	                             and Topic SUB per subscription entry
func resourceChecks(m pb.Message) ([]auth.GRPCCheck, string) {
	var cs checkList
	switch r := m.(type) {
	case *v2.SendMessageRequest:
		if len(r.GetMessages()) == 0 {
			return nil, "message is null."
		}
		cs.pub(r.GetMessages()[0].GetTopic())
	case *v2.RecallMessageRequest:
		cs.pub(r.GetTopic())
	case *v2.EndTransactionRequest:
		cs.pub(r.GetTopic())
	case *v2.HeartbeatRequest:
		switch r.GetClientType() {
		case v2.ClientType_PUSH_CONSUMER, v2.ClientType_SIMPLE_CONSUMER, v2.ClientType_PULL_CONSUMER:
			cs.subGroup(r.GetGroup())
		}
	case *v2.ReceiveMessageRequest:
		if r.GetMessageQueue() == nil {
			return nil, "messageQueue is null."
		}
		cs.subGroup(r.GetGroup())
		cs.subTopic(r.GetMessageQueue().GetTopic())
	case *v2.AckMessageRequest:
		cs.subGroup(r.GetGroup())
		cs.subTopic(r.GetTopic())
	case *v2.ForwardMessageToDeadLetterQueueRequest:
		cs.subGroup(r.GetGroup())
		cs.subTopic(r.GetTopic())
	case *v2.QueryAssignmentRequest:
		cs.subGroup(r.GetGroup())
		cs.subTopic(r.GetTopic())
	case *v2.NotifyClientTerminationRequest:
		if strings.TrimSpace(r.GetGroup().GetName()) != "" {
			cs.subGroup(r.GetGroup())
		}
	case *v2.ChangeInvisibleDurationRequest:
		cs.subGroup(r.GetGroup())
	case *v2.QueryRouteRequest:
		if blank(r.GetTopic()) {
			return nil, "topic is null."
		}
		cs.list = append(cs.list, auth.TopicCheck(r.GetTopic().GetName(), auth.ActionPub, auth.ActionSub))
	case *v2.TelemetryCommand:
		st := r.GetSettings()
		if st == nil {
			return nil, ""
		}
		if st.GetPublishing() == nil && st.GetSubscription() == nil {
			return nil, "settings command doesn't have publishing or subscription."
		}
		for _, t := range st.GetPublishing().GetTopics() {
			cs.pub(t)
		}
		if sub := st.GetSubscription(); sub != nil {
			cs.subGroup(sub.GetGroup())
			for _, e := range sub.GetSubscriptions() {
				cs.subTopic(e.GetTopic())
			}
		}
	}
	return cs.list, cs.missing
}

// checkList gathers checks; the first missing resource is the refusal.
type checkList struct {
	list    []auth.GRPCCheck
	missing string
}

func blank(r *v2.Resource) bool { return strings.TrimSpace(r.GetName()) == "" }

func (c *checkList) pub(t *v2.Resource) {
	if blank(t) {
		c.miss("topic is null.")
		return
	}
	c.list = append(c.list, auth.TopicCheck(t.GetName(), auth.ActionPub))
}

func (c *checkList) subTopic(t *v2.Resource) {
	if blank(t) {
		c.miss("topic is null.")
		return
	}
	c.list = append(c.list, auth.TopicCheck(t.GetName(), auth.ActionSub))
}

func (c *checkList) subGroup(g *v2.Resource) {
	if blank(g) {
		c.miss("group is null.")
		return
	}
	c.list = append(c.list, auth.GroupCheck(g.GetName(), auth.ActionSub))
}

func (c *checkList) miss(remark string) {
	if c.missing == "" {
		c.missing = remark
	}
}
