package processor

import (
	"github.com/rocketd/rocketd/internal/broker/client"
	"github.com/rocketd/rocketd/internal/broker/stats"
	"github.com/rocketd/rocketd/internal/broker/timer"
	"github.com/rocketd/rocketd/internal/broker/txn"
	"strconv"
	"time"

	"context"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"sync"

	"github.com/rocketd/rocketd/internal/broker/meta"
	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
	"github.com/rocketd/rocketd/internal/store"
)

// versionV3_4_9 is the request version from which the header's
// maxReconsumeTimes is honoured (MQVersion V3_4_9 ordinal).
const versionV3_4_9 = 121

// bornHostKey caches a connection's parsed remote address (the BORNHOST of
// every message it sends) in the Conn's attributes.
type bornHostKey struct{}

// sendFamily serves the producing codes (Java's SendMessageProcessor,
// EndTransactionProcessor, ReplyMessageProcessor, RecallMessageProcessor):
// sends, send backs, half messages and their end, replies and recalls.
type sendFamily struct {
	base
	store       *store.Store
	topics      *meta.Topics
	groups      *meta.Groups
	clients     *client.Registry // requesters of request-reply pushes
	storeHost   netip.AddrPort
	mappings    *meta.Mappings // static topics' logic queues
	sendHooks   []SendHook
	sentToDLQ   func(group, topic string)
	txn         *txn.Service
	timerRecall func(topic, uniqKey string, deliverMs int64) (timer.RecallStatus, bool)
	stats       *stats.Stats

	// Strings echoed in every send response (ext fields MSG_REGION,
	// TRACE_ON), computed once.
	region, traceOn string
	// storedProps are the properties the send path puts on every stored
	// message: CLUSTER, and MSG_REGION and TRACE_ON as Java 5.x's
	// buildMsgContext adds them.
	storedProps [3]message.Prop
}

func newSendFamily(b base, d Deps) *sendFamily {
	return &sendFamily{
		base: b, store: d.Store, topics: d.Topics, groups: d.Groups, clients: d.Clients, storeHost: d.StoreHost,
		mappings: d.Mappings, sendHooks: d.SendHooks, sentToDLQ: d.SentToDLQ, txn: d.Txn, timerRecall: d.TimerRecall,
		stats: d.Stats, region: d.Config.RegionID, traceOn: strconv.FormatBool(d.Config.TraceOn),
		storedProps: [3]message.Prop{
			{Key: message.PropertyCluster, Value: d.Config.BrokerClusterName},
			{Key: message.PropertyMsgRegion, Value: d.Config.RegionID},
			{Key: message.PropertyTraceSwitch, Value: strconv.FormatBool(d.Config.TraceOn)},
		},
	}
}

func (s *sendFamily) register(srv *remoting.Server, pools Families) {
	// The send handler reads its header without an ext map, and is done
	// with the request's body when it returns (LentBody): a put copies its
	// records into the CommitLog's ring before it returns, and a refused
	// send keeps nothing.
	srv.HandleLazyExt(protocol.SendMessage, pools.Send, s.handleSend, remoting.LentBody)
	srv.HandleLazyExt(protocol.SendMessageV2, pools.Send, s.handleSend, remoting.LentBody)
	srv.HandleLazyExt(protocol.SendBatchMessage, pools.Send, s.handleSend, remoting.LentBody)
	srv.Handle(protocol.ConsumerSendMsgBack, pools.Send, s.handleSendBack)
	srv.Handle(protocol.EndTransaction, pools.Send, s.handleEndTransaction)
	srv.Handle(protocol.RecallMessage, pools.Send, s.handleRecall)
	s.registerReply(srv, pools)
}

// handleSend serves SEND_MESSAGE, SEND_MESSAGE_V2 and SEND_BATCH_MESSAGE
// following SendMessageProcessor (rocketmq-spec.md §14.6), with the send
// hooks around it.
//
// The reply is pooled: the server encodes the response, then calls its
// Release, which returns the reply (response, custom header and decoded
// request header) to sendReplies.
func (s *sendFamily) handleSend(conn *remoting.Conn, req *remoting.Command) *remoting.Command {
	r := s.pooledSendReply()
	resp := s.sendHooked(conn, bornHost(conn), req, r)
	r.releaseWhenWritten(resp)
	return resp
}

