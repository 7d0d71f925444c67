package longpoll

import (
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/testutil/wait"
)

type fakeConn struct {
	once   sync.Once
	closed chan struct{}
	// closeAfterChecks > 0 closes the connection on that call of Closed.
	closeAfterChecks, checks atomic.Int32
}

func newFakeConn() *fakeConn { return &fakeConn{closed: make(chan struct{})} }
func (c *fakeConn) Closed() <-chan struct{} {
	if n := c.closeAfterChecks.Load(); n > 0 && c.checks.Add(1) == n {
		c.Close()
	}
	return c.closed
}
func (c *fakeConn) Close() { c.once.Do(func() { close(c.closed) }) }

// wakes records Wake calls by request name.
type wakes struct {
	mu    sync.Mutex
	calls map[string]int
	at    map[string]time.Time
	ch    chan string
}

func newWakes() *wakes {
	return &wakes{calls: map[string]int{}, at: map[string]time.Time{}, ch: make(chan string, 100_000)}
}

func (w *wakes) fn(name string) func() {
	return func() {
		w.mu.Lock()
		w.calls[name]++
		w.at[name] = time.Now()
		w.mu.Unlock()
		w.ch <- name
	}
}

func (w *wakes) count(name string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.calls[name]
}

func (w *wakes) total() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, c := range w.calls {
		n += c
	}
	return n
}

// next waits for the next Wake.
func (w *wakes) next(t *testing.T) string {
	t.Helper()
	select {
	case name := <-w.ch:
		return name
	case <-time.After(5 * time.Second):
		t.Fatal("no wake within 5 s")
		return ""
	}
}

func newHolder(t *testing.T, cfg Config) *Holder {
	t.Helper()
	h, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close() })
	return h
}

// readyLen is how many woken requests wait for a worker.
func readyLen(h *Holder) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.mu.ready) - h.mu.head
}

func req(w *wakes, name string, offset int64) Request {
	return Request{Topic: "T", QueueID: 0, Offset: offset, Timeout: time.Minute, Wake: w.fn(name)}
}

func mustHold(t *testing.T, h *Holder, r Request) {
	t.Helper()
	if st := h.Hold(r); st != Held {
		t.Fatalf("Hold = %v", st)
	}
}

func TestWakeOnNotify(t *testing.T) {
	h := newHolder(t, Config{})
	w := newWakes()
	mustHold(t, h, req(w, "r", 5))

	h.Notify("T", 0, 5, 0) // max offset 5: nothing beyond offset 5 yet
	h.Notify("T", 1, 9, 0) // another queue
	h.Notify("U", 0, 9, 0) // another topic
	if h.Len() != 1 {
		t.Fatal("woken by a notification that does not concern it")
	}
	h.Notify("T", 0, 6, 0)
	if got := w.next(t); got != "r" {
		t.Fatalf("woke %q", got)
	}
	if h.Len() != 0 {
		t.Fatalf("Len = %d after the wake", h.Len())
	}
	h.Notify("T", 0, 7, 0)
	// Notify hands what it wakes to the workers before it returns: with
	// nothing handed over, no Wake can follow.
	if n := readyLen(h); n != 0 {
		t.Fatalf("%d requests handed to the workers by a Notify after the wake", n)
	}
	if n := w.count("r"); n != 1 {
		t.Fatalf("Wake ran %d times", n)
	}
	if s := h.Stats(); s.Held != 1 || s.Arrived != 1 || s.Expired != 0 {
		t.Fatalf("stats = %+v", s)
	}
}

func TestTagFilter(t *testing.T) {
	h := newHolder(t, Config{})
	w := newWakes()
	r := req(w, "tagged", 0)
	r.Match = func(tagsCode int64) bool { return tagsCode == 42 || tagsCode == 43 }
	mustHold(t, h, r)
	all := req(w, "all", 0)
	mustHold(t, h, all)

	h.Notify("T", 0, 1, 7)
	if got := w.next(t); got != "all" {
		t.Fatalf("woke %q", got)
	}
	if h.Len() != 1 {
		t.Fatal("a non-matching tag woke the filtered request")
	}
	h.Notify("T", 0, 2, 43)
	if got := w.next(t); got != "tagged" {
		t.Fatalf("woke %q", got)
	}
}

