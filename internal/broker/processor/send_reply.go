package processor

import (
	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
)

// sendReply is everything one send request needs on the heap, allocated
// together: the decoded request header (it escapes through the send
// hooks anyway), the response and the response's custom header, which
// the frame encoder writes without a map.
type sendReply struct {
	req  protocol.SendMessageRequestHeader
	resp remoting.Command
	ext  sendResponseExt
}

// newSendReply returns a SUCCESS response carrying MSG_REGION and
// TRACE_ON, the two fields Java adds before any check (the client reads
// the response's extFields unconditionally, spec §3.2).
func (s *sendFamily) newSendReply() *sendReply {
	r := &sendReply{ext: sendResponseExt{region: s.region, traceOn: s.traceOn}}
	r.resp = remoting.Command{Code: protocol.Success, Language: remoting.DefaultLanguage, Version: remoting.DefaultVersion}
	r.resp.MarkResponse()
	r.resp.Header = &r.ext
	return r
}

// sendResponseExt is the send response's custom header (a
// protocol.ExtEncoder): MSG_REGION and TRACE_ON always, as given (also
// when empty), and once the message is stored the
// SendMessageResponseHeader fields. It writes exactly the map the broker
// used to build: MSG_REGION and TRACE_ON, then msgId, queueId,
// queueOffset (transactionId when set).
type sendResponseExt struct {
	region, traceOn string
	stored          bool
	h               protocol.SendMessageResponseHeader // MsgRegion and TraceOn unused
}

// setStored records the stored message's header in resp, whatever form
// resp's header has (a test may hand putResponse a map).
func setStored(resp *remoting.Command, h protocol.SendMessageResponseHeader) {
	if e, ok := resp.Header.(*sendResponseExt); ok && resp.ExtFields == nil {
		e.stored, e.h = true, h
		return
	}
	h.AppendExt(resp.Ext())
}

func (e *sendResponseExt) AppendExt(m map[string]string) {
	m[message.PropertyMsgRegion] = e.region
	m[message.PropertyTraceSwitch] = e.traceOn
	if e.stored {
		e.h.AppendExt(m)
	}
}

func (e *sendResponseExt) AppendExtJSON(dst []byte) []byte {
	w := protocol.NewExtWriter(dst, false)
	e.write(&w)
	return w.Bytes()
}

func (e *sendResponseExt) AppendExtBinary(dst []byte) []byte {
	w := protocol.NewExtWriter(dst, true)
	e.write(&w)
	return w.Bytes()
}

// write writes the entries in ascending key order (upper case first).
func (e *sendResponseExt) write(w *protocol.ExtWriter) {
	w.String(message.PropertyMsgRegion, e.region)
	w.String(message.PropertyTraceSwitch, e.traceOn)
	if !e.stored {
		return
	}
	w.String("msgId", e.h.MsgID)
	w.Int32("queueId", e.h.QueueID)
	w.Int64("queueOffset", e.h.QueueOffset)
	w.OptString("recallHandle", e.h.RecallHandle)
	w.OptString("transactionId", e.h.TransactionID)
}
