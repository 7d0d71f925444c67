package store

import (
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/rocketd/rocketd/internal/vfs"
)

const epochPath = "/s/" + EpochFile

func openEpochs(t *testing.T, fsys vfs.FS, path ...string) *Epochs {
	t.Helper()
	p := epochPath
	if len(path) > 0 {
		p = path[0]
	}
	e, err := OpenEpochs(fsys, p)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func readFile(t *testing.T, fsys vfs.FS, name string) string {
	t.Helper()
	b, err := vfs.ReadFile(fsys, name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestEpochFileFormat: the file is Java's CheckpointFile of
// "epoch-startOffset" lines (the example of its javadoc, CRC included),
// the previous version is kept as .bak, and reopening links the ends.
func TestEpochFileFormat(t *testing.T) {
	mem := vfs.NewMem()
	if err := mem.MkdirAll("/s", 0o755); err != nil {
		t.Fatal(err)
	}
	e := openEpochs(t, mem)
	if e.LastEpoch() != -1 || len(e.Entries()) != 0 {
		t.Fatalf("new file: last epoch %d, entries %v", e.LastEpoch(), e.Entries())
	}
	for _, x := range [][2]int64{{7, 7000}, {8, 8000}} {
		if err := e.Append(int32(x[0]), x[1]); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := readFile(t, mem, epochPath), "2\n773307083\n7-7000\n8-8000\n"; got != want {
		t.Fatalf("file %q, want %q (CheckpointFile's javadoc example)", got, want)
	}
	if got := readFile(t, mem, epochPath+".bak"); got != string(formatEpochFile([]EpochEntry{{Epoch: 7, StartOffset: 7000}})) {
		t.Fatalf(".bak %q: want the previous version", got)
	}
	want := []EpochEntry{{7, 7000, 8000}, {8, 8000, math.MaxInt64}}
	if got := openEpochs(t, mem).Entries(); !slices.Equal(got, want) {
		t.Fatalf("reopened: %v, want %v", got, want)
	}
	// A file written by Java with CRC 0 (unchecked) reads too.
	if err := vfs.WriteFileAtomic(mem, epochPath, []byte("1\n0\n3-42\n")); err != nil {
		t.Fatal(err)
	}
	if got := openEpochs(t, mem).Entries(); !slices.Equal(got, []EpochEntry{{3, 42, math.MaxInt64}}) {
		t.Fatalf("crc 0: %v", got)
	}
}

// TestEpochFileFallsBackToBak: a damaged file (bad CRC, wrong count,
// garbage) is read from its .bak, as Java's CheckpointFile.read does;
// both damaged fails the open.
func TestEpochFileFallsBackToBak(t *testing.T) {
	for _, bad := range []string{"2\n773307084\n7-7000\n8-8000\n", "3\n773307083\n7-7000\n8-8000\n", "x\n", ""} {
		mem := vfs.NewMem()
		_ = mem.MkdirAll("/s", 0o755)
		if err := vfs.WriteFileAtomic(mem, epochPath+".bak", formatEpochFile([]EpochEntry{{Epoch: 7, StartOffset: 7000}})); err != nil {
			t.Fatal(err)
		}
		if err := vfs.WriteFileAtomic(mem, epochPath, []byte(bad)); err != nil {
			t.Fatal(err)
		}
		if got := openEpochs(t, mem).Entries(); !slices.Equal(got, []EpochEntry{{7, 7000, math.MaxInt64}}) {
			t.Fatalf("file %q: %v, want the .bak's entry", bad, got)
		}
		if err := vfs.WriteFileAtomic(mem, epochPath+".bak", []byte("1\n5\n7-7000\n")); err != nil {
			t.Fatal(err)
		}
		if _, err := OpenEpochs(mem, epochPath); err == nil && bad != "" {
			t.Fatalf("file %q and a damaged .bak opened", bad)
		}
	}
}

// TestEpochAppendOrder: an entry must follow the last one; an epoch that
// wrote nothing is replaced by the next one at the same offset.
func TestEpochAppendOrder(t *testing.T) {
	mem := vfs.NewMem()
	_ = mem.MkdirAll("/s", 0o755)
	e := openEpochs(t, mem)
	if err := e.Append(2, 100); err != nil {
		t.Fatal(err)
	}
	for _, bad := range [][2]int64{{2, 200}, {1, 200}, {3, 99}} {
		if err := e.Append(int32(bad[0]), bad[1]); !errors.Is(err, ErrEpochOrder) {
			t.Fatalf("append %v: %v, want ErrEpochOrder", bad, err)
		}
	}
	if err := e.Append(3, 100); err != nil {
		t.Fatal(err)
	}
	if got := openEpochs(t, mem).Entries(); !slices.Equal(got, []EpochEntry{{3, 100, math.MaxInt64}}) {
		t.Fatalf("entries %v: want epoch 2 (empty) replaced by 3", got)
	}
}

// TestEpochTruncate: suffix by offset (a log cut), suffix by epoch and
// prefix by offset (deleted segments); removing every entry removes the
// file and its .bak.
func TestEpochTruncate(t *testing.T) {
	mem := vfs.NewMem()
	_ = mem.MkdirAll("/s", 0o755)
	e := openEpochs(t, mem)
	for i, start := range []int64{0, 1000, 2000, 3000} {
		if err := e.Append(int32(i+1), start); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.TruncateSuffixByOffset(2500); err != nil {
		t.Fatal(err)
	}
	want := []EpochEntry{{1, 0, 1000}, {2, 1000, 2000}, {3, 2000, math.MaxInt64}}
	if got := openEpochs(t, mem).Entries(); !slices.Equal(got, want) {
		t.Fatalf("suffix by offset 2500: %v, want %v", got, want)
	}
	if err := e.TruncateSuffixByEpoch(3); err != nil {
		t.Fatal(err)
	}
	if err := e.TruncatePrefixByOffset(1000); err != nil {
		t.Fatal(err)
	}
	if got := openEpochs(t, mem).Entries(); !slices.Equal(got, []EpochEntry{{2, 1000, math.MaxInt64}}) {
		t.Fatalf("after suffix by epoch 3 and prefix by 1000: %v", got)
	}
	if err := e.TruncateSuffixByOffset(0); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{epochPath, epochPath + ".bak"} {
		if _, err := mem.Stat(p); err == nil {
			t.Fatalf("%s left after every entry was removed", p)
		}
	}
	if got := openEpochs(t, mem).Entries(); len(got) != 0 {
		t.Fatalf("reopened empty: %v", got)
	}
}

// TestConsistentPoint follows Java's EpochFileCache.findConsistentPoint:
// the newest epoch both hold from the same offset ends at the smaller
// end; an epoch both hold from different offsets does not count.
func TestConsistentPoint(t *testing.T) {
	open := int64(math.MaxInt64)
	for _, tc := range []struct {
		name         string
		local, other []EpochEntry
		want         int64
	}{
		{"same history, local behind", []EpochEntry{{1, 0, 100}, {2, 100, open}}, []EpochEntry{{1, 0, 100}, {2, 100, open}}, open},
		{"diverged after epoch 2",
			[]EpochEntry{{1, 0, 100}, {2, 100, 300}, {3, 300, open}},
			[]EpochEntry{{1, 0, 100}, {2, 100, 250}, {4, 250, open}}, 250},
		{"epoch 2 from other offsets: epoch 1 decides",
			[]EpochEntry{{1, 0, 100}, {2, 100, open}},
			[]EpochEntry{{1, 0, 120}, {2, 120, open}}, 100},
		{"only epoch from other offsets",
			[]EpochEntry{{2, 100, open}},
			[]EpochEntry{{2, 120, open}}, -1},
		{"nothing shared", []EpochEntry{{5, 0, open}}, []EpochEntry{{6, 0, open}}, -1},
		{"empty", nil, []EpochEntry{{1, 0, open}}, -1},
	} {
		if got := ConsistentPoint(tc.local, tc.other); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
	}
}

// TestEpochFileCrashAtEveryWrite crashes the file system at every
// mutating operation of a sequence of appends and truncations: the
// reopened file always holds the entries before or after the operation
// in progress, never anything else.
func TestEpochFileCrashAtEveryWrite(t *testing.T) {
	type op struct {
		run  func(*Epochs) error
		want []EpochEntry // entries after it
	}
	open := int64(math.MaxInt64)
	ops := []op{
		{func(e *Epochs) error { return e.Append(1, 0) }, []EpochEntry{{1, 0, open}}},
		{func(e *Epochs) error { return e.Append(2, 500) }, []EpochEntry{{1, 0, 500}, {2, 500, open}}},
		{func(e *Epochs) error { return e.Append(3, 900) }, []EpochEntry{{1, 0, 500}, {2, 500, 900}, {3, 900, open}}},
		{func(e *Epochs) error { return e.TruncateSuffixByOffset(700) }, []EpochEntry{{1, 0, 500}, {2, 500, open}}},
		{func(e *Epochs) error { return e.Append(4, 700) }, []EpochEntry{{1, 0, 500}, {2, 500, 700}, {4, 700, open}}},
		{func(e *Epochs) error { return e.TruncateSuffixByOffset(0) }, nil},
		{func(e *Epochs) error { return e.Append(5, 1000) }, []EpochEntry{{5, 1000, open}}},
	}
	k := int64(0)
	for ; ; k++ {
		mem := vfs.NewMem()
		_ = mem.MkdirAll("/s", 0o755)
		if err := mem.SyncDir("/"); err != nil {
			t.Fatal(err)
		}
		trig := vfs.CrashAt(vfs.OpMutating, k)
		efs := vfs.NewErrorFS(mem, trig)
		var before, after []EpochEntry
		if e, err := OpenEpochs(efs, epochPath); err == nil {
			for _, o := range ops {
				after = o.want
				if err := o.run(e); err != nil {
					break
				}
				before = o.want
			}
		}
		got, err := OpenEpochs(mem.CrashClone(), epochPath)
		if err != nil {
			t.Fatalf("k=%d: reopen after crash: %v", k, err)
		}
		if g := got.Entries(); !slices.Equal(g, before) && !slices.Equal(g, after) {
			t.Fatalf("k=%d: %v after the crash, want %v or %v", k, g, before, after)
		}
		if !trig.Fired() {
			break
		}
	}
	if k < 10 {
		t.Fatalf("only %d crash points", k)
	}
}

// javaLib is where .ci/run keeps the Apache RocketMQ 5.2.0 jars; the test
// fails under CI=true when they or java are missing.
func javaLib(t *testing.T) string {
	t.Helper()
	if cache, err := os.UserCacheDir(); err == nil {
		dir := filepath.Join(cache, "rocketd-bench", "rocketmq-5.2.0")
		if jars, _ := filepath.Glob(filepath.Join(dir, "rocketmq-store-*.jar")); len(jars) > 0 {
			if _, err := exec.LookPath("java"); err == nil {
				return dir
			}
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("java and the RocketMQ 5.2.0 jars (~/.cache/rocketd-bench/rocketmq-5.2.0) are required")
	}
	t.Skip("java or the RocketMQ 5.2.0 jars are missing")
	return ""
}

// runEpochFileCheck runs testdata/EpochFileCheck.java (Java's
// EpochFileCache) and returns its output.
func runEpochFileCheck(t *testing.T, lib string, args ...string) string {
	t.Helper()
	cmd := exec.Command("java", append([]string{"-cp", filepath.Join(lib, "*"), filepath.Join("testdata", "EpochFileCheck.java")}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("EpochFileCheck %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// TestEpochFileJava: Apache RocketMQ's EpochFileCache and Epochs write
// the same bytes (file and .bak) for the same entries, and each reads the
// other's file.
func TestEpochFileJava(t *testing.T) {
	if testing.Short() {
		t.Skip("two JVM runs")
	}
	lib := javaLib(t)
	dir := t.TempDir()
	jdir, gdir := filepath.Join(dir, "java"), filepath.Join(dir, "go")
	for _, d := range []string{jdir, gdir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	runEpochFileCheck(t, lib, "write", filepath.Join(jdir, EpochFile), "7-7000", "8-8000", "9-9500")
	e, err := OpenEpochs(vfs.Default, filepath.Join(gdir, EpochFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range [][2]int64{{7, 7000}, {8, 8000}, {9, 9500}} {
		if err := e.Append(int32(x[0]), x[1]); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{EpochFile, EpochFile + ".bak"} {
		j, err1 := os.ReadFile(filepath.Join(jdir, name))
		g, err2 := os.ReadFile(filepath.Join(gdir, name))
		if err1 != nil || err2 != nil || string(j) != string(g) {
			t.Fatalf("%s: Java wrote %q (%v), rocketd %q (%v)", name, j, err1, g, err2)
		}
	}
	want := []EpochEntry{{7, 7000, 8000}, {8, 8000, 9500}, {9, 9500, math.MaxInt64}}
	if got := openEpochs(t, vfs.Default, filepath.Join(jdir, EpochFile)); !slices.Equal(got.Entries(), want) {
		t.Fatalf("rocketd reads Java's file as %v, want %v", got.Entries(), want)
	}
	if got := runEpochFileCheck(t, lib, "read", filepath.Join(gdir, EpochFile)); got != "7-7000-8000\n8-8000-9500\n9-9500-9223372036854775807\n" {
		t.Fatalf("Java reads rocketd's file as %q", got)
	}
}
