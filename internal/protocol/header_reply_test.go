package protocol

import (
	"errors"
	"testing"
)

func TestReplyMessageRequestHeaderRoundTrip(t *testing.T) {
	h := ReplyMessageRequestHeader{
		ProducerGroup: "replier", Topic: "DefaultCluster_REPLY_TOPIC", DefaultTopic: "TBW102",
		DefaultTopicQueueNums: 4, QueueID: -1, SysFlag: 1, BornTimestamp: 1795982371046, Flag: 3,
		Properties: "CORRELATION_ID\x01c1\x02", ReconsumeTimes: Some[int32](0), UnitMode: true,
		BornHost: "127.0.0.1:5000", StoreHost: "127.0.0.1:10911", StoreTimestamp: 1795982371050,
	}
	m := Ext(&h)
	// Java's ReplyMessageRequestHeader field names.
	for _, k := range []string{"producerGroup", "topic", "defaultTopic", "defaultTopicQueueNums", "queueId",
		"sysFlag", "bornTimestamp", "flag", "properties", "reconsumeTimes", "unitMode", "bornHost",
		"storeHost", "storeTimestamp"} {
		if _, ok := m[k]; !ok {
			t.Errorf("key %s not written", k)
		}
	}
	var back ReplyMessageRequestHeader
	if err := back.Decode(m); err != nil || back != h {
		t.Fatalf("round trip: %+v, %v", back, err)
	}
	m["storeTimestamp"] = "soon"
	var fe *FieldError
	if err := back.Decode(m); !errors.As(err, &fe) || fe.Key != "storeTimestamp" {
		t.Fatalf("bad storeTimestamp: %v", err)
	}
}

func TestMissingSendField(t *testing.T) {
	full := map[string]string{"producerGroup": "g", "topic": "T", "defaultTopic": "TBW102",
		"defaultTopicQueueNums": "4", "queueId": "0", "sysFlag": "0", "bornTimestamp": "1", "flag": "0"}
	if k := MissingSendField(SendReplyMessage, MapExt(full)); k != "" {
		t.Fatalf("complete V1 header: missing %q", k)
	}
	delete(full, "bornTimestamp")
	if k := MissingSendField(SendReplyMessage, MapExt(full)); k != "bornTimestamp" {
		t.Fatalf("V1 without bornTimestamp: %q", k)
	}
	v2 := map[string]string{"a": "g", "b": "T", "c": "TBW102", "d": "4", "e": "0", "f": "0", "g": "1", "h": "0"}
	if k := MissingSendField(SendReplyMessageV2, MapExt(v2)); k != "" {
		t.Fatalf("complete V2 header: missing %q", k)
	}
	delete(v2, "a")
	if k := MissingSendField(SendReplyMessageV2, MapExt(v2)); k != "a" {
		t.Fatalf("V2 without a: %q", k)
	}
}

// FuzzReplyMessageHeader: the PUSH_REPLY_MESSAGE_TO_CLIENT decoder never
// panics, fails only with a FieldError, and accepted values re-encode to
// the same header.
func FuzzReplyMessageHeader(f *testing.F) {
	f.Add("pg", "C_REPLY_TOPIC", "0", "0", "1795982371046", "", "true", "1.2.3.4:5", "1795982371050")
	f.Add("", "", "x", "-1", "", "9999999999", "", "", "-")
	f.Fuzz(func(t *testing.T, group, topic, queue, sysFlag, born, reconsume, unit, host, stored string) {
		ext := map[string]string{"producerGroup": group, "topic": topic, "queueId": queue, "sysFlag": sysFlag,
			"bornTimestamp": born, "unitMode": unit, "bornHost": host, "storeTimestamp": stored}
		if reconsume != "" {
			ext["reconsumeTimes"] = reconsume
		}
		var h ReplyMessageRequestHeader
		if err := h.Decode(ext); err != nil {
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("not a FieldError: %v", err)
			}
			return
		}
		var back ReplyMessageRequestHeader
		if err := back.Decode(Ext(&h)); err != nil || back != h {
			t.Fatalf("round trip %+v -> %+v (%v)", h, back, err)
		}
	})
}
