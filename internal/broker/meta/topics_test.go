package meta

import (
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/vfs"
)

func openTopics(t *testing.T, fs vfs.FS, mutate func(*testBC)) *Topics {
	t.Helper()
	bc := testBrokerConfig()
	if mutate != nil {
		mutate(bc)
	}
	tp, err := OpenTopics(memOptions(fs), bc)
	if err != nil {
		t.Fatal(err)
	}
	return tp
}

type testBC = config.BrokerConfig

func TestStartupTopics(t *testing.T) {
	tp := openTopics(t, vfs.NewMem(), nil)
	want := map[string][3]int32{ // read, write, perm
		SelfTestTopic:                {1, 1, 6},
		AutoCreateTopic:              {8, 8, 7},
		BenchmarkTopic:               {1024, 1024, 6},
		"DefaultCluster":             {16, 16, 7},
		"broker-a":                   {1, 1, 7},
		OffsetMovedTopic:             {1, 1, 6},
		ScheduleTopic:                {18, 18, 6},
		"DefaultCluster_REPLY_TOPIC": {1, 1, 6},
		TransHalfTopic:               {1, 1, 6},
		TransOpHalfTopic:             {1, 1, 6},
	}
	if got := tp.Names(); len(got) != len(want) {
		t.Fatalf("topics %v, want %d", got, len(want))
	}
	for name, w := range want {
		tc, ok := tp.Get(name)
		if !ok || tc.ReadQueueNums != w[0] || tc.WriteQueueNums != w[1] || tc.Perm != w[2] || tc.TopicName != name || tc.TopicFilterType != protocol.SingleTag {
			t.Errorf("%s: %+v (present %v), want %v", name, tc, ok, w)
		}
	}
	if dv := tp.DataVersion(); dv.Counter != 0 || dv.Timestamp == 0 {
		t.Errorf("fresh data version %+v", dv)
	}
	for _, name := range []string{"DefaultCluster", "broker-a", "DefaultCluster_REPLY_TOPIC", AutoCreateTopic, "rmq_sys_anything", TraceTopic} {
		if !tp.IsSystemTopic(name) {
			t.Errorf("%s should be a system topic", name)
		}
	}
	if tp.IsSystemTopic("TopicTest") || tp.IsSystemTopic("%RETRY%g") {
		t.Error("ordinary topic reported as system topic")
	}
}

func TestStartupTopicsFollowConfig(t *testing.T) {
	tp := openTopics(t, vfs.NewMem(), func(bc *testBC) {
		bc.AutoCreateTopicEnable = false
		bc.ClusterTopicEnable = false
		bc.BrokerTopicEnable = false
		bc.TraceTopicEnable = true
		bc.MsgTraceTopicName = "my_trace"
		bc.BrokerClusterName = "C1"
		bc.BrokerName = "b1"
		bc.DefaultTopicQueueNums = 3
		bc.MessageDelayLevel = "1s 2s 3s 4s 5s 6s 7s 8s 9s 10s 11s 12s 13s 14s 15s 16s 17s 18s 19s 20s"
	})
	if tp.Contains(AutoCreateTopic) {
		t.Error("TBW102 created with autoCreateTopicEnable=false")
	}
	for name, perm := range map[string]int32{"C1": 1, "b1": 1, "my_trace": 6, "C1_REPLY_TOPIC": 6} {
		if tc, ok := tp.Get(name); !ok || tc.Perm != perm {
			t.Errorf("%s: %+v %v, want perm %d", name, tc, ok, perm)
		}
	}
	if !tp.IsSystemTopic("my_trace") {
		t.Error("the configured trace topic is a system topic")
	}
	if tc, _ := tp.Get(ScheduleTopic); tc.WriteQueueNums != 20 {
		t.Errorf("schedule queues %d, want one per delay level", tc.WriteQueueNums)
	}
}

