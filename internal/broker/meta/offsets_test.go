package meta

import (
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/testutil/wait"
	"github.com/rocketd/rocketd/internal/vfs"
)

func openOffsets(t *testing.T, fs vfs.FS) *Offsets {
	t.Helper()
	o, err := OpenOffsets(memOptions(fs))
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func TestOffsetsCommitQuery(t *testing.T) {
	o := openOffsets(t, vfs.NewMem())
	if _, ok := o.Query("g1", "T", 0); ok {
		t.Fatal("empty table found an offset")
	}
	o.Commit("g1", "T", 0, 10)
	o.Commit("g1", "T", 1, 20)
	o.Commit("g1", "T", 0, 5) // a reset to a lower offset is kept
	o.Commit("g2", "T", 0, 7)
	o.Commit("g1", "U", 3, 1)
	if off, ok := o.Query("g1", "T", 0); !ok || off != 5 {
		t.Fatalf("query %d %v", off, ok)
	}
	if _, ok := o.Query("g1", "T", 2); ok {
		t.Fatal("unknown queue found")
	}
	if got := o.QueryAll("g1", "T"); !reflect.DeepEqual(got, map[int32]int64{0: 5, 1: 20}) {
		t.Fatalf("QueryAll %v", got)
	}
	if got := o.GroupsOfTopic("T"); !reflect.DeepEqual(got, []string{"g1", "g2"}) {
		t.Fatalf("GroupsOfTopic %v", got)
	}
	if got := o.TopicsOfGroup("g1"); !reflect.DeepEqual(got, []string{"T", "U"}) {
		t.Fatalf("TopicsOfGroup %v", got)
	}
	if got := o.Groups(); !reflect.DeepEqual(got, []string{"g1", "g2"}) {
		t.Fatalf("Groups %v", got)
	}
	if !o.Clone("g1", "g3", "T") || o.Clone("nobody", "g4", "T") {
		t.Fatal("Clone result")
	}
	o.Commit("g1", "T", 0, 99) // the clone is a copy
	if got := o.QueryAll("g3", "T"); !reflect.DeepEqual(got, map[int32]int64{0: 5, 1: 20}) {
		t.Fatalf("clone %v", got)
	}
	snap := o.Snapshot()
	wantKeys := []string{"T@g1", "T@g2", "T@g3", "U@g1"}
	var keys []string
	for k := range snap.OffsetTable {
		keys = append(keys, k)
	}
	if len(keys) != 4 {
		t.Fatalf("snapshot keys %v, want %v", keys, wantKeys)
	}
	for _, k := range wantKeys {
		if _, ok := snap.OffsetTable[k]; !ok {
			t.Fatalf("snapshot lacks %s: %v", k, keys)
		}
	}
	if o.DeleteTopic("T") != 3 || o.DeleteGroup("g1") != 1 || o.Delete("g2", "T") {
		t.Fatal("delete counts")
	}
	if len(o.Snapshot().OffsetTable) != 0 {
		t.Fatalf("left %v", o.Snapshot())
	}
}

func TestLoadJavaOffsets(t *testing.T) {
	fs := vfs.NewMem()
	installFixture(t, fs, "java-consumerOffset.json", ConsumerOffsetFile)
	o := openOffsets(t, fs)
	g := "please_rename_unique_group_name_4"
	if got := o.QueryAll(g, "TopicTest"); !reflect.DeepEqual(got, map[int32]int64{0: 250, 1: 249, 2: 251, 3: 250}) {
		t.Fatalf("TopicTest %v", got)
	}
	if off, ok := o.Query(g, "%RETRY%"+g, 0); !ok || off != 0 {
		t.Fatal("retry offset")
	}
	if off, _ := o.Query(TransCheckGroup, TransHalfTopic, 0); off != 12 {
		t.Fatal("trans offset")
	}
	// Rewrite and compare with the Java text: same entries, same layout.
	if err := o.Persist(); err != nil {
		t.Fatal(err)
	}
	text := readRaw(t, fs, filepath.Join(testDir, ConsumerOffsetFile))
	for _, line := range []string{
		"\t\t\"TopicTest@please_rename_unique_group_name_4\":{0:250,1:249,2:251,3:250\n\t\t}",
		"\t\t\"RMQ_SYS_TRANS_HALF_TOPIC@CID_RMQ_SYS_TRANS\":{0:12\n\t\t}",
	} {
		if !strings.Contains(text, line) {
			t.Fatalf("consumerOffset.json lacks %q:\n%s", line, text)
		}
	}
	o2 := openOffsets(t, fs)
	if !reflect.DeepEqual(o.Snapshot(), o2.Snapshot()) {
		t.Fatal("round trip changed the table")
	}
}

func TestLoadOffsetsVariants(t *testing.T) {
	cases := map[string]map[string]map[int32]int64{
		// compact fastjson
		`{"offsetTable":{"T@g":{0:1,1:2}}}`: {"T@g": {0: 1, 1: 2}},
		// standard JSON with quoted keys, plus 5.x properties
		`{"dataVersion":{"counter":1,"timestamp":2},"groupTopicMap":{"g":["T"]},"offsetTable":{"T@g":{"0":3}}}`: {"T@g": {0: 3}},
		// an entry without '@' is dropped; a null inner map is empty
		`{"offsetTable":{"broken":{0:1},"T@g":null}}`: {"T@g": {}},
		`{}`: {},
	}
	for text, want := range cases {
		fs := vfs.NewMem()
		writeRaw(t, fs, filepath.Join(testDir, ConsumerOffsetFile), []byte(text))
		o := openOffsets(t, fs)
		if got := o.Snapshot().OffsetTable; !reflect.DeepEqual(got, want) {
			t.Errorf("%s: got %v want %v", text, got, want)
		}
	}
}

func TestOffsetsPersistOnlyWhenChanged(t *testing.T) {
	fs := vfs.NewMem()
	counter := &countingInjector{}
	efs := vfs.NewErrorFS(fs, counter)
	o := openOffsets(t, efs)
	if err := o.Persist(); err != nil { // the first persist always writes
		t.Fatal(err)
	}
	if text := readRaw(t, fs, filepath.Join(testDir, ConsumerOffsetFile)); text != "{\n\t\"offsetTable\":{}\n}" {
		t.Fatalf("empty table written as %q", text)
	}
	writes := counter.renames()
	if err := o.Persist(); err != nil || counter.renames() != writes {
		t.Fatalf("unchanged table rewritten (%v)", err)
	}
	o.Commit("g", "T", 0, 1)
	if err := o.Persist(); err != nil || counter.renames() != writes+1 {
		t.Fatalf("changed table not written (%v)", err)
	}
}

// countingInjector counts renames (one per completed persist) and fails
// nothing.
type countingInjector struct {
	mu sync.Mutex
	n  int
}

func (c *countingInjector) MaybeError(op vfs.Op) error {
	if op.Kind == vfs.OpRename {
		c.mu.Lock()
		c.n++
		c.mu.Unlock()
	}
	return nil
}

func (c *countingInjector) renames() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

func TestOffsetsAutoPersist(t *testing.T) {
	fs := vfs.NewMem()
	o := openOffsets(t, fs)
	if err := o.StartAutoPersist(5 * time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if err := o.StartAutoPersist(5 * time.Millisecond); err == nil {
		t.Fatal("second StartAutoPersist accepted")
	}
	o.Commit("g", "T", 0, 42)
	path := filepath.Join(testDir, ConsumerOffsetFile)
	wait.For(t, 10*time.Second, "offset 42 persisted", func() bool {
		data, err := vfs.ReadFile(fs, path)
		return err == nil && strings.Contains(string(data), "{0:42")
	})
	o.Commit("g", "T", 0, 43)
	if err := o.Close(); err != nil { // final persist
		t.Fatal(err)
	}
	if !strings.Contains(readRaw(t, fs, path), "{0:43") {
		t.Fatal("Close did not persist")
	}
	if err := o.Close(); err != nil {
		t.Fatal("second Close:", err)
	}
	if err := o.StartAutoPersist(time.Millisecond); err == nil {
		t.Fatal("StartAutoPersist after Close accepted")
	}
	if err := openOffsets(t, fs).StartAutoPersist(0); err == nil {
		t.Fatal("zero interval accepted")
	}
}

func TestOffsetsConcurrent(t *testing.T) {
	fs := vfs.NewMem()
	o := openOffsets(t, fs)
	if err := o.StartAutoPersist(time.Millisecond); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 500 {
				o.Commit("g", "T", int32(w), int64(i))
				o.Query("g", "T", int32(w))
				if i%100 == 0 {
					_ = o.Snapshot()
					_ = o.GroupsOfTopic("T")
				}
			}
		}()
	}
	wg.Wait()
	if err := o.Close(); err != nil {
		t.Fatal(err)
	}
	o2 := openOffsets(t, fs)
	if got := o2.QueryAll("g", "T"); !reflect.DeepEqual(got, map[int32]int64{0: 499, 1: 499, 2: 499, 3: 499}) {
		t.Fatalf("after close %v", got)
	}
}

