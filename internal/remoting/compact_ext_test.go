package remoting

import (
	"bytes"
	"context"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/testutil/wait"
)

// compactSeeds are frames whose extFields exercise the odd corners of the
// compact form: escapes in keys and values, nulls, non-string values,
// repeated keys, a repeated or early extFields property, both send forms.
func compactSeeds() [][]byte {
	seeds := fuzzSeeds()
	for _, h := range []string{
		`{"code":310,"extFields":{"a":"PG","b":"T","e":"1","i":"TAGS\u0001A\u0002","e":"2","n":null},"flag":0}`,
		`{"extFields":{"b":"first"},"code":310,"extFields":{"b":"second","\u0062":"escaped key"}}`,
		`{"code":10,"flag":1,"extFields":{"queueId":7,"x":true,"o":{"a":[1,null]},"s":"\ud83d\ude00\/\ud800","":""}}`,
		`{"code":10,"extFields":{}}`,
		`{"code":10,"extFields":null}`,
		`{"code":310,"extFields":{"e":"x"}}`,
		`{"code":310,"extFields":{"a":"\q"}}`,
		`{"code":310,"extFields":{"a":nul}}`,
		`{"code":310,"extFields":{"a" "b"}}`,
		`{"code":310,"extFields":{"a":"b",}}`,
		`{"code":310,"extFields":{"a":"b"} trailing`,
		`{"code":310,"extFields":[1]}`,
	} {
		seeds = append(seeds, frameOf(JSON, []byte(h), nil)[4:])
	}
	for _, st := range []SerializeType{JSON, RocketMQ} {
		for _, code := range []int32{protocol.SendMessage, protocol.SendMessageV2} {
			h := protocol.SendMessageRequestHeader{ProducerGroup: "pg", Topic: "T", QueueID: 3,
				Properties: "TAGS\x01a\x02WAIT\x01true", BornTimestamp: 1764451200123, Batch: protocol.Some(false)}
			c := NewRequestHeader(code, h.EncoderFor(code), []byte("body"))
			c.SerializeType = st
			f, err := c.AppendFrame(nil)
			if err != nil {
				panic(err)
			}
			seeds = append(seeds, f[4:])
		}
	}
	return seeds
}

// sendKeys are both spellings of the send header's keys.
var sendKeys = [][]string{
	{"producerGroup", "topic", "defaultTopic", "defaultTopicQueueNums", "queueId", "sysFlag", "bornTimestamp",
		"flag", "properties", "reconsumeTimes", "unitMode", "maxReconsumeTimes", "batch", "bname"},
	{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n"},
}

// FuzzCompactExt is the differential test of the compact header: for any
// frame, decoding under each policy (compact for everything; guessed
// compact, then made a map; exact) accepts and rejects exactly what the
// map decoder does, with the same error, and what it accepts reads the
// same through every accessor (LookupExt, ExtField, Ext, the send header's
// DecodeFrom) and re-encodes to the same frame.
func FuzzCompactExt(f *testing.F) {
	for _, s := range compactSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, frame []byte) {
		want, wantErr := DecodeFrame(frame)
		code := int32(0)
		if want != nil {
			code = want.Code
		}
		for _, pol := range []*extPolicy{{all: true}, {responses: true}, {requests: []int32{code}}} {
			got, err := decodeFrame(frame, pol)
			if (err == nil) != (wantErr == nil) || (err != nil && err.Error() != wantErr.Error()) {
				t.Fatalf("policy %+v: error %v, map decoder %v", pol, err, wantErr)
			}
			if err != nil {
				continue
			}
			if pol.all && !hasLongKey(want) && (got.ExtFields != nil || got.ext.ok != (want.ExtFields != nil)) {
				t.Fatalf("compact policy left %v / %+v, map decoder %v", got.ExtFields, got.ext, want.ExtFields)
			}
			checkSameCommand(t, got, want)
		}
	})
}

// hasLongKey reports a key too long for the compact form.
func hasLongKey(c *Command) bool {
	for k := range c.ExtFields {
		if len(k) > compactKeyMax {
			return true
		}
	}
	return false
}

// TestCompactLongKeyFallsBackToMap: a key over the compact form's limit
// makes the decoder read the object into a map instead.
func TestCompactLongKeyFallsBackToMap(t *testing.T) {
	long := strings.Repeat("k", compactKeyMax+1)
	f := frameOf(JSON, []byte(`{"code":310,"extFields":{"a":"1","`+long+`":"v","b":"\n"}}`), nil)[4:]
	want, err := DecodeFrame(f)
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeFrame(f, &extPolicy{all: true})
	if err != nil || got.ext.ok || len(got.ExtFields) != 3 {
		t.Fatalf("%v %+v", err, got)
	}
	checkSameCommand(t, got, want)
}

