package protocol

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// The HEART_BEAT body as the Go client sends it (go-client-wire.md §5):
// codeSet as JSON strings, subVersion in ns.
const goClientHeartbeat = `{"clientID":"192.0.2.2@at-c-1-2",
 "producerDataSet":[],
 "consumerDataSet":[{
   "groupName":"cg","consumeType":"CONSUME_PASSIVELY","messageModel":"CLUSTERING",
   "consumeFromWhere":"CONSUME_FROM_FIRST_OFFSET",
   "subscriptionDataSet":[
     {"classFilterMode":false,"topic":"%RETRY%cg","subString":"*","tagsSet":[],"codeSet":[],
      "subVersion":1795982377395223940,"expressionType":"TAG"},
     {"classFilterMode":false,"topic":"T","subString":"TagA || TagB","tagsSet":["TagA","TagB"],
      "codeSet":["2598919","2598920"],"subVersion":1795982377395200000,"expressionType":"TAG"}],
   "unitMode":false}]}`

func TestHeartbeatFromGoClient(t *testing.T) {
	var hb HeartbeatData
	if err := UnmarshalFastJSON([]byte(goClientHeartbeat), &hb); err != nil {
		t.Fatal(err)
	}
	want := HeartbeatData{
		ClientID:        "192.0.2.2@at-c-1-2",
		ProducerDataSet: []ProducerData{},
		ConsumerDataSet: []ConsumerData{{
			GroupName: "cg", ConsumeType: ConsumePassively, MessageModel: Clustering,
			ConsumeFromWhere: ConsumeFromFirstOffset,
			SubscriptionDataSet: []SubscriptionData{
				{Topic: "%RETRY%cg", SubString: SubAll, TagsSet: []string{}, CodeSet: CodeSet{},
					SubVersion: 1795982377395223940, ExpressionType: ExpressionTag},
				{Topic: "T", SubString: "TagA || TagB", TagsSet: []string{"TagA", "TagB"},
					CodeSet: CodeSet{2598919, 2598920}, SubVersion: 1795982377395200000, ExpressionType: ExpressionTag},
			},
		}},
	}
	if !reflect.DeepEqual(hb, want) {
		t.Fatalf("got  %+v\nwant %+v", hb, want)
	}
	// Producer-only heartbeat (captured).
	var p HeartbeatData
	if err := UnmarshalFastJSON([]byte(`{"clientID":"192.0.2.2@at-p-1","producerDataSet":[{"groupName":"pg"}],"consumerDataSet":[]}`), &p); err != nil {
		t.Fatal(err)
	}
	if len(p.ProducerDataSet) != 1 || p.ProducerDataSet[0].GroupName != "pg" {
		t.Fatalf("producer heartbeat: %+v", p)
	}
}