func TestDelayOffsets(t *testing.T) {
	fs := vfs.NewMem()
	installFixture(t, fs, "java-delayOffset.json", DelayOffsetFile)
	d, err := OpenDelayOffsets(memOptions(fs))
	if err != nil {
		t.Fatal(err)
	}
	if got := d.Snapshot(); !reflect.DeepEqual(got, protocol.DelayOffsetTable{OffsetTable: map[int32]int64{1: 0, 2: 15, 3: 7, 18: 1024}}) {
		t.Fatalf("loaded %+v", got)
	}
	d.Set(2, 16)
	if off, ok := d.Get(2); !ok || off != 16 {
		t.Fatal("Get after Set")
	}
	if _, ok := d.Get(5); ok {
		t.Fatal("unknown level found")
	}
	if err := d.StartAutoPersist(time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	text := readRaw(t, fs, filepath.Join(testDir, DelayOffsetFile))
	if text != "{\n\t\"offsetTable\":{1:0,2:16,3:7,18:1024\n\t}\n}" {
		t.Fatalf("delayOffset.json %q", text)
	}
	fresh, err := OpenDelayOffsets(memOptions(vfs.NewMem()))
	if err != nil || len(fresh.Snapshot().OffsetTable) != 0 {
		t.Fatal("fresh delay offsets", err)
	}
}

func TestMinOffsetsAndDropUnsubscribed(t *testing.T) {
	o := openOffsets(t, vfs.NewMem())
	o.Commit("g1", "T", 0, 10)
	o.Commit("g1", "T", 1, 50)
	o.Commit("g2", "T", 0, 5)
	o.Commit("g2", "T", 1, 2) // below the store minimum of queue 1: ignored
	o.Commit("g3", "T", 0, 7)
	o.Commit("g1", "U", 0, 0)
	minInStore := func(q int32) int64 { return map[int32]int64{0: 0, 1: 3}[q] }
	if got := o.MinOffsets("T", []string{"g3"}, minInStore); !reflect.DeepEqual(got, map[int32]int64{0: 5, 1: 50}) {
		t.Fatalf("MinOffsets %v", got)
	}
	if _, ok := o.Query("g3", "T", 0); !ok {
		t.Fatal("MinOffsets removed an excluded group's offsets")
	}

	// g2 on T is not subscribed and all its offsets are at or below the
	// store minimum of 5; g3 is not subscribed but ahead; g1 is subscribed.
	subscribed := func(group, topic string) bool { return group == "g1" }
	dropped := o.DropUnsubscribed(subscribed, func(topic string, q int32) int64 { return 5 })
	if !reflect.DeepEqual(dropped, []string{"T@g2"}) {
		t.Fatalf("dropped %v", dropped)
	}
	if _, ok := o.Query("g2", "T", 0); ok {
		t.Fatal("g2 still has offsets")
	}
	if got := o.Groups(); !reflect.DeepEqual(got, []string{"g1", "g3"}) {
		t.Fatalf("groups left %v", got)
	}
}

// SnapshotSince gives a slave the keys changed after its version of this
// open table, and the whole table for a version of another epoch or one
// ahead of the table.
func TestOffsetsSnapshotSince(t *testing.T) {
	o := openOffsets(t, vfs.NewMem())
	o.Commit("g1", "T", 0, 1)
	o.Commit("g2", "T", 0, 2)
	full, v0, delta := o.SnapshotSince(OffsetsVersion{Epoch: -1})
	if delta || len(full.OffsetTable) != 2 || v0 != o.Version() {
		t.Fatalf("foreign epoch: delta=%v %v %v", delta, full.OffsetTable, v0)
	}
	if snap, v, delta := o.SnapshotSince(v0); !delta || len(snap.OffsetTable) != 0 || v != v0 {
		t.Fatalf("current version: delta=%v %v %v", delta, snap.OffsetTable, v)
	}
	o.Commit("g1", "T", 1, 5)
	o.Clone("g1", "g3", "T")
	o.Commit("g2", "U", 0, 7)
	o.Delete("g2", "U") // a deletion is not reported
	snap, v1, delta := o.SnapshotSince(v0)
	want := map[string]map[int32]int64{"T@g1": {0: 1, 1: 5}, "T@g3": {0: 1, 1: 5}}
	if !delta || !reflect.DeepEqual(snap.OffsetTable, want) || v1.Changes <= v0.Changes {
		t.Fatalf("after changes: delta=%v %v %v, want %v", delta, snap.OffsetTable, v1, want)
	}
	ahead := OffsetsVersion{Epoch: v1.Epoch, Changes: v1.Changes + 1}
	if snap, _, delta := o.SnapshotSince(ahead); delta || len(snap.OffsetTable) != 3 {
		t.Fatalf("version ahead: delta=%v %v", delta, snap.OffsetTable)
	}
}

func TestOffsetReset(t *testing.T) {
	o, err := OpenOffsets(Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	o.Commit("g", "T", 0, 10)
	o.AssignReset("g", "T", 0, 3)
	o.AssignReset("g", "Other", 1, 5) // no offsets on Other: committed table untouched
	if off, _ := o.Query("g", "T", 0); off != 3 {
		t.Errorf("committed offset after reset %d, want 3 (Java's assignResetOffset overwrites it)", off)
	}
	if _, ok := o.Query("g", "Other", 1); ok {
		t.Error("a reset created a committed offset where the group had none")
	}
	if off, ok := o.PendingReset("g", "Other", 1); !ok || off != 5 {
		t.Errorf("pending reset %d %v", off, ok)
	}
	if off, ok := o.TakeReset("g", "T", 0); !ok || off != 3 {
		t.Errorf("take %d %v", off, ok)
	}
	if _, ok := o.TakeReset("g", "T", 0); ok {
		t.Error("a reset was taken twice")
	}
	o.AssignReset("g", "T", -1, 3) // refused like Java's illegal arguments
	if _, ok := o.PendingReset("g", "T", -1); ok {
		t.Error("a reset of queue -1 was recorded")
	}
	o.DeleteGroup("g")
	if _, ok := o.PendingReset("g", "Other", 1); ok {
		t.Error("deleting the group left its pending reset")
	}
}

func TestOffsetResetCount(t *testing.T) {
	o, err := OpenOffsets(Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	o.AssignReset("g", "T", 0, 1)
	o.AssignReset("g", "T", 0, 2) // the same queue again: one pending reset
	o.AssignReset("g", "T", 1, 3)
	if n := o.pendingResets.Load(); n != 2 {
		t.Fatalf("pending resets %d, want 2", n)
	}
	if off, ok := o.TakeReset("g", "T", 0); !ok || off != 2 {
		t.Fatalf("take %d %v", off, ok)
	}
	o.DeleteGroup("g")
	if n := o.pendingResets.Load(); n != 0 {
		t.Fatalf("pending resets after the group's delete %d, want 0", n)
	}
	if _, ok := o.TakeReset("g", "T", 1); ok {
		t.Fatal("a deleted group's reset was taken")
	}
}
