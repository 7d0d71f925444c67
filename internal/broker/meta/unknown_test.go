package meta

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/vfs"
)

// javaDefaults are the members Java 5.x writes that rocketd leaves out
// while they hold these values (readers apply the same defaults).
var javaDefaults = map[string]string{
	"attributes":            `{}`,
	"consumeMessageOrderly": `false`,
	"groupSysFlag":          `0`,
	"consumeTimeoutMinute":  `15`,
	"groupRetryPolicy":      `{"type":"CUSTOMIZED"}`,
	"stateVersion":          `0`,
}

// installJava5Fixture installs testdata/java5-<name> (written by RocketMQ
// 5.3.1, see ConfigCheck5 write5x) after applying the replacements: the
// tests add properties no release has, as a newer Java would.
func installJava5Fixture(t *testing.T, fs vfs.FS, name string, replace ...string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "java5-"+name))
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	for i := 0; i < len(replace); i += 2 {
		if !strings.Contains(text, replace[i]) {
			t.Fatalf("fixture %s lacks %q", name, replace[i])
		}
		text = strings.Replace(text, replace[i], replace[i+1], 1)
	}
	writeRaw(t, fs, filepath.Join(testDir, name), []byte(text))
	return []byte(text)
}

// decodeGeneric reads fastjson text as nested maps with numbers as text.
func decodeGeneric(t *testing.T, data []byte) map[string]any {
	t.Helper()
	std, err := protocol.NormalizeFastJSON(data)
	if err != nil {
		t.Fatal(err)
	}
	d := json.NewDecoder(strings.NewReader(string(std)))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		t.Fatal(err)
	}
	return m
}

// checkKept fails unless every member of orig is in got with the same value,
// or absent from got while holding a Java default; path names the object.
func checkKept(t *testing.T, path string, orig, got map[string]any) {
	t.Helper()
	for k, want := range orig {
		have, ok := got[k]
		if !ok {
			text, _ := json.Marshal(want)
			if def, isDefault := javaDefaults[k]; !isDefault || def != string(text) {
				t.Errorf("%s.%s = %s lost in the rewrite", path, k, text)
			}
			continue
		}
		wm, wIsMap := want.(map[string]any)
		hm, hIsMap := have.(map[string]any)
		if wIsMap && hIsMap && (k == "topicConfigTable" || k == "subscriptionGroupTable" || strings.Contains(path, "Table")) {
			checkKept(t, path+"."+k, wm, hm)
			continue
		}
		if !reflect.DeepEqual(want, have) {
			t.Errorf("%s.%s: %v, rewritten as %v", path, k, want, have)
		}
	}
}

