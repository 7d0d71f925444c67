package protocol

import (
	"errors"
	"maps"
	"reflect"
	"strconv"
	"testing"
)

// The SEND_MESSAGE header exactly as the Go client sends it
// (go-client-wire.md §4.2).
func goClientSendV1() map[string]string {
	return map[string]string{
		"producerGroup": "pg", "topic": "T", "queueId": "1", "sysFlag": "0", "bornTimestamp": "1795982371046",
		"flag": "0", "properties": "TAGS\x01TagSync\x02KEYS\x01key-0\x02UNIQ_KEY\x01C0000202557200000000947c40b80001\x02",
		"reconsumeTimes": "0", "unitMode": "false", "maxReconsumeTimes": "0", "batch": "false",
		"defaultTopic": "TBW102", "defaultTopicQueueNums": "4", "bname": "broker-a",
	}
}

// The SEND_BATCH_MESSAGE letter header (go-client-wire.md §4.3).
func goClientSendV2() map[string]string {
	return map[string]string{
		"a": "pg", "b": "T", "c": "TBW102", "d": "4", "e": "1", "f": "0", "g": "1795982371046", "h": "0",
		"i": "", "j": "0", "k": "false", "l": "0", "m": "true", "n": "broker-a",
	}
}

func TestSendHeaderV1(t *testing.T) {
	var h SendMessageRequestHeader
	if err := h.Decode(goClientSendV1()); err != nil {
		t.Fatal(err)
	}
	want := SendMessageRequestHeader{
		ProducerGroup: "pg", Topic: "T", DefaultTopic: "TBW102", DefaultTopicQueueNums: 4, QueueID: 1,
		BornTimestamp: 1795982371046, Properties: goClientSendV1()["properties"],
		ReconsumeTimes: Some[int32](0), UnitMode: Some(false), MaxReconsumeTimes: Some[int32](0),
		Batch: Some(false), BrokerName: "broker-a",
	}
	if h != want {
		t.Fatalf("decoded\n %+v\nwant\n %+v", h, want)
	}
	if got := Ext(&h); !maps.Equal(got, goClientSendV1()) {
		t.Fatalf("re-encoded key set differs:\n got %q\nwant %q", got, goClientSendV1())
	}
}

func TestSendHeaderV2(t *testing.T) {
	var h SendMessageRequestHeader
	if err := h.DecodeFor(SendBatchMessage, goClientSendV2()); err != nil {
		t.Fatal(err)
	}
	if h.ProducerGroup != "pg" || h.Topic != "T" || h.QueueID != 1 || h.BornTimestamp != 1795982371046 ||
		h.Batch != Some(true) || h.BrokerName != "broker-a" || h.DefaultTopicQueueNums != 4 {
		t.Fatalf("decoded %+v", h)
	}
	m := map[string]string{}
	h.AppendExtV2(m)
	if !maps.Equal(m, goClientSendV2()) {
		t.Fatalf("re-encoded key set differs:\n got %q\nwant %q", m, goClientSendV2())
	}
	// The same header in long form decodes to the same struct.
	var back SendMessageRequestHeader
	if err := back.DecodeFor(SendMessage, Ext(&h)); err != nil || back != h {
		t.Fatalf("V2 -> V1 -> struct: %+v, %v", back, err)
	}
}

// Optional wrapper fields: absent is distinguishable from a present zero.
func TestSendHeaderOptionalAbsent(t *testing.T) {
	ext := goClientSendV1()
	for _, k := range []string{"reconsumeTimes", "unitMode", "maxReconsumeTimes", "batch", "bname"} {
		delete(ext, k)
	}
	ext["someUnknownKey"] = "ignored"
	var h SendMessageRequestHeader
	if err := h.Decode(ext); err != nil {
		t.Fatal(err)
	}
	if h.ReconsumeTimes.Set || h.UnitMode.Set || h.MaxReconsumeTimes.Set || h.Batch.Set {
		t.Fatalf("absent optionals read as set: %+v", h)
	}
	if h.MaxReconsumeTimes.Or(16) != 16 {
		t.Fatal("Or default")
	}
	got := Ext(&h)
	delete(ext, "someUnknownKey")
	if !maps.Equal(got, ext) {
		t.Fatalf("absent optionals written:\n got %q\nwant %q", got, ext)
	}
}

