package meta

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/vfs"
)

// detail is a mapping of topic ST on broker-a: n logic queues, each on its
// own physical queue (what updateStaticTopic creates for one broker).
func detail(n int32, epoch int64) *protocol.TopicQueueMappingDetail {
	d := &protocol.TopicQueueMappingDetail{Topic: "ST", Scope: protocol.MetadataScopeGlobal, TotalQueues: n, Bname: "broker-a",
		Epoch: epoch, CurrIDMap: map[int32]int32{}, HostedQueues: map[int32][]protocol.LogicQueueMappingItem{}}
	for i := range n {
		d.HostedQueues[i] = []protocol.LogicQueueMappingItem{{QueueID: i, Bname: "broker-a", EndOffset: -1, TimeOfStart: -1, TimeOfEnd: -1}}
	}
	return d
}

// TestMappingsFile: Update writes topicQueueMapping.json in Java's form
// and a reopen reads it back; the file Java 5.2.0 writes loads.
func TestMappingsFile(t *testing.T) {
	fsys := vfs.NewMem()
	opts := Options{Dir: "/c", FS: fsys}
	m, err := OpenMappings(opts, "broker-a")
	if err != nil {
		t.Fatal(err)
	}
	if m.Get("ST") != nil || m.Len() != 0 {
		t.Fatal("fresh table has a mapping")
	}
	v0 := m.DataVersion()
	if err := m.Update(detail(2, 1000), false); err != nil {
		t.Fatal(err)
	}
	if m.DataVersion().Counter != v0.Counter+1 {
		t.Fatalf("version %+v after %+v", m.DataVersion(), v0)
	}
	data, err := vfs.ReadFile(fsys, "/c/"+TopicQueueMappingFile)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "\t\"topicQueueMappingInfoMap\":{\n\t\t\"ST\":{\n\t\t\t\"bname\":\"broker-a\",") ||
		!strings.Contains(string(data), "\"hostedQueues\":{0:[") {
		t.Fatalf("file:\n%s", data)
	}
	again, err := OpenMappings(opts, "broker-a")
	if err != nil {
		t.Fatal(err)
	}
	got := again.Get("ST")
	if got == nil || got.Epoch != 1000 || len(got.HostedQueues) != 2 || got.HostedQueues[1][0].QueueID != 1 {
		t.Fatalf("reopened: %+v", got)
	}
	if again.DataVersion() != m.DataVersion() {
		t.Fatalf("reopened version %+v, want %+v", again.DataVersion(), m.DataVersion())
	}
	// A copy: changing it changes nothing in the table.
	got.HostedQueues[0][0].QueueID = 9
	if again.Get("ST").HostedQueues[0][0].QueueID != 0 {
		t.Fatal("Get returned the table's own detail")
	}

	java, err := os.ReadFile("../../protocol/testdata/mapping/topicQueueMapping.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := writeConfigFile(fsys, "/d/"+TopicQueueMappingFile, java); err != nil {
		t.Fatal(err)
	}
	j, err := OpenMappings(Options{Dir: "/d", FS: fsys}, "broker-a")
	if err != nil {
		t.Fatal(err)
	}
	if d := j.Get("ST"); d == nil || len(d.HostedQueues[1]) != 2 || d.HostedQueues[1][1].LogicOffset != 10 {
		t.Fatalf("java file: %+v", d)
	}
	if ok, err := j.Delete("ST"); !ok || err != nil || j.Get("ST") != nil {
		t.Fatalf("delete: %v %v", ok, err)
	}
	if ok, _ := j.Delete("ST"); ok {
		t.Fatal("deleted twice")
	}
}

// TestMappingsUpdateRules checks TopicQueueMappingManager's rules.
func TestMappingsUpdateRules(t *testing.T) {
	m, err := OpenMappings(Options{Dir: "/c", FS: vfs.NewMem()}, "broker-a")
	if err != nil {
		t.Fatal(err)
	}
	refused := func(name string, d *protocol.TopicQueueMappingDetail, force bool) {
		t.Helper()
		if err := m.Update(d, force); !errors.Is(err, ErrMapping) {
			t.Errorf("%s: %v, want ErrMapping", name, err)
		}
	}
	if err := m.Update(detail(2, 2000), false); err != nil {
		t.Fatal(err)
	}
	other := detail(2, 3000)
	other.Bname = "broker-b"
	refused("another broker's mapping", other, false)
	refused("nil", nil, false)
	refused("older epoch", detail(2, 1000), false)
	scoped := detail(2, 3000)
	scoped.Scope = "other"
	refused("other scope", scoped, false)
	missing := detail(2, 2000)
	delete(missing.HostedQueues, 1)
	refused("same epoch, a chain missing", missing, false)
	moved := detail(2, 2000)
	moved.HostedQueues[1][0].QueueID = 5
	refused("same epoch, an item changed", moved, false)
	bad := detail(2, 3000)
	bad.HostedQueues[0][0].QueueID = -1
	refused("negative queue id", bad, false)
	if d := m.Get("ST"); d.Epoch != 2000 || d.HostedQueues[1][0].QueueID != 1 {
		t.Fatalf("a refused update changed the table: %+v", d)
	}

	// A newer epoch growing the topic to 3 queues keeps nothing it
	// lacks; one without queue 1 keeps the old chain.
	if err := m.Update(detail(3, 3000), false); err != nil {
		t.Fatal(err)
	}
	partial := detail(3, 4000)
	delete(partial.HostedQueues, 1)
	if err := m.Update(partial, false); err != nil {
		t.Fatal(err)
	}
	if d := m.Get("ST"); d.Epoch != 4000 || len(d.HostedQueues) != 3 {
		t.Fatalf("partial update: %+v", d)
	}
	// force takes an older epoch, keeping the chains it lacks.
	forced := detail(1, 10)
	if err := m.Update(forced, true); err != nil {
		t.Fatal(err)
	}
	if d := m.Get("ST"); d.Epoch != 10 || len(d.HostedQueues) != 3 {
		t.Fatalf("forced update: %+v", d)
	}
}