// Java writes codeSet as numbers; we write it the Java way.
func TestHeartbeatJavaForm(t *testing.T) {
	hb := HeartbeatData{ClientID: "10.0.0.1@123#456", ConsumerDataSet: []ConsumerData{{
		GroupName: "g", ConsumeType: ConsumeActively, MessageModel: Broadcasting, ConsumeFromWhere: ConsumeFromLastOffset,
		SubscriptionDataSet: []SubscriptionData{{Topic: "T", SubString: "a", TagsSet: []string{"a"},
			CodeSet: CodeSet{97}, SubVersion: 1, ExpressionType: ExpressionTag}},
	}}}
	got, err := MarshalFastJSON(&hb)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"clientID":"10.0.0.1@123#456","consumerDataSet":[{"consumeFromWhere":"CONSUME_FROM_LAST_OFFSET","consumeType":"CONSUME_ACTIVELY","groupName":"g","messageModel":"BROADCASTING","subscriptionDataSet":[{"classFilterMode":false,"codeSet":[97],"expressionType":"TAG","subString":"a","subVersion":1,"tagsSet":["a"],"topic":"T"}],"unitMode":false}],"producerDataSet":[]}`
	if string(got) != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	var back HeartbeatData
	if err := UnmarshalFastJSON(got, &back); err != nil {
		t.Fatal(err)
	}
	hb.ProducerDataSet = []ProducerData{}
	if !reflect.DeepEqual(back, hb) {
		t.Fatalf("round trip %+v", back)
	}
	var cs CodeSet
	for _, bad := range []string{`["x"]`, `[1.5]`, `{}`, `[true]`} {
		if err := json.Unmarshal([]byte(bad), &cs); err == nil {
			t.Fatalf("codeSet %s accepted", bad)
		}
	}
}

// consumerOffset.json as fastjson's PrettyFormat writes it (§4.1, §6.5).
const javaConsumerOffsetJSON = "{\n\t\"offsetTable\":{\n\t\t\"TopicTest@please_rename_unique_group_name_4\":{0:250,1:250,2:250,3:250\n\t\t},\n\t\t\"%RETRY%g@g\":{0:0\n\t\t}\n\t}\n}"

type consumerOffsetFile struct {
	OffsetTable map[string]map[int32]int64 `json:"offsetTable"`
}

func TestConsumerOffsetPretty(t *testing.T) {
	var f consumerOffsetFile
	if err := UnmarshalFastJSON([]byte(javaConsumerOffsetJSON), &f); err != nil {
		t.Fatal(err)
	}
	want := consumerOffsetFile{OffsetTable: map[string]map[int32]int64{
		"TopicTest@please_rename_unique_group_name_4": {0: 250, 1: 250, 2: 250, 3: 250},
		"%RETRY%g@g": {0: 0},
	}}
	if !reflect.DeepEqual(f, want) {
		t.Fatalf("got %+v", f)
	}
	out, err := MarshalFastJSONPretty(&f)
	if err != nil {
		t.Fatal(err)
	}
	// Map entries are sorted; "%" sorts before "T".
	const wantText = "{\n\t\"offsetTable\":{\n\t\t\"%RETRY%g@g\":{0:0\n\t\t},\n\t\t\"TopicTest@please_rename_unique_group_name_4\":{0:250,1:250,2:250,3:250\n\t\t}\n\t}\n}"
	if string(out) != wantText {
		t.Fatalf("pretty:\n%s\nwant:\n%s", out, wantText)
	}
}

func TestPrettyShapes(t *testing.T) {
	v := struct {
		A []string          `json:"a"`
		B []string          `json:"b"`
		C map[string]string `json:"c"`
		D struct{}          `json:"d"`
	}{A: []string{"x", "y"}}
	out, err := MarshalFastJSONPretty(v)
	if err != nil {
		t.Fatal(err)
	}
	const want = "{\n\t\"a\":[\n\t\t\"x\",\n\t\t\"y\"\n\t],\n\t\"b\":[],\n\t\"c\":{},\n\t\"d\":{}\n}"
	if string(out) != want {
		t.Fatalf("got:\n%s\nwant:\n%s", out, want)
	}
}

func TestTopicsJSONDefaults(t *testing.T) {
	// Absent properties take Java's defaults; bare keys and whitespace are read.
	const text = "{\n\t\"dataVersion\":{\"counter\":3,\"timestamp\":1690000000000},\n\t\"topicConfigTable\":{\n\t\t\"A\":{\"topicName\":\"A\",\"order\":true}\n\t}\n}"
	var w TopicConfigSerializeWrapper
	if err := UnmarshalFastJSON([]byte(text), &w); err != nil {
		t.Fatal(err)
	}
	want := NewTopicConfig("A")
	want.Order = true
	if !reflect.DeepEqual(w.TopicConfigTable["A"], want) || w.DataVersion != (DataVersion{Timestamp: 1690000000000, Counter: 3}) {
		t.Fatalf("got %+v", w)
	}
	var g SubscriptionGroupConfig
	if err := UnmarshalFastJSON([]byte(`{"groupName":"g","retryMaxTimes":3}`), &g); err != nil {
		t.Fatal(err)
	}
	wg := NewSubscriptionGroupConfig("g")
	wg.RetryMaxTimes = 3
	if !reflect.DeepEqual(g, wg) {
		t.Fatalf("group defaults: %+v", g)
	}
	out, _ := MarshalFastJSON(NewSubscriptionGroupConfig("g"))
	const wantGroup = `{"brokerId":0,"consumeBroadcastEnable":true,"consumeEnable":true,"consumeFromMinEnable":true,"groupName":"g","notifyConsumerIdsChangedEnable":true,"retryMaxTimes":16,"retryQueueNums":1,"whichBrokerWhenConsumeSlowly":1}`
	if string(out) != wantGroup {
		t.Fatalf("group json %s", out)
	}
}

func exampleRegisterBody() *RegisterBrokerBody {
	a := NewTopicConfig("TopicA")
	a.ReadQueueNums, a.WriteQueueNums = 4, 4
	b := NewTopicConfig("TopicB")
	b.TopicFilterType = MultiTag
	b.Perm = 2
	return &RegisterBrokerBody{
		TopicConfigSerializeWrapper: TopicConfigSerializeWrapper{
			TopicConfigTable: map[string]TopicConfig{"TopicA": a, "TopicB": b},
			DataVersion:      DataVersion{Timestamp: 1690000000000, Counter: 3},
		},
		FilterServerList: []string{},
	}
}

func TestRegisterBrokerBodyJSON(t *testing.T) {
	body := exampleRegisterBody()
	got := string(body.MarshalFastJSON())
	const want = `{"filterServerList":[],"topicConfigSerializeWrapper":{"dataVersion":{"counter":3,"timestamp":1690000000000},"topicConfigTable":{"TopicA":{"order":false,"perm":6,"readQueueNums":4,"topicFilterType":"SINGLE_TAG","topicName":"TopicA","topicSysFlag":0,"writeQueueNums":4},"TopicB":{"order":false,"perm":2,"readQueueNums":16,"topicFilterType":"MULTI_TAG","topicName":"TopicB","topicSysFlag":0,"writeQueueNums":16}}}}`
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	back, err := DecodeRegisterBrokerBody([]byte(got), false, CurrentVersion)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, body) {
		t.Fatalf("round trip %+v", back)
	}
	// A broker older than V3_0_11 sends the bare wrapper.
	wrapper, _ := MarshalFastJSON(body.TopicConfigSerializeWrapper)
	old, err := DecodeRegisterBrokerBody(wrapper, false, 30)
	if err != nil || !reflect.DeepEqual(old.TopicConfigSerializeWrapper, body.TopicConfigSerializeWrapper) {
		t.Fatalf("old body: %+v %v", old, err)
	}
	for _, v := range []int32{0, 30} {
		old, err := DecodeRegisterBrokerBody(wrapper, false, v)
		if err != nil || !reflect.DeepEqual(old.TopicConfigSerializeWrapper, body.TopicConfigSerializeWrapper) {
			t.Fatalf("version %d, bare wrapper: %+v %v", v, old, err)
		}
		cur, err := DecodeRegisterBrokerBody([]byte(got), false, v)
		if err != nil || !reflect.DeepEqual(cur, body) {
			t.Fatalf("version %d, full body: %+v %v", v, cur, err)
		}
	}
	if _, err := DecodeRegisterBrokerBody([]byte(`{"topicConfigSerializeWrapper":`), false, CurrentVersion); err == nil {
		t.Fatal("truncated JSON accepted")
	}
}

// javaCompressedBody builds the §4.4 compressed layout by hand, independently
// of EncodeCompressed.
func javaCompressedBody(t *testing.T, parts ...[]byte) []byte {
	var raw bytes.Buffer
	for _, p := range parts {
		raw.Write(p)
	}
	var out bytes.Buffer
	zw, _ := zlib.NewWriterLevel(&out, zlib.BestCompression)
	zw.Write(raw.Bytes())
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

func be32(n int) []byte { return binary.BigEndian.AppendUint32(nil, uint32(n)) }

func lp(s string) []byte { return append(be32(len(s)), s...) }

func TestRegisterBrokerBodyCompressed(t *testing.T) {
	dv := `{"counter":3,"timestamp":1690000000000}`
	// A 5.x broker's layout: the static topics' mapping count (none) last.
	body := javaCompressedBody(t, lp(dv), be32(2), lp("TopicA 4 4 6 SINGLE_TAG"), lp("TopicB 16 16 2 MULTI_TAG"),
		lp(`["10.0.0.9:5555"]`), be32(0))
	got, err := DecodeRegisterBrokerBody(body, true, CurrentVersion)
	if err != nil {
		t.Fatal(err)
	}
	want := exampleRegisterBody()
	want.FilterServerList = []string{"10.0.0.9:5555"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %+v\nwant %+v", got, want)
	}
	// A 4.x broker's ends with the filter servers.
	old := javaCompressedBody(t, lp(dv), be32(2), lp("TopicA 4 4 6 SINGLE_TAG"), lp("TopicB 16 16 2 MULTI_TAG"),
		lp(`["10.0.0.9:5555"]`))
	if got, err := DecodeRegisterBrokerBody(old, true, VersionV4_9_8); err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("4.x layout: %v %+v", err, got)
	}
	enc, err := want.EncodeCompressed()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(enc, body) {
		t.Fatal("EncodeCompressed differs from the hand-built Java layout")
	}
	if BodyCRC32(body) < 0 {
		t.Fatal("masked CRC must be non-negative")
	}
}

// TestRegisterBrokerBodyMappings: a 5.x broker's static topics ride in
// the register body as TopicConfigAndMappingSerializeWrapper's
// topicQueueMappingInfoMap, in the JSON and the compressed forms.
func TestRegisterBrokerBodyMappings(t *testing.T) {
	info := `{"bname":"broker-a","currIdMap":{0:1,2:0},"dirty":false,"epoch":1700000000000,"scope":"__global__","topic":"ST","totalQueues":4}`
	want := &TopicQueueMappingInfo{Topic: "ST", Scope: MetadataScopeGlobal, TotalQueues: 4, Bname: "broker-a", Epoch: 1700000000000,
		CurrIDMap: map[int32]int32{0: 1, 2: 0}}
	dv := `{"counter":3,"timestamp":1690000000000}`
	body := javaCompressedBody(t, lp(dv), be32(1), lp("ST 2 2 6 SINGLE_TAG"), lp(`[]`), be32(1), lp(info))
	got, err := DecodeRegisterBrokerBody(body, true, VersionV5_3_3)
	if err != nil {
		t.Fatal(err)
	}
	if m := got.TopicConfigSerializeWrapper.TopicQueueMappingInfoMap; len(m) != 1 || !reflect.DeepEqual(m["ST"], want) {
		t.Fatalf("compressed: %+v", m)
	}
	enc, err := got.EncodeCompressed()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(enc, body) {
		t.Fatal("EncodeCompressed differs from the hand-built Java 5.x layout")
	}
	js := got.MarshalFastJSON()
	if !bytes.Contains(js, []byte(`"topicQueueMappingInfoMap":{"ST":`+info+`}`)) {
		t.Fatalf("JSON form: %s", js)
	}
	back, err := DecodeRegisterBrokerBody(js, false, VersionV5_3_3)
	if err != nil || !reflect.DeepEqual(back.TopicConfigSerializeWrapper.TopicQueueMappingInfoMap["ST"], want) {
		t.Fatalf("JSON form read back: %v %+v", err, back)
	}
}

func TestRegisterBrokerBodyCompressedErrors(t *testing.T) {
	dv := lp(`{"counter":1,"timestamp":2}`)
	cases := map[string][]byte{
		"not zlib":        []byte("{}"),
		"empty":           nil,
		"truncated":       javaCompressedBody(t, dv, be32(1)),
		"negative count":  javaCompressedBody(t, dv, be32(-1), lp("[]")),
		"negative length": javaCompressedBody(t, be32(-5)),
		"huge length":     javaCompressedBody(t, be32(1<<30), []byte("abc")),
		"bad topic line":  javaCompressedBody(t, dv, be32(1), lp("TopicA 4 4"), lp("[]")),
		"bad number":      javaCompressedBody(t, dv, be32(1), lp("TopicA x 4 6 SINGLE_TAG"), lp("[]")),
		"bad version":     javaCompressedBody(t, lp("nope"), be32(0), lp("[]")),
		"bad filters":     javaCompressedBody(t, dv, be32(0), lp("{")),
		"bad mapping":     javaCompressedBody(t, dv, be32(0), lp("[]"), be32(1), lp("{")),
		"short mapping":   javaCompressedBody(t, dv, be32(0), lp("[]"), be32(2), lp("{}")),
		"negative maps":   javaCompressedBody(t, dv, be32(0), lp("[]"), be32(-1)),
	}
	for name, body := range cases {
		if _, err := DecodeRegisterBrokerBody(body, true, VersionV5_3_3); !errors.Is(err, ErrRegisterBody) {
			t.Errorf("%s: want ErrRegisterBody, got %v", name, err)
		}
	}
}

func TestMessageQueueKeys(t *testing.T) {
	body := ResetOffsetBody{OffsetTable: map[MessageQueue]int64{
		{Topic: "T", BrokerName: "b", QueueID: 1}: 7,
		{Topic: "T", BrokerName: "b", QueueID: 0}: 5,
	}}
	got, err := MarshalFastJSON(&body)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"offsetTable":{{"brokerName":"b","queueId":0,"topic":"T"}:5,{"brokerName":"b","queueId":1,"topic":"T"}:7}}`
	if string(got) != want {
		t.Fatalf("legacy: %s", got)
	}
	std, _ := MarshalFastJSONStyle(&body, JSONStandard)
	for _, text := range [][]byte{got, std} {
		var back ResetOffsetBody
		if err := UnmarshalFastJSON(text, &back); err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		if !reflect.DeepEqual(back, body) {
			t.Fatalf("%s: read %+v", text, back)
		}
	}
	lock := LockBatchResponseBody{LockOKMQSet: []MessageQueue{{Topic: "T", BrokerName: "b", QueueID: 3}}}
	got, _ = MarshalFastJSON(&lock)
	if string(got) != `{"lockOKMQSet":[{"brokerName":"b","queueId":3,"topic":"T"}]}` {
		t.Fatalf("lock body %s", got)
	}
	// encoding/json keeps the object form too (in declaration order).
	std2, _ := json.Marshal(lock)
	if string(std2) != `{"lockOKMQSet":[{"topic":"T","brokerName":"b","queueId":3}]}` {
		t.Fatalf("encoding/json: %s", std2)
	}
}