// TestJava5FilesSurviveRewrite loads topics.json and subscriptionGroup.json
// as RocketMQ 5.3.1 writes them, plus properties no release knows yet (on
// an entry and at the top), changes another entry so that rocketd rewrites
// both files, and checks that nothing of the Java content was lost.
func TestJava5FilesSurviveRewrite(t *testing.T) {
	fs := vfs.NewMem()
	origTopics := installJava5Fixture(t, fs, TopicsFile,
		`"topicName":"FifoTopic",`, `"topicName":"FifoTopic","futureProp":{"z":[1.50,{"b":true,"a":null}],"a":"é"},`,
		`"dataVersion":{`, `"futureTop":7,"dataVersion":{`)
	origGroups := installJava5Fixture(t, fs, SubscriptionGroupFile,
		`"groupName":"orderly",`, `"groupName":"orderly","futureProp":"x",`)

	tp := openTopics(t, fs, nil)
	fifo, ok := tp.Get("FifoTopic")
	if !ok || fifo.MessageType() != protocol.MessageTypeFIFO || fifo.Attributes["queue.type"] != "SimpleCQ" ||
		fifo.ReadQueueNums != 4 || fifo.Unknown["futureProp"] == nil {
		t.Fatalf("FifoTopic %+v", fifo)
	}
	g := openGroups(t, fs, nil)
	orderly, ok := g.Get("orderly")
	if !ok || !orderly.ConsumeMessageOrderly || orderly.RetryMaxTimes != 2 || orderly.GroupSysFlag != 1 ||
		orderly.ConsumeTimeoutMinute != 7 || orderly.GroupRetryPolicy.Type != protocol.RetryPolicyExponential ||
		orderly.GroupRetryPolicy.ExponentialRetryPolicy == nil || orderly.GroupRetryPolicy.ExponentialRetryPolicy.Multiplier != 3 ||
		len(orderly.SubscriptionDataSet) != 1 || orderly.SubscriptionDataSet[0].Expression != "a || b" ||
		string(orderly.Unknown["futureProp"]) != `"x"` {
		t.Fatalf("orderly %+v", orderly)
	}

	// An admin update of the FIFO topic keeps its unknown property too.
	changed, err := tp.Update(protocol.TopicConfig{TopicName: "FifoTopic", ReadQueueNums: 8, WriteQueueNums: 8, Perm: 6},
		[]AttributeChange{{Key: "+message.type", Value: "FIFO"}})
	if err != nil || !changed {
		t.Fatal(changed, err)
	}
	if _, err := tp.Update(protocol.NewTopicConfig("Other"), nil); err != nil {
		t.Fatal(err)
	}
	if err := g.Update(protocol.NewSubscriptionGroupConfig("other")); err != nil {
		t.Fatal(err)
	}

	gotTopics := decodeGeneric(t, []byte(readRaw(t, fs, filepath.Join(testDir, TopicsFile))))
	want := decodeGeneric(t, origTopics)
	want["topicConfigTable"].(map[string]any)["FifoTopic"].(map[string]any)["readQueueNums"] = json.Number("8")
	want["topicConfigTable"].(map[string]any)["FifoTopic"].(map[string]any)["writeQueueNums"] = json.Number("8")
	delete(want, "dataVersion") // bumped
	checkKept(t, "topics", want, gotTopics)
	gotGroups := decodeGeneric(t, []byte(readRaw(t, fs, filepath.Join(testDir, SubscriptionGroupFile))))
	want = decodeGeneric(t, origGroups)
	delete(want, "dataVersion")
	checkKept(t, "groups", want, gotGroups)

	// What we wrote loads as the same tables.
	if tp2 := openTopics(t, fs, nil); !reflect.DeepEqual(tp2.Snapshot(), tp.Snapshot()) {
		t.Fatalf("topics round trip:\n%+v\n%+v", tp2.Snapshot(), tp.Snapshot())
	}
	if g2 := openGroups(t, fs, nil); !reflect.DeepEqual(g2.Snapshot(), g.Snapshot()) {
		t.Fatal("groups round trip")
	}
}

// TestGroupUpdateKeepsUnknown: an admin update of a group replaces what
// it models but keeps the file's unknown properties, and refuses group
// attributes as Java 5.x does (it knows none).
func TestGroupUpdateKeepsUnknown(t *testing.T) {
	fs := vfs.NewMem()
	installJava5Fixture(t, fs, SubscriptionGroupFile, `"groupName":"orderly",`, `"groupName":"orderly","futureProp":"x",`)
	g := openGroups(t, fs, nil)
	upd := protocol.NewSubscriptionGroupConfig("orderly")
	upd.RetryMaxTimes = 9
	upd.Unknown = protocol.UnknownMembers{"fromRequest": json.RawMessage(`1`)}
	if err := g.Update(upd); err != nil {
		t.Fatal(err)
	}
	got, _ := g.Get("orderly")
	if got.RetryMaxTimes != 9 || got.ConsumeMessageOrderly || !reflect.DeepEqual(got.Unknown, protocol.UnknownMembers{"futureProp": json.RawMessage(`"x"`)}) {
		t.Fatalf("updated %+v", got)
	}
	v := g.DataVersion()
	upd.Attributes = map[string]string{"+x": "1"}
	if err := g.Update(upd); err == nil || err.Error() != "unsupported key: x" || g.DataVersion() != v {
		t.Fatalf("group attribute: %v", err)
	}
}