// checkSameCommand compares a command decoded under a policy with the one
// the map decoder gave.
func checkSameCommand(t *testing.T, got, want *Command) {
	t.Helper()
	g, w := *got, *want
	g.ExtFields, g.ext, w.ExtFields = nil, compactExt{}, nil
	if !reflect.DeepEqual(g, w) {
		t.Fatalf("fixed fields differ\n got %+v\nwant %+v", g, w)
	}
	wantFrame, wantErr := want.AppendFrame(nil)
	gotFrame, gotErr := got.AppendFrame(nil)
	if !bytes.Equal(gotFrame, wantFrame) || (gotErr == nil) != (wantErr == nil) {
		t.Fatalf("re-encoded frames differ (%v, %v)\n got %q\nwant %q", gotErr, wantErr, gotFrame, wantFrame)
	}
	keys := slices.Sorted(maps.Keys(want.ExtFields))
	lookups := append(slices.Clone(sendKeys), append(keys[:min(len(keys), protocol.MaxLookupKeys-1)], "absent"))
	for _, ks := range lookups {
		if a, b := got.LookupExt(ks), protocol.MapExt(want.ExtFields).LookupExt(ks); a != b {
			t.Fatalf("LookupExt(%q)\n got %+v\nwant %+v", ks, a, b)
		}
	}
	for _, k := range keys {
		if got.ExtField(k) != want.ExtFields[k] {
			t.Fatalf("ExtField(%q) = %q, want %q", k, got.ExtField(k), want.ExtFields[k])
		}
	}
	for _, code := range []int32{protocol.SendMessage, protocol.SendMessageV2} {
		var a, b protocol.SendMessageRequestHeader
		errA, errB := a.DecodeFrom(code, got), b.DecodeFor(code, want.ExtFields)
		if a != b || (errA == nil) != (errB == nil) || (errA != nil && errA.Error() != errB.Error()) {
			t.Fatalf("send header %d: %+v (%v), from the map %+v (%v)", code, a, errA, b, errB)
		}
	}
	if m := got.Ext(); !reflect.DeepEqual(m, want.ExtFields) {
		t.Fatalf("Ext() = %q, want %q", m, want.ExtFields)
	}
}

// TestTypedHeaderEncodesLikeMap: a command with a typed Header is the same
// frame as the command with the header's map, in both serializations.
func TestTypedHeaderEncodesLikeMap(t *testing.T) {
	send := protocol.SendMessageRequestHeader{ProducerGroup: "please_rename_unique_group_name", Topic: "TopicTest",
		DefaultTopic: "TBW102", DefaultTopicQueueNums: 4, QueueID: 3, BornTimestamp: 1764451200123,
		Properties: sendV2Fields()["i"], ReconsumeTimes: protocol.Some[int32](0), UnitMode: protocol.Some(false),
		MaxReconsumeTimes: protocol.Some[int32](16), Batch: protocol.Some(false), BrokerName: "broker-a"}
	resp := protocol.SendMessageResponseHeader{MsgID: "0A0B0C0D00002A9F00000000001E8C52", QueueID: 3,
		QueueOffset: 184467, MsgRegion: "DefaultRegion", TraceOn: protocol.Some(true)}
	for _, h := range []protocol.ExtEncoder{send.V2(), &send, &resp, &protocol.SendMessageResponseHeader{}} {
		for _, st := range []SerializeType{JSON, RocketMQ} {
			typed := &Command{Code: 310, Opaque: 5, Header: h, SerializeType: st, Body: []byte("b")}
			mapped := &Command{Code: 310, Opaque: 5, ExtFields: protocol.Ext(h), SerializeType: st, Body: []byte("b")}
			a, errA := typed.AppendFrame(nil)
			b, errB := mapped.AppendFrame(nil)
			if errA != nil || errB != nil || !bytes.Equal(a, b) {
				t.Fatalf("%T %v (%v %v)\n typed %q\n  map  %q", h, st, errA, errB, a, b)
			}
			if !maps.Equal(typed.Ext(), mapped.ExtFields) || typed.Header != nil {
				t.Fatalf("%T: Ext() %q", h, typed.ExtFields)
			}
		}
	}
	// ExtFields wins over Header.
	c := &Command{ExtFields: map[string]string{"k": "v"}, Header: &resp}
	if h := string(appendJSONHeader(nil, c)); !strings.Contains(h, `"extFields":{"k":"v"}`) {
		t.Fatalf("header %s", h)
	}
}