// sendHooked decodes and runs a send request with the send hooks around
// it, answering in r's response; conn is nil for a request made in the
// process (LocalSend), born the messages' BORNHOST.
func (s *sendFamily) sendHooked(conn *remoting.Conn, born netip.AddrPort, req *remoting.Command, r *sendReply) *remoting.Command {
	h := &r.req
	// Registered with HandleLazyExt: the header is read where it arrived,
	// without an ext map.
	if err := h.DecodeFrom(req.Code, req); err != nil {
		return headerError(err)
	}
	for _, hook := range s.sendHooks {
		hook.BeforeSend(conn, h)
	}
	resp := s.send(conn, born, req, h, &r.resp)
	for _, hook := range s.sendHooks {
		hook.AfterSend(conn, h, resp)
	}
	return resp
}

// send checks and stores the message(s) of a decoded send request,
// answering in resp (from newSendReply). born is the messages' BORNHOST
// (the sender's address; conn is nil for a request made in the process).
func (s *sendFamily) send(conn *remoting.Conn, born netip.AddrPort, req *remoting.Command, h *protocol.SendMessageRequestHeader, resp *remoting.Command) *remoting.Command {
	if remark, refused := s.sendsNotYetAccepted(); refused {
		return fail(resp, protocol.SystemError, remark)
	}
	lq, code, remark := s.sendLogicQueue(req, h.Topic, h.QueueID)
	if code != protocol.Success {
		return fail(resp, code, remark)
	}
	if lq.detail != nil { // a static topic: the id was a logic queue's
		h.QueueID = lq.leader.QueueID
	}
	tc, code, remark := s.msgCheck(h, conn)
	if code != protocol.Success {
		return fail(resp, code, remark)
	}
	queueID := h.QueueID
	if queueID < 0 {
		queueID = randomQueue(tc.WriteQueueNums)
	}
	sysFlag := h.SysFlag
	if tc.TopicFilterType == protocol.MultiTag {
		sysFlag |= message.SysFlagMultiTags
	}
	rec := message.Record{
		Topic:          h.Topic,
		QueueID:        queueID,
		Flag:           h.Flag,
		SysFlag:        sysFlag,
		BornTimestamp:  h.BornTimestamp,
		BornHost:       born,
		ReconsumeTimes: h.ReconsumeTimes.Or(0),
		Body:           req.Body,
	}
	// A producer that pipelines has more requests queued behind this
	// one: the store gathers their records into one write. A send made
	// in the process (conn nil: the gRPC endpoint) always gathers: each
	// SDK client sends one RPC at a time on its own connection, so
	// nothing says whether more follow, while with many clients the
	// next ones are already read or being read; the put's one yield lets
	// them append first (32 gRPC producers: half the pwrites, see
	// BenchmarkGRPCSend), and costs next to nothing when nothing else is
	// runnable.
	opts := store.PutOptions{Gather: conn == nil || conn.Handling() > 1}
	if req.Code == protocol.SendBatchMessage {
		resp = s.sendBatch(resp, h, req, &rec, opts)
	} else {
		resp = s.sendOne(resp, h, req, &rec, opts)
	}
	lq.rewriteSendResponse(resp)
	return resp
}

// msgCheck runs Java's AbstractSendMessageProcessor.msgCheck: broker
// permission for order topics, the topic name, forbidden system topics,
// lookup with auto-creation, and the queue id range.
func (s *sendFamily) msgCheck(h *protocol.SendMessageRequestHeader, conn *remoting.Conn) (protocol.TopicConfig, int32, string) {
	if !s.brokerWriteable() && s.topics.IsOrderTopic(h.Topic) {
		return protocol.TopicConfig{}, protocol.NoPermission,
			fmt.Sprintf("the broker[%s] sending message is forbidden", s.cfg.BrokerIP1)
	}
	if err := meta.ValidateTopic(h.Topic); err != nil {
		return protocol.TopicConfig{}, protocol.SystemError, err.Error()
	}
	if meta.SendForbidden(h.Topic) {
		return protocol.TopicConfig{}, protocol.NoPermission, meta.SendForbiddenRemark(h.Topic)
	}
	tc, found := s.topics.Get(h.Topic)
	if !found {
		var err error
		tc, _, err = s.topics.AutoCreate(h.Topic, h.DefaultTopic, h.DefaultTopicQueueNums, 0)
		if errors.Is(err, meta.ErrNoTemplate) && meta.IsRetryTopic(h.Topic) {
			tc, _, err = s.topics.EnsureTopic(h.Topic, 1, meta.PermReadWrite, 0)
		}
		if err != nil {
			s.log.Debug("send: topic not created", "topic", h.Topic, "from", remoteOf(conn), "err", err)
			return protocol.TopicConfig{}, protocol.TopicNotExist,
				fmt.Sprintf("topic[%s] not exist, apply first please!", h.Topic)
		}
	}
	if h.QueueID >= max(tc.ReadQueueNums, tc.WriteQueueNums) {
		return protocol.TopicConfig{}, protocol.SystemError,
			fmt.Sprintf("request queueId[%d] is illegal, %s Producer: %s", h.QueueID, h.Topic, remoteOf(conn))
	}
	return tc, protocol.Success, ""
}

