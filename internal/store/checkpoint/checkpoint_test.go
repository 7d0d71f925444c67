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
	want := State{100, 90, 80, 70, 60, 0, false}
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
	old := State{1, 2, 3, 4, 5, 0, false}
	next := State{10, 20, 30, 40, 50, 4096, true}
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
		f.SetResumeRecord(next.ResumeRecord)
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

// TestResumeExtension: rocketd's resume record after Java's 40 bytes, and
// the guard that makes a page Java rewrote in place ignore it.
func TestResumeExtension(t *testing.T) {
	st := State{PhysicMsgTimestamp: 1000, LogicsMsgTimestamp: 900, IndexMsgTimestamp: 3, ResumeRecord: 0x0a0b, HasResume: true}
	page := st.AppendTo(nil)
	if len(page) != Size {
		t.Fatalf("page size %d", len(page))
	}
	want := append([]byte("rocketd\x01"), 0, 0, 0, 0, 0, 0, 0x0a, 0x0b, 0, 0, 0, 0, 0, 0, 0x03, 0xe8, 0, 0, 0, 0, 0, 0, 0x03, 0x84)
	if !bytes.Equal(page[40:72], want) {
		t.Fatalf("extension % x", page[40:72])
	}
	if !bytes.Equal(page[72:], make([]byte, Size-72)) {
		t.Fatal("padding not zero")
	}
	if got, err := Parse(page); err != nil || got != st {
		t.Fatalf("parse: %+v %v", got, err)
	}
	// Java advances physicMsgTimestamp in place: the extension is stale.
	java := bytes.Clone(page)
	java[7]++
	if got, _ := Parse(java); got.HasResume {
		t.Fatalf("stale extension trusted: %+v", got)
	}
	java = bytes.Clone(page)
	java[15]++ // logicsMsgTimestamp
	if got, _ := Parse(java); got.HasResume {
		t.Fatalf("stale extension trusted: %+v", got)
	}
	// A page Java wrote from scratch (zeros after 40), or a 40-byte file.
	if got, _ := Parse(State{PhysicMsgTimestamp: 1000, LogicsMsgTimestamp: 900}.AppendTo(nil)); got.HasResume {
		t.Fatal("resume from a page without the extension")
	}
	if got, _ := Parse(page[:40]); got.HasResume {
		t.Fatal("resume from a 40-byte page")
	}
	// Round trip through the file, and clearing.
	fsys := vfs.NewMem()
	f, _, err := Open(fsys, "/checkpoint")
	if err != nil {
		t.Fatal(err)
	}
	f.SetPhysicMsgTimestamp(1000)
	f.SetResumeRecord(4096)
	if err := f.Flush(); err != nil {
		t.Fatal(err)
	}
	f2, _, err := Open(fsys, "/checkpoint")
	if err != nil || !f2.State().HasResume || f2.State().ResumeRecord != 4096 {
		t.Fatalf("reopened: %+v %v", f2.State(), err)
	}
	f2.ClearResumeRecord()
	if err := f2.Flush(); err != nil {
		t.Fatal(err)
	}
	if f3, _, _ := Open(fsys, "/checkpoint"); f3.State().HasResume {
		t.Fatal("cleared resume record came back")
	}
}
