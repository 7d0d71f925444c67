package protocol

import (
	"bytes"
	"encoding/binary"
	"slices"
	"testing"
)

// mapMembersJSON is the reference for ExtEncoder.AppendExtJSON: the map's
// entries sorted by key, each "k":"v", as the remoting encoder writes a map.
func mapMembersJSON(m map[string]string) []byte {
	var b []byte
	for i, k := range slices.Sorted(mapKeys(m)) {
		if i > 0 {
			b = append(b, ',')
		}
		b = AppendJSONString(b, k)
		b = append(b, ':')
		b = AppendJSONString(b, m[k])
	}
	return b
}

// mapEntriesBinary is the reference for AppendExtBinary.
func mapEntriesBinary(m map[string]string) []byte {
	var b []byte
	for _, k := range slices.Sorted(mapKeys(m)) {
		b = binary.BigEndian.AppendUint16(b, uint16(len(k)))
		b = append(b, k...)
		b = binary.BigEndian.AppendUint32(b, uint32(len(m[k])))
		b = append(b, m[k]...)
	}
	return b
}

func mapKeys(m map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// sendHeaders are send headers with every optional present, every one
// absent, empty strings and strings that need escaping.
func sendHeaders() []SendMessageRequestHeader {
	full := SendMessageRequestHeader{ProducerGroup: "pg", Topic: "T", DefaultTopic: "TBW102", DefaultTopicQueueNums: 4,
		QueueID: -1, SysFlag: 4, BornTimestamp: 1795982371046, Flag: -7,
		Properties: "TAGS\x01a\x02KEYS\x01\"k\\1\"\x02é", ReconsumeTimes: Some[int32](3), UnitMode: Some(true),
		MaxReconsumeTimes: Some[int32](16), Batch: Some(false), BrokerName: "broker-a"}
	bare := SendMessageRequestHeader{Topic: "T\n", BornTimestamp: -1 << 63}
	zeroOpts := full
	zeroOpts.ReconsumeTimes, zeroOpts.MaxReconsumeTimes = Some[int32](0), Some[int32](-1<<31)
	zeroOpts.UnitMode, zeroOpts.Batch, zeroOpts.BrokerName = Some(false), Some(true), ""
	return []SendMessageRequestHeader{full, bare, zeroOpts, {}}
}

// TestExtEncodersMatchMaps: a typed header writes exactly the entries, in
// exactly the order, that its map would be written in.
func TestExtEncodersMatchMaps(t *testing.T) {
	var encs []ExtEncoder
	for _, h := range sendHeaders() {
		encs = append(encs, &h, h.V2(), h.EncoderFor(SendBatchMessage), h.EncoderFor(SendMessage))
	}
	encs = append(encs,
		&SendMessageResponseHeader{MsgID: "7F00000100002A9F0000000000000000", QueueID: 2, QueueOffset: 41,
			MsgRegion: "DefaultRegion", TraceOn: Some(true), TransactionID: "tx\x01"},
		&SendMessageResponseHeader{TraceOn: Some(false)},
		&SendMessageResponseHeader{},
		&PullMessageRequestHeader{ConsumerGroup: "g", Topic: "T", QueueID: 3, QueueOffset: 1 << 40, MaxMsgNums: 32,
			SysFlag: 6, CommitOffset: -1, SuspendTimeoutMillis: 20000, Subscription: "a || b", SubVersion: 1_700_000_000_000,
			ExpressionType: "TAG", BrokerName: "broker-a", MaxMsgBytes: Some[int32](1 << 20)},
		&PullMessageRequestHeader{},
		&PullMessageResponseHeader{SuggestWhichBrokerID: 1, NextBeginOffset: 64, MinOffset: 0, MaxOffset: 1 << 33, OffsetDelta: Some[int64](-5)},
		&PullMessageResponseHeader{})
	for i, e := range encs {
		m := map[string]string{}
		e.AppendExt(m)
		if got, want := e.AppendExtJSON([]byte("x")), append([]byte("x"), mapMembersJSON(m)...); !bytes.Equal(got, want) {
			t.Errorf("%d %T JSON\n got %s\nwant %s", i, e, got, want)
		}
		if got, want := e.AppendExtBinary([]byte("x")), append([]byte("x"), mapEntriesBinary(m)...); !bytes.Equal(got, want) {
			t.Errorf("%d %T binary\n got %q\nwant %q", i, e, got, want)
		}
	}
}

// TestDecodeFromMatchesDecodeFor: the ExtSource path and the map path are
// one decoder; a bad number is the same *FieldError either way.
func TestDecodeFromMatchesDecodeFor(t *testing.T) {
	for _, code := range []RequestCode{SendMessage, SendMessageV2, SendBatchMessage} {
		for _, h := range sendHeaders() {
			m := map[string]string{}
			h.EncoderFor(code).AppendExt(m)
			var a, b SendMessageRequestHeader
			if err := a.DecodeFor(code, m); err != nil {
				t.Fatal(err)
			}
			if err := b.DecodeFrom(code, MapExt(m)); err != nil || a != b || a != h {
				t.Fatalf("code %d: DecodeFrom %+v (%v), DecodeFor %+v, want %+v", code, b, err, a, h)
			}
		}
	}
}

func TestEncodeSendHeaderDoesNotAllocate(t *testing.T) {
	h := sendHeaders()[0]
	resp := SendMessageResponseHeader{MsgID: "7F00000100002A9F0000000000000000", QueueID: 2, QueueOffset: 41,
		MsgRegion: "DefaultRegion", TraceOn: Some(true)}
	buf := make([]byte, 0, 4096)
	var enc ExtEncoder = h.V2()
	if n := testing.AllocsPerRun(100, func() {
		buf = enc.AppendExtJSON(buf[:0])
		buf = enc.AppendExtBinary(buf)
		buf = resp.AppendExtJSON(buf)
		buf = resp.AppendExtBinary(buf)
	}); n != 0 {
		t.Fatalf("%v allocations per encode", n)
	}
}

// TestPullResponseDecodeFrom: DecodeFrom reads what Decode reads, bad
// numbers included.
func TestPullResponseDecodeFrom(t *testing.T) {
	for _, h := range []PullMessageResponseHeader{
		{SuggestWhichBrokerID: 1, NextBeginOffset: 64, MaxOffset: 1 << 33, OffsetDelta: Some[int64](-5)},
		{NextBeginOffset: 7},
	} {
		m := map[string]string{}
		h.AppendExt(m)
		var a, b PullMessageResponseHeader
		if err := a.Decode(m); err != nil {
			t.Fatal(err)
		}
		if err := b.DecodeFrom(MapExt(m)); err != nil || a != b || a != h {
			t.Fatalf("DecodeFrom %+v (%v), Decode %+v, want %+v", b, err, a, h)
		}
	}
	for _, key := range pullResponseKeys {
		m := map[string]string{"nextBeginOffset": "1", key: "x1"}
		var a, b PullMessageResponseHeader
		errA, errB := a.Decode(m), b.DecodeFrom(MapExt(m))
		if errA == nil || errB == nil || errA.Error() != errB.Error() {
			t.Fatalf("%s: Decode %v, DecodeFrom %v", key, errA, errB)
		}
	}
}

// TestPullRequestDecodeFrom: DecodeFrom reads what Decode reads, bad
// numbers included.
func TestPullRequestDecodeFrom(t *testing.T) {
	for _, h := range []PullMessageRequestHeader{
		{ConsumerGroup: "g", Topic: "T", QueueID: 3, QueueOffset: 1 << 40, MaxMsgNums: 32, SysFlag: 6, CommitOffset: -1,
			SuspendTimeoutMillis: 20000, Subscription: "a || b", SubVersion: 1_700_000_000_000, ExpressionType: "TAG",
			BrokerName: "broker-a", MaxMsgBytes: Some[int32](1 << 20)},
		{ConsumerGroup: "g", Topic: "T"},
	} {
		m := map[string]string{}
		h.AppendExt(m)
		var a, b PullMessageRequestHeader
		if err := a.Decode(m); err != nil {
			t.Fatal(err)
		}
		if err := b.DecodeFrom(MapExt(m)); err != nil || a != b || a != h {
			t.Fatalf("DecodeFrom %+v (%v), Decode %+v, want %+v", b, err, a, h)
		}
	}
	for _, key := range pullRequestKeys {
		m := map[string]string{"topic": "T", key: "x1"}
		var a, b PullMessageRequestHeader
		errA, errB := a.Decode(m), b.DecodeFrom(MapExt(m))
		if (errA == nil) != (errB == nil) || errA != nil && errA.Error() != errB.Error() || a != b {
			t.Fatalf("%s: Decode %v %+v, DecodeFrom %v %+v", key, errA, a, errB, b)
		}
	}
}
