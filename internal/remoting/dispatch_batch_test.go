package remoting

import (
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/testutil/wait"
)

// batchOwner records the requests of each dispatch call.
type batchOwner struct {
	collectOwner
	sizes []int
}

func (o *batchOwner) dispatch(c *Conn, reqs []*Command) {
	o.sizes = append(o.sizes, len(reqs))
	o.collectOwner.dispatch(c, reqs)
}

// seqFrames returns n request frames with opaques 1..n (binary headers,
// no body: a few dozen bytes each) and the size of one.
func seqFrames(t *testing.T, n int) ([]byte, int) {
	t.Helper()
	var data []byte
	size := 0
	for i := 1; i <= n; i++ {
		before := len(data)
		var err error
		data, err = (&Command{Code: protocol.SendMessage, Opaque: int32(i), SerializeType: RocketMQ}).AppendFrame(data)
		if err != nil {
			t.Fatal(err)
		}
		if size = len(data) - before; size > 60 {
			t.Fatalf("frame of %d bytes: the reads below assume at most 60", size)
		}
	}
	return data, size
}

// TestReaderDispatchesWholeFramesOfARead: every whole frame one read
// delivered goes to the owner in one call, in order, before the reader
// waits for the rest of a split frame; a lone frame goes alone.
func TestReaderDispatchesWholeFramesOfARead(t *testing.T) {
	data, size := seqFrames(t, 10)
	// Read 1: frames 1-3 and half of frame 4; read 2: the rest.
	cc := &chunkConn{t: t, data: data, cuts: []byte{byte(3*size + size/2), 255, 255}}
	o := &batchOwner{}
	c := newConn(cc, o, slog.New(slog.DiscardHandler), DefaultMaxFrameSize, -1)
	cc.c = c
	_ = c.readFrames()
	if want := []int{3, 7}; !slices.Equal(o.sizes, want) {
		t.Errorf("dispatch sizes %v, want %v", o.sizes, want)
	}
	for i, r := range o.reqs {
		if r.Opaque != int32(i+1) {
			t.Fatalf("request %d has opaque %d: order lost", i, r.Opaque)
		}
	}
	if len(o.reqs) != 10 {
		t.Fatalf("%d requests dispatched, want 10", len(o.reqs))
	}

	// A byte at a time: each frame is whole only once its last byte is
	// in, so each goes alone, without waiting for a next one.
	data, _ = seqFrames(t, 5)
	cc = &chunkConn{t: t, data: data}
	o = &batchOwner{}
	c = newConn(cc, o, slog.New(slog.DiscardHandler), DefaultMaxFrameSize, -1)
	cc.c = c
	_ = c.readFrames()
	if want := []int{1, 1, 1, 1, 1}; !slices.Equal(o.sizes, want) {
		t.Errorf("byte by byte: dispatch sizes %v, want %v", o.sizes, want)
	}
}

// TestReaderDispatchBatchIsBounded: a read holding more than
// maxDispatchBatch frames is handed over in pieces of at most that many.
func TestReaderDispatchBatchIsBounded(t *testing.T) {
	n := maxDispatchBatch + maxDispatchBatch/2
	data, _ := seqFrames(t, n)
	rc := &repeatConn{frame: data, cut: len(data), left: len(data)}
	o := &batchOwner{}
	c := newConn(rc, o, slog.New(slog.DiscardHandler), DefaultMaxFrameSize, -1)
	_ = c.readFrames()
	if want := []int{maxDispatchBatch, n - maxDispatchBatch}; !slices.Equal(o.sizes, want) {
		t.Errorf("dispatch sizes %v, want %v", o.sizes, want)
	}
}

// TestFamilyOfferAllTakesWhatFits: a batch offered to a nearly full queue
// is queued up to the limit, in order; the rest is refused.
func TestFamilyOfferAllTakesWhatFits(t *testing.T) {
	f := &Family{limit: 5, workers: 2, wake: make(chan struct{}, 2)}
	if n := f.offerAll([]task{{enqueued: 1}, {enqueued: 2}, {enqueued: 3}}); n != 3 {
		t.Fatalf("first batch: %d queued, want 3", n)
	}
	if n := f.offerAll([]task{{enqueued: 4}, {enqueued: 5}, {enqueued: 6}, {enqueued: 7}}); n != 2 {
		t.Fatalf("second batch: %d queued, want 2 (limit 5)", n)
	}
	if n := f.offerAll([]task{{enqueued: 8}}); n != 0 {
		t.Fatalf("full queue took %d", n)
	}
	for want := int64(1); want <= 5; want++ {
		if tk, ok := f.take(); !ok || tk.enqueued != want {
			t.Fatalf("take: %d %v, want %d", tk.enqueued, ok, want)
		}
	}
	if len(f.wake) != 2 {
		t.Fatalf("wake tokens %d, want one per worker", len(f.wake))
	}
}

