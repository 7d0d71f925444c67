package processor_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
)

// TestAdminCallsReachTheConsumer: the broker forwards
// GET_CONSUMER_RUNNING_INFO and CONSUME_MESSAGE_DIRECTLY (with the stored
// message) to the named consumer and answers with its reply, and gathers
// INVOKE_BROKER_TO_GET_CONSUMER_STATUS from every consumer of the group.
func TestAdminCallsReachTheConsumer(t *testing.T) {
	e := newEnv(t, nil)
	e.createTopic("T", 1)
	r := e.send(sendHeader("T", 0, message.EncodeProperties(map[string]string{"k": "v"})), "direct body")
	if r.Code != protocol.Success {
		t.Fatalf("send: %d %s", r.Code, r.Remark)
	}
	offsetMsgID := r.ExtFields["msgId"]
	e.waitMaxOffset("T", 0, 1)

	consumer := remoting.NewClient(remoting.ClientConfig{})
	defer consumer.Close()
	consumer.Handle(protocol.GetConsumerRunningInfo, func(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
		resp := remoting.NewResponse(protocol.Success, "")
		resp.Body = []byte(`{"properties":{"clientId":"` + req.ExtFields["clientId"] + `"}}`)
		return resp
	})
	consumer.Handle(protocol.ConsumeMessageDirectly, func(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
		rec, _, err := message.DecodeRecord(req.Body, false)
		if err != nil {
			return remoting.NewResponse(protocol.SystemError, err.Error())
		}
		return remoting.NewResponse(protocol.Success, string(rec.Body)+"@"+req.ExtFields["brokerName"]+"/"+req.ExtFields["topicSysFlag"]+"/"+req.ExtFields["groupSysFlag"])
	})
	consumer.Handle(protocol.GetConsumerStatusFromClient, func(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
		st := protocol.GetConsumerStatusBody{MessageQueueTable: map[protocol.MessageQueue]int64{
			{Topic: req.ExtFields["topic"], BrokerName: "b", QueueID: 0}: 7}}
		b, err := protocol.MarshalFastJSON(&st)
		if err != nil {
			return remoting.NewResponse(protocol.SystemError, err.Error())
		}
		resp := remoting.NewResponse(protocol.Success, "")
		resp.Body = b
		return resp
	})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	hb, err := consumer.Invoke(ctx, e.addr, remoting.NewRequest(protocol.HeartBeat, nil, heartbeatBody("c1", "cg", "T")))
	if err != nil || hb.Code != protocol.Success {
		t.Fatalf("heartbeat: %v %v", err, hb)
	}

	r = e.call(protocol.GetConsumerRunningInfo, protocol.Ext(&protocol.GetConsumerRunningInfoRequestHeader{ConsumerGroup: "cg", ClientID: "c1"}), nil)
	if r.Code != protocol.Success || string(r.Body) != `{"properties":{"clientId":"c1"}}` {
		t.Errorf("running info: %d %q %s", r.Code, r.Remark, r.Body)
	}
	r = e.call(protocol.GetConsumerRunningInfo, protocol.Ext(&protocol.GetConsumerRunningInfoRequestHeader{ConsumerGroup: "cg", ClientID: "nobody"}), nil)
	if r.Code != protocol.SystemError || r.Remark != "The Consumer <cg> <nobody> not online" {
		t.Errorf("running info of an offline client: %d %q", r.Code, r.Remark)
	}

	ext := protocol.Ext(&protocol.ConsumeMessageDirectlyResultRequestHeader{ConsumerGroup: "cg", ClientID: "c1", MsgID: offsetMsgID})
	ext["topic"] = "T"
	r = e.call(protocol.ConsumeMessageDirectly, ext, nil)
	tc, _ := e.topics.Get("T")
	gc, _ := e.groups.Get("cg") // created by the heartbeat
	if want := "direct body@" + e.cfg.BrokerName + "/" + strconv.Itoa(int(tc.TopicSysFlag)) + "/" + strconv.Itoa(int(gc.GroupSysFlag)); r.Code != protocol.Success || r.Remark != want {
		t.Errorf("consume directly: %d %q, want remark %q", r.Code, r.Remark, want)
	}

	r = e.call(protocol.InvokeBrokerToGetConsumerStatus, protocol.Ext(&protocol.GetConsumerStatusRequestHeader{Topic: "T", Group: "cg"}), nil)
	var st protocol.GetConsumerStatusBody
	must(t, protocol.UnmarshalFastJSON(r.Body, &st))
	if got := st.ConsumerTable["c1"][protocol.MessageQueue{Topic: "T", BrokerName: "b", QueueID: 0}]; r.Code != protocol.Success || got != 7 {
		t.Errorf("consumer status: %d %q %s", r.Code, r.Remark, r.Body)
	}
	r = e.call(protocol.InvokeBrokerToGetConsumerStatus, protocol.Ext(&protocol.GetConsumerStatusRequestHeader{Topic: "T", Group: "nogroup"}), nil)
	if r.Code != protocol.SystemError {
		t.Errorf("consumer status of an offline group: %d %q", r.Code, r.Remark)
	}
}
