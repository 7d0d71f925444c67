package pop

import (
	"encoding/json"
	"slices"
	"testing"
)

var ackSamples = []AckMsg{
	{AckOffset: 7, StartOffset: 5, ConsumerGroup: "g", Topic: "t", QueueID: 3, PopTime: 1700000000000, BrokerName: "broker-a"},
	{AckOffset: -1, StartOffset: 0, ConsumerGroup: "%RETRY%g_t", Topic: "T-1|x", QueueID: 0, PopTime: 1, BrokerName: "b", AckOffsetList: []int64{0, 3, 9}},
	{AckOffset: 0, ConsumerGroup: "g<&>", Topic: "t\"q\\", BrokerName: "brö\x01ker"}, // escaped: the slow path
	{AckOffset: 1, AckOffsetList: []int64{}}, // omitted aol
}

// appendAckJSON writes what encoding/json writes, byte for byte: Java's
// reader and older rocketd versions read these records.
func TestAckJSONAsEncodingJSON(t *testing.T) {
	for _, a := range ackSamples {
		want, err := json.Marshal(&a)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendAckJSON(nil, &a); string(got) != string(want) {
			t.Errorf("appendAckJSON\n got %s\nwant %s", got, want)
		}
		if string(a.appendUniqKey(nil)) != a.uniqKey() {
			t.Errorf("appendUniqKey %q, uniqKey %q", a.appendUniqKey(nil), a.uniqKey())
		}
	}
}

// parseAckJSON reads what appendAckJSON writes and gives up (false) on
// what it does not, leaving it to encoding/json.
func TestParseAckJSON(t *testing.T) {
	for i, a := range ackSamples {
		b := appendAckJSON(nil, &a)
		var v ackView
		ok := parseAckJSON(b, &v)
		if i >= 2 && i != 3 {
			if ok {
				t.Errorf("%s: fast path accepted escapes", b)
			}
			continue
		}
		if !ok {
			t.Fatalf("%s: not read", b)
		}
		if string(v.appendKey(nil)) != a.key() || v.ackOffset != a.AckOffset || !slices.Equal(v.offsets, nilIfEmpty(a.AckOffsetList)) {
			t.Errorf("%s: read %+v", b, v)
		}
	}
	for _, bad := range []string{"", "{}", `{"ao":01,"so":0,"c":"g","t":"t","q":0,"pt":0,"bn":"b"}`,
		`{"ao":1,"so":0,"c":"g","t":"t","q":0,"pt":0,"bn":"b"} `, `{"so":0,"ao":1,"c":"g","t":"t","q":0,"pt":0,"bn":"b"}`,
		`{"ao":1,"so":0,"c":"g","t":"t","q":4294967296,"pt":0,"bn":"b"}`, `{"ao":1,"so":0,"c":"g","t":"t","q":0,"pt":0,"bn":"b","aol":[]}`} {
		var v ackView
		if parseAckJSON([]byte(bad), &v) {
			t.Errorf("%s: accepted", bad)
		}
	}
}

func nilIfEmpty(v []int64) []int64 {
	if len(v) == 0 {
		return nil
	}
	return v
}

// FuzzParseAckJSON: whatever the fast path accepts, encoding/json reads
// the same way.
func FuzzParseAckJSON(f *testing.F) {
	for _, a := range ackSamples {
		f.Add(appendAckJSON(nil, &a))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var v ackView
		if !parseAckJSON(b, &v) {
			return
		}
		var a AckMsg
		if err := json.Unmarshal(b, &a); err != nil {
			t.Fatalf("%q: fast path read what encoding/json refuses: %v", b, err)
		}
		if string(v.appendKey(nil)) != a.key() || v.ackOffset != a.AckOffset || !slices.Equal(v.offsets, nilIfEmpty(a.AckOffsetList)) {
			t.Fatalf("%q: fast path %+v, encoding/json %+v", b, v, a)
		}
		if got := appendAckJSON(nil, &a); string(got) != string(b) {
			t.Fatalf("%q: accepted, but encoding/json writes %q", b, got)
		}
	})
}
