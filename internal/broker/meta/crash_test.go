package meta

import (
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/vfs"
)

// crashCase is one table under the crash test: state A is persisted, then
// the change to state B is persisted on a file system that crashes at the
// k-th mutating operation.
type crashCase struct {
	name string
	// open opens the table on fs (nil error expected).
	open func(fs vfs.FS) (any, error)
	// change moves an open table from state A to state B and persists.
	change func(tbl any, step int) error
	// state returns what must survive: comparable with reflect.DeepEqual.
	state func(tbl any) any
}

func crashCases(t *testing.T) []crashCase {
	bc := testBrokerConfig()
	return []crashCase{
		{
			name: "topics",
			open: func(fs vfs.FS) (any, error) { return OpenTopics(memOptions(fs), bc) },
			change: func(tbl any, step int) error {
				return tbl.(*Topics).Put(protocol.TopicConfig{TopicName: fmt.Sprintf("T%d", step), ReadQueueNums: 4, WriteQueueNums: 4, Perm: 6})
			},
			state: func(tbl any) any { return tbl.(*Topics).Snapshot().TopicConfigTable },
		},
		{
			name: "groups",
			open: func(fs vfs.FS) (any, error) { return OpenGroups(memOptions(fs), bc) },
			change: func(tbl any, step int) error {
				return tbl.(*Groups).Put(protocol.NewSubscriptionGroupConfig(fmt.Sprintf("g%d", step)))
			},
			state: func(tbl any) any { return tbl.(*Groups).Snapshot().SubscriptionGroupTable },
		},
		{
			name: "offsets",
			open: func(fs vfs.FS) (any, error) { return OpenOffsets(memOptions(fs)) },
			change: func(tbl any, step int) error {
				o := tbl.(*Offsets)
				o.Commit("g", "T", 0, int64(100*step))
				o.Commit("g", "T", int32(step), int64(step))
				return o.Persist()
			},
			state: func(tbl any) any { return tbl.(*Offsets).Snapshot().OffsetTable },
		},
		{
			name: "delay",
			open: func(fs vfs.FS) (any, error) { return OpenDelayOffsets(memOptions(fs)) },
			change: func(tbl any, step int) error {
				d := tbl.(*DelayOffsets)
				d.Set(int32(step), int64(step))
				return d.Persist()
			},
			state: func(tbl any) any { return tbl.(*DelayOffsets).Snapshot().OffsetTable },
		},
	}
}

// TestCrashDuringPersist crashes at every mutating file operation of a
// persist and checks that the crash image loads as the old or the new
// table, never as nothing and never as an error. Two prior persists make
// sure a .bak exists, so the fallback path is exercised too.
func TestCrashDuringPersist(t *testing.T) {
	for _, cc := range crashCases(t) {
		t.Run(cc.name, func(t *testing.T) {
			for _, torn := range []bool{false, true} {
				for k := int64(0); ; k++ {
					mem := vfs.NewMem()
					tbl, err := cc.open(mem)
					if err != nil {
						t.Fatal(err)
					}
					for step := 1; step <= 2; step++ {
						if err := cc.change(tbl, step); err != nil {
							t.Fatal(err)
						}
					}
					old := cc.state(tbl)

					trig := vfs.CrashAt(vfs.OpMutating, k)
					crashing, err := cc.open(vfs.NewErrorFS(mem, trig))
					if err != nil {
						t.Fatal(err)
					}
					persistErr := cc.change(crashing, 3)
					newState := cc.state(crashing)
					if !trig.Fired() {
						if persistErr != nil {
							t.Fatalf("no crash, but persist failed: %v", persistErr)
						}
						// Finished without reaching k: every point visited.
						// What was acknowledged must be durable.
						reopened, err := cc.open(mem.CrashClone())
						if err != nil || !reflect.DeepEqual(cc.state(reopened), newState) {
							t.Fatalf("acknowledged persist not durable: %v", err)
						}
						if k < 3 {
							t.Fatalf("only %d mutating operations in a persist", k)
						}
						break
					}
					if persistErr == nil {
						t.Fatalf("k=%d: crash not reported by persist", k)
					}
					if !errors.Is(persistErr, vfs.ErrInjected) {
						t.Fatalf("k=%d: error %v does not wrap the injected error", k, persistErr)
					}
					opts := vfs.CrashOptions{}
					if torn {
						opts = vfs.CrashOptions{UnsyncedPagePercent: 50, TornPages: true}
					}
					image := mem.CrashCloneWith(opts)
					reopened, err := cc.open(image)
					if err != nil {
						t.Fatalf("k=%d torn=%v: reopen after crash: %v", k, torn, err)
					}
					got := cc.state(reopened)
					if !reflect.DeepEqual(got, old) && !reflect.DeepEqual(got, newState) {
						t.Fatalf("k=%d torn=%v: state after crash is neither old nor new:\n%v", k, torn, got)
					}
				}
			}
		})
	}
}

