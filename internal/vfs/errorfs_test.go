package vfs

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"testing"
)

func TestTriggerModes(t *testing.T) {
	ops := []OpKind{OpWrite, OpRead, OpWrite, OpSync, OpWrite, OpWrite}
	run := func(tr *Trigger) []bool {
		var failed []bool
		for _, k := range ops {
			failed = append(failed, tr.MaybeError(Op{Kind: k, Path: "f"}) != nil)
		}
		return failed
	}
	cases := []struct {
		name  string
		tr    *Trigger
		want  []bool
		count int64
	}{
		{"FailNth write 1", FailNth(OpWrite, 1), []bool{false, false, true, false, false, false}, 4},
		{"FailNth write|sync 2", FailNth(OpWrite|OpSync, 2), []bool{false, false, false, true, false, false}, 5},
		{"FailFrom write 2", FailFrom(OpWrite, 2), []bool{false, false, false, false, true, true}, 4},
		{"CrashAt write 1", CrashAt(OpWrite, 1), []bool{false, false, true, true, true, true}, 2},
		{"never", FailNth(OpWrite, 10), []bool{false, false, false, false, false, false}, 4},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := run(tc.tr)
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Fatalf("failed = %v, want %v", got, tc.want)
			}
			if tc.tr.Count() != tc.count {
				t.Fatalf("Count = %d, want %d", tc.tr.Count(), tc.count)
			}
			anyFailed := false
			for _, f := range got {
				anyFailed = anyFailed || f
			}
			if tc.tr.Fired() != anyFailed {
				t.Fatalf("Fired = %v", tc.tr.Fired())
			}
		})
	}
}

func TestErrorFSInjectsIntoFileOps(t *testing.T) {
	mem := NewMem()
	efs := NewErrorFS(mem, FailNth(OpSync, 0))
	f, err := efs.Create("/f")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("abc"), 0); err != nil {
		t.Fatal(err)
	}
	err = f.Sync()
	if !errors.Is(err, ErrInjected) {
		t.Fatalf("Sync: %v", err)
	}
	if want := "vfs: sync /f: vfs: injected error"; err.Error() != want {
		t.Fatalf("error text %q, want %q", err, want)
	}
	// The failed sync did not reach the inner FS.
	mem.SyncDir("/")
	if got, _ := ReadFile(mem.CrashClone(), "/f"); len(got) != 0 {
		t.Fatalf("failed sync made data durable: %q", got)
	}
	if err := f.Sync(); err != nil { // FailNth fails once
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	for _, k := range []OpKind{OpCreate, OpOpen, OpRemove, OpRename, OpMkdir, OpList, OpStat, OpSyncDir, OpDiskUsage, OpLock} {
		efs := NewErrorFS(mem, FailFrom(k, 0))
		errs := []error{}
		_, err := efs.Create("/g")
		errs = append(errs, err)
		_, err = efs.Open("/f")
		errs = append(errs, err)
		errs = append(errs, efs.Remove("/nope"), efs.Rename("/nope", "/nope2"), efs.MkdirAll("/d", 0o755))
		_, err = efs.List("/")
		errs = append(errs, err)
		_, err = efs.Stat("/f")
		errs = append(errs, err)
		errs = append(errs, efs.SyncDir("/"))
		_, err = efs.DiskUsage("/")
		errs = append(errs, err)
		_, err = efs.Lock("/lock")
		errs = append(errs, err)
		n := 0
		for _, e := range errs {
			if errors.Is(e, ErrInjected) {
				n++
			}
		}
		if n != 1 {
			t.Errorf("kind %v: %d injected errors, want exactly 1: %v", k, n, errs)
		}
	}
}

func TestOpKindString(t *testing.T) {
	if s := (OpWrite | OpSync).String(); s != "write|sync" {
		t.Fatal(s)
	}
	if OpAll&OpClose == 0 || OpAll>>16 != 0 {
		t.Fatalf("OpAll = %b", OpAll)
	}
}

// logWorkload appends n 8-byte records to a file, syncing after each, as a
// tiny write-ahead log would; it returns how many appends were acknowledged
// (their sync returned nil) before the first error.
func logWorkload(fsys FS, dir string, n int) (acked int, err error) {
	if err := MkdirAllSync(fsys, dir, 0o755); err != nil {
		return 0, err
	}
	name := filepath.Join(dir, "log")
	f, err := fsys.Create(name)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	if err := fsys.SyncDir(dir); err != nil {
		return 0, err
	}
	var rec [8]byte
	for i := range n {
		binary.BigEndian.PutUint64(rec[:], uint64(i+1))
		if _, err := f.WriteAt(rec[:], int64(i*8)); err != nil {
			return acked, err
		}
		if err := f.Sync(); err != nil {
			return acked, err
		}
		acked++
	}
	return acked, nil
}

// TestCrashAtEveryWrite is the pattern the store's crash tests follow: crash
// at the k-th mutating operation for k = 0, 1, 2, ... until a run completes,
// and check that everything acknowledged survived on the crash image.
func TestCrashAtEveryWrite(t *testing.T) {
	const records = 5
	runs := 0
	for k := int64(0); ; k++ {
		mem := NewMem()
		trig := CrashAt(OpMutating, k)
		acked, err := logWorkload(NewErrorFS(mem, trig), "/store/wal", records)
		if !trig.Fired() {
			if err != nil || acked != records {
				t.Fatalf("k=%d: clean run failed: %d %v", k, acked, err)
			}
			break
		}
		runs++
		if !errors.Is(err, ErrInjected) {
			t.Fatalf("k=%d: workload error %v, want injected", k, err)
		}
		img := mem.CrashClone()
		data, err := ReadFile(img, "/store/wal/log")
		if errors.Is(err, fs.ErrNotExist) {
			if acked > 0 {
				t.Fatalf("k=%d: %d acknowledged records but the log is gone", k, acked)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(data) < acked*8 {
			t.Fatalf("k=%d: %d acknowledged, %d bytes survived", k, acked, len(data))
		}
		for i := range acked {
			if v := binary.BigEndian.Uint64(data[i*8:]); v != uint64(i+1) {
				t.Fatalf("k=%d: record %d = %d", k, i, v)
			}
		}
	}
	// mkdir + 2 syncdirs (store, wal) + create + syncdir + 5*(write+sync).
	if runs != 15 {
		t.Fatalf("visited %d crash points, want 15", runs)
	}
}
