package processor_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/broker/processor"
	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
)

func queryExt(topic, key string, maxNum int32, unique bool) map[string]string {
	h := protocol.QueryMessageRequestHeader{Topic: topic, Key: key, MaxNum: maxNum, BeginTimestamp: 0,
		EndTimestamp: 1 << 62, UniqueKeyQuery: unique}
	return protocol.Ext(&h)
}

// bodiesOf decodes a QUERY_MESSAGE body (concatenated records).
func bodiesOf(t *testing.T, r *remoting.Command) []string {
	t.Helper()
	var out []string
	for b := r.Body; len(b) > 0; {
		rec, n, err := message.DecodeRecord(b, false)
		if err != nil {
			t.Fatalf("body: %v", err)
		}
		out = append(out, string(rec.Body))
		b = b[n:]
	}
	return out
}

func TestQueryMessage(t *testing.T) {
	e := newEnv(t, func(bc *config.BrokerConfig, _ *processor.Deps) { bc.DefaultQueryMaxNum = 2 })
	e.createTopic("QT", 2)
	var ids []string
	for i := 0; i < 4; i++ {
		id := "UNIQ" + strconv.Itoa(i)
		ids = append(ids, id)
		props := message.EncodeProperties(map[string]string{message.PropertyKeys: "order-" + strconv.Itoa(i) + " shared",
			message.PropertyUniqClientMessageIDKeyIdx: id})
		if r := e.send(sendHeader("QT", int32(i%2), props), "m"+strconv.Itoa(i)); r.Code != protocol.Success {
			t.Fatalf("send: %d %s", r.Code, r.Remark)
		}
	}
	e.waitMaxOffset("QT", 1, 2)
	e.waitMaxOffset("QT", 0, 2)

	r := e.call(protocol.QueryMessage, queryExt("QT", "order-2", 32, false), nil)
	if r.Code != protocol.Success || strings.Join(bodiesOf(t, r), ",") != "m2" {
		t.Fatalf("by key: %d %q %v", r.Code, r.Remark, bodiesOf(t, r))
	}
	var rh protocol.QueryMessageResponseHeader
	if err := rh.Decode(r.ExtFields); err != nil || rh.IndexLastUpdatePhyoffset <= 0 || rh.IndexLastUpdateTimestamp <= 0 {
		t.Fatalf("response header %+v %v", rh, err)
	}
	r = e.call(protocol.QueryMessage, queryExt("QT", ids[3], 0, true), nil)
	if r.Code != protocol.Success || strings.Join(bodiesOf(t, r), ",") != "m3" {
		t.Fatalf("by unique key: %d %q", r.Code, r.Remark)
	}
	// The unique-key flag replaces maxNum with defaultQueryMaxNum (2 here).
	r = e.call(protocol.QueryMessage, queryExt("QT", "shared", 0, true), nil)
	if got := bodiesOf(t, r); r.Code != protocol.Success || len(got) != 2 {
		t.Fatalf("unique flag maxNum: %d %v", r.Code, got)
	}
	r = e.call(protocol.QueryMessage, queryExt("QT", "shared", 3, false), nil)
	if got := bodiesOf(t, r); len(got) != 3 {
		t.Fatalf("maxNum 3: %v", got)
	}
	r = e.call(protocol.QueryMessage, queryExt("QT", "absent", 32, false), nil)
	if r.Code != protocol.QueryNotFound || len(r.Body) != 0 {
		t.Fatalf("absent key: %d %q", r.Code, r.Remark)
	}
}

// TestQueryMessageBadInput: half-built or malformed requests get Java's
// SYSTEM_ERROR with the field named, never a crash.
func TestQueryMessageBadInput(t *testing.T) {
	e := newEnv(t, nil)
	full := queryExt("QT", "k", 32, false)
	for _, field := range []string{"topic", "key", "maxNum", "beginTimestamp", "endTimestamp"} {
		ext := map[string]string{}
		for k, v := range full {
			if k != field {
				ext[k] = v
			}
		}
		r := e.call(protocol.QueryMessage, ext, nil)
		if r.Code != protocol.SystemError || !strings.Contains(r.Remark, "<"+field+">") {
			t.Errorf("without %s: %d %q", field, r.Code, r.Remark)
		}
	}
	bad := queryExt("QT", "k", 32, false)
	bad["maxNum"] = "many"
	if r := e.call(protocol.QueryMessage, bad, nil); r.Code != protocol.SystemError || !strings.Contains(r.Remark, "maxNum") {
		t.Errorf("bad maxNum: %d %q", r.Code, r.Remark)
	}
	if r := e.call(protocol.QueryMessage, nil, nil); r.Code != protocol.SystemError {
		t.Errorf("no header: %d %q", r.Code, r.Remark)
	}
	neg := queryExt("QT", "k", -5, false)
	if r := e.call(protocol.QueryMessage, neg, nil); r.Code != protocol.QueryNotFound {
		t.Errorf("negative maxNum: %d %q", r.Code, r.Remark)
	}
}

// FuzzQueryMessage: any QUERY_MESSAGE header is answered SUCCESS (with
// whole records), QUERY_NOT_FOUND or SYSTEM_ERROR, never a crash.
func FuzzQueryMessage(f *testing.F) {
	e := newEnv(f, nil)
	props := message.EncodeProperties(map[string]string{message.PropertyKeys: "k1 k2", message.PropertyUniqClientMessageIDKeyIdx: "U1"})
	e.createTopic("FQ", 1)
	if r := e.send(sendHeader("FQ", 0, props), "body"); r.Code != protocol.Success {
		f.Fatalf("send: %d %s", r.Code, r.Remark)
	}
	e.waitMaxOffset("FQ", 0, 1)
	f.Add("FQ", "k1", "32", "0", "9223372036854775807", "")
	f.Add("FQ", "U1", "0", "0", "9223372036854775807", "true")
	f.Add("FQ", "k2", "-1", "9223372036854775807", "0", "TRUE")
	f.Add("", "", "x", "", "1e3", "yes")
	f.Fuzz(func(t *testing.T, topic, key, maxNum, begin, end, unique string) {
		ext := map[string]string{"topic": topic, "key": key, "maxNum": maxNum, "beginTimestamp": begin,
			"endTimestamp": end, "_UNIQUE_KEY_QUERY": unique}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		r, err := e.rc.Invoke(ctx, e.addr, remoting.NewRequest(protocol.QueryMessage, ext, nil))
		if err != nil {
			t.Fatal(err)
		}
		switch r.Code {
		case protocol.Success:
			if len(bodiesOf(t, r)) == 0 {
				t.Fatal("SUCCESS without records")
			}
		case protocol.QueryNotFound, protocol.SystemError:
		default:
			t.Fatalf("code %d %q", r.Code, r.Remark)
		}
	})
}