func TestAutoCreate(t *testing.T) {
	fs := vfs.NewMem()
	tp := openTopics(t, fs, nil)
	var notified atomic.Int32
	tp.OnChange(func() { notified.Add(1) })
	before := tp.DataVersion()

	tc, created, err := tp.AutoCreate("NewTopic", AutoCreateTopic, 4, 0)
	if err != nil || !created {
		t.Fatalf("created=%v err=%v", created, err)
	}
	want := protocol.TopicConfig{TopicName: "NewTopic", ReadQueueNums: 4, WriteQueueNums: 4, Perm: 6, TopicFilterType: protocol.SingleTag}
	if !reflect.DeepEqual(tc, want) {
		t.Fatalf("got %+v, want %+v", tc, want)
	}
	if notified.Load() != 1 {
		t.Fatalf("listener called %d times", notified.Load())
	}
	after := tp.DataVersion()
	if after.Counter != before.Counter+1 || after.Timestamp <= before.Timestamp {
		t.Fatalf("version %+v -> %+v", before, after)
	}
	if !strings.Contains(readRaw(t, fs, filepath.Join(testDir, TopicsFile)), `"NewTopic":{`) {
		t.Fatal("topics.json not written on creation")
	}

	// Existing topic: returned unchanged, no version bump, no notification.
	tc2, created, err := tp.AutoCreate("NewTopic", AutoCreateTopic, 16, 0)
	if err != nil || created || !reflect.DeepEqual(tc2, want) || notified.Load() != 1 || tp.DataVersion() != after {
		t.Fatalf("second create: %+v %v %v", tc2, created, err)
	}

	// More queues than the template has: capped at the template's 8.
	if tc, _, _ := tp.AutoCreate("Big", AutoCreateTopic, 100, 0); tc.WriteQueueNums != 8 || tc.ReadQueueNums != 8 {
		t.Errorf("queues not capped: %+v", tc)
	}
	// Zero requested queues still gives a usable topic.
	if tc, _, _ := tp.AutoCreate("Zero", AutoCreateTopic, 0, 0); tc.WriteQueueNums != 1 {
		t.Errorf("zero queues: %+v", tc)
	}
	// Template without the inherit bit, or missing.
	if _, created, err := tp.AutoCreate("X1", SelfTestTopic, 4, 0); !errors.Is(err, ErrNoTemplate) || created {
		t.Errorf("non-inheritable template: %v %v", created, err)
	}
	if _, _, err := tp.AutoCreate("X2", "NoSuchTemplate", 4, 0); !errors.Is(err, ErrNoTemplate) {
		t.Errorf("missing template: %v", err)
	}
	if _, _, err := tp.AutoCreate("bad.name", AutoCreateTopic, 4, 0); !errors.Is(err, ErrInvalidName) {
		t.Errorf("invalid name: %v", err)
	}
	if tp.Contains("X1") || tp.Contains("X2") || tp.Contains("bad.name") {
		t.Error("failed creation left a topic")
	}
	// A template's filter type and the request's sysFlag carry over; the
	// inherit bit does not.
	if err := tp.Put(protocol.TopicConfig{TopicName: "Tmpl", ReadQueueNums: 2, WriteQueueNums: 2, Perm: 7, TopicFilterType: protocol.MultiTag}); err != nil {
		t.Fatal(err)
	}
	if tc, _, _ := tp.AutoCreate("FromTmpl", "Tmpl", 4, 3); tc.TopicFilterType != protocol.MultiTag || tc.TopicSysFlag != 3 || tc.Perm != 6 || tc.WriteQueueNums != 2 {
		t.Errorf("from custom template: %+v", tc)
	}
}

func TestAutoCreateDisabledIgnoresInheritableTBW102FromFile(t *testing.T) {
	fs := vfs.NewMem()
	installFixture(t, fs, "java-topics.json", TopicsFile) // TBW102 has perm 7
	tp := openTopics(t, fs, func(bc *testBC) { bc.AutoCreateTopicEnable = false })
	if tc, _ := tp.Get(AutoCreateTopic); tc.Perm != 6 {
		t.Fatalf("TBW102 perm %d, want 6", tc.Perm)
	}
	if _, _, err := tp.AutoCreate("NewTopic", AutoCreateTopic, 4, 0); !errors.Is(err, ErrNoTemplate) {
		t.Fatalf("auto-create with autoCreateTopicEnable=false: %v", err)
	}
}

func TestEnsureRetryAndDLQ(t *testing.T) {
	fs := vfs.NewMem()
	installFixture(t, fs, "java-topics.json", TopicsFile)
	tp := openTopics(t, fs, nil)
	tc, created, err := tp.EnsureRetryTopic("g1", 3)
	if err != nil || !created || tc.TopicName != "%RETRY%g1" || tc.WriteQueueNums != 3 || tc.ReadQueueNums != 3 || tc.Perm != 6 {
		t.Fatalf("retry: %+v %v %v", tc, created, err)
	}
	if _, created, _ := tp.EnsureRetryTopic("g1", 5); created {
		t.Fatal("second EnsureRetryTopic created again")
	}
	if tc, _ := tp.Get("%RETRY%g1"); tc.WriteQueueNums != 3 {
		t.Fatal("existing retry topic changed")
	}
	tc, created, err = tp.EnsureDLQTopic("g1")
	if err != nil || !created || tc.TopicName != "%DLQ%g1" || tc.WriteQueueNums != 1 || tc.Perm != 6 {
		t.Fatalf("dlq: %+v %v %v", tc, created, err)
	}
	// An old broker's write-only DLQ topic is kept as it is.
	if tc, created, _ := tp.EnsureDLQTopic("oldGroup"); created || tc.Perm != 2 {
		t.Fatalf("old dlq: %+v %v", tc, created)
	}
	if _, _, err := tp.EnsureTopic("x", -1, 6, 0); err == nil {
		t.Fatal("negative queue count accepted")
	}
}