func TestHeaderBadNumber(t *testing.T) {
	for _, tc := range []struct {
		key, val string
	}{
		{"e", "x"}, {"g", ""}, {"e", "2147483648"}, {"l", "1.5"},
	} {
		ext := goClientSendV2()
		ext[tc.key] = tc.val
		var h SendMessageRequestHeader
		err := h.DecodeV2(ext)
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Key != tc.key || fe.Value != tc.val {
			t.Fatalf("%s=%q: want FieldError, got %v", tc.key, tc.val, err)
		}
	}
	// Booleans never fail, as with Java's Boolean.parseBoolean.
	ext := goClientSendV2()
	ext["m"] = "TRUE"
	var h SendMessageRequestHeader
	if err := h.DecodeV2(ext); err != nil || h.Batch != Some(true) {
		t.Fatalf("TRUE: %+v %v", h.Batch, err)
	}
	ext["m"] = "yes"
	if err := h.DecodeV2(ext); err != nil || h.Batch != Some(false) {
		t.Fatalf("yes: %+v %v", h.Batch, err)
	}
}

func TestPullHeaderGoClient(t *testing.T) {
	// go-client-wire.md §6.3, captured.
	ext := map[string]string{"consumerGroup": "cg", "topic": "T", "queueId": "0", "queueOffset": "9",
		"maxMsgNums": "32", "sysFlag": "3", "commitOffset": "9", "suspendTimeoutMillis": "20000",
		"subscription": "", "subVersion": "0", "expressionType": "TAG", "bname": "broker-a"}
	var h PullMessageRequestHeader
	if err := h.Decode(ext); err != nil {
		t.Fatal(err)
	}
	want := PullMessageRequestHeader{ConsumerGroup: "cg", Topic: "T", QueueOffset: 9, MaxMsgNums: 32,
		SysFlag: PullFlagCommitOffset | PullFlagSuspend, CommitOffset: 9, SuspendTimeoutMillis: 20000,
		ExpressionType: ExpressionTag, BrokerName: "broker-a"}
	if h != want {
		t.Fatalf("got %+v", h)
	}
}

// A pull answer always carries its four offsets (go-client-wire.md §0.8).
func TestPullResponseAlwaysFull(t *testing.T) {
	got := Ext(&PullMessageResponseHeader{})
	want := map[string]string{"suggestWhichBrokerId": "0", "nextBeginOffset": "0", "minOffset": "0", "maxOffset": "0"}
	if !maps.Equal(got, want) {
		t.Fatalf("got %q", got)
	}
}

func TestSendResponseKeys(t *testing.T) {
	h := SendMessageResponseHeader{MsgID: "7F00000100002A9F0000000000000000", QueueID: 2, QueueOffset: 41,
		MsgRegion: "DefaultRegion", TraceOn: Some(true)}
	want := map[string]string{"msgId": "7F00000100002A9F0000000000000000", "queueId": "2", "queueOffset": "41",
		"MSG_REGION": "DefaultRegion", "TRACE_ON": "true"}
	if got := Ext(&h); !maps.Equal(got, want) {
		t.Fatalf("got %q", got)
	}
}

func TestRouteRequestStandardJSON(t *testing.T) {
	var h GetRouteInfoRequestHeader
	if err := h.Decode(map[string]string{"topic": "T"}); err != nil {
		t.Fatal(err)
	}
	if h.WantsStandardJSON(317) || !h.WantsStandardJSON(VersionV4_9_4) {
		t.Fatal("version rule")
	}
	h.Decode(map[string]string{"topic": "T", "acceptStandardJsonOnly": "true"})
	if !h.WantsStandardJSON(317) {
		t.Fatal("acceptStandardJsonOnly")
	}
}

// fill sets every field of the struct behind p to a distinct non-zero value.
func fill(t *testing.T, p any) {
	v := reflect.ValueOf(p).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		switch f.Kind() {
		case reflect.String:
			f.SetString("s" + strconv.Itoa(i))
		case reflect.Int32, reflect.Int64:
			f.SetInt(int64(1000 + i))
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Struct: // Optional[T]
			f.Field(1).SetBool(true)
			switch f.Field(0).Kind() {
			case reflect.Bool:
				f.Field(0).SetBool(true)
			default:
				f.Field(0).SetInt(int64(-i))
			}
		default:
			t.Fatalf("%T: unhandled field kind %s", p, f.Kind())
		}
	}
}

