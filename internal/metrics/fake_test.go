package metrics

import (
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// fakeSource is a broker state set by the test.
type fakeSource struct {
	topics    []Topic
	max       map[string][]int64            // topic -> max offset per queue
	stored    map[string]int64              // topic -> store time (ms) of any message
	offsets   map[[2]string]map[int32]int64 // group, topic -> committed
	groups    []ConsumerGroup
	producers []Client
	store     StoreStats
	procs     []Processor
	revive    []ReviveLag
}

func (f *fakeSource) Topics() []Topic { return append([]Topic(nil), f.topics...) }

func (f *fakeSource) MaxOffset(topic string, q int32) int64 {
	if m := f.max[topic]; int(q) < len(m) {
		return m[q]
	}
	return 0
}

func (f *fakeSource) StoreTimestamp(topic string, q int32, offset int64) int64 {
	if offset >= f.MaxOffset(topic, q) {
		return 0
	}
	return f.stored[topic] + offset
}

func (f *fakeSource) ConsumerOffsets(fn func(group, topic string, offsets map[int32]int64)) {
	keys := make([][2]string, 0, len(f.offsets))
	for k := range f.offsets {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i][0]+keys[i][1] < keys[j][0]+keys[j][1] })
	for _, k := range keys {
		fn(k[0], k[1], f.offsets[k])
	}
}

func (f *fakeSource) ConsumerGroups() []ConsumerGroup { return f.groups }
func (f *fakeSource) Producers() []Client             { return f.producers }
func (f *fakeSource) SubscriptionGroups() int         { return len(f.groups) + 1 }
func (f *fakeSource) Store() StoreStats               { return f.store }
func (f *fakeSource) Processors() []Processor         { return f.procs }
func (f *fakeSource) ReviveLags() []ReviveLag         { return f.revive }

// fakeCounts are cumulative counts set by the test.
type fakeCounts struct {
	put map[string][2]uint64    // topic -> msgs, bytes
	get map[[2]string][2]uint64 // group, topic -> msgs, bytes
}

func (f *fakeCounts) EachTopicPut(fn func(topic string, msgs, bytes uint64)) {
	for t, v := range f.put {
		fn(t, v[0], v[1])
	}
}

func (f *fakeCounts) EachGroupGet(fn func(group, topic string, msgs, bytes uint64)) {
	for k, v := range f.get {
		fn(k[0], k[1], v[0], v[1])
	}
}

// fakeClock is a settable clock.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

// gather collects c through a registry, failing the test on any error
// (an inconsistent family, an invalid label set).
func gather(t *testing.T, cs ...prometheus.Collector) map[string]*dto.MetricFamily {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			t.Fatal(err)
		}
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*dto.MetricFamily{}
	for _, mf := range mfs {
		out[mf.GetName()] = mf
	}
	return out
}

// value returns the value of the series of family name whose labels
// include want ("k=v" pairs); it fails the test unless exactly one does.
func value(t *testing.T, mfs map[string]*dto.MetricFamily, name string, want ...string) float64 {
	t.Helper()
	mf := mfs[name]
	if mf == nil {
		t.Fatalf("family %s missing", name)
	}
	var found []*dto.Metric
	for _, m := range mf.GetMetric() {
		labels := map[string]string{}
		for _, lp := range m.GetLabel() {
			labels[lp.GetName()] = lp.GetValue()
		}
		ok := true
		for _, w := range want {
			k, v, _ := strings.Cut(w, "=")
			if labels[k] != v {
				ok = false
			}
		}
		if ok {
			found = append(found, m)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%s%v: %d series match, want 1", name, want, len(found))
	}
	m := found[0]
	switch {
	case m.Gauge != nil:
		return m.GetGauge().GetValue()
	case m.Counter != nil:
		return m.GetCounter().GetValue()
	case m.Histogram != nil:
		return float64(m.GetHistogram().GetSampleCount())
	}
	t.Fatalf("%s: unexpected metric type", name)
	return 0
}