func TestTimeoutFiresOnTime(t *testing.T) {
	// Never early; late by less than ~100 ms plus slack. A loaded machine
	// running -race can delay one run, so a run may be retried: a coarse
	// checker (Java's 5 s pass, or a 1 s ticker) would fail every time.
	const slack = 150 * time.Millisecond
	var errs []string
	for attempt := range 3 {
		errs = timeoutRun(t, slack)
		if len(errs) == 0 {
			return
		}
		t.Logf("attempt %d: %v", attempt+1, errs)
	}
	t.Fatal(errs)
}

func timeoutRun(t *testing.T, slack time.Duration) []string {
	h := newHolder(t, Config{MaxSuspend: 300 * time.Millisecond})
	defer h.Close()
	w := newWakes()
	start := time.Now()
	long := req(w, "long", 0)
	long.Timeout = time.Hour // capped at MaxSuspend
	mustHold(t, h, long)
	short := req(w, "short", 0)
	short.Timeout = 150 * time.Millisecond // earlier than the first: the timer must re-arm
	mustHold(t, h, short)

	if got := w.next(t); got != "short" {
		t.Fatalf("first wake %q", got)
	}
	if got := w.next(t); got != "long" {
		t.Fatalf("second wake %q", got)
	}
	w.mu.Lock()
	ds, dl := w.at["short"].Sub(start), w.at["long"].Sub(start)
	w.mu.Unlock()
	if ds < 150*time.Millisecond || dl < 300*time.Millisecond {
		t.Fatalf("woke early: %v for 150 ms, %v for 300 ms", ds, dl)
	}
	if s := h.Stats(); s.Expired != 2 || s.Arrived != 0 {
		t.Fatalf("stats = %+v", s)
	}
	var errs []string
	if ds > 150*time.Millisecond+slack {
		errs = append(errs, fmt.Sprintf("150 ms hold woke after %v", ds))
	}
	if dl > 300*time.Millisecond+slack {
		errs = append(errs, fmt.Sprintf("hold capped at 300 ms woke after %v", dl))
	}
	return errs
}

func TestHoldTime(t *testing.T) {
	h, _ := New(Config{MaxSuspend: 20 * time.Second})
	for _, c := range []struct{ in, want time.Duration }{
		{15 * time.Second, 15 * time.Second}, {30 * time.Second, 20 * time.Second}, {-1, 0}, {0, 0},
	} {
		if got := h.HoldTime(c.in); got != c.want {
			t.Errorf("HoldTime(%v) = %v, want %v", c.in, got, c.want)
		}
	}
	s, _ := New(Config{ShortPolling: true, ShortPollingTime: 700 * time.Millisecond})
	if got := s.HoldTime(15 * time.Second); got != 700*time.Millisecond {
		t.Errorf("short polling HoldTime = %v", got)
	}
}

func TestShortPolling(t *testing.T) {
	h := newHolder(t, Config{ShortPolling: true, ShortPollingTime: 100 * time.Millisecond,
		MaxOffset: func(string, int32) int64 { return 100 }})
	w := newWakes()
	start := time.Now()
	mustHold(t, h, req(w, "r", 0))
	h.Notify("T", 0, 100, 0) // no effect in short polling mode
	if h.Len() != 1 {
		t.Fatal("an arrival woke a short-polling request")
	}
	w.next(t)
	if d := time.Since(start); d < 100*time.Millisecond {
		t.Fatalf("woke after %v, before the short polling time", d)
	}
}

