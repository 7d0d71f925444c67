package remoting

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/testutil/wait"
)

// BenchmarkReadDispatch is the server's receive path of a pipelining
// producer: SEND_MESSAGE_V2 frames (1 KiB body) read 64 KiB at a time,
// decoded and handed to a send family whose handler answers nothing, so
// that what is timed is reading, decoding, queueing and waking the
// workers, per request (cpu-ns/op: the process's CPU time).
func BenchmarkReadDispatch(b *testing.B) {
	frame, err := benchRequest(JSON).AppendFrame(nil)
	if err != nil {
		b.Fatal(err)
	}
	for _, workers := range []int{1, 128} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			s := NewServer(ServerConfig{Addr: "127.0.0.1:0"})
			var handled atomic.Int64
			s.Handle(protocol.SendMessageV2, s.NewFamily("send", workers, 1<<20), func(*Conn, *Command) *Command {
				handled.Add(1)
				return nil
			})
			if err := s.Start(); err != nil {
				b.Fatal(err)
			}
			defer func() { _ = s.Shutdown(b.Context()) }()
			nc := &repeatConn{frame: frame, cut: 64 << 10, left: b.N * len(frame)}
			c := newConn(nc, s, slog.New(slog.DiscardHandler), DefaultMaxFrameSize, -1)
			b.ReportAllocs()
			b.SetBytes(int64(len(frame)))
			b.ResetTimer()
			cpu0 := processCPU()
			if err := c.readFrames(); !errors.Is(err, io.EOF) {
				b.Fatal(err)
			}
			wait.For(b, time.Minute, "every request handled", func() bool { return handled.Load() == int64(b.N) })
			// CPU time per request: what the path costs, whatever else the
			// machine runs meanwhile.
			b.ReportMetric(float64((processCPU()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
		})
	}
}

// BenchmarkInvokeAsyncPipelined is a producer that pipelines over one
// connection: InvokeAsync with 4,000 SEND_MESSAGE_V2 requests (1 KiB) in
// flight against a server answering from a family of 128 workers, the
// send family's size. Both ends run in this process: cpu-ns/op is the
// client's and the server's CPU time per request.
func BenchmarkInvokeAsyncPipelined(b *testing.B) {
	const window = 4000
	s := NewServer(ServerConfig{Addr: "127.0.0.1:0"})
	resp := benchResponse(JSON)
	s.Handle(protocol.SendMessageV2, s.NewFamily("send", 128, 1<<20), func(*Conn, *Command) *Command {
		r := *resp
		return &r
	})
	if err := s.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = s.Shutdown(b.Context()) }()
	c := NewClient(ClientConfig{})
	defer c.Close()
	addr := s.Addr().String()
	if _, err := c.Invoke(b.Context(), addr, benchRequest(JSON)); err != nil {
		b.Fatal(err)
	}
	tokens := make(chan struct{}, window)
	var failed atomic.Int64
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := processCPU()
	for range b.N {
		tokens <- struct{}{}
		if err := c.InvokeAsync(addr, benchRequest(JSON), 10*time.Second, func(r *Command, err error) {
			if err != nil || r.Code != protocol.Success {
				failed.Add(1)
			}
			<-tokens
		}); err != nil {
			b.Fatal(err)
		}
	}
	for range window {
		tokens <- struct{}{}
	}
	b.ReportMetric(float64((processCPU()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
	if n := failed.Load(); n > 0 {
		b.Fatalf("%d requests failed", n)
	}
}