func TestPutDelete(t *testing.T) {
	fs := vfs.NewMem()
	tp := openTopics(t, fs, nil)
	var notified atomic.Int32
	tp.OnChange(func() { notified.Add(1) })
	tc := protocol.TopicConfig{TopicName: "T1", ReadQueueNums: 4, WriteQueueNums: 2, Perm: 4, Order: true,
		Attributes: map[string]string{"+message.type": "FIFO"}}
	if err := tp.Put(tc); err != nil {
		t.Fatal(err)
	}
	got, ok := tp.Get("T1")
	tc.TopicFilterType = protocol.SingleTag
	if !ok || !reflect.DeepEqual(got, tc) {
		t.Fatalf("got %+v", got)
	}
	got.Attributes["x"] = "y" // a returned copy must not alias the table
	if again, _ := tp.Get("T1"); len(again.Attributes) != 1 {
		t.Fatal("Get returned an aliased attribute map")
	}
	if err := tp.Put(protocol.TopicConfig{TopicName: "bad name"}); !errors.Is(err, ErrInvalidName) {
		t.Fatalf("invalid name: %v", err)
	}
	if err := tp.Put(protocol.TopicConfig{TopicName: "neg", ReadQueueNums: -1}); err == nil {
		t.Fatal("negative queues accepted")
	}
	existed, err := tp.Delete("T1")
	if err != nil || !existed || tp.Contains("T1") {
		t.Fatalf("delete: %v %v", existed, err)
	}
	v := tp.DataVersion()
	if existed, err := tp.Delete("T1"); existed || err != nil || tp.DataVersion() != v {
		t.Fatal("deleting a missing topic changed something")
	}
	if notified.Load() != 2 {
		t.Fatalf("notified %d times, want 2", notified.Load())
	}
	// Reopen: the file has the deletion and the version.
	tp2 := openTopics(t, fs, nil)
	if tp2.Contains("T1") || tp2.DataVersion() != v {
		t.Fatalf("reopened: contains=%v version %+v want %+v", tp2.Contains("T1"), tp2.DataVersion(), v)
	}
}

func TestLoadJavaTopics(t *testing.T) {
	fs := vfs.NewMem()
	installFixture(t, fs, "java-topics.json", TopicsFile)
	tp := openTopics(t, fs, nil)
	if dv := tp.DataVersion(); dv.Counter != 7 || dv.Timestamp != 1690000000123 {
		t.Fatalf("data version %+v", dv)
	}
	order, _ := tp.Get("OrderTopic")
	want := protocol.TopicConfig{TopicName: "OrderTopic", ReadQueueNums: 8, WriteQueueNums: 4, Perm: 6, TopicFilterType: protocol.MultiTag, Order: true}
	if !reflect.DeepEqual(order, want) {
		t.Fatalf("OrderTopic %+v", order)
	}
	// File topics are merged with the startup topics.
	for _, name := range []string{"TopicTest", "%RETRY%please_rename_unique_group_name_4", ScheduleTopic, "DefaultCluster"} {
		if !tp.Contains(name) {
			t.Errorf("missing %s", name)
		}
	}
	// What we write reads back the same (round trip through our writer).
	if err := tp.Persist(); err != nil {
		t.Fatal(err)
	}
	tp2 := openTopics(t, fs, nil)
	if !reflect.DeepEqual(tp.Snapshot(), tp2.Snapshot()) {
		t.Fatal("round trip changed the table")
	}
}

func TestTopicsWrittenInJavaPrettyFormat(t *testing.T) {
	fs := vfs.NewMem()
	tp := openTopics(t, fs, nil)
	if _, err := tp.Delete(BenchmarkTopic); err != nil { // any change writes the file
		t.Fatal(err)
	}
	text := readRaw(t, fs, filepath.Join(testDir, TopicsFile))
	wantPart := "\t\t\"broker-a\":{\n\t\t\t\"order\":false,\n\t\t\t\"perm\":7,\n\t\t\t\"readQueueNums\":1,\n" +
		"\t\t\t\"topicFilterType\":\"SINGLE_TAG\",\n\t\t\t\"topicName\":\"broker-a\",\n\t\t\t\"topicSysFlag\":0,\n\t\t\t\"writeQueueNums\":1\n\t\t}"
	if !strings.HasPrefix(text, "{\n\t\"dataVersion\":{\n\t\t\"counter\":1,\n") || !strings.Contains(text, wantPart) || !strings.HasSuffix(text, "\n\t}\n}") {
		t.Fatalf("topics.json:\n%s", text)
	}
}

