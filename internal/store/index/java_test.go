package index

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/rocketd/rocketd/internal/vfs"
)

// javaFixture is testdata/java-index/20260101000000000, written by Apache
// RocketMQ 5.2.0's IndexFile (testdata/JavaIndexFixture.java): 8 slots,
// 16 items, the keys of javaKeys at offset 1000×i, store time
// 1,700,000,000,000 + 1500×i; the file took the first 15.
const javaFixture = "testdata/java-index/20260101000000000"

var javaKeys = []struct{ topic, key string }{
	{"T", "k0"}, {"T", "k1"}, {"T", "k2"}, {"T", "k0"}, {"T", "键😀"}, {"U", "k0"}, {"T", "k3"}, {"T", "k4"},
	{"T", "k5"}, {"T", "k6"}, {"T", "k7"}, {"T", "k8"}, {"T", "k9"}, {"T", "k0"}, {"T", "k1"}, {"T", "k2"}, {"T", "k3"},
}

func javaTimestamp(i int) int64 { return 1_700_000_000_000 + 1500*int64(i) }

func memWith(t *testing.T, name string, data []byte) *vfs.MemFS {
	t.Helper()
	fs := vfs.NewMem()
	if err := vfs.MkdirAllSync(fs, dir, 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := fs.Create(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(data, 0); err != nil {
		t.Fatal(err)
	}
	_ = f.Close()
	return fs
}

// TestJavaWrittenIndex: rocketd answers lookups from a file Java wrote,
// and continues it into a new file when Java's is full.
func TestJavaWrittenIndex(t *testing.T) {
	data, err := os.ReadFile(javaFixture)
	if err != nil {
		t.Fatal(err)
	}
	x := openTest(t, memWith(t, filepath.Base(javaFixture), data), 8, 16, nil)
	defer x.Close()
	for _, c := range []struct {
		topic, key string
		want       []int64
	}{
		{"T", "k0", []int64{13000, 3000, 0}},
		{"T", "k1", []int64{14000, 1000}},
		{"T", "k2", []int64{2000}}, // its second put did not fit
		{"T", "键😀", []int64{4000}},
		{"U", "k0", []int64{5000}},
		{"T", "k9", []int64{12000}},
		{"T", "absent", nil},
	} {
		if got := query(t, x, c.topic, c.key, 32, 0, 1<<62); !slices.Equal(got, c.want) {
			t.Errorf("%s#%s: %v, want %v", c.topic, c.key, got, c.want)
		}
	}
	// Time range: timeDiff is whole seconds from the header's begin, so
	// item 3 (stored at +4.5 s) reads as +4 s.
	if got := query(t, x, "T", "k0", 32, javaTimestamp(3)-1000, javaTimestamp(3)); !slices.Equal(got, []int64{3000}) {
		t.Errorf("k0 at item 3's second: %v", got)
	}
	r, _ := x.Query("T", "k0", 32, 0, 1<<62)
	if r.LastUpdatePhyOffset != 14000 || r.LastUpdateTimestamp != javaTimestamp(14) {
		t.Errorf("last update %+v", r)
	}
	// Java's file is full: the two keys it refused go to a new file (its
	// begin is its first item's, as in Java).
	for i := 15; i < len(javaKeys); i++ {
		x.Stage(javaKeys[i].topic, props("KEYS", javaKeys[i].key), 0, 1000*int64(i), javaTimestamp(i))
	}
	if err := x.Commit(); err != nil {
		t.Fatal(err)
	}
	files := x.Files()
	if len(files) != 2 || files[1].Header.BeginPhyOffset != 15000 || files[1].Header.EndPhyOffset != 16000 {
		t.Fatalf("files %+v", files)
	}
	if got := query(t, x, "T", "k2", 32, 0, 1<<62); !slices.Equal(got, []int64{15000, 2000}) {
		t.Errorf("k2 across files: %v", got)
	}
}

// TestWritesJavaBytes: the same puts give the same file, byte for byte, as
// Java's IndexFile.
func TestWritesJavaBytes(t *testing.T) {
	want, err := os.ReadFile(javaFixture)
	if err != nil {
		t.Fatal(err)
	}
	fs := vfs.NewMem()
	x := openTest(t, fs, 8, 16, nil)
	for i, k := range javaKeys[:15] {
		x.Stage(k.topic, props("KEYS", k.key), 0, 1000*int64(i), javaTimestamp(i))
	}
	if err := x.Commit(); err != nil {
		t.Fatal(err)
	}
	name := x.Files()[0].Name
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := vfs.ReadFile(fs, filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		for i := range min(len(got), len(want)) {
			if got[i] != want[i] {
				t.Fatalf("differs from Java's file at byte %d (of %d/%d): got %x want %x", i, len(got), len(want), got[i], want[i])
			}
		}
		t.Fatalf("sizes %d, Java %d", len(got), len(want))
	}
}
