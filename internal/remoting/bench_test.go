package remoting

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"runtime"
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

// TestDecodeAllocations keeps the decoder's allocations in budget: the
// Command, the ext-field map (and its table), and one copy of the header
// that every string, escaped ones included (the request's properties value
// has \x01 and \x02), is cut from.
func TestDecodeAllocations(t *testing.T) {
	for _, tc := range []struct {
		cmd  *Command
		want float64
	}{
		{benchRequest(JSON), 6}, {benchRequest(RocketMQ), 6},
		{benchResponse(JSON), 4}, {benchResponse(RocketMQ), 4},
	} {
		f, err := tc.cmd.AppendFrame(nil)
		if err != nil {
			t.Fatal(err)
		}
		if n := testing.AllocsPerRun(100, func() {
			if _, err := DecodeFrame(f[4:]); err != nil {
				t.Fatal(err)
			}
		}); n > tc.want {
			t.Errorf("%v code %d: %v allocations per decode, budget %v", tc.cmd.SerializeType, tc.cmd.Code, n, tc.want)
		}
	}
}

// inflightPerConn is how many requests each connection keeps in flight in
// the round-trip benchmarks, as a busy producer client does.
const inflightPerConn = 32

// roundTripRounds: the remoting and the raw runs alternate this many times,
// so a change in machine load hits both alike.
const roundTripRounds = 8

// BenchmarkRoundTrip measures request/response round trips per second over
// loopback with the SEND_MESSAGE_V2 request and its response, and in the
// same run a raw TCP echo moving the same byte sizes with the same
// connections and concurrency (buffered, flushing only when its input is
// drained: a best case for plain sockets). Only the remoting part is timed
// by b; metrics: rt/s (remoting), raw-rt/s, pct-of-raw, and the process CPU
// time per round trip of each (cpu-ns/rt, raw-cpu-ns/rt), which other load
// on the machine does not distort.
func BenchmarkRoundTrip(b *testing.B) {
	reqFrame, _ := benchRequest(JSON).AppendFrame(nil)
	respFrame, _ := benchResponse(JSON).AppendFrame(nil)
	for _, conns := range []int{1, 16} {
		b.Run(fmt.Sprintf("conns=%d", conns), func(b *testing.B) {
			b.StopTimer()
			rem := newRemotingBench(b, conns)
			defer rem.close()
			raw := newRawEcho(b, conns, len(reqFrame), len(respFrame))
			defer raw.close()
			b.ReportAllocs()
			b.SetBytes(int64(len(reqFrame) + len(respFrame)))
			var remTime, rawTime, remCPU, rawCPU time.Duration
			for round := range roundTripRounds {
				n := b.N / roundTripRounds
				if round == 0 {
					n += b.N % roundTripRounds
				}
				// A collection between the runs keeps one's garbage from
				// being collected on the other's time.
				runtime.GC()
				cpu0 := processCPU()
				rawTime += raw.run(n)
				rawCPU += processCPU() - cpu0
				runtime.GC()
				cpu1 := processCPU()
				b.StartTimer()
				remTime += rem.run(b, n)
				b.StopTimer()
				remCPU += processCPU() - cpu1
			}
			b.ReportMetric(float64(remCPU.Nanoseconds())/float64(b.N), "cpu-ns/rt")
			b.ReportMetric(float64(rawCPU.Nanoseconds())/float64(b.N), "raw-cpu-ns/rt")
			rate := float64(b.N) / remTime.Seconds()
			rawRate := float64(b.N) / rawTime.Seconds()
			b.ReportMetric(rate, "rt/s")
			b.ReportMetric(rawRate, "raw-rt/s")
			b.ReportMetric(100*rate/rawRate, "pct-of-raw")
		})
	}
}

// remotingBench is a Server answering SEND_MESSAGE_V2 from a family and one
// Client per connection (a Client keeps one connection per address).
type remotingBench struct {
	s       *Server
	addr    string
	clients []*Client
}

