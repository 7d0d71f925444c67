package remoting

import (
	"bytes"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/protocol"
)

// TestPooledResponseBodies: with PooledResponseBodies, the responses that
// arrived in one read buffer and have a body of at least minPooledBody take
// it from the pool; given back with ReleaseBody and reused by other callers
// on the same connection at once, no body is ever seen changed while its
// caller holds it. Smaller and larger bodies are plain copies, and
// ReleaseBody on them (or twice) does nothing.
func TestPooledResponseBodies(t *testing.T) {
	ps := startPartsServer(t, nil)
	c := newClient(t, ClientConfig{PooledResponseBodies: true})
	sizes := []int{100, minPooledBody - 1, minPooledBody, 32 << 10, readBufferSize - 1000, 200 << 10}
	ctx := ctxTimeout(t, 60*time.Second)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 40 {
				size := sizes[(g+i)%len(sizes)]
				seed := byte(g*40 + i)
				resp, err := c.Invoke(ctx, ps.addr, partsRequest(protocol.PullMessage, size, seed))
				if err != nil {
					t.Errorf("caller %d call %d (%d bytes): %v", g, i, size, err)
					return
				}
				pooled := size >= minPooledBody && size < readBufferSize
				if (resp.pooledBody != nil) != pooled {
					t.Errorf("%d bytes: pooled %v, want %v", size, resp.pooledBody != nil, pooled)
				}
				want := partsBody(size, seed)
				if !bytes.Equal(resp.Body, want) {
					t.Errorf("caller %d call %d: body of %d bytes differs", g, i, size)
					return
				}
				// Hold it while the others go on.
				for range i % 4 {
					runtime.Gosched()
				}
				if !bytes.Equal(resp.Body, want) {
					t.Errorf("caller %d call %d: body changed while held", g, i)
					return
				}
				resp.ReleaseBody()
				if pooled && resp.Body != nil {
					t.Errorf("%d bytes: Body kept after ReleaseBody", size)
				}
				resp.ReleaseBody()
			}
		})
	}
	wg.Wait()
}