// TestLoadFallsBackToBak covers a main file that is empty, torn or
// garbage: the .bak copy is loaded. Without a usable .bak, a file that does
// not decode is an error, not an empty table.
func TestLoadFallsBackToBak(t *testing.T) {
	path := filepath.Join(testDir, ConsumerOffsetFile)
	bak := []byte(`{"offsetTable":{"T@g":{0:5}}}`)
	for name, main := range map[string][]byte{
		"empty":   {},
		"blank":   []byte("\n\t \n"),
		"torn":    []byte(`{"offsetTable":{"T@g":{0:`),
		"garbage": {0, 0, 0, 0},
	} {
		t.Run(name, func(t *testing.T) {
			fs := vfs.NewMem()
			writeRaw(t, fs, path, main)
			writeRaw(t, fs, path+".bak", bak)
			o := openOffsets(t, fs)
			if off, ok := o.Query("g", "T", 0); !ok || off != 5 {
				t.Fatalf("bak not loaded: %v", o.Snapshot())
			}
		})
	}
	t.Run("missing main", func(t *testing.T) {
		fs := vfs.NewMem()
		writeRaw(t, fs, path+".bak", bak)
		if off, _ := openOffsets(t, fs).Query("g", "T", 0); off != 5 {
			t.Fatal("bak not loaded")
		}
	})
	t.Run("corrupt without bak", func(t *testing.T) {
		fs := vfs.NewMem()
		writeRaw(t, fs, path, []byte("{not json"))
		if _, err := OpenOffsets(memOptions(fs)); err == nil {
			t.Fatal("corrupt file loaded as an empty table")
		}
		writeRaw(t, fs, path+".bak", []byte("also bad"))
		if _, err := OpenOffsets(memOptions(fs)); err == nil {
			t.Fatal("corrupt file and bak loaded as an empty table")
		}
	})
	t.Run("empty without bak is fresh", func(t *testing.T) {
		fs := vfs.NewMem()
		writeRaw(t, fs, path, nil)
		if len(openOffsets(t, fs).Snapshot().OffsetTable) != 0 {
			t.Fatal("not empty")
		}
	})
	t.Run("read error", func(t *testing.T) {
		fs := vfs.NewMem()
		writeRaw(t, fs, path, bak)
		efs := vfs.NewErrorFS(fs, vfs.FailFrom(vfs.OpRead, 0))
		if _, err := OpenOffsets(memOptions(efs)); !errors.Is(err, vfs.ErrInjected) {
			t.Fatalf("read error: %v", err)
		}
	})
}

// TestPersistKeepsBak checks the write protocol's files: after two
// persists, <file> holds the new content and <file>.bak the previous one,
// and no .tmp is left.
func TestPersistKeepsBak(t *testing.T) {
	fs := vfs.NewMem()
	o := openOffsets(t, fs)
	o.Commit("g", "T", 0, 1)
	if err := o.Persist(); err != nil {
		t.Fatal(err)
	}
	first := readRaw(t, fs, filepath.Join(testDir, ConsumerOffsetFile))
	o.Commit("g", "T", 0, 2)
	if err := o.Persist(); err != nil {
		t.Fatal(err)
	}
	if got := readRaw(t, fs, filepath.Join(testDir, ConsumerOffsetFile+".bak")); got != first {
		t.Fatalf(".bak %q, want %q", got, first)
	}
	names, err := fs.List(testDir)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(names, []string{ConsumerOffsetFile, ConsumerOffsetFile + ".bak"}) {
		t.Fatalf("config dir holds %v", names)
	}
}
