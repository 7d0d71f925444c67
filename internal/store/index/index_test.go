package index

import (
	"encoding/binary"
	"errors"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/vfs"
)

const dir = "/store/index"

// testClock advances one millisecond per call, from a fixed instant.
func testClock() func() time.Time {
	var n atomic.Int64
	base := time.Date(2026, 12, 2, 1, 2, 3, 4e6, time.Local)
	return func() time.Time { return base.Add(time.Duration(n.Add(1)) * time.Millisecond) }
}

func openTest(t *testing.T, fs vfs.FS, slots, items int, mod func(*Options)) *Index {
	t.Helper()
	o := Options{FS: fs, Dir: dir, HashSlotNum: slots, IndexNum: items, LastExitOK: true, Clock: testClock()}
	if mod != nil {
		mod(&o)
	}
	x, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

func props(kv ...string) string {
	m := map[string]string{}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return message.EncodeProperties(m)
}

func query(t *testing.T, x *Index, topic, key string, maxNum int, begin, end int64) []int64 {
	t.Helper()
	r, err := x.Query(topic, key, maxNum, begin, end)
	if err != nil {
		t.Fatal(err)
	}
	return r.Offsets
}

func TestKeyHashMatchesJava(t *testing.T) {
	for _, c := range []struct{ topic, key string }{
		{"T", "k"}, {"TopicTest", "order-1"}, {"主题", "键😀"}, {"", ""}, {"a", "b c"},
	} {
		h := message.JavaHash(c.topic + "#" + c.key)
		want := h
		if h == -2147483648 {
			want = 0
		} else if h < 0 {
			want = -h
		}
		if got := KeyHash(c.topic, c.key); got != want {
			t.Errorf("KeyHash(%q, %q) = %d, want %d", c.topic, c.key, got, want)
		}
	}
	// "polygenelubricants" hashes to Integer.MIN_VALUE in Java.
	if h := message.JavaHash("polygenelubricants"); h != -2147483648 {
		t.Fatalf("fixture: JavaHash = %d", h)
	}
}

func TestStageKeysAndUniqKey(t *testing.T) {
	x := openTest(t, vfs.NewMem(), 64, 100, nil)
	defer x.Close()
	x.Stage("T", props("UNIQ_KEY", "U1", "KEYS", "a  b "), 0, 100, 5000)
	x.Stage("T", props("KEYS", "a"), message.TransactionRollbackType, 200, 6000)
	x.Stage("T", props("KEYS", "a"), message.TransactionPreparedType, 300, 7000)
	x.Stage("T", props("TAGS", "x"), 0, 400, 8000)
	if err := x.Commit(); err != nil {
		t.Fatal(err)
	}
	if got := query(t, x, "T", "a", 32, 0, 1<<62); !slices.Equal(got, []int64{300, 100}) {
		t.Fatalf("key a: %v (rollback not indexed, prepared indexed as Java's buildIndex)", got)
	}
	for _, k := range []string{"U1", "b"} {
		if got := query(t, x, "T", k, 32, 0, 1<<62); !slices.Equal(got, []int64{100}) {
			t.Fatalf("key %s: %v", k, got)
		}
	}
	if got := query(t, x, "T", "", 32, 0, 1<<62); len(got) != 0 {
		t.Fatalf("empty key indexed: %v", got)
	}
	if got := query(t, x, "Other", "a", 32, 0, 1<<62); len(got) != 0 {
		t.Fatalf("other topic: %v", got)
	}
	h := x.Files()[0].Header
	if h.IndexCount != 5 || h.BeginPhyOffset != 100 || h.EndPhyOffset != 300 || h.BeginTimestamp != 5000 || h.EndTimestamp != 7000 {
		t.Fatalf("header %+v", h)
	}
}

// TestLayout checks the bytes against the Java layout: header, slot and
// chained items at their offsets.
func TestLayout(t *testing.T) {
	fs := vfs.NewMem()
	const slots, items = 16, 10
	x := openTest(t, fs, slots, items, nil)
	// Two keys with the same hash chain through prevIndex.
	x.Stage("T", props("KEYS", "k"), 0, 1000, 10_000)
	x.Stage("T", props("KEYS", "k"), 0, 2000, 12_500)
	if err := x.Commit(); err != nil {
		t.Fatal(err)
	}
	name := x.Files()[0].Name
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := vfs.ReadFile(fs, filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(b)) != FileSize(slots, items) || len(b) != 40+16*4+10*20 {
		t.Fatalf("size %d", len(b))
	}
	be := binary.BigEndian
	want := []int64{10_000, 12_500, 1000, 2000}
	for i, w := range want {
		if got := int64(be.Uint64(b[i*8:])); got != w {
			t.Fatalf("header field %d = %d, want %d", i, got, w)
		}
	}
	if hs, ic := be.Uint32(b[32:]), be.Uint32(b[36:]); hs != 1 || ic != 3 {
		t.Fatalf("hashSlotCount %d indexCount %d", hs, ic)
	}
	hash := KeyHash("T", "k")
	slot := 40 + int(hash%slots)*4
	if got := be.Uint32(b[slot:]); got != 2 {
		t.Fatalf("slot = %d, want item 2", got)
	}
	base := 40 + slots*4
	it1, _ := ParseItem(b[base+20:])
	it2, _ := ParseItem(b[base+40:])
	if it1 != (Item{hash, 1000, 0, 0}) || it2 != (Item{hash, 2000, 2, 1}) {
		t.Fatalf("items %+v %+v", it1, it2)
	}
	if !slices.Equal(b[base:base+20], make([]byte, 20)) {
		t.Fatal("item 0 written")
	}
}

func TestRotationTimeRangeAndMaxNum(t *testing.T) {
	fs := vfs.NewMem()
	var sealed []int64
	x := openTest(t, fs, 4, 4, func(o *Options) {
		o.OnSealed = func(ts int64) error { sealed = append(sealed, ts); return nil }
	})
	defer x.Close()
	// 3 items per file (index numbers 1..3): 10 records -> 4 files.
	for i := int64(0); i < 10; i++ {
		x.Stage("T", props("KEYS", "k"), 0, i*100, 1_000_000+i*1000)
	}
	if err := x.Commit(); err != nil {
		t.Fatal(err)
	}
	files := x.Files()
	if len(files) != 4 || !slices.Equal(sealed, []int64{1_002_000, 1_005_000, 1_008_000}) {
		t.Fatalf("%d files, sealed %v", len(files), sealed)
	}
	if h := files[1].Header; h.BeginPhyOffset != 300 || h.EndPhyOffset != 500 {
		t.Fatalf("second file %+v", h)
	}
	all := query(t, x, "T", "k", 64, 0, 1<<62)
	slices.Sort(all)
	if !slices.Equal(all, []int64{0, 100, 200, 300, 400, 500, 600, 700, 800, 900}) {
		t.Fatalf("all: %v", all)
	}
	if got := query(t, x, "T", "k", 2, 0, 1<<62); !slices.Equal(got, []int64{900, 800}) {
		t.Fatalf("maxNum 2: %v", got)
	}
	got := query(t, x, "T", "k", 64, 1_003_000, 1_005_000)
	slices.Sort(got)
	if !slices.Equal(got, []int64{300, 400, 500}) {
		t.Fatalf("time range: %v", got)
	}
	if got := query(t, x, "T", "k", 0, 0, 1<<62); len(got) != 0 {
		t.Fatalf("maxNum 0: %v", got)
	}
	r, _ := x.Query("T", "k", 1, 0, 1<<62)
	if r.LastUpdatePhyOffset != 900 || r.LastUpdateTimestamp != 1_009_000 {
		t.Fatalf("last update %+v", r)
	}
}

func TestReopenCleanAndContinue(t *testing.T) {
	fs := vfs.NewMem()
	x := openTest(t, fs, 8, 100, nil)
	x.Stage("T", props("KEYS", "a b"), 0, 10, 1000)
	if err := x.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	x = openTest(t, fs, 8, 100, nil)
	defer x.Close()
	if got := query(t, x, "T", "b", 32, 0, 1<<62); !slices.Equal(got, []int64{10}) {
		t.Fatalf("after reopen: %v", got)
	}
	// Re-dispatch of what is indexed is skipped; later records continue
	// the chains of the reopened file.
	x.Stage("T", props("KEYS", "a"), 0, 5, 900)
	x.Stage("T", props("KEYS", "a"), 0, 20, 2000)
	if err := x.Commit(); err != nil {
		t.Fatal(err)
	}
	if got := query(t, x, "T", "a", 32, 0, 1<<62); !slices.Equal(got, []int64{20, 10}) {
		t.Fatalf("continued: %v", got)
	}
	if n := len(x.Files()); n != 1 {
		t.Fatalf("%d files", n)
	}
}

func TestAbnormalExitDeletesFilesNewerThanCheckpoint(t *testing.T) {
	fs := vfs.NewMem()
	var sealed int64
	x := openTest(t, fs, 4, 3, func(o *Options) { o.OnSealed = func(ts int64) error { sealed = ts; return nil } })
	for i := int64(0); i < 5; i++ { // 2 per file: files [0,1] [2,3] [4]
		x.Stage("T", props("KEYS", "k"), 0, i*10, 1000*(i+1))
	}
	if err := x.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	if sealed != 4000 {
		t.Fatalf("sealed %d", sealed)
	}
	x = openTest(t, fs, 4, 3, func(o *Options) { o.LastExitOK, o.IndexMsgTimestamp = false, sealed })
	defer x.Close()
	if n := len(x.Files()); n != 2 {
		t.Fatalf("%d files after the crash rule, want 2", n)
	}
	got := query(t, x, "T", "k", 32, 0, 1<<62)
	slices.Sort(got)
	if !slices.Equal(got, []int64{0, 10, 20, 30}) {
		t.Fatalf("after crash: %v", got)
	}
	// Re-dispatch from the recovery start indexes the lost record again.
	x.Stage("T", props("KEYS", "k"), 0, 30, 4000)
	x.Stage("T", props("KEYS", "k"), 0, 40, 5000)
	if err := x.Commit(); err != nil {
		t.Fatal(err)
	}
	if got := query(t, x, "T", "k", 1, 0, 1<<62); !slices.Equal(got, []int64{40}) {
		t.Fatalf("re-dispatched: %v", got)
	}
}

func TestRefusesFileOfOtherSize(t *testing.T) {
	fs := vfs.NewMem()
	x := openTest(t, fs, 8, 10, nil)
	x.Stage("T", props("KEYS", "a"), 0, 1, 1)
	if err := x.Commit(); err != nil {
		t.Fatal(err)
	}
	_ = x.Close()
	if _, err := Open(Options{FS: fs, Dir: dir, HashSlotNum: 16, IndexNum: 10, LastExitOK: true}); err == nil {
		t.Fatal("opened a file of another size")
	}
}

func TestDeleteBelow(t *testing.T) {
	fs := vfs.NewMem()
	x := openTest(t, fs, 4, 3, nil)
	defer x.Close()
	for i := int64(0); i < 6; i++ { // files [0,10] [20,30] [40,50]
		x.Stage("T", props("KEYS", "k"), 0, i*10, 1000*(i+1))
	}
	if err := x.Commit(); err != nil {
		t.Fatal(err)
	}
	if n, err := x.DeleteBelow(10); n != 0 || err != nil {
		t.Fatalf("deleted %d %v", n, err)
	}
	if n, err := x.DeleteBelow(1000); n != 2 || err != nil {
		t.Fatalf("deleted %d %v", n, err)
	}
	names, _ := fs.List(dir)
	if len(names) != 1 || len(x.Files()) != 1 {
		t.Fatalf("left %v", names)
	}
	if got := query(t, x, "T", "k", 32, 0, 1<<62); !slices.Equal(got, []int64{50, 40}) {
		t.Fatalf("after delete: %v", got)
	}
}

// TestItemsWrittenInBatches: Commits of a few records (a closed loop of
// producers dispatches a handful at a time) write no item until
// itemWriteBatch bytes gathered; the items are found meanwhile, the batch
// goes out in one write, and Close writes the rest.
func TestItemsWrittenInBatches(t *testing.T) {
	var writes atomic.Int64
	mem := vfs.NewMem()
	fs := vfs.NewErrorFS(mem, vfs.InjectorFunc(func(op vfs.Op) error {
		if op.Kind&vfs.OpWrite != 0 {
			writes.Add(1)
		}
		return nil
	}))
	x := openTest(t, fs, 64, 1<<20, nil)
	x.Stage("T", props("KEYS", "k0"), 0, 0, 1000)
	if err := x.Commit(); err != nil { // makes the file
		t.Fatal(err)
	}
	perBatch := itemWriteBatch / ItemSize
	base := writes.Load()
	var off int64
	for i := 1; i < perBatch; i += 4 {
		for j := range 4 {
			off += 100
			x.Stage("T", props("KEYS", "k"+strconv.Itoa(i+j)), 0, off, 1000)
		}
		if err := x.Commit(); err != nil {
			t.Fatal(err)
		}
		if got := writes.Load() - base; i+4 <= perBatch && got != 0 {
			t.Fatalf("%d items committed: %d writes, want none before %d bytes", i+3, got, itemWriteBatch)
		}
	}
	if got := writes.Load() - base; got != 1 {
		t.Fatalf("%d writes for %d items, want 1", got, perBatch+2)
	}
	if got := query(t, x, "T", "k5", 32, 0, 1<<62); !slices.Equal(got, []int64{500}) {
		t.Fatalf("k5: %v", got)
	}
	x.Stage("T", props("KEYS", "last"), 0, off+100, 1000)
	if err := x.Commit(); err != nil {
		t.Fatal(err)
	}
	if got := query(t, x, "T", "last", 32, 0, 1<<62); !slices.Equal(got, []int64{off + 100}) {
		t.Fatalf("unwritten item: %v", got)
	}
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	x = openTest(t, mem, 64, 1<<20, nil)
	defer x.Close()
	if got := query(t, x, "T", "last", 32, 0, 1<<62); !slices.Equal(got, []int64{off + 100}) {
		t.Fatalf("after Close and Open: %v", got)
	}
}

func TestWriteFailureKeepsKeysStaged(t *testing.T) {
	var fail atomic.Bool
	fs := vfs.NewErrorFS(vfs.NewMem(), vfs.InjectorFunc(func(op vfs.Op) error {
		if fail.Load() && op.Kind&(vfs.OpWrite|vfs.OpCreate) != 0 {
			return errors.New("EIO")
		}
		return nil
	}))
	x := openTest(t, fs, 4, 3, nil)
	defer x.Close()
	fail.Store(true)
	x.Stage("T", props("KEYS", "k"), 0, 0, 1000)
	if err := x.Commit(); err == nil {
		t.Fatal("commit without a file succeeded")
	}
	fail.Store(false)
	if err := x.Commit(); err != nil {
		t.Fatal(err)
	}
	fail.Store(true)
	x.Stage("T", props("KEYS", "k"), 0, 10, 2000)
	if err := x.Commit(); err == nil {
		t.Fatal("item write failure not reported")
	}
	// Indexed in memory, readable, and written by the retry.
	if got := query(t, x, "T", "k", 32, 0, 1<<62); !slices.Equal(got, []int64{10, 0}) {
		t.Fatalf("pending: %v", got)
	}
	fail.Store(false)
	if err := x.Commit(); err != nil {
		t.Fatal(err)
	}
	if got := query(t, x, "T", "k", 32, 0, 1<<62); !slices.Equal(got, []int64{10, 0}) {
		t.Fatalf("after retry: %v", got)
	}
}

func TestFileName(t *testing.T) {
	got := FileName(time.Date(2026, 1, 2, 3, 4, 5, 678e6, time.Local))
	if got != "20260102030405678" || !validName(got) {
		t.Fatal(got)
	}
}

// TestKilledWhileCreatingAFile: a process killed at any step of opening
// the index and making its first file (kill -9 keeps everything the file
// system was told, synced or not: the MemFS itself, not a crash clone)
// leaves a directory the next Open accepts. A file created under its
// index name and killed before it was sized made Open refuse the store
// (CI caught it in TestRecallSurvivesKill).
func TestKilledWhileCreatingAFile(t *testing.T) {
	for k := int64(0); ; k++ {
		mem := vfs.NewMem()
		efs := vfs.NewErrorFS(mem, vfs.CrashAt(vfs.OpMutating, k))
		crashed := true
		if x, err := Open(Options{FS: efs, Dir: dir, HashSlotNum: 8, IndexNum: 10, LastExitOK: true, Clock: testClock()}); err == nil {
			x.Stage("T", props("KEYS", "a"), 0, 1, 1)
			crashed = x.Commit() != nil
			_ = x.Close()
		}
		x, err := Open(Options{FS: mem, Dir: dir, HashSlotNum: 8, IndexNum: 10, Clock: testClock()})
		if err != nil {
			t.Fatalf("killed at mutating operation %d: reopen: %v", k, err)
		}
		names, _ := mem.List(dir)
		for _, name := range names {
			if strings.HasSuffix(name, tmpSuffix) {
				t.Fatalf("killed at mutating operation %d: %s left after Open", k, name)
			}
		}
		_ = x.Close()
		if !crashed {
			return
		}
	}
}

// TestEmptyFileOfAnIndexName: a zero-length file under an index name (an
// older rocketd killed between creating and sizing it) holds nothing and
// is removed at Open; a file of another non-zero size is still refused
// (TestRefusesFileOfOtherSize).
func TestEmptyFileOfAnIndexName(t *testing.T) {
	fs := vfs.NewMem()
	if err := fs.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := fs.Create(dir + "/20261202154747413")
	if err != nil {
		t.Fatal(err)
	}
	_ = f.Close()
	x := openTest(t, fs, 8, 10, func(o *Options) { o.LastExitOK = false })
	defer x.Close()
	if n := len(x.Files()); n != 0 {
		t.Fatalf("%d files after Open", n)
	}
	if names, _ := fs.List(dir); len(names) != 0 {
		t.Fatalf("left: %v", names)
	}
}
