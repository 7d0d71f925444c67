package remoting

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/protocol"
)

// benchRequest is a SEND_MESSAGE_V2 request as a Java producer sends it:
// letter-key header, 1 KiB body.
func benchRequest(st SerializeType) *Command {
	c := NewRequest(protocol.SendMessageV2, sendV2Fields(), make([]byte, 1024))
	c.Opaque = 123456
	c.SerializeType = st
	return c
}

// benchResponse is the broker's answer to it.
func benchResponse(st SerializeType) *Command {
	c := NewResponse(protocol.Success, "")
	c.Opaque = 123456
	c.SerializeType = st
	c.ExtFields = map[string]string{
		"msgId":       "0A0B0C0D00002A9F00000000001E8C52",
		"queueId":     "3",
		"queueOffset": "184467",
		"MSG_REGION":  "DefaultRegion",
		"TRACE_ON":    "true",
	}
	return c
}

func benchCodec(b *testing.B, cmd func(SerializeType) *Command) {
	for _, st := range []SerializeType{JSON, RocketMQ} {
		c := cmd(st)
		frame, err := c.AppendFrame(nil)
		if err != nil {
			b.Fatal(err)
		}
		b.Run("encode/"+st.String(), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(frame)))
			buf := make([]byte, 0, 4096)
			for b.Loop() {
				buf, _ = c.AppendFrame(buf[:0])
			}
		})
		b.Run("decode/"+st.String(), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(frame)))
			for b.Loop() {
				if _, err := DecodeFrame(frame[4:]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkSendMessageV2Request(b *testing.B)  { benchCodec(b, benchRequest) }
func BenchmarkSendMessageV2Response(b *testing.B) { benchCodec(b, benchResponse) }

// TestEncodeDoesNotAllocate keeps the encoder's hot path allocation-free.
func TestEncodeDoesNotAllocate(t *testing.T) {
	for _, st := range []SerializeType{JSON, RocketMQ} {
		req, resp := benchRequest(st), benchResponse(st)
		buf := make([]byte, 0, 8192)
		if n := testing.AllocsPerRun(100, func() {
			buf, _ = req.AppendFrame(buf[:0])
			buf, _ = resp.AppendFrame(buf)
		}); n != 0 {
			t.Errorf("%v: %v allocations per encode, want 0", st, n)
		}
	}
}

// inflightPerConn is how many requests each connection keeps in flight in
// the round-trip benchmarks, as a busy producer client does.
const inflightPerConn = 32

// BenchmarkRoundTrip measures request/response round trips per second over
// loopback with the SEND_MESSAGE_V2 request and its response, and in the
// same run a raw TCP echo moving the same byte sizes with the same
// concurrency (buffered, flushing only when the input is drained: a best
// case for plain sockets). Metrics: rt/s (remoting), raw-rt/s, and
// pct-of-raw.
func BenchmarkRoundTrip(b *testing.B) {
	reqFrame, _ := benchRequest(JSON).AppendFrame(nil)
	respFrame, _ := benchResponse(JSON).AppendFrame(nil)
	for _, conns := range []int{1, 16} {
		b.Run(fmt.Sprintf("conns=%d", conns), func(b *testing.B) {
			rawRate := rawEchoRate(b, conns, b.N, len(reqFrame), len(respFrame))
			b.ReportAllocs()
			b.SetBytes(int64(len(reqFrame) + len(respFrame)))
			rate := remotingRate(b, conns, b.N)
			b.ReportMetric(rate, "rt/s")
			b.ReportMetric(rawRate, "raw-rt/s")
			b.ReportMetric(100*rate/rawRate, "pct-of-raw")
		})
	}
}

// remotingRate runs n round trips through Server and Client (one Client per
// connection, since a Client keeps one connection per address) and returns
// round trips per second. Only this part is timed by b.
func remotingRate(b *testing.B, conns, n int) float64 {
	b.StopTimer()
	s := NewServer(ServerConfig{Addr: "127.0.0.1:0"})
	resp := benchResponse(JSON)
	s.Handle(protocol.SendMessageV2, s.NewFamily("send", 4, 4096), func(_ *Conn, req *Command) *Command {
		r := *resp
		return &r
	})
	if err := s.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = s.Shutdown(context.Background()) }()
	addr := s.Addr().String()
	clients := make([]*Client, conns)
	for i := range clients {
		clients[i] = NewClient(ClientConfig{})
		defer clients[i].Close()
		if _, err := clients[i].Invoke(context.Background(), addr, benchRequest(JSON)); err != nil {
			b.Fatal(err)
		}
	}
	var left atomic.Int64
	left.Store(int64(n))
	var wg sync.WaitGroup
	ctx := context.Background()
	start := time.Now()
	b.StartTimer()
	for _, c := range clients {
		for range inflightPerConn {
			wg.Go(func() {
				req := benchRequest(JSON)
				for left.Add(-1) >= 0 {
					if _, err := c.Invoke(ctx, addr, req); err != nil {
						b.Error(err)
						return
					}
				}
			})
		}
	}
	wg.Wait()
	b.StopTimer()
	return float64(n) / time.Since(start).Seconds()
}

// rawEchoRate runs n exchanges of reqSize bytes out, respSize bytes back
// over plain TCP with the same connection count and concurrency, and
// returns exchanges per second.
func rawEchoRate(b *testing.B, conns, n, reqSize, respSize int) float64 {
	b.StopTimer()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	var srv sync.WaitGroup
	srv.Go(func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			srv.Go(func() {
				defer nc.Close()
				br := bufio.NewReaderSize(nc, readBufferSize)
				bw := bufio.NewWriterSize(nc, 64<<10)
				in, out := make([]byte, reqSize), make([]byte, respSize)
				for {
					if _, err := io.ReadFull(br, in); err != nil {
						return
					}
					_, _ = bw.Write(out)
					if br.Buffered() < reqSize {
						if bw.Flush() != nil {
							return
						}
					}
				}
			})
		}
	})
	defer srv.Wait()
	defer ln.Close()

	var left atomic.Int64
	left.Store(int64(n))
	var wg sync.WaitGroup
	type rawClient struct {
		nc    net.Conn
		sends chan chan struct{} // to the writer
		order chan chan struct{} // writer -> reader, in wire order
	}
	clients := make([]*rawClient, conns)
	for i := range clients {
		nc, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			b.Fatal(err)
		}
		rc := &rawClient{nc: nc, sends: make(chan chan struct{}, inflightPerConn), order: make(chan chan struct{}, inflightPerConn)}
		clients[i] = rc
		var io2 sync.WaitGroup
		wg.Go(func() { // writer: coalesces whatever is queued
			bw := bufio.NewWriterSize(nc, 64<<10)
			req := make([]byte, reqSize)
			for w := range rc.sends {
				rc.order <- w
				_, _ = bw.Write(req)
				if len(rc.sends) == 0 {
					_ = bw.Flush()
				}
			}
			close(rc.order)
			io2.Wait()
		})
		io2.Go(func() { // reader
			br := bufio.NewReaderSize(nc, readBufferSize)
			resp := make([]byte, respSize)
			for w := range rc.order {
				if _, err := io.ReadFull(br, resp); err != nil {
					return
				}
				w <- struct{}{}
			}
		})
	}
	start := time.Now()
	var callers sync.WaitGroup
	for _, rc := range clients {
		for range inflightPerConn {
			callers.Go(func() {
				done := make(chan struct{}, 1)
				for left.Add(-1) >= 0 {
					rc.sends <- done
					<-done
				}
			})
		}
	}
	callers.Wait()
	elapsed := time.Since(start)
	for _, rc := range clients {
		close(rc.sends)
	}
	wg.Wait()
	for _, rc := range clients {
		_ = rc.nc.Close()
	}
	return float64(n) / elapsed.Seconds()
}