func TestSmallBodies(t *testing.T) {
	for _, tc := range []struct {
		v    any
		want string
	}{
		{&KVTable{Table: map[string]string{"b": "2", "a": "1"}}, `{"table":{"a":"1","b":"2"}}`},
		{&TopicList{TopicList: []string{"T"}}, `{"topicList":["T"]}`},
		{&TopicList{TopicList: []string{"T"}, BrokerAddr: "x:1"}, `{"brokerAddr":"x:1","topicList":["T"]}`},
		{&GroupList{}, `{"groupList":[]}`},
		{&GetConsumerListByGroupResponseBody{ConsumerIDList: []string{"c1"}}, `{"consumerIdList":["c1"]}`},
		{&KVConfigFile{ConfigTable: map[string]map[string]string{"ns": {"k": "v"}}}, `{"configTable":{"ns":{"k":"v"}}}`},
		{&ConsumerConnection{ConnectionSet: []Connection{{ClientID: "c", ClientAddr: "1.2.3.4:5", Language: "GO", Version: 317}},
			ConsumeType: ConsumePassively},
			`{"connectionSet":[{"clientAddr":"1.2.3.4:5","clientId":"c","language":"GO","version":317}],"consumeType":"CONSUME_PASSIVELY","subscriptionTable":{}}`},
		{&LockBatchRequestBody{ConsumerGroup: "g", ClientID: "c"}, `{"clientId":"c","consumerGroup":"g","mqSet":[]}`},
		{DataVersion{Timestamp: 1, Counter: 2}, `{"counter":2,"timestamp":1}`},
	} {
		got, err := MarshalFastJSON(tc.v)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != tc.want {
			t.Errorf("%T:\n got %s\nwant %s", tc.v, got, tc.want)
			continue
		}
		typ := reflect.TypeOf(tc.v)
		if typ.Kind() == reflect.Pointer {
			typ = typ.Elem()
		}
		back := reflect.New(typ)
		if err := UnmarshalFastJSON(got, back.Interface()); err != nil {
			t.Errorf("%T: read back: %v", tc.v, err)
		}
		again, _ := MarshalFastJSON(back.Interface())
		if !strings.EqualFold(string(again), tc.want) {
			t.Errorf("%T: re-encoded %s", tc.v, again)
		}
	}
}

