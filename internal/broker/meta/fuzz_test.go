package meta

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/rocketd/rocketd/internal/vfs"
)

// FuzzLoadConfigFiles feeds arbitrary bytes to the loaders of all four
// files (they read what a Java broker, an operator's editor or a torn write
// left). Loading must not panic; when it succeeds, what we write back must
// load as the same table (encode(decode(x)) is a fixed point).
func FuzzLoadConfigFiles(f *testing.F) {
	for _, name := range []string{"java-topics.json", "java-subscriptionGroup.json", "java-consumerOffset.json", "java-delayOffset.json",
		"java5-topics.json", "java5-subscriptionGroup.json"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, s := range []string{"", "{}", "null", `{"offsetTable":{1:2}}`, `{"topicConfigTable":{"a":{}}}`,
		`{"subscriptionGroupTable":{"g":{"groupName":"x"}}}`, `{"offsetTable":{"a@b":{"1":-1}}}`, "{\"offsetTable\":{\"\u00e9@\\ud800\":{0:1}}}"} {
		f.Add([]byte(s))
	}
	bc := testBrokerConfig()
	f.Fuzz(func(t *testing.T, data []byte) {
		type table struct {
			file  string
			open  func(vfs.FS) (any, error)
			state func(any) any
			save  func(any) error
		}
		tables := []table{
			{TopicsFile, func(fs vfs.FS) (any, error) { return OpenTopics(memOptions(fs), bc) },
				func(v any) any { return v.(*Topics).Snapshot() }, func(v any) error { return v.(*Topics).Persist() }},
			{SubscriptionGroupFile, func(fs vfs.FS) (any, error) { return OpenGroups(memOptions(fs), bc) },
				func(v any) any { return v.(*Groups).Snapshot() }, func(v any) error { return v.(*Groups).Persist() }},
			{ConsumerOffsetFile, func(fs vfs.FS) (any, error) { return OpenOffsets(memOptions(fs)) },
				func(v any) any { return v.(*Offsets).Snapshot() }, func(v any) error { return v.(*Offsets).Persist() }},
			{DelayOffsetFile, func(fs vfs.FS) (any, error) { return OpenDelayOffsets(memOptions(fs)) },
				func(v any) any { return v.(*DelayOffsets).Snapshot() }, func(v any) error { return v.(*DelayOffsets).Persist() }},
		}
		for _, tb := range tables {
			fs := vfs.NewMem()
			writeRaw(t, fs, filepath.Join(testDir, tb.file), data)
			v, err := tb.open(fs)
			if err != nil {
				continue
			}
			first := tb.state(v)
			if err := tb.save(v); err != nil {
				t.Fatalf("%s: persist: %v", tb.file, err)
			}
			again, err := tb.open(fs)
			if err != nil {
				t.Fatalf("%s: our own file does not load: %v\n%s", tb.file, err, readRaw(t, fs, filepath.Join(testDir, tb.file)))
			}
			if second := tb.state(again); !reflect.DeepEqual(first, second) {
				t.Fatalf("%s: round trip changed the table:\n%#v\n%#v", tb.file, first, second)
			}
		}
	})
}

// FuzzTopicAttributeChanges: the attributes text of UPDATE_AND_CREATE_TOPIC
// never panics the parser or the alter rules; accepted text round-trips
// through ChangesToText, and an accepted result holds only known
// attributes with verified values.
func FuzzTopicAttributeChanges(f *testing.F) {
	for _, s := range []string{"", "+message.type=FIFO", "-message.type", "+a=b,-c", ",", "=", "+=", "-", "+message.type==FIFO",
		"+queue.type=SimpleCQ,+cleanup.policy=DELETE,+reserve.time=-1", "x+y=1", "+message.type=FIFO,+message.type=FIFO"} {
		f.Add(s, true)
		f.Add(s, false)
	}
	current := map[string]string{"message.type": "FIFO", "queue.type": "SimpleCQ"}
	f.Fuzz(func(t *testing.T, text string, create bool) {
		changes, err := ParseAttributeChanges(text)
		if err != nil {
			if !errors.Is(err, ErrAttribute) {
				t.Fatalf("error without ErrAttribute: %v", err)
			}
			return
		}
		// An "+k==v" entry has an empty value, which the text form
		// cannot carry (as in Java's parseToString).
		if !slices.ContainsFunc(changes, func(c AttributeChange) bool { return !c.Delete && c.Value == "" }) {
			again, err := ParseAttributeChanges(ChangesToText(changes))
			if err != nil || !reflect.DeepEqual(again, changes) && len(changes) > 0 {
				t.Fatalf("%q: round trip %+v -> %+v (%v)", text, changes, again, err)
			}
		}
		var cur map[string]string
		if !create {
			cur = current
		}
		final, err := AlterTopicAttributes(create, cur, changes)
		if err != nil {
			if !errors.Is(err, ErrAttribute) {
				t.Fatalf("error without ErrAttribute: %v", err)
			}
			return
		}
		for k, v := range final {
			attr, ok := topicAttributes[k]
			if !ok || attr.verify(v) != nil {
				t.Fatalf("%q: accepted %s=%q", text, k, v)
			}
		}
		if current["message.type"] != "FIFO" || len(current) != 2 {
			t.Fatal("the current attributes were changed in place")
		}
	})
}
