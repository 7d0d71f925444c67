package processor

import (
	"bytes"
	"testing"

	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
)

// TestSendReplyFrameAsMap: the typed send response is, byte for byte, the
// frame of the map the send path built before (MSG_REGION and TRACE_ON
// from the start, also when empty; the response header's fields added once
// stored), refused or stored, in both serializations.
func TestSendReplyFrameAsMap(t *testing.T) {
	stored := protocol.SendMessageResponseHeader{MsgID: "7F00000100002A9F0000000000001C00", QueueID: 3, QueueOffset: 41}
	withTxn := stored
	withTxn.TransactionID = "tx-1"
	for _, region := range []string{"DefaultRegion", ""} {
		for _, sh := range []*protocol.SendMessageResponseHeader{nil, &stored, &withTxn} {
			for _, st := range []remoting.SerializeType{remoting.JSON, remoting.RocketMQ} {
				p := &sendFamily{region: region, traceOn: "true"}
				typed := &p.newSendReply().resp
				old := remoting.NewResponse(protocol.Success, "")
				old.ExtFields = map[string]string{message.PropertyMsgRegion: region, message.PropertyTraceSwitch: "true"}
				if sh != nil {
					setStored(typed, *sh)
					sh.AppendExt(old.ExtFields)
				} else {
					fail(typed, protocol.TopicNotExist, "no topic")
					fail(old, protocol.TopicNotExist, "no topic")
				}
				for _, c := range []*remoting.Command{typed, old} {
					c.Opaque, c.SerializeType = 77, st
				}
				a, errA := typed.AppendFrame(nil)
				b, errB := old.AppendFrame(nil)
				if errA != nil || errB != nil || !bytes.Equal(a, b) {
					t.Fatalf("region %q stored %v %v:\ntyped %q\n  map %q", region, sh != nil, st, a, b)
				}
			}
		}
	}
}

// TestSendReplyAllocations: the whole reply (request header, response,
// response header) is one allocation.
func TestSendReplyAllocations(t *testing.T) {
	p := &sendFamily{region: "DefaultRegion", traceOn: "true"}
	if n := testing.AllocsPerRun(100, func() {
		r := p.newSendReply()
		setStored(&r.resp, protocol.SendMessageResponseHeader{MsgID: "x", QueueID: 1, QueueOffset: 2})
	}); n != 1 {
		t.Fatalf("%v allocations per reply, want 1", n)
	}
}

// TestPooledSendReplyClean: a reply taken from the pool after a refused or
// stored send went back is the fresh SUCCESS reply of newSendReply,
// whatever the earlier one carried.
func TestPooledSendReplyClean(t *testing.T) {
	p := &sendFamily{region: "DefaultRegion", traceOn: "true"}
	fresh := p.newSendReply()
	for i := range 64 {
		r := p.pooledSendReply()
		if r.resp.Code != protocol.Success || r.resp.Remark != "" || r.resp.Release != nil || r.resp.ExtFields != nil ||
			r.resp.Header != &r.ext || !r.resp.IsResponse() || r.ext != fresh.ext || r.req != fresh.req {
			t.Fatalf("round %d: reused reply not clean: resp %+v ext %+v req %+v", i, r.resp, r.ext, r.req)
		}
		r.req.Topic, r.req.Properties = "T", "WAIT\x01true"
		if i%2 == 0 {
			fail(&r.resp, protocol.TopicNotExist, "no topic")
		} else {
			setStored(&r.resp, protocol.SendMessageResponseHeader{MsgID: "X", QueueID: 1, QueueOffset: int64(i), RecallHandle: "h"})
		}
		r.releaseWhenWritten(&r.resp)
		if r.resp.Release == nil {
			t.Fatal("own response not released to the pool")
		}
		r.resp.Release() // what the transport does once the frame is encoded
	}
	// Another answer than the reply's own leaves the reply alone.
	r := p.pooledSendReply()
	other := remoting.NewResponse(protocol.SystemError, "bad header")
	r.releaseWhenWritten(other)
	if other.Release != nil || r.resp.Release != nil {
		t.Fatal("a foreign answer must not return the reply to the pool")
	}
}