// sendOne stores a single message.
func (s *sendFamily) sendOne(resp *remoting.Command, h *protocol.SendMessageRequestHeader, req *remoting.Command, rec *message.Record, opts store.PutOptions) *remoting.Command {
	if code, remark := s.retryOrDLQ(h, req, rec); code != protocol.Success {
		return fail(resp, code, remark)
	}
	if len(rec.Body) > s.live().MaxMessageSize {
		return fail(resp, protocol.MessageIllegal, fmt.Sprintf(
			"the message body size %d bytes exceeds maxMessageSize %d bytes", len(rec.Body), s.live().MaxMessageSize))
	}
	// spec §5.3: CLUSTER, MSG_REGION and TRACE_ON added (5.x), WAIT used
	// for this put but not stored.
	wait, _ := message.Property(h.Properties, message.PropertyWaitStoreMsgOK)
	rec.Properties = message.ReplaceProperties(h.Properties, message.PropertyWaitStoreMsgOK, s.storedProps[:]...)

	if isHalf(rec) {
		return s.sendHalf(resp, rec, store.PutOptions{NoWait: wait == "false"})
	}
	queueID := rec.QueueID // the answer names the queue asked for, even when held
	if code, remark := s.holdTimer(rec); code != protocol.Success {
		return fail(resp, code, remark)
	}
	recall := s.recallHandle(rec)
	began := time.Now()
	opts.NoWait = wait == "false"
	res := s.store.PutMessage(context.Background(), rec, opts)
	s.countPut(rec.Topic, res, began)
	return attachRecallHandle(s.putResponse(resp, res, queueID), recall)
}

// sendBatch stores the items of a SEND_BATCH_MESSAGE body (spec §5.5).
func (s *sendFamily) sendBatch(resp *remoting.Command, h *protocol.SendMessageRequestHeader, req *remoting.Command, proto *message.Record, opts store.PutOptions) *remoting.Command {
	if len(h.Topic) > meta.MaxTopicLength {
		return fail(resp, protocol.MessageIllegal, fmt.Sprintf("message topic length too long %d", len(h.Topic)))
	}
	if meta.IsRetryTopic(h.Topic) {
		return fail(resp, protocol.MessageIllegal, "batch request does not support retry group "+h.Topic)
	}
	if len(req.Body) > s.live().MaxMessageSize {
		return fail(resp, protocol.MessageIllegal, fmt.Sprintf(
			"the batch body size %d bytes exceeds maxMessageSize %d bytes", len(req.Body), s.live().MaxMessageSize))
	}
	batchProps := message.ReplaceProperties(h.Properties, "", s.storedProps[:]...)
	wait, _ := message.Property(h.Properties, message.PropertyWaitStoreMsgOK)
	// The body is decoded once into the records to store: their bodies
	// alias it, their property strings share one allocation, and the
	// slice is reused by the next batch.
	rp := batchRecords.Get().(*[]message.Record)
	defer func() {
		clear(*rp) // no body or string stays reachable from the pool
		if cap(*rp) <= maxPooledBatch {
			*rp = (*rp)[:0]
			batchRecords.Put(rp)
		}
	}()
	recs, err := message.AppendBatchRecords((*rp)[:0], req.Body, batchProps, proto)
	*rp = recs
	if err != nil {
		return fail(resp, protocol.MessageIllegal, "malformed batch body: "+err.Error())
	}
	began := time.Now()
	opts.NoWait = wait == "false"
	res := s.store.PutMessages(context.Background(), recs, opts)
	s.countPut(recs[0].Topic, res, began)
	return s.putResponse(resp, res, proto.QueueID)
}

// batchRecords holds the record slices of batch sends (*[]message.Record);
// maxPooledBatch bounds the ones kept.
var batchRecords = sync.Pool{New: func() any { return new([]message.Record) }}

const maxPooledBatch = 1024