func TestTopicsConcurrent(t *testing.T) {
	tp := openTopics(t, vfs.NewMem(), nil)
	var creations atomic.Int32
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 20 {
				name := "T" + string(rune('a'+i%10))
				if _, created, err := tp.AutoCreate(name, AutoCreateTopic, 4, 0); err != nil {
					t.Error(err)
				} else if created {
					creations.Add(1)
				}
				if _, ok := tp.Get(name); !ok {
					t.Errorf("worker %d: %s missing after AutoCreate", w, name)
				}
				_ = tp.Snapshot()
			}
		}()
	}
	wg.Wait()
	if creations.Load() != 10 {
		t.Fatalf("%d creations, want 10 (each topic exactly once)", creations.Load())
	}
	if dv := tp.DataVersion(); dv.Counter != 10 {
		t.Fatalf("counter %d", dv.Counter)
	}
}

func TestRegisterSnapshotAndOrder(t *testing.T) {
	fs := vfs.NewMem()
	installFixture(t, fs, "java-topics.json", TopicsFile)
	tp := openTopics(t, fs, nil)
	if !tp.IsOrderTopic("OrderTopic") || tp.IsOrderTopic("TopicTest") || tp.IsOrderTopic("missing") {
		t.Fatal("IsOrderTopic")
	}
	if !reflect.DeepEqual(tp.RegisterSnapshot(6), tp.Snapshot()) || !reflect.DeepEqual(tp.RegisterSnapshot(7), tp.Snapshot()) {
		t.Fatal("a read-write broker announces topics as they are")
	}
	ro := tp.RegisterSnapshot(4)
	for name, tc := range ro.TopicConfigTable {
		if tc.Perm != 4 {
			t.Fatalf("%s announced with perm %d by a read-only broker", name, tc.Perm)
		}
	}
	if tc, _ := tp.Get("TopicTest"); tc.Perm != 6 {
		t.Fatal("RegisterSnapshot changed the table")
	}
}

// TestLoadTopicsVariants reads what 5.x brokers and hand edits produce:
// compact text, extra wrapper properties (static-topic mappings), topic
// attributes, stateVersion, and topic configs with properties left out.
func TestLoadTopicsVariants(t *testing.T) {
	text := `{"dataVersion":{"counter":4,"stateVersion":9,"timestamp":5},"mappingDataVersion":{"counter":0,"timestamp":1},` +
		`"topicConfigTable":{"T5":{"attributes":{"+message.type":"FIFO"},"order":false,"perm":6,"readQueueNums":2,` +
		`"topicFilterType":"SINGLE_TAG","topicName":"T5","topicSysFlag":0,"writeQueueNums":2},` +
		`"Partial":{"perm":4},"NoName":{"readQueueNums":3,"writeQueueNums":3}},"topicQueueMappingInfoMap":{}}`
	fs := vfs.NewMem()
	writeRaw(t, fs, filepath.Join(testDir, TopicsFile), []byte(text))
	tp := openTopics(t, fs, nil)
	if dv := tp.DataVersion(); dv != (protocol.DataVersion{Counter: 4, StateVersion: 9, Timestamp: 5}) {
		t.Fatalf("version %+v", dv)
	}
	if tc, _ := tp.Get("T5"); tc.Attributes["+message.type"] != "FIFO" || tc.WriteQueueNums != 2 {
		t.Fatalf("T5 %+v", tc)
	}
	// Absent properties read as Java's TopicConfig defaults; a missing
	// topicName is the table key.
	if tc, _ := tp.Get("Partial"); tc.ReadQueueNums != 16 || tc.WriteQueueNums != 16 || tc.Perm != 4 || tc.TopicName != "Partial" {
		t.Fatalf("Partial %+v", tc)
	}
	if tc, _ := tp.Get("NoName"); tc.TopicName != "NoName" || tc.Perm != 6 {
		t.Fatalf("NoName %+v", tc)
	}
}

func TestTopicsFileWithoutDataVersion(t *testing.T) {
	fs := vfs.NewMem()
	writeRaw(t, fs, filepath.Join(testDir, TopicsFile), []byte(`{"topicConfigTable":{"A":{"perm":6}}}`))
	tp := openTopics(t, fs, nil)
	if dv := tp.DataVersion(); dv.Timestamp == 0 || !tp.Contains("A") {
		t.Fatalf("version %+v", dv)
	}
}
