package lifecycle

import (
	"context"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// within fails t unless ch is closed within a generous deadline.
func within(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
}

func TestCloseStopsTheLoopAndWaitsForIt(t *testing.T) {
	var l Loop
	started := make(chan struct{})
	var returned atomic.Bool
	if !l.Start("test-loop", func(ctx context.Context) {
		close(started)
		<-ctx.Done()
		returned.Store(true)
	}) {
		t.Fatal("Start on a fresh Loop reported false")
	}
	within(t, started, "the loop to start")
	l.Close()
	if !returned.Load() {
		t.Fatal("Close returned before the loop did")
	}
	within(t, l.Done(), "Done after Close")
}

func TestStartRunsOnce(t *testing.T) {
	var l Loop
	var runs atomic.Int32
	run := func(ctx context.Context) { runs.Add(1); <-ctx.Done() }
	if !l.Start("a", run) {
		t.Fatal("first Start reported false")
	}
	if l.Start("a", run) {
		t.Fatal("second Start reported true")
	}
	l.Close()
	if n := runs.Load(); n != 1 {
		t.Fatalf("run ran %d times, want 1", n)
	}
}

func TestCloseBeforeStartKeepsTheLoopFromStarting(t *testing.T) {
	var l Loop
	l.Close() // returns at once: nothing to wait for
	within(t, l.Done(), "Done of a Loop closed before Start")
	if l.Start("late", func(context.Context) { t.Error("a closed Loop ran its function") }) {
		t.Fatal("Start after Close reported true")
	}
	if l.Started() {
		t.Fatal("Started is true for a Loop that never ran")
	}
	l.Close() // still idempotent
}

func TestConcurrentCloseAllWaitForTheGoroutine(t *testing.T) {
	var l Loop
	release := make(chan struct{})
	var returned atomic.Bool
	l.Start("slow-exit", func(ctx context.Context) {
		<-ctx.Done()
		<-release // the loop finishes its round only when the test says so
		returned.Store(true)
	})
	const closers = 8
	var wg sync.WaitGroup
	closed := make(chan int, closers)
	for i := range closers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l.Close()
			if !returned.Load() {
				t.Errorf("closer %d returned before the loop did", i)
			}
			closed <- i
		}()
	}
	// No closer may get through while the loop is held: each one is
	// blocked in Close, which the race detector and the returned check
	// above verify once it is released.
	select {
	case i := <-closed:
		t.Fatalf("closer %d returned while the loop was still running", i)
	default:
	}
	close(release)
	wg.Wait()
	if len(closed) != closers {
		t.Fatalf("%d closers returned, want %d", len(closed), closers)
	}
}

func TestConcurrentStartAndClose(t *testing.T) {
	for range 200 {
		var l Loop
		var runs atomic.Int32
		var wg sync.WaitGroup
		for range 4 {
			wg.Add(2)
			go func() {
				defer wg.Done()
				l.Start("race", func(ctx context.Context) { runs.Add(1); <-ctx.Done() })
			}()
			go func() { defer wg.Done(); l.Close() }()
		}
		wg.Wait()
		l.Close()
		if n := runs.Load(); n > 1 {
			t.Fatalf("run ran %d times, want at most 1", n)
		}
		within(t, l.Done(), "Done after Close")
	}
}

func TestKicksCoalesceAndWakeTheLoop(t *testing.T) {
	var l Loop
	// Kicks before Start are kept, as one: a hook may fire before the loop
	// runs, and a put path may kick on every record.
	for range 5 {
		l.Kick()
	}
	if n := len(l.Kicked()); n != 1 {
		t.Fatalf("%d pending kicks after 5 kicks, want 1", n)
	}
	woken := make(chan struct{})
	l.Start("kicked", func(ctx context.Context) {
		for {
			select {
			case <-ctx.Done():
				return
			case <-l.Kicked():
				woken <- struct{}{}
			}
		}
	})
	for i := range 3 {
		if i > 0 {
			l.Kick()
		}
		select {
		case <-woken:
		case <-time.After(10 * time.Second):
			t.Fatalf("kick %d did not wake the loop", i)
		}
	}
	l.Close()
}

func TestLoopEndingByItselfClosesDone(t *testing.T) {
	var l Loop
	l.Start("short", func(context.Context) {})
	within(t, l.Done(), "Done of a loop that returned by itself")
	if !l.Started() {
		t.Fatal("Started is false after Start")
	}
	l.Close()
}

func TestLoopCarriesItsPprofLabel(t *testing.T) {
	var l Loop
	got := make(chan string, 1)
	l.Start("labelled", func(ctx context.Context) {
		v, _ := pprof.Label(ctx, "rocketd")
		got <- v
	})
	l.Close()
	if v := <-got; v != "labelled" {
		t.Fatalf("pprof label rocketd=%q, want %q", v, "labelled")
	}
}

func TestCancelReturnsAtOnceAndCloseWaits(t *testing.T) {
	var l Loop
	release := make(chan struct{})
	l.Start("grace", func(ctx context.Context) {
		<-ctx.Done()
		<-release
	})
	l.Cancel() // must not wait: the loop is held until release
	select {
	case <-l.Done():
		t.Fatal("Done closed while the loop is still running")
	default:
	}
	close(release)
	l.Close()
	within(t, l.Done(), "Done after Close")

	var never Loop
	never.Cancel()
	within(t, never.Done(), "Done of a Loop cancelled before Start")
	if never.Start("late", func(context.Context) { t.Error("a cancelled Loop ran its function") }) {
		t.Fatal("Start after Cancel reported true")
	}
}
