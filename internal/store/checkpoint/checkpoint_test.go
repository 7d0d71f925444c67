package checkpoint

import (
	"bytes"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"

	"github.com/rocketd/rocketd/internal/vfs"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestGoldenLayout(t *testing.T) {
	st := State{PhysicMsgTimestamp: 0x0102030405060708, LogicsMsgTimestamp: 2, IndexMsgTimestamp: 3,
		MasterFlushedOffset: 4, ConfirmPhyOffset: -1}
	page := st.AppendTo(nil)
	if len(page) != Size {
		t.Fatalf("page size %d", len(page))
	}
	want := []byte{1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 3,
		0, 0, 0, 0, 0, 0, 0, 4, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
	if !bytes.Equal(page[:40], want) {
		t.Fatalf("got % x", page[:40])
	}
	if !bytes.Equal(page[40:], make([]byte, Size-40)) {
		t.Fatal("padding not zero")
	}
	got, err := Parse(page)
	if err != nil || got != st {
		t.Fatalf("parse: %+v %v", got, err)
	}
	if _, err := Parse(page[:39]); err == nil {
		t.Fatal("short page parsed")
	}
}

func TestRecoveryTimestamp(t *testing.T) {
	st := State{PhysicMsgTimestamp: 10_000, LogicsMsgTimestamp: 8_000, IndexMsgTimestamp: 5_000}
	if got := st.RecoveryTimestamp(false); got != 5_000 {
		t.Fatalf("got %d", got)
	}
	if got := st.RecoveryTimestamp(true); got != 2_000 {
		t.Fatalf("index safe: got %d", got)
	}
}

func TestOpenMissingFlushReopen(t *testing.T) {
	fs := vfs.NewMem()
	dir := "/store"
	if err := vfs.MkdirAllSync(fs, dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, FileName)
	f, existed, err := Open(fs, path)
	if err != nil || existed {
		t.Fatalf("open missing: existed=%v err=%v", existed, err)
	}
	if f.State() != (State{}) {
		t.Fatal("missing file must load as zeros")
	}
	f.SetPhysicMsgTimestamp(100)
	f.SetLogicsMsgTimestamp(90)
	f.SetIndexMsgTimestamp(80)
	f.SetOffsets(70, 60)
	if err := f.Flush(); err != nil {
		t.Fatal(err)
	}
	// A crash right after Flush keeps the new state.
	crashed := fs.CrashClone()
	g, existed, err := Open(crashed, path)
	if err != nil || !existed {
		t.Fatalf("reopen: %v %v", existed, err)
	}
	want := State{100, 90, 80, 70, 60}
	if g.State() != want {
		t.Fatalf("reopened %+v, want %+v", g.State(), want)
	}
	data, err := vfs.ReadFile(crashed, path)
	if err != nil || len(data) != Size {
		t.Fatalf("file size %d err %v", len(data), err)
	}
}

// TestFlushCrashAtomic crashes at every mutating operation of a Flush and
// checks the file then holds the old or the new state, never anything else.
func TestFlushCrashAtomic(t *testing.T) {
	old := State{1, 2, 3, 4, 5}
	next := State{10, 20, 30, 40, 50}
	for k := int64(0); ; k++ {
		mem := vfs.NewMem()
		if err := vfs.MkdirAllSync(mem, "/s", 0o755); err != nil {
			t.Fatal(err)
		}
		base, _, _ := Open(mem, "/s/checkpoint")
		base.SetPhysicMsgTimestamp(old.PhysicMsgTimestamp)
		base.SetLogicsMsgTimestamp(old.LogicsMsgTimestamp)
		base.SetIndexMsgTimestamp(old.IndexMsgTimestamp)
		base.SetOffsets(old.MasterFlushedOffset, old.ConfirmPhyOffset)
		if err := base.Flush(); err != nil {
			t.Fatal(err)
		}
		trig := vfs.CrashAt(vfs.OpMutating, k)
		f, _, err := Open(vfs.NewErrorFS(mem, trig), "/s/checkpoint")
		if err != nil {
			t.Fatal(err)
		}
		f.SetPhysicMsgTimestamp(next.PhysicMsgTimestamp)
		f.SetLogicsMsgTimestamp(next.LogicsMsgTimestamp)
		f.SetIndexMsgTimestamp(next.IndexMsgTimestamp)
		f.SetOffsets(next.MasterFlushedOffset, next.ConfirmPhyOffset)
		ferr := f.Flush()
		g, _, err := Open(mem.CrashClone(), "/s/checkpoint")
		if err != nil {
			t.Fatalf("k=%d: reopen: %v", k, err)
		}
		if st := g.State(); st != old && st != next {
			t.Fatalf("k=%d: torn checkpoint %+v", k, st)
		}
		if ferr == nil && g.State() != next {
			t.Fatalf("k=%d: Flush succeeded but the new state was lost", k)
		}
		if !trig.Fired() {
			break
		}
	}
}
