package stats

import (
	"math"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeClock is a settable clock.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) add(d time.Duration) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
	return c.t
}

func newFake(t *testing.T) (*Stats, *fakeClock) {
	t.Helper()
	clk := &fakeClock{t: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)}
	s := newStats(Config{Cluster: "C", Now: clk.Now, IsSystemTopic: func(t string) bool { return strings.HasPrefix(t, "rmq_sys_") }})
	return s, clk
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// TestMinuteWindow checks StatsItem's minute math: the zero sample a
// period before the first, sum/tps/avgpt over the kept samples, and the
// oldest sample dropped after 7.
func TestMinuteWindow(t *testing.T) {
	s, clk := newFake(t)
	s.TopicPut("T", 3, 300) // before the first sample: shows in the period before it
	s.tick(clk.Now())
	w, ok := s.Item(TopicPutNums, "T")
	if !ok {
		t.Fatal("TOPIC_PUT_NUMS T not found")
	}
	if w.Minute.Sum != 3 || !near(w.Minute.TPS, 0.3) || w.Minute.Times != 1 || !near(w.Minute.AvgPT, 3) {
		t.Fatalf("minute after first sample = %+v, want sum 3 tps 0.3 times 1 avgpt 3", w.Minute)
	}
	// Six more 10 s periods, 10 messages in 2 requests each: the window
	// then holds 7 samples spanning 60 s, the zero one dropped.
	for range 6 {
		s.TopicPut("T", 5, 50)
		s.TopicPut("T", 5, 50)
		s.tick(clk.add(10 * time.Second))
	}
	w, _ = s.Item(TopicPutNums, "T")
	if w.Minute.Sum != 60 || !near(w.Minute.TPS, 1) || w.Minute.Times != 12 || !near(w.Minute.AvgPT, 5) {
		t.Fatalf("minute = %+v, want sum 60 tps 1 times 12 avgpt 5", w.Minute)
	}
	w, _ = s.Item(TopicPutSize, "T")
	if w.Minute.Sum != 600 || !near(w.Minute.TPS, 10) {
		t.Fatalf("size minute = %+v, want sum 600 tps 10", w.Minute)
	}
	// The hour window sampled once, at start: zero sample + first.
	if w.Hour.Sum != 300 || !near(w.Hour.TPS, 0.5) {
		t.Fatalf("size hour = %+v, want sum 300 over 600 s", w.Hour)
	}
	if w.Day.Sum != 300 || !near(w.Day.TPS, 300.0/3600) {
		t.Fatalf("size day = %+v, want sum 300 over 3600 s", w.Day)
	}
}

// TestHourAndDayWindows drives the 10 min and 1 h samplings.
func TestHourAndDayWindows(t *testing.T) {
	s, clk := newFake(t)
	s.tick(clk.Now())
	s.GroupGet("G", "T", 4, 400, 2*time.Millisecond) // the group appears after the first samplings
	for range 12 * 6 {                               // 12 minutes in 10 s steps
		s.tick(clk.add(10 * time.Second))
		s.GroupGet("G", "T", 1, 100, 4*time.Millisecond)
	}
	w, ok := s.Item(GroupGetNums, "T@G")
	if !ok {
		t.Fatal("GROUP_GET_NUMS T@G not found")
	}
	// The group appeared after the samplings at 0, so its hour window is
	// [zero sample at 0, sample at 10 min] and its day window empty.
	if w.Hour.Sum != 4+59 || !near(w.Hour.TPS, 63.0/600) {
		t.Fatalf("hour = %+v, want 63 messages over 600 s", w.Hour)
	}
	if w.Day.Sum != 0 || w.Day.TPS != 0 {
		t.Fatalf("day = %+v, want empty before the first hourly sampling of the group", w.Day)
	}
	lat, _ := s.Item(GroupGetLatency, "T@G")
	if lat.Minute.Times != 6 || !near(lat.Minute.AvgPT, 4) {
		t.Fatalf("latency minute = %+v, want 6 pulls of 4 ms", lat.Minute)
	}
	if got := s.GroupGetTPS("G", "T"); !near(got, 0.1) {
		t.Fatalf("GroupGetTPS = %v, want 0.1", got)
	}
}

