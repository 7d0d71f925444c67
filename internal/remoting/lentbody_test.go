package remoting

import (
	"bytes"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/protocol"
)

// TestLentRequestBodies: a route registered with LentBody receives the
// bodies of at least minLentBody that fit the read buffer in pooled
// buffers, given back when the handler returns; with many callers
// pipelining on one connection (several frames a read, so both the
// hand-over of the read buffer and the pooled copy happen), no handler
// ever sees its body change while it runs. A route without LentBody on
// the same connection keeps plain copies that stay intact after its
// handler returned.
func TestLentRequestBodies(t *testing.T) {
	const lentCode, keptCode = protocol.SendMessageV2, protocol.SendMessage
	s := NewServer(ServerConfig{Addr: "127.0.0.1:0"})
	fam := s.NewFamily("send", 4, 1024)
	var pooled, plain atomic.Int64
	var mu sync.Mutex
	var kept [][]byte // bodies the kept route's handler held on to
	check := func(req *Command) *Command {
		if len(req.Body) == 0 || !bytes.Equal(req.Body, partsBody(len(req.Body), req.Body[0])) {
			return NewResponse(protocol.SystemError, "body differs on arrival")
		}
		return nil
	}
	s.HandleLazyExt(lentCode, fam, func(_ *Conn, req *Command) *Command {
		if bad := check(req); bad != nil {
			return bad
		}
		if req.pooledBody != nil {
			pooled.Add(1)
		} else {
			plain.Add(1)
		}
		if want := len(req.Body) >= minLentBody && len(req.Body) < readBufferSize-1024; (req.pooledBody != nil) != want {
			return NewResponse(protocol.SystemError, "pooled "+strconv.FormatBool(req.pooledBody != nil)+" for "+strconv.Itoa(len(req.Body))+" bytes")
		}
		// Hold it while other requests are read and handled.
		for range int(req.Body[0]) % 4 {
			runtime.Gosched()
		}
		if bad := check(req); bad != nil {
			return NewResponse(protocol.SystemError, "body changed while its handler ran")
		}
		return NewResponse(protocol.Success, strconv.Itoa(len(req.Body)))
	}, LentBody)
	s.HandleLazyExt(keptCode, fam, func(_ *Conn, req *Command) *Command {
		if bad := check(req); bad != nil {
			return bad
		}
		if req.pooledBody != nil {
			return NewResponse(protocol.SystemError, "a body of a route without LentBody is pooled")
		}
		mu.Lock()
		kept = append(kept, req.Body)
		mu.Unlock()
		return NewResponse(protocol.Success, strconv.Itoa(len(req.Body)))
	})
	addr := startServer(t, s)
	c := newClient(t, ClientConfig{})
	sizes := []int{100, minPooledBody, minLentBody - 1, minLentBody, 32 << 10, readBufferSize - 2000, 200 << 10}
	ctx := ctxTimeout(t, 60*time.Second)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 60 {
				size := sizes[(g+i)%len(sizes)]
				code := lentCode
				if i%5 == 4 {
					code = keptCode
				}
				body := partsBody(size, byte(g*60+i))
				resp, err := c.Invoke(ctx, addr, NewRequest(code, map[string]string{"k": "v"}, body))
				if err != nil {
					t.Errorf("caller %d call %d: %v", g, i, err)
					return
				}
				if resp.Code != protocol.Success || resp.Remark != strconv.Itoa(size) {
					t.Errorf("caller %d call %d (code %d, %d bytes): %d %s", g, i, code, size, resp.Code, resp.Remark)
					return
				}
			}
		})
	}
	wg.Wait()
	if pooled.Load() == 0 || plain.Load() == 0 {
		t.Errorf("lent route: %d pooled bodies, %d plain ones; want both", pooled.Load(), plain.Load())
	}
	mu.Lock()
	defer mu.Unlock()
	for i, b := range kept {
		if !bytes.Equal(b, partsBody(len(b), b[0])) {
			t.Fatalf("kept body %d (%d bytes) changed after its handler returned", i, len(b))
		}
	}
}