// TestPipelinedRequestsKeepFamilyOrder: requests written back to back
// (read and dispatched in batches) reach a one-worker family in the order
// sent, and requests past the queue's room are answered SYSTEM_BUSY, each
// exactly once.
func TestPipelinedRequestsKeepFamilyOrder(t *testing.T) {
	s := NewServer(ServerConfig{Addr: "127.0.0.1:0"})
	const n = 300
	fam := s.NewFamily("seq", 1, n)
	var mu sync.Mutex
	var order []int32
	s.Handle(protocol.SendMessage, fam, func(_ *Conn, req *Command) *Command {
		mu.Lock()
		order = append(order, req.Opaque)
		mu.Unlock()
		return NewResponse(protocol.Success, "")
	})
	rc := dialRaw(t, startServer(t, s))
	var all []byte
	for i := 1; i <= n; i++ {
		all, _ = (&Command{Code: protocol.SendMessage, Opaque: int32(i)}).AppendFrame(all)
	}
	rc.write(all)
	for range n {
		if r := rc.mustRead(); r.Code != protocol.Success {
			t.Fatalf("opaque %d: code %d %s", r.Opaque, r.Code, r.Remark)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for i, op := range order {
		if op != int32(i+1) {
			t.Fatalf("handled #%d was opaque %d: order lost", i, op)
		}
	}

	// Overflow: a blocked worker and room for 2. Whether the worker
	// took its first request before the rest were queued depends on how
	// the reads fell: 2 or 3 are taken, the others answered SYSTEM_BUSY
	// at once, before any success.
	busy := &busyCounter{}
	s2 := NewServer(ServerConfig{Addr: "127.0.0.1:0", Observer: busy})
	release := make(chan struct{})
	s2.Handle(protocol.SendMessage, s2.NewFamily("blocked", 1, 2), func(*Conn, *Command) *Command {
		<-release
		return NewResponse(protocol.Success, "")
	})
	rc2 := dialRaw(t, startServer(t, s2))
	all = all[:0]
	for i := 1; i <= 10; i++ {
		all, _ = (&Command{Code: protocol.SendMessage, Opaque: int32(i)}).AppendFrame(all)
	}
	rc2.write(all)
	wait.For(t, 5*time.Second, "all 10 requests taken or refused", func() bool {
		return busy.count()+int(s2.inflight.Load()) == 10
	})
	refused := busy.count()
	if refused < 7 || refused > 8 {
		t.Fatalf("%d refused, want 7 or 8 (1 running, 1 or 2 queued)", refused)
	}
	codes := map[int32]int32{}
	for range refused {
		r := rc2.mustRead()
		if r.Code != protocol.SystemBusy {
			t.Fatalf("opaque %d answered %d before the release, want SYSTEM_BUSY", r.Opaque, r.Code)
		}
		codes[r.Opaque] = r.Code
	}
	close(release)
	for range 10 - refused {
		r := rc2.mustRead()
		if _, dup := codes[r.Opaque]; dup || r.Code != protocol.Success {
			t.Fatalf("opaque %d: code %d (answered before: %v)", r.Opaque, r.Code, dup)
		}
		codes[r.Opaque] = r.Code
	}
	if len(codes) != 10 {
		t.Fatalf("answered %d distinct requests, want 10", len(codes))
	}
}

// busyCounter counts the SYSTEM_BUSY answers a server observed.
type busyCounter struct {
	mu sync.Mutex
	n  int
}

func (b *busyCounter) ObserveRequest(_, code int32, _ bool, _ time.Duration) {
	if code == protocol.SystemBusy {
		b.mu.Lock()
		b.n++
		b.mu.Unlock()
	}
}

func (b *busyCounter) count() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.n
}

// TestPendingBufferGrowsByDoubling: a burst of frames grows the pending
// buffer by doubling (not append's quarter steps for large slices), and
// the writer keeps a large buffer only while its writes stay large.
func TestPendingBufferGrowsByDoubling(t *testing.T) {
	c := &Conn{}
	frame := make([]byte, 1000)
	grows := 0
	for range 4000 {
		before := cap(c.wmu.buf)
		c.growPendingLocked(len(frame))
		c.wmu.buf = append(c.wmu.buf, frame...)
		if cap(c.wmu.buf) != before {
			grows++
			if before > 0 && cap(c.wmu.buf) < 2*before {
				t.Fatalf("grew from %d to %d: less than double", before, cap(c.wmu.buf))
			}
		}
	}
	if grows > 13 { // 1000 B doubled up to 4 MB
		t.Errorf("%d growths for 4,000 frames of 1,000 B", grows)
	}
	for _, tc := range []struct {
		n, capacity int
		more        bool
		keep        bool
	}{
		{100, maxKeptWriteBuffer, false, true},
		{4 << 20, 8 << 20, false, true},
		{maxKeptWriteBuffer / 4, 8 << 20, false, true},
		{maxKeptWriteBuffer/4 - 1, 8 << 20, false, false},
		{500, 4 << 20, false, false},
		{500, 4 << 20, true, true}, // a small write in a burst that goes on
	} {
		if got := keepWriteBuffer(tc.n, tc.capacity, tc.more); got != tc.keep {
			t.Errorf("keepWriteBuffer(%d, %d, %v) = %v, want %v", tc.n, tc.capacity, tc.more, got, tc.keep)
		}
	}
}
