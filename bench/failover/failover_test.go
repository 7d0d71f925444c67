package main

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/rocketd/rocketd/internal/testutil/proc"
)

// The official Go client leaves goroutines behind by design (its timers
// and go-cache's janitor); each is named here, everything else must stop.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		goleak.IgnoreAnyFunction("github.com/patrickmn/go-cache.(*janitor).Run"),
		goleak.IgnoreAnyFunction("github.com/apache/rocketmq-client-go/v2/primitive.WithRecover"),
	)
}

func TestParseFlags(t *testing.T) {
	o, err := parseFlags([]string{"--cycles", "3", "--producers", "2"})
	if err != nil || o.cycles != 3 || o.producers != 2 || o.steady != 3*time.Second {
		t.Fatalf("parsed %+v, %v", o, err)
	}
	for _, bad := range [][]string{{"--cycles", "0"}, {"--producers", "0"}, {"--body", "8"}, {"extra"}} {
		if _, err := parseFlags(bad); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
}

// TestFailoverShort is the short version CI runs: two kill -9 cycles of the
// controller-mode master under load, nothing acknowledged lost.
func TestFailoverShort(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process benchmark")
	}
	bin := proc.Build(t, "github.com/rocketd/rocketd/cmd/rocketd")
	o, err := parseFlags([]string{"--cycles", "2", "--producers", "4", "--steady", "1s", "--bin", bin, "--dir", t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	rep, err := run(ctx, o, os.Stderr)
	if rep != nil {
		t.Log("\n" + rep.markdown())
	}
	if err != nil {
		t.Fatal(err)
	}
	if n := rep.lost(); n > 0 {
		t.Fatalf("%d acknowledged messages lost", n)
	}
	if len(rep.cycles) != 2 || rep.total.acked == 0 || !strings.Contains(rep.markdown(), "median") {
		t.Fatalf("report %+v", rep)
	}
}
