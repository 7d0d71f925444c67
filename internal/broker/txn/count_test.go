package txn

import (
	"fmt"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/broker/meta"
	"github.com/rocketd/rocketd/internal/protocol"
)

// TestCountLive: the open half messages as the check rounds see them,
// through a rollback, a check that re-appends copies, a commit naming an
// original the walk passed, and a progress set back (as after a crash
// between a re-append and the progress save: originals and copies both
// ahead of it).
func TestCountLive(t *testing.T) {
	e := newEnv(t, nil)
	count := func(want string) {
		t.Helper()
		e.waitDispatched()
		got, err := e.svc.CountLive()
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got) != want {
			t.Fatalf("CountLive %v, want %s", got, want)
		}
	}
	count("map[]")
	u0 := e.putHalf("settled later", "U0")
	e.putHalf("open", "U1")
	u2 := e.putHalf("rolled back", "U2")
	count("map[T:3]")
	if code, _ := e.end(u2.WroteOffset, u2.QueueOffset, protocol.TransactionRollbackType); code != protocol.Success {
		t.Fatal("rollback refused")
	}
	count("map[T:2]")

	e.advance(7 * time.Second)
	e.round() // U0 and U1 re-appended, the progress past the originals
	if c := e.prod.take(); len(c) != 2 {
		t.Fatalf("%d checks, want 2", len(c))
	}
	count("map[T:2]")
	// Committed through its original, below the half progress.
	if code, _ := e.end(u0.WroteOffset, u0.QueueOffset, protocol.TransactionCommitType); code != protocol.Success {
		t.Fatal("commit refused")
	}
	count("map[T:1]")

	e.offsets.Commit(meta.TransCheckGroup, meta.TransHalfTopic, 0, 0)
	e.offsets.Commit(meta.TransCheckGroup, meta.TransOpHalfTopic, 0, 0)
	count("map[T:1]")
}