func TestOffsetTables(t *testing.T) {
	var f ConsumerOffsetTable
	if err := UnmarshalFastJSON([]byte(javaConsumerOffsetJSON), &f); err != nil {
		t.Fatal(err)
	}
	if f.OffsetTable["%RETRY%g@g"][0] != 0 || f.OffsetTable["TopicTest@please_rename_unique_group_name_4"][3] != 250 {
		t.Fatalf("got %+v", f)
	}
	var d DelayOffsetTable
	if err := UnmarshalFastJSON([]byte("{\n\t\"offsetTable\":{1:0,2:15,3:7\n\t}\n}"), &d); err != nil {
		t.Fatal(err)
	}
	out, _ := MarshalFastJSONPretty(&d)
	if string(out) != "{\n\t\"offsetTable\":{1:0,2:15,3:7\n\t}\n}" {
		t.Fatalf("delay offsets pretty: %q", out)
	}
	stats := ConsumeStats{OffsetTable: map[MessageQueue]OffsetWrapper{{Topic: "T", BrokerName: "b"}: {BrokerOffset: 9, ConsumerOffset: 8, LastTimestamp: 7}}, ConsumeTps: 2.5}
	out, _ = MarshalFastJSON(&stats)
	const want = `{"consumeTps":2.5,"offsetTable":{{"brokerName":"b","queueId":0,"topic":"T"}:{"brokerOffset":9,"consumerOffset":8,"lastTimestamp":7}}}`
	if string(out) != want {
		t.Fatalf("consume stats %s", out)
	}
	var back ConsumeStats
	if err := UnmarshalFastJSON(out, &back); err != nil || !reflect.DeepEqual(back, stats) {
		t.Fatalf("consume stats back %+v %v", back, err)
	}
}