// retryOrDLQ applies the %RETRY% rules of the send path (spec §10): the
// group must exist, and a message past its max reconsume times goes to the
// group's dead-letter topic.
func (s *sendFamily) retryOrDLQ(h *protocol.SendMessageRequestHeader, req *remoting.Command, rec *message.Record) (int32, string) {
	if !meta.IsRetryTopic(rec.Topic) {
		return protocol.Success, ""
	}
	group := strings.TrimPrefix(rec.Topic, meta.RetryGroupTopicPrefix)
	gc, found := s.groups.FindOrCreate(group)
	if !found {
		return protocol.SubscriptionGroupNotExist, "subscription group not exist, " + group
	}
	maxTimes := gc.RetryMaxTimes
	if req.Version >= versionV3_4_9 && h.MaxReconsumeTimes.Set {
		maxTimes = h.MaxReconsumeTimes.Value
	}
	if h.ReconsumeTimes.Or(0) < maxTimes {
		return protocol.Success, ""
	}
	dlq, _, err := s.topics.EnsureDLQTopic(group)
	if err != nil {
		return protocol.SystemError, fmt.Sprintf("topic[%s] not exist", meta.DLQTopic(group))
	}
	if s.sentToDLQ != nil {
		// Counted at the redirect, labelled with the %RETRY% topic, as
		// SendMessageProcessor does.
		s.sentToDLQ(group, rec.Topic)
	}
	rec.Topic = dlq.TopicName
	rec.QueueID = randomQueue(meta.DLQQueueNums)
	// The delay level is cleared: a dead letter is not redelivered.
	h.Properties = message.DeleteProperty(h.Properties, message.PropertyDelayTimeLevel)
	return protocol.Success, ""
}

// putResponse maps a put status to the response code and remark Java's
// broker answers with (SendMessageProcessor.handlePutMessageResult).
func (s *sendFamily) putResponse(resp *remoting.Command, res store.PutResult, queueID int32) *remoting.Command {
	switch res.Status {
	case store.PutOK:
		resp.Code = protocol.Success
	case store.FlushDiskTimeout:
		resp.Code = protocol.FlushDiskTimeout
	case store.FlushSlaveTimeout:
		resp.Code = protocol.FlushSlaveTimeout
	case store.SlaveNotAvailable:
		resp.Code = protocol.SlaveNotAvailable
	case store.CreateMappedFileFailed:
		remark := "create mapped file failed, server is busy or broken."
		if why := s.store.RefusalReason(); why != "" {
			remark += " (" + why + ")" // e.g. the disk is full
		}
		return fail(resp, protocol.SystemError, remark)
	case store.MessageIllegal, store.PropertiesSizeExceeded:
		return fail(resp, protocol.MessageIllegal,
			"the message is illegal, maybe msg body or properties length not matched. msg body length limit "+
				fmt.Sprint(s.live().MaxMessageSize)+" bytes, msg properties length limit 32k.")
	case store.ServiceNotAvailable:
		remark := "service not available now. It may be caused by one of the following reasons: " +
			"the broker's disk is full, messages are put to the slave, message store has been shut down, etc."
		if why := s.store.RefusalReason(); why != "" {
			remark += " (" + why + ")"
		}
		return fail(resp, protocol.ServiceNotAvailable, remark)
	case store.OSPageCacheBusy:
		return fail(resp, protocol.SystemError, "[PC_SYNCHRONIZED]broker busy, start flow control for a while")
	case store.InSyncReplicasNotEnough:
		return fail(resp, protocol.SystemError, "in-sync replicas not enough")
	default:
		return fail(resp, protocol.SystemError, "UNKNOWN_ERROR")
	}
	// Stored (possibly not yet durable/replicated): the header is filled
	// for every one of these codes.
	setStored(resp, protocol.SendMessageResponseHeader{MsgID: res.MsgID, QueueID: queueID, QueueOffset: res.QueueOffset})
	return resp
}

// fail sets code and remark on a send response (its ext fields stay).
// sendsNotYetAccepted is Java's preSend check of
// startAcceptSendRequestTimeStamp: sends (and replies) are refused until
// that time, with its remark. Free while the key is unset (0).
func (s *sendFamily) sendsNotYetAccepted() (string, bool) {
	ts := s.live().StartAcceptSendRequestTimeStamp
	if ts <= 0 || time.Now().UnixMilli() >= ts {
		return "", false
	}
	return "broker unable to service, until " + time.UnixMilli(ts).Format("2006-01-02 15:04:05,000"), true
}

func fail(resp *remoting.Command, code int32, remark string) *remoting.Command {
	resp.Code, resp.Remark = code, remark
	return resp
}

// bornHost returns the connection's peer address, parsed once per
// connection.
func bornHost(conn *remoting.Conn) netip.AddrPort {
	if conn == nil {
		return netip.AddrPort{}
	}
	if v, ok := conn.Value(bornHostKey{}).(netip.AddrPort); ok {
		return v
	}
	ap, err := netip.ParseAddrPort(conn.RemoteAddr())
	if err != nil {
		return netip.AddrPort{}
	}
	ap = netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
	conn.SetValue(bornHostKey{}, ap)
	return ap
}
