package lograte

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"
)

func TestLimiterLetsOneLinePerInterval(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	l := Limiter{Every: time.Hour}
	for range 5 {
		l.Log(log, slog.LevelError, "write failed", "err", "ENOSPC")
	}
	if got := strings.Count(buf.String(), "write failed"); got != 1 {
		t.Fatalf("%d lines within one interval, want 1:\n%s", got, buf.String())
	}
	// A new condition starts: its first line goes through and reports the
	// four held back.
	l.Reset()
	buf.Reset()
	l.Log(log, slog.LevelError, "write failed")
	if strings.Contains(buf.String(), "suppressed") || !strings.Contains(buf.String(), "write failed") {
		t.Fatalf("after Reset: %q", buf.String())
	}
}

func TestLimiterCountsHeldBackLines(t *testing.T) {
	l := Limiter{Every: time.Nanosecond}
	if ok, _ := l.Allow(); !ok {
		t.Fatal("first line held back")
	}
	l.last.Store(time.Now().Add(time.Hour).UnixNano()) // the next ones fall inside the interval
	for range 3 {
		if ok, _ := l.Allow(); ok {
			t.Fatal("line let through inside the interval")
		}
	}
	l.last.Store(1) // the interval has passed
	ok, n := l.Allow()
	if !ok || n != 3 {
		t.Fatalf("Allow = %v, %d; want true, 3", ok, n)
	}
}

func TestAllowAtFollowsTheGivenClock(t *testing.T) {
	l := Limiter{Every: time.Second}
	t0 := time.Unix(1000, 0)
	if ok, _ := l.AllowAt(t0); !ok {
		t.Fatal("first line held back")
	}
	if ok, _ := l.AllowAt(t0.Add(999 * time.Millisecond)); ok {
		t.Fatal("line let through inside the interval")
	}
	if ok, n := l.AllowAt(t0.Add(time.Second)); !ok || n != 1 {
		t.Fatalf("AllowAt one interval later = %v, %d; want true, 1", ok, n)
	}
}
