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
