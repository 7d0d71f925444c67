package remoting

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/protocol"
)

// BenchmarkPullResponse measures pull responses whose body is BodyParts
// (n records of 1 KiB, as the store's read buffers hold them) answered
// from a family over loopback to one client connection with 8 pulls in
// flight, copied into the write buffer (copy: the path before zero-copy
// writes) and written from the parts by writev (writev; at every size,
// zeroCopyBody set aside, to place it), in alternating
// rounds of one run so that other load on the machine hits both alike.
// b's timer and allocations count both; the metrics split them: ns/pull,
// cpu-ns/pull (the process's CPU time: server and client), allocs/pull and
// B/pull of each, copied-B/pull (body bytes the server copies: into the
// scratch buffer, and from it into the pending buffer, below
// directEncodeBody; once at and above it), and writev/copy ratios.
func BenchmarkPullResponse(b *testing.B) {
	const recSize = 1 << 10
	for _, recs := range []int{8, 16, 32, 128} {
		b.Run(fmt.Sprintf("parts=%dx1KiB", recs), func(b *testing.B) {
			b.StopTimer()
			slab := make([]byte, recs*recSize)
			for i := range slab {
				slab[i] = byte(i)
			}
			var released atomic.Int64
			s := NewServer(ServerConfig{Addr: "127.0.0.1:0"})
			s.Handle(protocol.PullMessage, s.NewFamily("pull", 4, 1024), func(_ *Conn, req *Command) *Command {
				resp := NewResponse(protocol.Success, "FOUND")
				parts := make([][]byte, recs)
				for i := range parts {
					parts[i] = slab[i*recSize : (i+1)*recSize]
				}
				resp.BodyParts = parts
				resp.Release = func() { released.Add(1) }
				return resp
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
			if _, err := c.Invoke(context.Background(), addr, NewRequest(protocol.PullMessage, nil, nil)); err != nil {
				b.Fatal(err)
			}
			saved := zeroCopyBody
			defer func() { zeroCopyBody = saved }()
			b.ReportAllocs()
			b.SetBytes(int64(recs * recSize))

			type stats struct {
				n              int
				wall, cpu      time.Duration
				mallocs, bytes uint64
			}
			var modes [2]stats // copy, writev
			const rounds = 8
			for round := range 2 * rounds {
				mode := round % 2
				n := b.N / rounds
				if round < 2 {
					n += b.N % rounds
				}
				if mode == 0 {
					zeroCopyBody = math.MaxInt
				} else {
					zeroCopyBody = 0 // every size, to place the threshold
				}
				runtime.GC()
				var m0, m1 runtime.MemStats
				runtime.ReadMemStats(&m0)
				cpu0 := processCPU()
				b.StartTimer()
				start := time.Now()
				pullRounds(b, c, addr, n)
				wall := time.Since(start)
				b.StopTimer()
				cpu := processCPU() - cpu0
				runtime.ReadMemStats(&m1)
				st := &modes[mode]
				st.n += n
				st.wall += wall
				st.cpu += cpu
				st.mallocs += m1.Mallocs - m0.Mallocs
				st.bytes += m1.TotalAlloc - m0.TotalAlloc
			}
			body := float64(recs * recSize)
			copied := [2]float64{body, 0}
			if recs*recSize < directEncodeBody {
				copied[0] = 2 * body
			}
			for i, name := range []string{"copy", "writev"} {
				st := modes[i]
				if st.n == 0 {
					continue
				}
				b.ReportMetric(float64(st.wall.Nanoseconds())/float64(st.n), name+"-ns/pull")
				b.ReportMetric(float64(st.cpu.Nanoseconds())/float64(st.n), name+"-cpu-ns/pull")
				b.ReportMetric(float64(st.mallocs)/float64(st.n), name+"-allocs/pull")
				b.ReportMetric(float64(st.bytes)/float64(st.n), name+"-B/pull")
				b.ReportMetric(copied[i], name+"-copied-B/pull")
			}
			if modes[0].n > 0 && modes[1].n > 0 {
				b.ReportMetric(modes[1].wall.Seconds()/float64(modes[1].n)/(modes[0].wall.Seconds()/float64(modes[0].n)), "writev/copy-time")
				if modes[0].cpu > 0 {
					b.ReportMetric(modes[1].cpu.Seconds()/float64(modes[1].n)/(modes[0].cpu.Seconds()/float64(modes[0].n)), "writev/copy-cpu")
				}
			}
		})
	}
}

// pullRounds makes n pulls through c, 8 in flight.
func pullRounds(b *testing.B, c *Client, addr string, n int) {
	var left atomic.Int64
	left.Store(int64(n))
	var wg sync.WaitGroup
	ctx := context.Background()
	for range 8 {
		wg.Go(func() {
			req := NewRequest(protocol.PullMessage, nil, nil)
			for left.Add(-1) >= 0 {
				if _, err := c.Invoke(ctx, addr, req); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
}