func TestManyRequestsOnOneQueue(t *testing.T) {
	h := newHolder(t, Config{})
	w := newWakes()
	const n = 500
	for i := range n {
		mustHold(t, h, req(w, strconv.Itoa(i), int64(i)))
	}
	h.Notify("T", 0, 250, 0) // wakes offsets 0..249
	if h.Len() != n-250 {
		t.Fatalf("Len = %d, want %d", h.Len(), n-250)
	}
	wait.For(t, 5*time.Second, "250 wakes", func() bool { return w.total() == 250 })
	for i := range n {
		if want := b2i(i < 250); w.count(strconv.Itoa(i)) != want {
			t.Fatalf("request %d woken %d times, want %d", i, w.count(strconv.Itoa(i)), want)
		}
	}
	h.Notify("T", 0, n, 0)
	wait.For(t, 5*time.Second, "all wakes", func() bool { return w.total() == n })
	if h.Len() != 0 {
		t.Fatalf("Len = %d", h.Len())
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestCaps(t *testing.T) {
	h := newHolder(t, Config{MaxPerQueue: 2, MaxTotal: 3})
	w := newWakes()
	mustHold(t, h, req(w, "a", 0))
	mustHold(t, h, req(w, "b", 0))
	if st := h.Hold(req(w, "c", 0)); st != QueueFull {
		t.Fatalf("third on one queue: %v", st)
	}
	other := req(w, "d", 0)
	other.QueueID = 1
	mustHold(t, h, other)
	other.QueueID = 2
	if st := h.Hold(other); st != Full {
		t.Fatalf("fourth in all: %v", st)
	}
	if s := h.Stats(); s.Rejected != 2 || s.Held != 3 {
		t.Fatalf("stats = %+v", s)
	}
	// Room again after a wake.
	h.Notify("T", 0, 1, 0)
	other.QueueID = 2
	mustHold(t, h, other)
}

func TestDropConn(t *testing.T) {
	h := newHolder(t, Config{})
	w := newWakes()
	a, b := newFakeConn(), newFakeConn()
	for i := range 3 {
		r := req(w, "a"+strconv.Itoa(i), 0)
		r.Conn = a
		mustHold(t, h, r)
	}
	rb := req(w, "b", 0)
	rb.Conn = b
	mustHold(t, h, rb)

	a.Close()
	h.DropConn(a)
	if h.Len() != 1 {
		t.Fatalf("Len = %d after dropping a", h.Len())
	}
	if st := h.Hold(Request{Topic: "T", Conn: a, Wake: w.fn("late")}); st != ConnClosed {
		t.Fatalf("Hold on a closed connection: %v", st)
	}
	h.DropConn(a) // nothing left: no-op

	// b closes but nobody calls DropConn: the woken request is skipped.
	b.Close()
	h.Notify("T", 0, 1, 0)
	wait.For(t, 5*time.Second, "the skip to be counted", func() bool { return h.Stats().Dropped == 4 })
	if n := w.total(); n != 0 {
		t.Fatalf("%d wakes for requests of closed connections", n)
	}
}

func TestLostWakeupClosedByMaxOffset(t *testing.T) {
	var max atomic.Int64
	max.Store(10) // a message arrived (offset 9) before the hold
	h := newHolder(t, Config{MaxOffset: func(topic string, q int32) int64 { return max.Load() }})
	w := newWakes()
	mustHold(t, h, req(w, "raced", 9)) // asked for 9, read nothing, 9 exists now
	if got := w.next(t); got != "raced" {
		t.Fatalf("woke %q", got)
	}
	mustHold(t, h, req(w, "waits", 10))
	if h.Len() != 1 {
		t.Fatal("a request at the max offset was woken")
	}
}

func TestRecheck(t *testing.T) {
	var max atomic.Int64
	max.Store(5)
	h := newHolder(t, Config{RecheckInterval: 20 * time.Millisecond,
		MaxOffset: func(string, int32) int64 { return max.Load() }})
	w := newWakes()
	r := req(w, "r", 5)
	r.Match = func(int64) bool { return false } // the recheck ignores the filter, as Java's
	mustHold(t, h, r)
	max.Store(6) // arrival never announced
	if got := w.next(t); got != "r" {
		t.Fatalf("woke %q", got)
	}
}

func TestStoppedAndClose(t *testing.T) {
	h, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	w := newWakes()
	if st := h.Hold(req(w, "early", 0)); st != Stopped {
		t.Fatalf("Hold before Start: %v", st)
	}
	if err := h.Start(); err != nil {
		t.Fatal(err)
	}
	if err := h.Start(); err == nil {
		t.Fatal("second Start succeeded")
	}
	for i := range 10 {
		r := req(w, strconv.Itoa(i), 0)
		r.Timeout = 10 * time.Millisecond * time.Duration(i)
		r.QueueID = int32(i % 3)
		mustHold(t, h, r)
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	// Close has waited for the timer and the workers: nothing is left
	// that could wake a request.
	for name, done := range map[string]<-chan struct{}{"timer": h.timer.Done(), "worker 0": h.workers[0].Done()} {
		select {
		case <-done:
		default:
			t.Fatalf("the %s goroutine still runs after Close", name)
		}
	}
	if readyLen(h) != 0 {
		t.Fatal("requests left for the workers after Close")
	}
	n := w.total() // some of the short ones may have woken before Close
	if h.Len() != 0 {
		t.Fatalf("Len = %d after Close", h.Len())
	}
	if s := h.Stats(); int(s.Dropped)+n != 10 {
		t.Fatalf("stats %+v with %d wakes: every request must be woken or dropped", s, n)
	}
	if st := h.Hold(req(w, "late", 0)); st != Stopped {
		t.Fatalf("Hold after Close: %v", st)
	}
	h.Notify("T", 0, 100, 0) // harmless
	if err := h.Start(); err == nil {
		t.Fatal("Start after Close succeeded")
	}
}

func TestWakePanicIsContained(t *testing.T) {
	h := newHolder(t, Config{Workers: 1})
	w := newWakes()
	mustHold(t, h, Request{Topic: "T", Offset: 0, Timeout: time.Minute, Wake: func() { panic("boom") }})
	mustHold(t, h, req(w, "after", 0))
	h.Notify("T", 0, 1, 0)
	w.next(t)
	// The two wake-ups may run in either order: wait for the panic's, then
	// check that the single worker survived it.
	wait.For(t, 5*time.Second, "the wake-up panic counted", func() bool { return h.Stats().WakePanics == 1 })
	mustHold(t, h, req(w, "later", 1))
	h.Notify("T", 0, 2, 0)
	w.next(t)
}

func TestConfigValidate(t *testing.T) {
	for _, c := range []Config{{MaxSuspend: -1}, {MaxTotal: -1}, {Workers: -1}} {
		if _, err := New(c); err == nil {
			t.Errorf("%+v accepted", c)
		}
	}
}

// TestConcurrentHoldNotifyDrop races every entry point; each request must
// end woken exactly once or dropped, and the tables must end empty.
func TestConcurrentHoldNotifyDrop(t *testing.T) {
	h := newHolder(t, Config{Workers: 4})
	var woken, started atomic.Int64
	var once sync.Map
	const goroutines, perG = 8, 300
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn := newFakeConn()
			for i := range perG {
				name := strconv.Itoa(g*perG + i)
				r := Request{
					Topic: "T" + strconv.Itoa(i%2), QueueID: int32(i % 4), Offset: int64(i),
					Timeout: time.Duration(i%5) * time.Millisecond, Conn: conn,
					Match: func(tc int64) bool { return tc%2 == 0 },
					Wake: func() {
						if _, dup := once.LoadOrStore(name, true); dup {
							t.Errorf("request %s woken twice", name)
						}
						woken.Add(1)
					},
				}
				if h.Hold(r) == Held {
					started.Add(1)
				}
				h.Notify("T"+strconv.Itoa(i%2), int32(i%4), int64(i+1), int64(i))
				if i%50 == 49 {
					conn.Close()
					h.DropConn(conn)
					conn = newFakeConn()
				}
			}
		}()
	}
	wg.Wait()
	// Every hold time is under 5 ms: all end soon.
	wait.For(t, 5*time.Second, "every request to end", func() bool {
		return h.Len() == 0 && woken.Load()+h.Stats().Dropped == started.Load()
	})
	s := h.Stats()
	if s.Held != started.Load() {
		t.Fatalf("stats %+v, %d held", s, started.Load())
	}
	if got := woken.Load() + s.Dropped; got != s.Held {
		t.Fatalf("woken %d + dropped %d != held %d (%+v)", woken.Load(), s.Dropped, s.Held, s)
	}
}

func TestNotifyAllocatesNothing(t *testing.T) {
	h := newHolder(t, Config{})
	for range 10 {
		h.Hold(Request{Topic: "T", Timeout: time.Hour, Match: func(tc int64) bool { return tc == 1 }, Wake: func() {}})
	}
	if n := testing.AllocsPerRun(100, func() { h.Notify("T", 0, 1, 2) }); n != 0 {
		t.Fatalf("Notify allocates %v times", n)
	}
}

// TestCloseDuringHold: Close runs between Hold's link and its max-offset
// look (here from inside MaxOffset itself); Hold must not touch the
// cleared tables.
func TestCloseDuringHold(t *testing.T) {
	var h *Holder
	h = newHolder(t, Config{MaxOffset: func(string, int32) int64 {
		_ = h.Close()
		return 100
	}})
	w := newWakes()
	if st := h.Hold(req(w, "r", 0)); st != Held {
		t.Fatalf("Hold = %v", st)
	}
	if h.Len() != 0 || w.total() != 0 {
		t.Fatalf("Len %d, %d wakes after Close", h.Len(), w.total())
	}
	if s := h.Stats(); s.Dropped != 1 || s.Arrived != 0 {
		t.Fatalf("stats = %+v", s)
	}
}

func TestConnClosingDuringHold(t *testing.T) {
	h := newHolder(t, Config{})
	w := newWakes()
	c := newFakeConn()
	c.closeAfterChecks.Store(2) // open at the first look, closed after the link
	r := req(w, "r", 0)
	r.Conn = c
	if st := h.Hold(r); st != ConnClosed {
		t.Fatalf("Hold = %v", st)
	}
	if h.Len() != 0 {
		t.Fatalf("Len = %d", h.Len())
	}
	if s := h.Stats(); s.Held != 0 || s.Rejected != 1 {
		t.Fatalf("stats = %+v", s)
	}
}

func TestConfigFromBroker(t *testing.T) {
	b := config.NewBrokerConfig()
	if cfg := ConfigFromBroker(&b); cfg.ShortPolling || cfg.ShortPollingTime != time.Second {
		t.Fatalf("defaults: %+v", cfg)
	}
	b.LongPollingEnable, b.ShortPollingTime = false, 300*time.Millisecond
	if cfg := ConfigFromBroker(&b); !cfg.ShortPolling || cfg.ShortPollingTime != 300*time.Millisecond {
		t.Fatalf("short polling: %+v", cfg)
	}
}

// Waiting counts the held requests of one group on one queue, as Java's
// polling map answers POLLING_INFO, and forgets them once woken.
func TestWaitingByGroup(t *testing.T) {
	h := newHolder(t, Config{})
	w := newWakes()
	for _, r := range []struct {
		name, group string
		queue       int32
	}{{"a1", "A", 0}, {"a2", "A", 0}, {"b1", "B", 0}, {"a3", "A", 1}} {
		x := req(w, r.name, 5)
		x.Group, x.QueueID = r.group, r.queue
		mustHold(t, h, x)
	}
	for _, c := range []struct {
		queue int32
		group string
		want  int
	}{{0, "A", 2}, {0, "B", 1}, {1, "A", 1}, {1, "B", 0}, {2, "A", 0}} {
		if got := h.Waiting("T", c.queue, c.group); got != c.want {
			t.Errorf("Waiting(T, %d, %s) = %d, want %d", c.queue, c.group, got, c.want)
		}
	}
	if got := h.Waiting("U", 0, "A"); got != 0 {
		t.Errorf("Waiting on another topic = %d", got)
	}
	h.Notify("T", 0, 6, 0)
	w.next(t)
	w.next(t)
	w.next(t)
	if got := h.Waiting("T", 0, "A"); got != 0 {
		t.Errorf("Waiting after the wake = %d", got)
	}
	if got := h.Waiting("T", 1, "A"); got != 1 {
		t.Errorf("Waiting on the other queue after the wake = %d", got)
	}
}
