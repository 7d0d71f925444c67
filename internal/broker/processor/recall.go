package processor

import (
	"context"
	"net/netip"
	"strconv"
	"time"

	"github.com/rocketd/rocketd/internal/broker/meta"
	"github.com/rocketd/rocketd/internal/broker/timer"
	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
	"github.com/rocketd/rocketd/internal/store"
)

// handleRecall serves RECALL_MESSAGE (370) as Java 5.3's
// RecallMessageProcessor: the timer message the handle names is never
// delivered (package timer, "Recall").
func (s *sendFamily) handleRecall(conn *remoting.Conn, req *remoting.Command) *remoting.Command {
	var h protocol.RecallMessageRequestHeader
	if err := h.Decode(req.ExtFields); err != nil {
		return headerError(err)
	}
	return s.recall(&h, bornHost(conn))
}

// LocalRecall runs a RECALL_MESSAGE request (gRPC RecallMessage).
func (p *Processor) LocalRecall(h *protocol.RecallMessageRequestHeader, from netip.AddrPort) *remoting.Command {
	return p.sends.recall(h, from)
}

func (s *sendFamily) recall(h *protocol.RecallMessageRequestHeader, born netip.AddrPort) *remoting.Command {
	resp := remoting.NewResponse(protocol.Success, "")
	resp.ExtFields = map[string]string{message.PropertyMsgRegion: s.region}
	refuse := func(code int32, remark string) *remoting.Command {
		resp.Code, resp.Remark = code, remark
		return resp
	}
	// Java's @CFNotNull fields.
	if h.Topic == "" {
		return refuse(protocol.SystemError, "the custom field <topic> is null")
	}
	if h.RecallHandle == "" {
		return refuse(protocol.SystemError, "the custom field <recallHandle> is null")
	}
	cfg := s.live()
	if !cfg.RecallMessageEnable {
		return refuse(protocol.NoPermission, "recall failed, operation is forbidden")
	}
	if !s.cfg.IsMaster() || s.timerRecall == nil {
		return refuse(protocol.SlaveNotAvailable, "recall failed, broker service not available")
	}
	if _, refused := s.sendsNotYetAccepted(); refused {
		return refuse(protocol.ServiceNotAvailable, "recall failed, broker service not available")
	}
	if !s.brokerWriteable() && !cfg.AllowRecallWhenBrokerNotWriteable {
		return refuse(protocol.ServiceNotAvailable, "recall failed, broker service not available")
	}
	if _, found := s.topics.Get(h.Topic); !found {
		return refuse(protocol.TopicNotExist, "recall failed, the topic["+h.Topic+"] not exist")
	}
	handle, err := timer.DecodeRecallHandle(h.RecallHandle)
	if err != nil {
		return refuse(protocol.IllegalOperation, err.Error())
	}
	if handle.Topic != h.Topic {
		return refuse(protocol.IllegalOperation, "recall failed, topic not match")
	}
	if handle.BrokerName != s.cfg.BrokerName {
		return refuse(protocol.IllegalOperation, "recall failed, broker service not available")
	}
	now := time.Now()
	left := handle.TimestampMs() - now.UnixMilli()
	if left <= 0 || left >= cfg.TimerMaxDelaySec*1000 {
		return refuse(protocol.IllegalOperation, "recall failed, timestamp invalid")
	}
	// The marker first: once it is stored the recall survives a restart
	// (the timer files it); Recall then takes effect at once.
	marker := timer.RecallMarker(handle, h.ProducerGroup, born, now)
	began := time.Now()
	res := s.store.PutMessage(context.Background(), &marker, store.PutOptions{})
	s.countPut(marker.Topic, res, began)
	switch res.Status {
	case store.PutOK, store.FlushDiskTimeout, store.FlushSlaveTimeout, store.SlaveNotAvailable:
	default:
		s.log.Warn("recall: marker not stored", "topic", h.Topic, "msgId", handle.MessageID, "status", res.Status)
		return refuse(protocol.SystemError, "recall failed, execute error")
	}
	st, ok := s.timerRecall(handle.Topic, handle.MessageID, handle.DeliverMs())
	if !ok {
		return refuse(protocol.SlaveNotAvailable, "recall failed, broker service not available")
	}
	if st == timer.TooLate {
		// Java's answer once the time is reached (the message may be
		// delivered): the handle's timestamp is no longer valid.
		return refuse(protocol.IllegalOperation, "recall failed, timestamp invalid: the message is being or was delivered")
	}
	resp.ExtFields["msgId"] = handle.MessageID
	return resp
}

// recallHandle is SendMessageProcessor.attachRecallHandle: the handle of
// a single message the timer holds (not for a retry topic's message).
func (s *sendFamily) recallHandle(rec *message.Record) string {
	if rec.Topic != timer.Topic {
		return ""
	}
	out, ok1 := message.Property(rec.Properties, message.PropertyTimerOutMS)
	real, ok2 := message.Property(rec.Properties, message.PropertyRealTopic)
	if !ok1 || !ok2 || meta.IsRetryTopic(real) {
		return ""
	}
	uniq, _ := message.Property(rec.Properties, message.PropertyUniqClientMessageIDKeyIdx)
	deliverMs, err := strconv.ParseInt(out, 10, 64)
	if err != nil || uniq == "" {
		return ""
	}
	return timer.EncodeRecallHandle(real, s.cfg.BrokerName, deliverMs, uniq)
}

// attachRecallHandle adds a stored send's recall handle to its answer.
func attachRecallHandle(resp *remoting.Command, handle string) *remoting.Command {
	if handle == "" {
		return resp
	}
	switch resp.Code {
	case protocol.Success, protocol.FlushDiskTimeout, protocol.FlushSlaveTimeout, protocol.SlaveNotAvailable:
	default:
		return resp
	}
	if e, ok := resp.Header.(*sendResponseExt); ok && resp.ExtFields == nil && e.stored {
		e.h.RecallHandle = handle
	} else if ext := resp.Ext(); ext != nil {
		ext["recallHandle"] = handle
	} else {
		resp.ExtFields = map[string]string{"recallHandle": handle}
	}
	return resp
}
