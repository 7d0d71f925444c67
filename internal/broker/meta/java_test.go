package meta

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/vfs"
)

// javaRelease is one RocketMQ release whose classes the Java checks run.
type javaRelease struct {
	name   string // "4.9.8"
	source string // the checker under testdata/java
	jars   []string
	v5     bool // the checker prints the 5.x properties too
}

var javaReleases = []javaRelease{
	{"4.9.8", "ConfigCheck.java", []string{
		"org/apache/rocketmq/rocketmq-common/4.9.8/rocketmq-common-4.9.8.jar",
		"org/apache/rocketmq/rocketmq-remoting/4.9.8/rocketmq-remoting-4.9.8.jar",
		"org/apache/rocketmq/rocketmq-logging/4.9.8/rocketmq-logging-4.9.8.jar",
		"com/alibaba/fastjson/1.2.69_noneautotype/fastjson-1.2.69_noneautotype.jar",
	}, false},
	{"5.3.1", "ConfigCheck5.java", []string{
		"org/apache/rocketmq/rocketmq-common/5.3.1/rocketmq-common-5.3.1.jar",
		"org/apache/rocketmq/rocketmq-remoting/5.3.1/rocketmq-remoting-5.3.1.jar",
		"com/alibaba/fastjson/1.2.83/fastjson-1.2.83.jar",
	}, true},
}

// javaClasspath returns the class path of a release from the local Maven
// repository (plus commons-lang3 and guava when present). When java or one
// of the jars is missing (.ci/run fetches them) the test fails under
// CI=true, naming what is missing, and is skipped elsewhere.
func javaClasspath(t *testing.T, rel javaRelease) string {
	t.Helper()
	missing := func(what string) string {
		t.Helper()
		if os.Getenv("CI") == "true" {
			t.Fatalf("RocketMQ %s check: %s is required under CI=true (.ci/run fetches it)", rel.name, what)
		}
		t.Skipf("RocketMQ %s check: %s is missing", rel.name, what)
		return ""
	}
	if _, err := exec.LookPath("java"); err != nil {
		return missing("java")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return missing("the home directory (for ~/.m2)")
	}
	repo := filepath.Join(home, ".m2", "repository")
	var paths []string
	for _, j := range rel.jars {
		p := filepath.Join(repo, filepath.FromSlash(j))
		if _, err := os.Stat(p); err != nil {
			return missing(p)
		}
		paths = append(paths, p)
	}
	for _, glob := range []string{"org/apache/commons/commons-lang3/*/commons-lang3-*.jar", "com/google/guava/guava/*/guava-*.jar"} {
		if found, _ := filepath.Glob(filepath.Join(repo, filepath.FromSlash(glob))); len(found) > 0 {
			paths = append(paths, found[len(found)-1])
		}
	}
	return strings.Join(paths, string(os.PathListSeparator))
}

