package meta

import (
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/rocketd/rocketd/internal/vfs"
)

// The send and pull paths call Topics.Get and Offsets.Commit/Query once per
// request: they must not allocate.
func TestHotPathAllocations(t *testing.T) {
	tp := openTopics(t, vfs.NewMem(), nil)
	o := openOffsets(t, vfs.NewMem())
	o.Commit("g", "TopicTest", 3, 1)
	cases := map[string]func(){
		"Topics.Get":       func() { _, _ = tp.Get(AutoCreateTopic) },
		"Topics.Contains":  func() { _ = tp.Contains("nope") },
		"Offsets.Commit":   func() { o.Commit("g", "TopicTest", 3, 2) },
		"Offsets.Query":    func() { _, _ = o.Query("g", "TopicTest", 3) },
		"ValidateTopic":    func() { _ = ValidateTopic("%RETRY%some_group-1") },
		"Topics.IsSystem":  func() { _ = tp.IsSystemTopic("TopicTest") },
		"Topics.IsOrder":   func() { _ = tp.IsOrderTopic("TopicTest") },
		"Groups-less path": func() { _ = SendForbidden("TopicTest") },
	}
	for name, fn := range cases {
		if n := testing.AllocsPerRun(200, fn); n != 0 {
			t.Errorf("%s: %.1f allocations per call", name, n)
		}
	}
}

func BenchmarkTopicsGet(b *testing.B) {
	tp, err := OpenTopics(memOptions(vfs.NewMem()), testBrokerConfig())
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, ok := tp.Get(AutoCreateTopic); !ok {
				b.Fatal("missing")
			}
		}
	})
}

func BenchmarkOffsetsCommit(b *testing.B) {
	o, err := OpenOffsets(memOptions(vfs.NewMem()))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := int64(0)
		for pb.Next() {
			i++
			o.Commit("group", "TopicTest", int32(i&7), i)
		}
	})
}

func BenchmarkOffsetsQuery(b *testing.B) {
	o, err := OpenOffsets(memOptions(vfs.NewMem()))
	if err != nil {
		b.Fatal(err)
	}
	o.Commit("group", "TopicTest", 0, 1)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			o.Query("group", "TopicTest", 0)
		}
	})
}

// BenchmarkOffsetsPersist writes a table of 1000 topic@group keys with 8
// queues each (about 90 KiB) through the .tmp/.bak protocol on MemFS: the
// cost per 5 s tick excluding the disk.
func BenchmarkOffsetsPersist(b *testing.B) {
	o, err := OpenOffsets(memOptions(vfs.NewMem()))
	if err != nil {
		b.Fatal(err)
	}
	for i := range 1000 {
		for q := range int32(8) {
			o.Commit("group_"+strconv.Itoa(i%50), "Topic_"+strconv.Itoa(i), q, int64(i)*1000+int64(q))
		}
	}
	size := len(o.Snapshot().OffsetTable)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		o.Commit("group_0", "Topic_0", 0, int64(i)) // make every round write
		if err := o.Persist(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(size), "keys")
}

// BenchmarkTopicsAutoCreateParallel creates topics from TBW102 from
// parallel senders: each creation persists the table, and persists that
// queue up behind a write share the next one.
func BenchmarkTopicsAutoCreateParallel(b *testing.B) {
	tp, err := OpenTopics(memOptions(vfs.NewMem()), testBrokerConfig())
	if err != nil {
		b.Fatal(err)
	}
	var n atomic.Int64
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			name := "Topic_" + strconv.FormatInt(n.Add(1), 10)
			if _, _, err := tp.AutoCreate(name, AutoCreateTopic, 4, 0); err != nil {
				b.Fatal(err)
			}
		}
	})
}
