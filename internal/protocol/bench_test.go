package protocol

import "testing"

// extSink keeps benchmarked maps escaping to the heap, as they do when a
// response command carries them.
var extSink map[string]string

func BenchmarkDecodeSendMessageV2(b *testing.B) {
	ext := goClientSendV2()
	var h SendMessageRequestHeader
	b.ReportAllocs()
	for b.Loop() {
		if err := h.DecodeV2(ext); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeSendMessageV1(b *testing.B) {
	ext := goClientSendV1()
	var h SendMessageRequestHeader
	b.ReportAllocs()
	for b.Loop() {
		if err := h.Decode(ext); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncodeSendMessageResponse(b *testing.B) {
	h := SendMessageResponseHeader{MsgID: "7F00000100002A9F00000000001A2B3C", QueueID: 3, QueueOffset: 1234567,
		MsgRegion: "DefaultRegion", TraceOn: Some(true)}
	b.Run("new-map", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			extSink = Ext(&h)
		}
	})
	b.Run("reused-map", func(b *testing.B) {
		m := make(map[string]string, 8)
		b.ReportAllocs()
		for b.Loop() {
			clear(m)
			h.AppendExt(m)
		}
	})
}

func BenchmarkEncodePullMessageResponse(b *testing.B) {
	h := PullMessageResponseHeader{NextBeginOffset: 1234599, MinOffset: 0, MaxOffset: 2345678}
	b.Run("new-map", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			extSink = Ext(&h)
		}
	})
	b.Run("reused-map", func(b *testing.B) {
		m := make(map[string]string, 4)
		b.ReportAllocs()
		for b.Loop() {
			clear(m)
			h.AppendExt(m)
		}
	})
}

func BenchmarkMarshalTopicRouteData(b *testing.B) {
	r := exampleRoute()
	b.ReportAllocs()
	for b.Loop() {
		b.SetBytes(int64(len(r.MarshalFastJSON(JSONLegacy))))
	}
}

func BenchmarkUnmarshalHeartbeat(b *testing.B) {
	data := []byte(goClientHeartbeat)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		var hb HeartbeatData
		if err := UnmarshalFastJSON(data, &hb); err != nil {
			b.Fatal(err)
		}
	}
}
