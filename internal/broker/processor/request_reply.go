package processor

import (
	"context"
	"errors"
	"net/netip"
	"strconv"
	"time"

	"github.com/rocketd/rocketd/internal/broker/client"
	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
	"github.com/rocketd/rocketd/internal/store"
)

// handleSendReply serves SEND_REPLY_MESSAGE (324) and SEND_REPLY_MESSAGE_V2
// (325) following Java's ReplyMessageProcessor: the reply a replier made
// with MessageUtil.createReplyMessage is pushed at once to the requesting
// producer, found by its REPLY_TO_CLIENT client id, with
// PUSH_REPLY_MESSAGE_TO_CLIENT (326); the response's code says whether
// that push succeeded. With storeReplyMessageEnable the reply is also
// stored (in <cluster>_REPLY_TOPIC), which only fills the response's
// msgId and queueOffset. The send hooks run around it, as for sends.
func (s *sendFamily) handleSendReply(conn *remoting.Conn, req *remoting.Command) *remoting.Command {
	r := s.newSendReply()
	h := &r.req
	if err := h.DecodeFrom(req.Code, req); err != nil {
		return headerError(err)
	}
	if key := protocol.MissingSendField(req.Code, req); key != "" {
		return remoting.NewResponse(protocol.SystemError, "the custom field <"+key+"> is null")
	}
	for _, hook := range s.sendHooks {
		hook.BeforeSend(conn, h)
	}
	resp := s.sendReply(conn, req, h, &r.resp)
	for _, hook := range s.sendHooks {
		hook.AfterSend(conn, h, resp)
	}
	return resp
}

func (s *sendFamily) sendReply(conn *remoting.Conn, req *remoting.Command, h *protocol.SendMessageRequestHeader, resp *remoting.Command) *remoting.Command {
	if remark, refused := s.sendsNotYetAccepted(); refused {
		return fail(resp, protocol.SystemError, remark)
	}
	tc, code, remark := s.msgCheck(h, conn)
	if code != protocol.Success {
		return fail(resp, code, remark)
	}
	queueID := h.QueueID
	if queueID < 0 {
		queueID = randomQueue(tc.WriteQueueNums)
	}
	born := bornHost(conn)

	if remark, ok := s.pushReply(conn, req, h, born); ok {
		resp.Code, resp.Remark = protocol.Success, ""
		// Java answers msgId "0" and offset 0 when nothing is stored: the
		// client parses the header whatever it holds.
		setStored(resp, protocol.SendMessageResponseHeader{MsgID: "0", QueueID: queueID})
	} else {
		resp.Code, resp.Remark = protocol.SystemError, remark
	}

	if !s.live().StoreReplyMessageEnable {
		return resp
	}
	// Stored as sent: no CLUSTER added, WAIT kept (Java stores the
	// header's property string unchanged). Java stores sysFlag 0, which
	// leaves a compressed reply unreadable in the reply topic; the
	// compression bits are kept here, and only those (no transaction bits
	// from a client).
	rec := message.Record{
		Topic:          h.Topic,
		QueueID:        queueID,
		Flag:           h.Flag,
		SysFlag:        h.SysFlag & replyStoredSysFlags,
		BornTimestamp:  h.BornTimestamp,
		BornHost:       born,
		ReconsumeTimes: h.ReconsumeTimes.Or(0),
		Body:           req.Body,
		Properties:     h.Properties,
	}
	began := time.Now()
	res := s.store.PutMessage(context.Background(), &rec, store.PutOptions{})
	s.countPut(rec.Topic, res, began)
	switch res.Status {
	case store.PutOK, store.FlushDiskTimeout, store.FlushSlaveTimeout, store.SlaveNotAvailable:
		setStored(resp, protocol.SendMessageResponseHeader{MsgID: res.MsgID, QueueID: queueID, QueueOffset: res.QueueOffset})
	default:
		// The requester has its reply (or not, as resp says); a reply not
		// kept is only logged, as Java does.
		s.log.Warn("reply: not stored", "topic", h.Topic, "status", res.Status)
	}
	return resp
}

// pushReply sends the reply to the producer named by its REPLY_TO_CLIENT
// property; on failure it returns Java's remark.
func (s *sendFamily) pushReply(conn *remoting.Conn, req *remoting.Command, h *protocol.SendMessageRequestHeader, born netip.AddrPort) (string, bool) {
	to, _ := message.Property(h.Properties, message.PropertyMessageReplyToClient)
	if to == "" {
		s.log.Warn("reply: " + message.PropertyMessageReplyToClient + " is null, can not reply message")
		return "reply message properties[" + message.PropertyMessageReplyToClient + "] is null", false
	}
	push := protocol.ReplyMessageRequestHeader{
		ProducerGroup:         h.ProducerGroup,
		Topic:                 h.Topic,
		DefaultTopic:          h.DefaultTopic,
		DefaultTopicQueueNums: h.DefaultTopicQueueNums,
		QueueID:               h.QueueID,
		SysFlag:               h.SysFlag,
		BornTimestamp:         h.BornTimestamp,
		Flag:                  h.Flag,
		Properties: message.SetProperty(h.Properties, message.PropertyPushReplyTime,
			strconv.FormatInt(time.Now().UnixMilli(), 10)),
		ReconsumeTimes: h.ReconsumeTimes,
		UnitMode:       h.UnitMode.Or(false),
		BornHost:       born.String(),
		StoreHost:      s.storeHost.String(),
		StoreTimestamp: time.Now().UnixMilli(),
	}
	pushReq := remoting.NewRequest(protocol.PushReplyMessageToClient, protocol.Ext(&push), req.Body)
	presp, err := s.clients.PushReply(context.Background(), to, pushReq)
	switch {
	case errors.Is(err, client.ErrRequesterNotFound):
		remark := "push reply message fail, channel of <" + to + "> not found."
		s.log.Warn("reply: "+remark, "from", conn.RemoteAddr())
		return remark, false
	case err != nil:
		s.log.Warn("reply: push failed", "to", to, "err", err)
		return "push reply message to " + to + "fail.", false
	case presp.Code != protocol.Success:
		s.log.Warn("reply: requester refused the push", "to", to, "code", presp.Code, "remark", presp.Remark)
		return "push reply message to " + to + "fail.", false
	}
	return "", true
}

// replyStoredSysFlags are the sysFlag bits of a reply that are stored:
// compression and its type.
const replyStoredSysFlags = message.SysFlagCompressed | message.CompressionLZ4 | message.CompressionZSTD | message.CompressionZlib

// registerReply routes the two reply codes to their own family (Java's
// replyMessageExecutor): a push may wait up to 10 s for the requester,
// and sends must not queue behind it.
func (s *sendFamily) registerReply(srv *remoting.Server, f Families) {
	fam := f.Reply
	if fam == nil {
		fam = f.Send
	}
	srv.HandleLazyExt(protocol.SendReplyMessage, fam, s.handleSendReply)
	srv.HandleLazyExt(protocol.SendReplyMessageV2, fam, s.handleSendReply)
}