// Every header survives AppendExt -> Decode, filled and empty, and rejects a
// non-numeric value in each numeric field.
func TestHeaderRoundTrips(t *testing.T) {
	headers := []ExtHeader{
		&SendMessageRequestHeader{}, &SendMessageResponseHeader{},
		&PullMessageRequestHeader{}, &PullMessageResponseHeader{},
		&QueryConsumerOffsetRequestHeader{}, &OffsetResponseHeader{}, &UpdateConsumerOffsetRequestHeader{},
		&QueueRequestHeader{}, &SearchOffsetRequestHeader{}, &GetEarliestMsgStoretimeResponseHeader{},
		&ViewMessageRequestHeader{}, &QueryMessageRequestHeader{}, &QueryMessageResponseHeader{},
		&ConsumerGroupRequestHeader{}, &GetProducerConnectionListRequestHeader{},
		&UnregisterClientRequestHeader{}, &TopicRequestHeader{}, &CreateTopicRequestHeader{},
		&ConsumerSendMsgBackRequestHeader{}, &EndTransactionRequestHeader{},
		&CheckTransactionStateRequestHeader{},
		&RegisterBrokerRequestHeader{}, &RegisterBrokerResponseHeader{}, &BrokerIdentityHeader{},
		&QueryDataVersionResponseHeader{}, &GetRouteInfoRequestHeader{}, &KVConfigRequestHeader{},
		&GetKVConfigResponseHeader{}, &GetKVListByNamespaceRequestHeader{},
		&DeleteTopicFromNamesrvRequestHeader{}, &GetTopicsByClusterRequestHeader{},
		&BrokerPermRequestHeader{}, &WipeWritePermOfBrokerResponseHeader{}, &AddWritePermOfBrokerResponseHeader{},
		&DeleteSubscriptionGroupRequestHeader{}, &GetConsumeStatsRequestHeader{}, &ResetOffsetRequestHeader{},
		&GetConsumerStatusRequestHeader{}, &QueryConsumeTimeSpanRequestHeader{},
		&GetConsumerRunningInfoRequestHeader{}, &ConsumeMessageDirectlyResultRequestHeader{},
		&CloneGroupOffsetRequestHeader{}, &GetConsumeStatsInBrokerHeader{}, &QueryConsumeQueueRequestHeader{},
		&ViewBrokerStatsDataRequestHeader{}, &QueryCorrectionOffsetHeader{},
		&ResumeCheckHalfMessageRequestHeader{}, &GetBrokerConfigResponseHeader{},
		&SlaveSyncRequestHeader{}, &SlaveSyncResponseHeader{},
		&QueryTopicsByConsumerRequestHeader{}, &QuerySubscriptionByConsumerRequestHeader{},
		&GetSubscriptionGroupConfigRequestHeader{}, &RegisterTopicRequestHeader{},
		&PopMessageRequestHeader{}, &PopMessageResponseHeader{}, &AckMessageRequestHeader{},
		&ChangeInvisibleTimeRequestHeader{}, &NotificationRequestHeader{}, &NotificationResponseHeader{},
		&PollingInfoRequestHeader{}, &PollingInfoResponseHeader{}, &PeekMessageRequestHeader{},
	}
	for _, h := range headers {
		name := reflect.TypeOf(h).Elem().Name()
		fill(t, h)
		ext := Ext(h)
		back := reflect.New(reflect.TypeOf(h).Elem()).Interface().(ExtHeader)
		if err := back.Decode(ext); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !reflect.DeepEqual(h, back) {
			t.Fatalf("%s: round trip\n got %+v\nwant %+v\next %q", name, back, h, ext)
		}
		// Numeric keys must reject garbage; string keys must carry it.
		for k, v := range ext {
			if _, err := strconv.ParseInt(v, 10, 64); err != nil {
				continue
			}
			bad := maps.Clone(ext)
			bad[k] = "x" + v
			var fe *FieldError
			if err := back.Decode(bad); !errors.As(err, &fe) || fe.Key != k {
				t.Fatalf("%s: %s=%q: want FieldError, got %v", name, k, bad[k], err)
			}
		}
		empty := reflect.New(reflect.TypeOf(h).Elem()).Interface().(ExtHeader)
		if err := empty.Decode(nil); err != nil {
			t.Fatalf("%s: nil ext: %v", name, err)
		}
	}
}

func TestDecodeSendV2NoAllocs(t *testing.T) {
	ext := goClientSendV2()
	var h SendMessageRequestHeader
	allocs := testing.AllocsPerRun(100, func() {
		if err := h.DecodeV2(ext); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("DecodeV2 allocates %.1f times per call", allocs)
	}
}
