package protocol

import (
	"bytes"
	"os"
	"reflect"
	"strings"
	"testing"
)

// javaDetail is the mapping detail of testdata/mapping/Gen.java.
func javaDetail() *TopicQueueMappingDetail {
	return &TopicQueueMappingDetail{
		Topic: "ST", Scope: MetadataScopeGlobal, TotalQueues: 2, Bname: "broker-a", Epoch: 1700000000000,
		CurrIDMap: map[int32]int32{},
		HostedQueues: map[int32][]LogicQueueMappingItem{
			0: {{Gen: 0, QueueID: 0, Bname: "broker-a", LogicOffset: 0, StartOffset: 0, EndOffset: -1, TimeOfStart: -1, TimeOfEnd: -1}},
			1: {
				{Gen: 0, QueueID: 3, Bname: "broker-b", LogicOffset: 0, StartOffset: 0, EndOffset: 10, TimeOfStart: -1, TimeOfEnd: -1},
				{Gen: 1, QueueID: 1, Bname: "broker-a", LogicOffset: 10, StartOffset: 0, EndOffset: -1, TimeOfStart: -1, TimeOfEnd: -1},
			},
		},
	}
}

func readMappingFile(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile("testdata/mapping/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSpace(data)
}

// TestMappingDetailJava checks the body of UPDATE_AND_CREATE_STATIC_TOPIC
// (TopicQueueMappingDetail.encode) both ways against Java's bytes.
func TestMappingDetailJava(t *testing.T) {
	java := readMappingFile(t, "detail.json")
	var got TopicQueueMappingDetail
	if err := UnmarshalFastJSON(java, &got); err != nil {
		t.Fatal(err)
	}
	if want := javaDetail(); !reflect.DeepEqual(&got, want) {
		t.Fatalf("decoded\n%+v\nwant\n%+v", got, *want)
	}
	out, err := MarshalFastJSON(javaDetail())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out, java) {
		t.Fatalf("encoded\n%s\nJava\n%s", out, java)
	}
}

// TestTopicConfigAndQueueMappingJava checks GET_TOPIC_CONFIG's body with a
// mapping against Java's; the only difference is the empty attributes
// object, which rocketd's TopicConfig omits everywhere (5.x clients read
// both).
func TestTopicConfigAndQueueMappingJava(t *testing.T) {
	java := readMappingFile(t, "config_and_mapping.json")
	tc := NewTopicConfig("ST")
	tc.ReadQueueNums, tc.WriteQueueNums = 2, 2
	out, err := MarshalFastJSON(NewTopicConfigAndQueueMapping(tc, javaDetail()))
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.Replace(string(java), `"attributes":{},`, "", 1); string(out) != want {
		t.Fatalf("encoded\n%s\nwant\n%s", out, want)
	}
	out, err = MarshalFastJSON(NewTopicConfigAndQueueMapping(tc, nil))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), "mappingDetail") {
		t.Fatalf("no mapping: %s", out)
	}
}

// TestTopicQueueMappingFileJava checks config/topicQueueMapping.json: a
// Java file decodes, and the pretty encoding is Java's apart from
// dataVersion's stateVersion 0, which rocketd's DataVersion omits.
func TestTopicQueueMappingFileJava(t *testing.T) {
	java := readMappingFile(t, "topicQueueMapping.json")
	var w TopicQueueMappingSerializeWrapper
	if err := UnmarshalFastJSON(java, &w); err != nil {
		t.Fatal(err)
	}
	if got := w.TopicQueueMappingInfoMap["ST"]; !reflect.DeepEqual(got, javaDetail()) {
		t.Fatalf("decoded %+v", got)
	}
	out, err := MarshalFastJSONPretty(w)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(string(java), "\t\t\"stateVersion\":0,\n", "", 1)
	if string(out) != want {
		t.Fatalf("encoded\n%s\nwant\n%s", out, want)
	}
}

func TestMappingItemOffsets(t *testing.T) {
	it := LogicQueueMappingItem{LogicOffset: 10, StartOffset: 0, EndOffset: -1}
	if it.StaticOffsetLoosely(5) != 15 || it.PhysicalOffset(15) != 5 || it.MaxStaticOffset() != 10 {
		t.Fatalf("open item: %d %d %d", it.StaticOffsetLoosely(5), it.PhysicalOffset(15), it.MaxStaticOffset())
	}
	closed := LogicQueueMappingItem{LogicOffset: 0, StartOffset: 2, EndOffset: 12}
	if closed.StaticOffsetLoosely(20) != 10 || closed.StaticOffsetLoosely(1) != 0 || closed.MaxStaticOffset() != 10 {
		t.Fatalf("closed item: %d %d %d", closed.StaticOffsetLoosely(20), closed.StaticOffsetLoosely(1), closed.MaxStaticOffset())
	}
	if (LogicQueueMappingItem{LogicOffset: -1}).StaticOffsetLoosely(3) != -1 {
		t.Fatal("undecided item")
	}
}

func TestCheckItemOffsets(t *testing.T) {
	good := []LogicQueueMappingItem{
		{Gen: 0, QueueID: 3, Bname: "broker-b", LogicOffset: 0, EndOffset: 10},
		{Gen: 1, QueueID: 1, Bname: "broker-a", LogicOffset: 11, EndOffset: -1},
	}
	if err := CheckItemOffsets(good); err != nil {
		t.Fatal(err)
	}
	// Java's rule: the next item starts above the previous one's max
	// (logicOffset + endOffset - startOffset), not at it.
	if err := CheckItemOffsets(javaDetail().HostedQueues[1]); err == nil {
		t.Fatal("a chain whose next item starts at the previous max accepted")
	}
	for name, items := range map[string][]LogicQueueMappingItem{
		"negative queue":     {{QueueID: -1, EndOffset: -1}},
		"gen not growing":    {{Gen: 1, EndOffset: 10}, {Gen: 1, LogicOffset: 10, EndOffset: -1}},
		"undecided non-last": {{Gen: 0, LogicOffset: -1, EndOffset: 10}, {Gen: 1, LogicOffset: 10, EndOffset: -1}},
		"end before start":   {{StartOffset: 5, EndOffset: 3}},
		"logic overlaps":     {{Gen: 0, LogicOffset: 0, EndOffset: 20}, {Gen: 1, LogicOffset: 10, EndOffset: -1}},
	} {
		if err := CheckItemOffsets(items); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestCheckItemsImmutable(t *testing.T) {
	old := javaDetail().HostedQueues[1]
	if err := CheckItemsImmutable(old, old, true); err != nil {
		t.Fatal(err)
	}
	moved := append(append([]LogicQueueMappingItem{}, old...), LogicQueueMappingItem{Gen: 2, QueueID: 0, Bname: "broker-c", LogicOffset: -1, EndOffset: -1})
	if err := CheckItemsImmutable(old, moved, false); err != nil {
		t.Fatalf("a new leader with a new epoch: %v", err)
	}
	if err := CheckItemsImmutable(old, moved, true); err == nil {
		t.Fatal("a new leader with the same epoch accepted")
	}
	changed := append([]LogicQueueMappingItem{}, old...)
	changed[0].QueueID = 7
	if err := CheckItemsImmutable(old, changed, false); err == nil {
		t.Fatal("a changed item accepted")
	}
	if err := CheckItemsImmutable(old, nil, false); err == nil {
		t.Fatal("an emptied chain accepted")
	}
}