// TestStoreTpsAndMornings checks the one-second series (putTps strings)
// and the midnight records.
func TestStoreTpsAndMornings(t *testing.T) {
	s, clk := newFake(t)
	s.tick(clk.Now())
	if r := s.Runtime(); r.PutTps != "  " || r.GetTotalTps != "0.0 0.0 0.0" {
		t.Fatalf("fresh runtime putTps %q getTotalTps %q", r.PutTps, r.GetTotalTps)
	}
	for range 60 {
		s.TopicPut("T", 2, 10)
		s.TopicPut("rmq_sys_X", 1, 10)
		s.GroupGet("G", "T", 1, 10, 0)
		s.GetMiss()
		s.tick(clk.add(time.Second))
	}
	r := s.Runtime()
	if r.PutTps != "3.0 3.0 " {
		t.Fatalf("putTps = %q, want %q", r.PutTps, "3.0 3.0 ")
	}
	if r.GetFoundTps != "1.0 1.0 " || r.GetMissTps != "1.0 1.0 " || r.GetTransferredTps != "1.0 1.0 " {
		t.Fatalf("get tps found %q miss %q transferred %q", r.GetFoundTps, r.GetMissTps, r.GetTransferredTps)
	}
	if r.GetTotalTps != "2.0 2.0 0.0" {
		t.Fatalf("getTotalTps = %q", r.GetTotalTps)
	}
	if r.PutTotalTodayNow != 120 || r.GetTotalTodayNow != 60 || r.PutTotalTodayMorning != 0 {
		t.Fatalf("totals %+v", r)
	}
	if s.BrokerPutTotal() != 180 || s.BrokerGetTotal() != 60 {
		t.Fatalf("broker totals put %d get %d, want 180 60", s.BrokerPutTotal(), s.BrokerGetTotal())
	}
	s.PutFailed()
	if r := s.Runtime(); r.PutMessageSizeTotal != 60*20 || r.PutMessageFailedTimes != 1 || r.PutMessageTimesTotal != 180 {
		t.Fatalf("put size %d failed %d times %d, want 1200 1 180", r.PutMessageSizeTotal, r.PutMessageFailedTimes, r.PutMessageTimesTotal)
	}
	if r.Uptime != "[ 0 days, 0 hours, 1 minutes, 0 seconds ]" {
		t.Fatalf("runtime %q", r.Uptime)
	}
	// Past midnight: today's morning is the total then; a day later it
	// becomes yesterday's.
	clk.add(14 * time.Hour)
	s.tick(clk.Now())
	s.TopicPut("T", 5, 1)
	clk.add(24 * time.Hour)
	s.tick(clk.Now())
	r = s.Runtime()
	if r.PutTotalYesterdayMorning != 120 || r.PutTotalTodayMorning != 125 || r.PutTotalTodayNow != 125 ||
		r.GetTotalYesterdayMorning != 60 || r.GetTotalTodayMorning != 60 {
		t.Fatalf("mornings %+v", r)
	}
}

func TestItemKeys(t *testing.T) {
	s, clk := newFake(t)
	s.TopicPut("T", 1, 1)
	s.SendBack("G", "T")
	s.GroupGet("H", "T", 1, 10, time.Millisecond)
	s.tick(clk.Now())
	for _, c := range []struct {
		name, key string
		ok        bool
	}{
		{TopicPutNums, "T", true}, {TopicPutNums, "U", false}, {SndbckPutNums, "T@G", true},
		{GroupGetNums, "TG", false}, {BrokerPutNums, "C", true}, {BrokerPutNums, "other", false},
		{BrokerPutNumsWithoutSystemTopic, "C", true}, {"NO_SUCH_STATS", "T", false},
		// Separate item sets as in Java: G only sent back, H only pulled.
		{GroupGetNums, "T@G", false}, {GroupGetNums, "T@H", true}, {SndbckPutNums, "T@H", false},
	} {
		if _, ok := s.Item(c.name, c.key); ok != c.ok {
			t.Errorf("Item(%s, %s) found %v, want %v", c.name, c.key, ok, c.ok)
		}
	}
	w, _ := s.Item(SndbckPutNums, "T@G")
	if w.Minute.Sum != 1 || w.Minute.Times != 1 {
		t.Fatalf("SNDBCK_PUT_NUMS = %+v", w.Minute)
	}
	w, _ = s.Item(BrokerPutNums, "C")
	if w.Minute.Sum != 1 || w.Minute.Times != 0 || w.Minute.AvgPT != 0 {
		t.Fatalf("BROKER_PUT_NUMS = %+v, want sum 1 without times", w.Minute)
	}
	var topics, groups int
	s.EachTopicPut(func(topic string, msgs, bytes uint64) {
		topics++
		if topic != "T" || msgs != 1 || bytes != 1 {
			t.Errorf("EachTopicPut %s %d %d", topic, msgs, bytes)
		}
	})
	s.EachGroupGet(func(group, topic string, msgs, bytes uint64) { groups++ })
	if topics != 1 || groups != 2 { // G@T (send-backs) and H@T
		t.Fatalf("EachTopicPut saw %d, EachGroupGet %d", topics, groups)
	}
}

func TestRate(t *testing.T) {
	s, clk := newFake(t)
	var n uint64
	r := s.NewRate(func() uint64 { return n })
	s.tick(clk.Now())
	if r.PerSecond() != 0 {
		t.Fatal("rate with one sample")
	}
	for range 15 {
		n += 3
		s.tick(clk.add(time.Second))
	}
	if got := r.PerSecond(); !near(got, 3) {
		t.Fatalf("rate %v, want 3", got)
	}
	var nilStats *Stats
	if nilStats.NewRate(func() uint64 { return 1 }).PerSecond() != 0 {
		t.Fatal("a nil Stats' rate moved")
	}
}

