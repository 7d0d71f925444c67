package remoting

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
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

// BenchmarkLargeRequest is one caller sending requests with a large body
// (a batch of messages) over loopback, answered with a small response: it
// measures the reader's path for frames larger than its read buffer, which
// assembles them in chunks (B/op counts the chunks the frame outgrew).
func BenchmarkLargeRequest(b *testing.B) {
	for _, size := range []int{256 << 10, 1 << 20, 4 << 20} {
		b.Run(fmt.Sprintf("body=%dKiB", size>>10), func(b *testing.B) {
			s := NewServer(ServerConfig{Addr: "127.0.0.1:0"})
			s.Handle(protocol.SendBatchMessage, nil, func(_ *Conn, req *Command) *Command {
				return NewResponse(protocol.Success, "")
			})
			if err := s.Start(); err != nil {
				b.Fatal(err)
			}
			c := NewClient(ClientConfig{})
			defer func() {
				_ = c.Close()
				_ = s.Shutdown(context.Background())
			}()
			addr := s.Addr().String()
			req := NewRequest(protocol.SendBatchMessage, sendV2Fields(), make([]byte, size))
			ctx := context.Background()
			if _, err := c.Invoke(ctx, addr, req); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.SetBytes(int64(size))
			for b.Loop() {
				if _, err := c.Invoke(ctx, addr, req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkReadFrames is a connection's reader alone, without sockets or
// handlers: SEND_MESSAGE_V2 requests (1 KiB body) read from a connection
// whose reads return 64 KiB at a time (frames whole in the read buffer) or
// 1000 bytes (most frames split across reads), with the idle timeout off
// and on (120 s, the default).
func BenchmarkReadFrames(b *testing.B) {
	frame, err := benchRequest(JSON).AppendFrame(nil)
	if err != nil {
		b.Fatal(err)
	}
	for _, idle := range []time.Duration{-1, 120 * time.Second} {
		for _, cut := range []int{64 << 10, 1000} {
			b.Run(fmt.Sprintf("idle=%v/read=%d", idle > 0, cut), func(b *testing.B) {
				nc := &repeatConn{frame: frame, cut: cut, left: b.N * len(frame)}
				c := newConn(nc, &dropOwner{}, slog.New(slog.DiscardHandler), DefaultMaxFrameSize, idle)
				b.ReportAllocs()
				b.SetBytes(int64(len(frame)))
				b.ResetTimer()
				if err := c.readFrames(); !errors.Is(err, io.EOF) {
					b.Fatal(err)
				}
			})
		}
	}
}

// repeatConn is a net.Conn whose reads return frame over and over, at most
// cut bytes a read, left bytes in all, then io.EOF.
type repeatConn struct {
	frame     []byte
	off, cut  int
	left      int
	net.Conn  // the rest is never called
	localAddr net.TCPAddr
}

func (r *repeatConn) Read(p []byte) (int, error) {
	if r.left == 0 {
		return 0, io.EOF
	}
	p = p[:min(len(p), r.cut, r.left)]
	n := 0
	for n < len(p) {
		m := copy(p[n:], r.frame[r.off:])
		n += m
		r.off = (r.off + m) % len(r.frame)
	}
	r.left -= n
	return n, nil
}

func (r *repeatConn) RemoteAddr() net.Addr            { return &r.localAddr }
func (r *repeatConn) SetReadDeadline(time.Time) error { return nil }

// dropOwner drops the requests a reader dispatches.
type dropOwner struct {
	warn   warnLimiter
	closes closeLimiters
}

func (*dropOwner) dispatch(*Conn, []*Command)      {}
func (*dropOwner) nextOpaque() int32               { return 1 }
func (*dropOwner) connClosed(*Conn)                {}
func (o *dropOwner) badFrameLimiter() *warnLimiter { return &o.warn }
func (o *dropOwner) closeLog() *closeLimiters      { return &o.closes }
func (*dropOwner) extPolicy() *extPolicy           { return nil }

// benchSendHeader is the SEND_MESSAGE_V2 header of benchRequest, typed.
func benchSendHeader() protocol.SendMessageRequestHeader {
	var h protocol.SendMessageRequestHeader
	if err := h.DecodeV2(sendV2Fields()); err != nil {
		panic(err)
	}
	return h
}

// benchSendResponseHeader is the header of benchResponse, typed.
func benchSendResponseHeader() protocol.SendMessageResponseHeader {
	return protocol.SendMessageResponseHeader{MsgID: "0A0B0C0D00002A9F00000000001E8C52", QueueID: 3,
		QueueOffset: 184467, MsgRegion: "DefaultRegion", TraceOn: protocol.Some(true)}
}

// BenchmarkSendMessageV2Header is what one SEND_MESSAGE_V2 costs in header
// work on each side, the map way (an ext map per request and per
// response: the handler decodes the header from ExtFields, the response is
// built with protocol.Ext) against the typed way (the request decoded
// compact and read with DecodeFrom, the response written from its typed
// header, the client's response kept compact).
func BenchmarkSendMessageV2Header(b *testing.B) {
	reqFrame, _ := benchRequest(JSON).AppendFrame(nil)
	respFrame, _ := benchResponse(JSON).AppendFrame(nil)
	serverPol := &extPolicy{requests: []int32{protocol.SendMessageV2}}
	clientPol := &extPolicy{responses: true}
	sh, rh := benchSendHeader(), benchSendResponseHeader()
	body := make([]byte, 1024)
	for _, mode := range []string{"map", "typed"} {
		typed := mode == "typed"
		b.Run("client-encode-request/"+mode, func(b *testing.B) {
			b.ReportAllocs()
			buf := make([]byte, 0, 4096)
			for b.Loop() {
				var req *Command
				if typed {
					req = NewRequestHeader(protocol.SendMessageV2, sh.V2(), body)
				} else {
					req = NewRequest(protocol.SendMessageV2, make(map[string]string, 16), body)
					sh.AppendExtV2(req.ExtFields)
				}
				buf, _ = req.AppendFrame(buf[:0])
			}
		})
		b.Run("server-decode-request/"+mode, func(b *testing.B) {
			b.ReportAllocs()
			var h protocol.SendMessageRequestHeader
			for b.Loop() {
				var req *Command
				var err error
				if typed {
					req, err = decodeFrame(reqFrame[4:], serverPol)
					if err == nil {
						err = h.DecodeFrom(req.Code, req)
					}
				} else {
					req, err = DecodeFrame(reqFrame[4:])
					if err == nil {
						err = h.DecodeFor(req.Code, req.ExtFields)
					}
				}
				if err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("server-encode-response/"+mode, func(b *testing.B) {
			b.ReportAllocs()
			buf := make([]byte, 0, 4096)
			for b.Loop() {
				resp := NewResponse(protocol.Success, "")
				if typed {
					h := rh // a fresh header per response, as a handler has
					resp.Header = &h
				} else {
					resp.ExtFields = protocol.Ext(&rh)
				}
				buf, _ = resp.AppendFrame(buf[:0])
			}
		})
		b.Run("client-decode-response/"+mode, func(b *testing.B) {
			b.ReportAllocs()
			pol := clientPol
			if !typed {
				pol = nil
			}
			for b.Loop() {
				if _, err := decodeFrame(respFrame[4:], pol); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkSendRoundTrip is SEND_MESSAGE_V2 round trips over loopback with
// 16 connections, the server's handler decoding the request header and
// answering with the send response header: hdr=map the map way,
// hdr=typed with HandleLazyExt, DecodeFrom, a typed response Header and a
// LazyResponseExt client sending a typed request header. Metric cpu-ns/rt
// is the process CPU time per round trip (both sides), which other load
// on the machine does not distort.
func BenchmarkSendRoundTrip(b *testing.B) {
	for _, mode := range []string{"map", "typed"} {
		b.Run("hdr="+mode, func(b *testing.B) {
			typed := mode == "typed"
			s := NewServer(ServerConfig{Addr: "127.0.0.1:0"})
			rh := benchSendResponseHeader()
			handler := func(_ *Conn, req *Command) *Command {
				var h protocol.SendMessageRequestHeader
				resp := NewResponse(protocol.Success, "")
				if typed {
					if err := h.DecodeFrom(req.Code, req); err != nil {
						return ErrorResponse(err)
					}
					type reply struct {
						cmd Command
						hdr protocol.SendMessageResponseHeader
					}
					r := &reply{cmd: *resp, hdr: rh}
					r.hdr.QueueID = h.QueueID
					r.cmd.Header = &r.hdr
					return &r.cmd
				}
				if err := h.DecodeFor(req.Code, req.ExtFields); err != nil {
					return ErrorResponse(err)
				}
				hdr := rh
				hdr.QueueID = h.QueueID
				resp.ExtFields = protocol.Ext(&hdr)
				return resp
			}
			family := s.NewFamily("send", 4, 4096)
			if typed {
				s.HandleLazyExt(protocol.SendMessageV2, family, handler)
			} else {
				s.Handle(protocol.SendMessageV2, family, handler)
			}
			if err := s.Start(); err != nil {
				b.Fatal(err)
			}
			addr := s.Addr().String()
			var clients []*Client
			for range 16 {
				clients = append(clients, NewClient(ClientConfig{LazyResponseExt: typed}))
			}
			defer func() {
				for _, c := range clients {
					_ = c.Close()
				}
				_ = s.Shutdown(context.Background())
			}()
			sh := benchSendHeader()
			body := make([]byte, 1024)
			request := func() *Command {
				if typed {
					return NewRequestHeader(protocol.SendMessageV2, sh.V2(), body)
				}
				ext := make(map[string]string, 16)
				sh.AppendExtV2(ext)
				return NewRequest(protocol.SendMessageV2, ext, body)
			}
			ctx := context.Background()
			for _, c := range clients {
				if _, err := c.Invoke(ctx, addr, request()); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			runtime.GC()
			var left atomic.Int64
			left.Store(int64(b.N))
			var wg sync.WaitGroup
			cpu0 := processCPU()
			b.ResetTimer()
			for _, c := range clients {
				for range 4 {
					wg.Go(func() {
						for left.Add(-1) >= 0 {
							// A request per message, as a producer builds it.
							if r, err := c.Invoke(ctx, addr, request()); err != nil || r.Code != protocol.Success {
								b.Error(err, r)
								return
							}
						}
					})
				}
			}
			wg.Wait()
			b.StopTimer()
			b.ReportMetric(float64((processCPU()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/rt")
		})
	}
}