// TestJavaReadsOurFiles writes the four files with rocketd's tables (on the
// OS file system), parses them with the own classes and fastjson of
// RocketMQ 4.9.8 and 5.3.1 (testdata/java/ConfigCheck*.java) and compares
// what Java read with our tables. Without java or a release's jars in
// ~/.m2 its subtest fails under CI=true and is skipped elsewhere.
func TestJavaReadsOurFiles(t *testing.T) {
	dir := t.TempDir()
	opts := Options{Dir: dir, FS: vfs.Default}
	tb, err := Open(opts, testBrokerConfig())
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := tb.Topics.AutoCreate("TopicTest", AutoCreateTopic, 4, 0); err != nil {
		t.Fatal(err)
	}
	if err := tb.Topics.Put(protocol.TopicConfig{TopicName: "Ordered", ReadQueueNums: 8, WriteQueueNums: 4, Perm: 4,
		TopicFilterType: protocol.MultiTag, TopicSysFlag: 1, Order: true}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := tb.Topics.EnsureRetryTopic("app_group", 2); err != nil {
		t.Fatal(err)
	}
	if _, ok := tb.Groups.FindOrCreate("app_group"); !ok {
		t.Fatal("group")
	}
	slow := protocol.NewSubscriptionGroupConfig("slow")
	slow.ConsumeEnable, slow.RetryMaxTimes, slow.BrokerID = false, 3, 1
	if err := tb.Groups.Put(slow); err != nil {
		t.Fatal(err)
	}
	// 5.x content: a FIFO topic, an orderly group with a retry policy.
	if _, err := tb.Topics.Update(protocol.TopicConfig{TopicName: "Fifo", ReadQueueNums: 2, WriteQueueNums: 2, Perm: 6},
		[]AttributeChange{{Key: "+message.type", Value: "FIFO"}}); err != nil {
		t.Fatal(err)
	}
	orderly := protocol.NewSubscriptionGroupConfig("orderly")
	orderly.ConsumeMessageOrderly, orderly.GroupSysFlag, orderly.ConsumeTimeoutMinute = true, 1, 7
	orderly.GroupRetryPolicy = protocol.GroupRetryPolicy{Type: protocol.RetryPolicyExponential,
		ExponentialRetryPolicy: &protocol.ExponentialRetryPolicy{Initial: 1000, Max: 60000, Multiplier: 3}}
	if err := tb.Groups.Update(orderly); err != nil {
		t.Fatal(err)
	}
	tb.Offsets.Commit("app_group", "TopicTest", 0, 250)
	tb.Offsets.Commit("app_group", "TopicTest", 3, 1<<40)
	tb.Offsets.Commit("app_group", "%RETRY%app_group", 0, 0)
	tb.DelayOffsets.Set(1, 0)
	tb.DelayOffsets.Set(18, 77)
	if err := tb.Close(); err != nil {
		t.Fatal(err)
	}

	var want []string
	tw := tb.Topics.Snapshot()
	want = append(want, fmt.Sprintf("topics-version %d,%d", tw.DataVersion.Counter, tw.DataVersion.Timestamp))
	for name, tc := range tw.TopicConfigTable {
		want = append(want, fmt.Sprintf("topic %s %s %d %d %d %s %d %v", name, tc.TopicName, tc.ReadQueueNums,
			tc.WriteQueueNums, tc.Perm, tc.TopicFilterType, tc.TopicSysFlag, tc.Order))
	}
	gw := tb.Groups.Snapshot()
	want = append(want, fmt.Sprintf("groups-version %d,%d", gw.DataVersion.Counter, gw.DataVersion.Timestamp))
	for name, g := range gw.SubscriptionGroupTable {
		want = append(want, fmt.Sprintf("group %s %s %v %v %v %d %d %d %d %v", name, g.GroupName, g.ConsumeEnable,
			g.ConsumeFromMinEnable, g.ConsumeBroadcastEnable, g.RetryQueueNums, g.RetryMaxTimes, g.BrokerID,
			g.WhichBrokerWhenConsumeSlowly, g.NotifyConsumerIdsChangedEnable))
	}
	var want5 []string // what the 5.x checker prints on top
	for name, tc := range tw.TopicConfigTable {
		if len(tc.Attributes) > 0 {
			want5 = append(want5, fmt.Sprintf("topic-attributes %s {message.type=FIFO} %s", name, tc.MessageType()))
		}
	}
	for name, g := range gw.SubscriptionGroupTable {
		delay := 30000 // CUSTOMIZED: next[1+2]
		if g.GroupRetryPolicy.Type == protocol.RetryPolicyExponential {
			delay = 3000 // min(60000, 1000*3^1)
		}
		want5 = append(want5, fmt.Sprintf("group5 %s %v %d %d %s %d {}", name, g.ConsumeMessageOrderly, g.GroupSysFlag,
			g.ConsumeTimeoutMinute, g.GroupRetryPolicy.Type, delay))
	}
	for key, queues := range tb.Offsets.Snapshot().OffsetTable {
		for q, off := range queues {
			want = append(want, fmt.Sprintf("offset %s %d %d", key, q, off))
		}
	}
	for level, off := range tb.DelayOffsets.Snapshot().OffsetTable {
		want = append(want, fmt.Sprintf("delay %d %d", level, off))
	}
	slices.Sort(want)

	for _, rel := range javaReleases {
		t.Run(rel.name, func(t *testing.T) {
			cp := javaClasspath(t, rel)
			got := strings.Split(strings.TrimSpace(runConfigCheck(t, rel.source, cp, "read", dir)), "\n")
			want := want
			if rel.v5 {
				want = append(slices.Clone(want), want5...)
				slices.Sort(want)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("Java read:\n%s\n\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

// runConfigCheck runs testdata/java/<source> with mode and dir and returns
// its output.
func runConfigCheck(t *testing.T, source, cp, mode, dir string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "java", "-cp", cp, filepath.Join("testdata", "java", source), mode, dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("java ConfigCheck %s: %v\n%s", mode, err, out)
	}
	return string(out)
}

// TestWeReadJavaFiles has RocketMQ 4.9.8 persist the four files (fastjson
// pretty format, as ConfigManager.persist does), loads them with our
// tables, and checks that our writer produces the very same bytes for the
// same content. Without java or the jars in ~/.m2 it fails under CI=true
// and is skipped elsewhere.
func TestWeReadJavaFiles(t *testing.T) {
	rel := javaReleases[0]
	cp := javaClasspath(t, rel)
	dir := t.TempDir()
	runConfigCheck(t, rel.source, cp, "write", dir)
	opts := Options{Dir: dir, FS: vfs.Default}

	tp, err := OpenTopics(opts, testBrokerConfig())
	if err != nil {
		t.Fatal(err)
	}
	ordered := protocol.TopicConfig{TopicName: "Ordered", ReadQueueNums: 8, WriteQueueNums: 4, Perm: 4,
		TopicFilterType: protocol.MultiTag, TopicSysFlag: 1, Order: true}
	topicsVersion := protocol.DataVersion{Counter: 5, Timestamp: 1690000000000}
	if tc, _ := tp.Get("Ordered"); !reflect.DeepEqual(tc, ordered) || tp.DataVersion() != topicsVersion {
		t.Fatalf("topics: %+v %+v", tc, tp.DataVersion())
	}
	g, err := OpenGroups(opts, testBrokerConfig())
	if err != nil {
		t.Fatal(err)
	}
	slow := protocol.NewSubscriptionGroupConfig("slow")
	slow.ConsumeEnable, slow.RetryMaxTimes, slow.BrokerID = false, 3, 1
	groupsVersion := protocol.DataVersion{Counter: 2, Timestamp: 1690000000001}
	if cfg, _ := g.Get("slow"); !reflect.DeepEqual(cfg, slow) || g.DataVersion() != groupsVersion {
		t.Fatalf("groups: %+v %+v", cfg, g.DataVersion())
	}
	o, err := OpenOffsets(opts)
	if err != nil {
		t.Fatal(err)
	}
	if got := o.QueryAll("app_group", "TopicTest"); !reflect.DeepEqual(got, map[int32]int64{0: 250, 1: 1 << 40}) {
		t.Fatalf("offsets: %v", got)
	}
	d, err := OpenDelayOffsets(opts)
	if err != nil {
		t.Fatal(err)
	}
	if got := d.Snapshot().OffsetTable; !reflect.DeepEqual(got, map[int32]int64{1: 0, 18: 77}) {
		t.Fatalf("delay offsets: %v", got)
	}

	// Byte for byte: one entry per map, so map order cannot differ.
	for name, v := range map[string]any{
		TopicsFile: protocol.TopicConfigSerializeWrapper{
			TopicConfigTable: map[string]protocol.TopicConfig{"Ordered": ordered}, DataVersion: topicsVersion},
		SubscriptionGroupFile: protocol.SubscriptionGroupTable{
			SubscriptionGroupTable: map[string]protocol.SubscriptionGroupConfig{"slow": slow}, DataVersion: groupsVersion},
		ConsumerOffsetFile: o.Snapshot(),
		DelayOffsetFile:    d.Snapshot(),
	} {
		ours, err := protocol.MarshalFastJSONPretty(v)
		if err != nil {
			t.Fatal(err)
		}
		java, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if string(ours) != string(java) {
			t.Errorf("%s differs from Java's:\nours:\n%s\njava:\n%s", name, ours, java)
		}
	}
}
