package remoting

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"net"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/protocol"
)

// BenchmarkPullResponse measures pull responses whose body is BodyParts
// (n records of 1 KiB, as the store's read buffers hold them) answered
// from a family over loopback to one connection with 8 pulls in flight
// (a raw client reading into one buffer, so that the server's cost shows), copied into the write buffer (copy: the path before zero-copy
// writes) and written from the parts by writev (writev; at every size,
// zeroCopyBody set aside, to place it), in alternating
// rounds of one run so that other load on the machine hits both alike.
// b's timer and allocations count both; the metrics split them: ns/pull,
// cpu-ns/pull (the process's CPU time: server and raw client), allocs/pull and
// B/pull of each, copied-B/pull (body bytes the server copies: into the
// scratch buffer, and from it into the pending buffer, below
// directEncodeBody; once at and above it), and writev/copy ratios.
func BenchmarkPullResponse(b *testing.B) {
	const recSize = 1 << 10
	// joined: the records as one part, as the pull processor hands a run
	// of records that lie back to back in one store read.
	for _, tc := range []struct {
		recs   int
		joined bool
	}{{8, false}, {16, false}, {32, false}, {32, true}, {128, false}} {
		recs := tc.recs
		name := fmt.Sprintf("parts=%dx1KiB", recs)
		if tc.joined {
			name = fmt.Sprintf("parts=1x%dKiB", recs)
		}
		b.Run(name, func(b *testing.B) {
			b.StopTimer()
			slab := make([]byte, recs*recSize)
			for i := range slab {
				slab[i] = byte(i)
			}
			var released atomic.Int64
			s := NewServer(ServerConfig{Addr: "127.0.0.1:0"})
			s.Handle(protocol.PullMessage, s.NewFamily("pull", 4, 1024), func(_ *Conn, req *Command) *Command {
				resp := NewResponse(protocol.Success, "FOUND")
				parts := [][]byte{slab}
				if !tc.joined {
					parts = make([][]byte, recs)
					for i := range parts {
						parts[i] = slab[i*recSize : (i+1)*recSize]
					}
				}
				resp.BodyParts = parts
				resp.Release = func() { released.Add(1) }
				return resp
			})
			if err := s.Start(); err != nil {
				b.Fatal(err)
			}
			defer func() { _ = s.Shutdown(context.Background()) }()
			rc := dialRawPuller(b, s.Addr().String())
			defer func() { _ = rc.nc.Close() }()
			rc.run(b, 1)
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
				rc.run(b, n)
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

// rawPuller is the client side of BenchmarkPullResponse kept cheap, so
// that the server's cost shows: one socket, pulls written 8 at a time in
// one write, their responses read into one reused buffer.
type rawPuller struct {
	nc    net.Conn
	br    *bufio.Reader
	reqs  []byte // 8 pull requests
	frame []byte
}

const rawPullWindow = 8

func dialRawPuller(b *testing.B, addr string) *rawPuller {
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		b.Fatal(err)
	}
	rc := &rawPuller{nc: nc, br: bufio.NewReaderSize(nc, 64<<10)}
	for i := range rawPullWindow {
		req := NewRequest(protocol.PullMessage, nil, nil)
		req.Opaque = int32(i)
		if rc.reqs, err = req.AppendFrame(rc.reqs); err != nil {
			b.Fatal(err)
		}
	}
	return rc
}

// run makes n pulls (rounded up to the window).
func (rc *rawPuller) run(b *testing.B, n int) {
	for done := 0; done < n; done += rawPullWindow {
		if _, err := rc.nc.Write(rc.reqs); err != nil {
			b.Fatal(err)
		}
		for range rawPullWindow {
			var l [4]byte
			if _, err := io.ReadFull(rc.br, l[:]); err != nil {
				b.Fatal(err)
			}
			size := int(binary.BigEndian.Uint32(l[:]))
			if cap(rc.frame) < size {
				rc.frame = make([]byte, size)
			}
			if _, err := io.ReadFull(rc.br, rc.frame[:size]); err != nil {
				b.Fatal(err)
			}
		}
	}
}
