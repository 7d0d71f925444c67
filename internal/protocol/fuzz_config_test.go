package protocol

import (
	"encoding/json"
	"reflect"
	"strconv"
	"testing"
)

// FuzzConfigBeans: TopicConfig and SubscriptionGroupConfig (with the
// members they keep without modelling them) decode arbitrary text without
// panicking, and what decodes is a fixed point of write-then-read in both
// the compact and the pretty form. (The file wrappers are fuzzed by meta's
// FuzzLoadConfigFiles.)
func FuzzConfigBeans(f *testing.F) {
	for _, s := range []string{
		`{}`, `null`, `{"topicName":"T","attributes":{"message.type":"FIFO"},"x":{"b":[1.50,null],"a":"\u00e9"}}`,
		`{"groupName":"g","consumeMessageOrderly":true,"groupRetryPolicy":{"type":"EXPONENTIAL","exponentialRetryPolicy":{"initial":1}},"future":[[]]}`,
		`{"groupName":"g","subscriptionDataSet":[{"topic":"T","version":-1}],"attributes":{"a":"b"},"consumeTimeoutMinute":15}`,
		`{"TOPICNAME":"T","topicname":"U"}`, `{"topicConfigList":[{"topicName":"T","attributes":{"+message.type":"FIFO"}}]}`, `{"a":1e400}`, `{"x":-0}`, `[1]`, `{"perm":"x"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var tc TopicConfig
		if UnmarshalFastJSON(data, &tc) == nil {
			fixedPoint(t, tc, func() any { return new(TopicConfig) })
			// The member scanner agrees with encoding/json on the names.
			std, _ := NormalizeFastJSON(data)
			var all map[string]json.RawMessage
			if json.Unmarshal(std, &all) == nil {
				want := map[string]bool{}
				for name := range all {
					if !knownProperty(structFields(reflect.TypeFor[TopicConfig]()), []byte(strconv.Quote(name))) {
						want[name] = true
					}
				}
				got := map[string]bool{}
				for name := range tc.Unknown {
					got[name] = true
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("unknown members %v, encoding/json sees %v", got, want)
				}
			}
		}
		var g SubscriptionGroupConfig
		if UnmarshalFastJSON(data, &g) == nil {
			fixedPoint(t, g, func() any { return new(SubscriptionGroupConfig) })
		}
		var list CreateTopicListRequestBody
		if UnmarshalFastJSON(data, &list) == nil {
			for _, tc := range list.TopicConfigList {
				fixedPoint(t, tc, func() any { return new(TopicConfig) })
			}
		}
		// The 5.x admin headers take any text.
		ext := map[string]string{"topic": string(data), "lo": string(data), "group": string(data)}
		var th GetTopicConfigRequestHeader
		if th.Decode(ext) == nil && th.Topic != string(data) {
			t.Fatal("topic not kept")
		}
		var gh GetSubscriptionGroupConfigRequestHeader
		if err := gh.Decode(ext); err != nil || gh.Group != string(data) {
			t.Fatal("group not kept")
		}
	})
}

func fixedPoint(t *testing.T, v any, fresh func() any) {
	t.Helper()
	for _, marshal := range []func(any) ([]byte, error){MarshalFastJSON, MarshalFastJSONPretty} {
		out, err := marshal(v)
		if err != nil {
			t.Fatalf("%T does not encode: %v", v, err)
		}
		again := fresh()
		if err := UnmarshalFastJSON(out, again); err != nil {
			t.Fatalf("%T: our own text does not decode: %v\n%s", v, err, out)
		}
		if got := reflect.ValueOf(again).Elem().Interface(); !reflect.DeepEqual(got, v) {
			t.Fatalf("%T changed by a round trip:\n%#v\n%#v\n%s", v, v, got, out)
		}
	}
}