func newRemotingBench(b *testing.B, conns int) *remotingBench {
	s := NewServer(ServerConfig{Addr: "127.0.0.1:0"})
	resp := benchResponse(JSON)
	s.Handle(protocol.SendMessageV2, s.NewFamily("send", 4, 4096), func(_ *Conn, req *Command) *Command {
		r := *resp
		return &r
	})
	if err := s.Start(); err != nil {
		b.Fatal(err)
	}
	rb := &remotingBench{s: s, addr: s.Addr().String()}
	for range conns {
		c := NewClient(ClientConfig{})
		rb.clients = append(rb.clients, c)
		if _, err := c.Invoke(context.Background(), rb.addr, benchRequest(JSON)); err != nil {
			b.Fatal(err)
		}
	}
	return rb
}

func (rb *remotingBench) close() {
	for _, c := range rb.clients {
		_ = c.Close()
	}
	_ = rb.s.Shutdown(context.Background())
}

func (rb *remotingBench) run(b *testing.B, n int) time.Duration {
	var left atomic.Int64
	left.Store(int64(n))
	var wg sync.WaitGroup
	ctx := context.Background()
	start := time.Now()
	for _, c := range rb.clients {
		for range inflightPerConn {
			wg.Go(func() {
				req := benchRequest(JSON)
				for left.Add(-1) >= 0 {
					if _, err := c.Invoke(ctx, rb.addr, req); err != nil {
						b.Error(err)
						return
					}
				}
			})
		}
	}
	wg.Wait()
	return time.Since(start)
}

// rawEcho is the baseline: per connection, a writer goroutine sends
// reqSize-byte messages for the callers (flushing when none is queued), a
// reader goroutine reads respSize-byte answers and wakes the callers in
// order; the server reads a request and writes an answer, flushing when its
// input is drained.
type rawEcho struct {
	ln      net.Listener
	srv     sync.WaitGroup
	io      sync.WaitGroup
	clients []*rawClient
}

type rawClient struct {
	nc    net.Conn
	sends chan chan struct{} // callers -> writer
	order chan chan struct{} // writer -> reader, in wire order
}

func newRawEcho(b *testing.B, conns, reqSize, respSize int) *rawEcho {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	e := &rawEcho{ln: ln}
	e.srv.Go(func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			e.srv.Go(func() {
				defer nc.Close()
				br := bufio.NewReaderSize(nc, readBufferSize)
				bw := bufio.NewWriterSize(nc, 64<<10)
				in, out := make([]byte, reqSize), make([]byte, respSize)
				for {
					if _, err := io.ReadFull(br, in); err != nil {
						return
					}
					_, _ = bw.Write(out)
					if br.Buffered() < reqSize && bw.Flush() != nil {
						return
					}
				}
			})
		}
	})
	for range conns {
		nc, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			b.Fatal(err)
		}
		rc := &rawClient{nc: nc, sends: make(chan chan struct{}, inflightPerConn), order: make(chan chan struct{}, inflightPerConn)}
		e.clients = append(e.clients, rc)
		e.io.Go(func() {
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
		})
		e.io.Go(func() {
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
	return e
}

func (e *rawEcho) run(n int) time.Duration {
	var left atomic.Int64
	left.Store(int64(n))
	var callers sync.WaitGroup
	start := time.Now()
	for _, rc := range e.clients {
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
	return time.Since(start)
}

func (e *rawEcho) close() {
	for _, rc := range e.clients {
		close(rc.sends)
	}
	e.io.Wait()
	for _, rc := range e.clients {
		_ = rc.nc.Close()
	}
	_ = e.ln.Close()
	e.srv.Wait()
}

// BenchmarkInvokeLatency is one caller with one request in flight: the
// writer's gathering yield must not delay a lone frame.
func BenchmarkInvokeLatency(b *testing.B) {
	rb := newRemotingBench(b, 1)
	defer rb.close()
	req := benchRequest(JSON)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := rb.clients[0].Invoke(ctx, rb.addr, req); err != nil {
			b.Fatal(err)
		}
	}
}