// TestLazyExtEndToEnd: a HandleLazyExt handler gets the header compact and
// reads it through DecodeFrom; a Handle handler on the same server still
// gets its map; a LazyResponseExt client gets compact responses, and
// server-initiated requests to it still arrive as maps.
func TestLazyExtEndToEnd(t *testing.T) {
	for _, st := range []SerializeType{JSON, RocketMQ} {
		s := NewServer(ServerConfig{Addr: "127.0.0.1:0"})
		answer := func(_ *Conn, req *Command) *Command {
			var h protocol.SendMessageRequestHeader
			if err := h.DecodeFrom(req.Code, req); err != nil {
				return ErrorResponse(err)
			}
			r := NewResponse(protocol.Success, "")
			r.Header = &protocol.SendMessageResponseHeader{MsgID: h.Topic, QueueID: h.QueueID, TraceOn: protocol.Some(true)}
			return r
		}
		s.HandleLazyExt(protocol.SendMessageV2, nil, func(conn *Conn, req *Command) *Command {
			if req.ExtFields != nil || !req.ext.ok {
				return NewResponse(protocol.SystemError, "lazy handler got a map")
			}
			return answer(conn, req)
		})
		s.Handle(protocol.SendMessage, nil, func(conn *Conn, req *Command) *Command {
			if req.ExtFields == nil || req.ext.ok {
				return NewResponse(protocol.SystemError, "map handler got no map")
			}
			return answer(conn, req)
		})
		if err := s.Start(); err != nil {
			t.Fatal(err)
		}
		addr := s.Addr().String()
		for _, lazy := range []bool{false, true} {
			c := NewClient(ClientConfig{LazyResponseExt: lazy})
			pushed := make(chan map[string]string, 1)
			c.Handle(protocol.NotifyConsumerIdsChanged, func(_ *Conn, req *Command) *Command {
				pushed <- req.ExtFields
				return nil
			})
			for _, code := range []int32{protocol.SendMessageV2, protocol.SendMessage} {
				h := protocol.SendMessageRequestHeader{Topic: "T", QueueID: 2, Properties: "TAGS\x01a"}
				req := NewRequestHeader(code, h.EncoderFor(code), nil)
				req.SerializeType = st
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				resp, err := c.Invoke(ctx, addr, req)
				cancel()
				if err != nil || resp.Code != protocol.Success {
					t.Fatalf("%v code %d: %v %+v", st, code, err, resp)
				}
				if lazy != (resp.ExtFields == nil) {
					t.Fatalf("lazy %v: response ExtFields %v", lazy, resp.ExtFields)
				}
				var rh protocol.SendMessageResponseHeader
				if resp.ExtField("msgId") != "T" || rh.Decode(resp.Ext()) != nil || rh.QueueID != 2 || !rh.TraceOn.Value {
					t.Fatalf("response header %+v from %q", rh, resp.ExtFields)
				}
			}
			// A request from the server over the client's connection: the
			// previous client's connection may not be gone yet.
			wait.For(t, 5*time.Second, "only this client's connection", func() bool {
				s.mu.Lock()
				defer s.mu.Unlock()
				return len(s.mu.conns) == 1
			})
			s.mu.Lock()
			var conn *Conn
			for sc := range s.mu.conns {
				conn = sc
			}
			s.mu.Unlock()
			push := NewRequest(protocol.NotifyConsumerIdsChanged, map[string]string{"consumerGroup": "g"}, nil)
			push.SerializeType = st
			push.MarkOneway()
			if err := conn.InvokeOneway(push); err != nil {
				t.Fatal(err)
			}
			select {
			case m := <-pushed:
				if m["consumerGroup"] != "g" {
					t.Fatalf("pushed request ext %v", m)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("pushed request not handled")
			}
			_ = c.Close()
		}
		if err := s.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}

// TestCompactDecodeAllocations: a SEND_MESSAGE_V2 request decoded compact
// and read with DecodeFrom costs the Command and one buffer for every
// string, in both serializations; the response likewise.
func TestCompactDecodeAllocations(t *testing.T) {
	pol := &extPolicy{requests: []int32{protocol.SendMessageV2}, responses: true}
	for _, st := range []SerializeType{JSON, RocketMQ} {
		for _, c := range []*Command{benchRequest(st), benchResponse(st)} {
			f, err := c.AppendFrame(nil)
			if err != nil {
				t.Fatal(err)
			}
			var h protocol.SendMessageRequestHeader
			n := testing.AllocsPerRun(100, func() {
				got, err := decodeFrame(f[4:], pol)
				if err != nil || got.ExtFields != nil {
					t.Fatalf("%v %v", err, got)
				}
				if err := h.DecodeFrom(got.Code, got); err != nil {
					t.Fatal(err)
				}
			})
			if n > 2 {
				t.Errorf("%v code %d: %v allocations, want 2", st, c.Code, n)
			}
		}
	}
}

// TestLazyExtRoutes: the server's policy follows its routes (a code
// registered again with Handle is no longer lazy), and a request decoded
// compact for a route that is no longer lazy reaches its handler with the
// map.
func TestLazyExtRoutes(t *testing.T) {
	s := NewServer(ServerConfig{Addr: "127.0.0.1:0"})
	h := func(_ *Conn, req *Command) *Command { return nil }
	s.HandleLazyExt(310, nil, h)
	s.HandleLazyExt(10, nil, h)
	s.Handle(11, nil, h)
	if pol := s.extPolicy(); pol == nil || !pol.compact(310, 0) || !pol.compact(10, 0) || pol.compact(11, 0) ||
		pol.compact(310, flagResponse) {
		t.Fatalf("policy %+v", pol)
	}
	s.Handle(310, nil, h)
	s.Handle(10, nil, h)
	if pol := s.extPolicy(); pol != nil {
		t.Fatalf("policy %+v after re-registering with Handle", pol)
	}
	// A request decoded compact, then routed to a map handler.
	f, err := NewRequest(310, map[string]string{"a": "pg"}, nil).AppendFrame(nil)
	if err != nil {
		t.Fatal(err)
	}
	req, err := decodeFrame(f[4:], &extPolicy{requests: []int32{310}})
	if err != nil || !req.ext.ok {
		t.Fatalf("%v %+v", err, req)
	}
	got := make(chan map[string]string, 1)
	s.Handle(310, nil, func(_ *Conn, req *Command) *Command { got <- req.ExtFields; return nil })
	s.dispatch(&Conn{}, []*Command{req}) // the handler answers nothing: no wire needed
	if m := <-got; m["a"] != "pg" {
		t.Fatalf("handler got %v", m)
	}
}

// TestExtPolicyGuess: the JSON decoder's early decision by side, and its
// correction once the flag is known.
func TestExtPolicyGuess(t *testing.T) {
	server := &extPolicy{requests: []int32{310}}
	client := &extPolicy{responses: true}
	for _, tc := range []struct {
		pol                    *extPolicy
		code                   int32
		codeSeen               bool
		flag                   int32
		flagSeen, want, wantAt bool // want: the guess; wantAt: the final decision
	}{
		{server, 310, true, 0, false, true, true},             // fastjson request
		{server, 310, true, flagResponse, false, true, false}, // a response with a lazy request's code
		{server, 310, false, 0, false, false, true},           // extFields before code: map
		{server, 311, true, 0, true, false, false},
		{client, 0, true, flagResponse, false, true, true},
		{client, 40, true, 0, false, true, false}, // a server's request to the client
		{client, 40, true, 0, true, false, false}, // Go client order: flag known
		{nil, 310, true, 0, true, false, false},
	} {
		if got := tc.pol.guess(tc.code, tc.codeSeen, tc.flag, tc.flagSeen); got != tc.want {
			t.Errorf("%+v: guess %v", tc, got)
		}
		if got := tc.pol.compact(tc.code, tc.flag); got != tc.wantAt {
			t.Errorf("%+v: compact %v", tc, got)
		}
	}
}

// TestCompactScratchBoundary: headers whose extFields bound lies on
// either side of compactScratch (transcoded on the stack and copied, or
// into an allocation of the bound) decode as the map decoder does.
func TestCompactScratchBoundary(t *testing.T) {
	for n := compactScratch - 120; n <= compactScratch+40; n++ {
		v := strings.Repeat("v", n/2) + `\u0001` + strings.Repeat("w", n-n/2)
		f := frameOf(JSON, []byte(`{"code":310,"extFields":{"a":"`+v+`","b":7,"c":null,"d":"x"},"flag":0}`), nil)[4:]
		want, err := DecodeFrame(f)
		if err != nil {
			t.Fatal(err)
		}
		got, err := decodeFrame(f, &extPolicy{all: true})
		if err != nil || !got.ext.ok || got.ExtFields != nil {
			t.Fatalf("n %d: %v %+v", n, err, got)
		}
		checkSameCommand(t, got, want)
	}
}
