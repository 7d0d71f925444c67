package processor_test

import (
	"context"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
)

// BenchmarkSend is one SEND_MESSAGE round trip (1 KiB body, async flush)
// through rocketd's remoting client against the processors on loopback.
func BenchmarkSend(b *testing.B) {
	e := newEnv(b, nil)
	e.createTopic("T", 1)
	body := make([]byte, 1024)
	ext := protocol.Ext(sendHeader("T", 0, "TAGS\x01a\x02KEYS\x01k"))
	req := remoting.NewRequest(protocol.SendMessage, ext, body)
	ctx := context.Background()
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		r, err := e.rc.Invoke(cctx, e.addr, req)
		cancel()
		if err != nil || r.Code != protocol.Success {
			b.Fatalf("send: %v %v", err, r)
		}
	}
}

// BenchmarkSendParallel is SEND_MESSAGE from several goroutines sharing
// the client's connection (throughput, not latency).
func BenchmarkSendParallel(b *testing.B) {
	e := newEnv(b, nil)
	e.createTopic("T", 4)
	body := make([]byte, 1024)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	b.SetParallelism(8)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		req := remoting.NewRequest(protocol.SendMessage, protocol.Ext(sendHeader("T", -1, "TAGS\x01a")), body)
		for pb.Next() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			r, err := e.rc.Invoke(ctx, e.addr, req)
			cancel()
			if err != nil || r.Code != protocol.Success {
				b.Errorf("send: %v %v", err, r)
				return
			}
		}
	})
}

// BenchmarkPull is one PULL_MESSAGE round trip returning 32 messages of
// 1 KiB each.
func BenchmarkPull(b *testing.B) {
	e := newEnv(b, nil)
	e.createTopic("T", 1)
	body := make([]byte, 1024)
	for range 32 {
		if r := e.call(protocol.SendMessage, protocol.Ext(sendHeader("T", 0, "")), body); r.Code != protocol.Success {
			b.Fatal(r.Remark)
		}
	}
	e.waitMaxOffset("T", 0, 32)
	req := remoting.NewRequest(protocol.PullMessage, protocol.Ext(pullHeader("g", "T", 0, 0, "*")), nil)
	b.SetBytes(32 * int64(len(body)))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		r, err := e.rc.Invoke(ctx, e.addr, req)
		cancel()
		if err != nil || r.Code != protocol.Success || len(r.Body) < 32*1024 {
			b.Fatalf("pull: %v %v", err, r)
		}
	}
}
