package processor

import (
	"sync"

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
	// put gives the reply back to sendReplies (a method value made once,
	// so that setting resp.Release allocates nothing).
	put func()
}

// sendReplies holds the replies of remoting sends (*sendReply): a reply
// goes back once the transport has encoded its response (resp.Release),
// after which nothing reads it (the send hooks may not keep h or resp).
var sendReplies sync.Pool

func init() {
	sendReplies.New = func() any {
		r := new(sendReply)
		r.put = func() { sendReplies.Put(r) }
		return r
	}
}

// pooledSendReply is newSendReply for a request whose response the
// remoting server writes: the reply comes from sendReplies, and is
// returned there by the response's Release when the handler answers with
// it (see releaseWhenWritten).
func (s *sendFamily) pooledSendReply() *sendReply {
	r := sendReplies.Get().(*sendReply)
	put := r.put
	*r = sendReply{put: put, ext: sendResponseExt{region: s.region, traceOn: s.traceOn}}
	r.initResp()
	return r
}

// releaseWhenWritten makes resp, the answer a handler is about to return
// to the remoting server, give r back to the pool once encoded: only when
// resp is r's own response and carries no Release of its own. Any other
// answer (a header error's) leaves r to the GC.
func (r *sendReply) releaseWhenWritten(resp *remoting.Command) {
	if resp == &r.resp && resp.Release == nil && resp.Body == nil && resp.BodyParts == nil {
		resp.Release = r.put
	}
}

// newSendReply returns a SUCCESS response carrying MSG_REGION and
// TRACE_ON, the two fields Java adds before any check (the client reads
// the response's extFields unconditionally, spec §3.2).
func (s *sendFamily) newSendReply() *sendReply {
	r := &sendReply{ext: sendResponseExt{region: s.region, traceOn: s.traceOn}}
	r.initResp()
	return r
}

// initResp sets r.resp to the SUCCESS response with r.ext as its header.
func (r *sendReply) initResp() {
	r.resp = remoting.Command{Code: protocol.Success, Language: remoting.DefaultLanguage, Version: remoting.DefaultVersion}
	r.resp.MarkResponse()
	r.resp.Header = &r.ext
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