func TestJavaDouble(t *testing.T) {
	for v, want := range map[float64]string{
		0: "0.0", 1: "1.0", 0.1: "0.1", 3.3333333333333335: "3.3333333333333335", 1e7: "1.0E7",
		12345678.9: "1.23456789E7", 0.0001: "1.0E-4", 123.5: "123.5", -2: "-2.0",
	} {
		if got := javaDouble(v); got != want {
			t.Errorf("javaDouble(%v) = %q, want %q", v, got, want)
		}
	}
	if got := JavaFloat(10.0 / 3); got != "3.3333333" {
		t.Errorf("JavaFloat(10/3) = %q, want 3.3333333", got)
	}
}

// TestSamplerStops checks the goroutine New starts ends with Close.
func TestSamplerStops(t *testing.T) {
	s := New(Config{Cluster: "C"})
	s.TopicPut("T", 1, 1)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	var nilStats *Stats
	nilStats.TopicPut("T", 1, 1)
	if nilStats.BrokerPutTotal() != 0 || nilStats.Close() != nil {
		t.Fatal("nil Stats counts")
	}
}

func TestConcurrentCounting(t *testing.T) {
	s, clk := newFake(t)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 1000 {
				s.TopicPut([]string{"A", "B"}[(g+i)%2], 1, 2)
			}
		}()
	}
	for range 10 {
		s.tick(clk.add(time.Second))
	}
	wg.Wait()
	if got := s.BrokerPutTotal(); got != 4000 {
		t.Fatalf("BrokerPutTotal = %d, want 4000", got)
	}
}

// TestPutLatency checks StoreStatsService's latency figures: the max since
// boot, and the distribution and percentiles of the last complete minute.
func TestPutLatency(t *testing.T) {
	if len(pxBounds)+1 != nPx || pxBounds[19] != 20 || pxBounds[20] != 22 || pxBounds[len(pxBounds)-1] != 10000 {
		t.Fatalf("percentile buckets %v", pxBounds)
	}
	s, clk := newFake(t)
	s.tick(clk.Now())
	for _, ms := range []int64{0, 3, 3, 7, 15, 60, 1500} {
		s.PutLatency(time.Duration(ms) * time.Millisecond)
	}
	for i := 0; i < 93; i++ {
		s.PutLatency(2 * time.Millisecond)
	}
	r := s.Runtime()
	if r.PutMessageEntireTimeMax != 1500 || !strings.HasPrefix(r.PutMessageDistributeTime, "[<=0ms]:0 [0~10ms]:0 ") {
		t.Fatalf("before a minute closed: max %d dist %q", r.PutMessageEntireTimeMax, r.PutMessageDistributeTime)
	}
	s.tick(clk.add(60 * time.Second))
	r = s.Runtime()
	want := "[<=0ms]:1 [0~10ms]:96 [10~50ms]:1 [50~100ms]:1 [100~200ms]:0 [200~500ms]:0 [500ms~1s]:0 [1~2s]:1 [2~3s]:0 [3~4s]:0 [4~5s]:0 [5~10s]:0 [10s~]:0 "
	if r.PutMessageDistributeTime != want {
		t.Fatalf("distribution\n got %q\nwant %q", r.PutMessageDistributeTime, want)
	}
	// 100 puts: Java's index is (long)(100*px) = 99 for both 0.99 and
	// 0.999, the 99th put, alone in the (55, 60] ms bucket: its top.
	if r.PutLatency99 != "60.00" || r.PutLatency999 != "60.00" {
		t.Fatalf("putLatency99 %s putLatency999 %s", r.PutLatency99, r.PutLatency999)
	}
	// The next minute without puts reports zeros; the max stays.
	s.tick(clk.add(60 * time.Second))
	if r = s.Runtime(); r.PutLatency99 != "0.00" || r.PutMessageEntireTimeMax != 1500 {
		t.Fatalf("quiet minute: %+v", r)
	}
}

// TestGetLatencyMax checks getMessageEntireTimeMax: the longest pull since
// boot, apart from the put latency.
func TestGetLatencyMax(t *testing.T) {
	s, _ := newFake(t)
	if r := s.Runtime(); r.GetMessageEntireTimeMax != 0 {
		t.Fatalf("no pull yet: %d", r.GetMessageEntireTimeMax)
	}
	for _, ms := range []int64{4, 250, 12} {
		s.GetLatency(time.Duration(ms) * time.Millisecond)
	}
	if r := s.Runtime(); r.GetMessageEntireTimeMax != 250 || r.PutMessageEntireTimeMax != 0 {
		t.Fatalf("get max %d put max %d, want 250 0", r.GetMessageEntireTimeMax, r.PutMessageEntireTimeMax)
	}
	var nilStats *Stats
	nilStats.GetLatency(time.Second) // a broker without statistics
}
