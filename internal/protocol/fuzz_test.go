package protocol

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
)

// FuzzNormalizeFastJSON: the tolerant reader never panics; on standard JSON
// it is the identity up to whitespace; its output is a fixed point.
func FuzzNormalizeFastJSON(f *testing.F) {
	for _, s := range []string{
		`{}`, `[]`, `{0:"a",1:"b"}`, javaConsumerOffsetJSON, goClientHeartbeat,
		`{{"brokerName":"b","queueId":0,"topic":"T"}:5}`, `{"s":"\u00e9\/"}`, `{name:1}`,
		string(exampleRoute().MarshalFastJSON(JSONLegacy)), `[1e5,-0.5,true,null]`, `{"a":`, `"`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		out, err := NormalizeFastJSON(data)
		if err != nil {
			if !errors.Is(err, ErrFastJSONSyntax) {
				t.Fatalf("error without ErrFastJSONSyntax: %v", err)
			}
			if json.Valid(data) {
				t.Fatalf("valid JSON %q rejected: %v", data, err)
			}
			return
		}
		if json.Valid(data) {
			var compact bytes.Buffer
			if err := json.Compact(&compact, data); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(compact.Bytes(), out) {
				t.Fatalf("standard JSON changed:\n in  %q\n out %q", compact.Bytes(), out)
			}
		}
		if json.Valid(out) {
			again, err := NormalizeFastJSON(out)
			if err != nil || !bytes.Equal(again, out) {
				t.Fatalf("not a fixed point: %q -> %q (%v)", out, again, err)
			}
		}
		var v any
		_ = UnmarshalFastJSON(data, &v)
	})
}

// FuzzDecodeRegisterBrokerBody: the compressed decoder never panics, fails
// with ErrRegisterBody, and what it accepts re-encodes to the same body.
func FuzzDecodeRegisterBrokerBody(f *testing.F) {
	good, err := exampleRegisterBody().EncodeCompressed()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add([]byte{})
	f.Add([]byte{0x78, 0xda})
	empty, _ := (&RegisterBrokerBody{}).EncodeCompressed()
	f.Add(empty)
	f.Fuzz(func(t *testing.T, data []byte) {
		body, err := DecodeRegisterBrokerBody(data, true, VersionV5_3_3)
		if err != nil {
			if !errors.Is(err, ErrRegisterBody) {
				t.Fatalf("error without ErrRegisterBody: %v", err)
			}
			return
		}
		enc, err := body.EncodeCompressed()
		if err != nil {
			t.Fatal(err)
		}
		again, err := DecodeRegisterBrokerBody(enc, true, VersionV5_3_3)
		if err != nil {
			t.Fatalf("re-encoded body rejected: %v", err)
		}
		if !reflect.DeepEqual(body, again) {
			t.Fatalf("round trip:\n %+v\n %+v", body, again)
		}
		// The JSON form of the same body must read back too.
		if _, err := DecodeRegisterBrokerBody(body.MarshalFastJSON(), false, CurrentVersion); err != nil {
			t.Fatalf("JSON form rejected: %v", err)
		}
	})
}

// FuzzSendHeaderV2: header decoding never panics and accepted values
// re-encode to an equivalent header.
func FuzzSendHeaderV2(f *testing.F) {
	f.Add("pg", "T", "1", "0", "1795982371046", "true", "16")
	f.Add("", "", "-1", "x", "", "", "")
	f.Fuzz(func(t *testing.T, group, topic, queue, sysFlag, born, batch, maxRe string) {
		ext := map[string]string{"a": group, "b": topic, "e": queue, "f": sysFlag, "g": born, "m": batch, "l": maxRe}
		var h SendMessageRequestHeader
		if err := h.DecodeV2(ext); err != nil {
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("not a FieldError: %v", err)
			}
			return
		}
		m := map[string]string{}
		h.AppendExtV2(m)
		var back SendMessageRequestHeader
		if err := back.DecodeV2(m); err != nil || back != h {
			t.Fatalf("round trip %+v -> %+v (%v)", h, back, err)
		}
	})
}

// FuzzQueryAssignmentBody: the QUERY_ASSIGNMENT body decoder never panics,
// fails with ErrAssignmentBody, and what it accepts re-encodes to an
// equal body.
func FuzzQueryAssignmentBody(f *testing.F) {
	for _, s := range []string{
		`{"clientId":"10.0.0.1@1#1","consumerGroup":"cg","messageModel":"CLUSTERING","strategyName":"AVG","topic":"T"}`,
		`{"consumerGroup":"cg","messageModel":"BROADCASTING","topic":"T"}`,
		`{"topic":"T"}`, `{}`, ``, `{topic:"T",consumerGroup:"g",messageModel:"CLUSTERING"}`, `[`, `{"messageModel":1}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := DecodeQueryAssignmentRequestBody(data)
		if err != nil {
			if !errors.Is(err, ErrAssignmentBody) {
				t.Fatalf("error without ErrAssignmentBody: %v", err)
			}
			return
		}
		enc, err := MarshalFastJSON(&b)
		if err != nil {
			t.Fatal(err)
		}
		again, err := DecodeQueryAssignmentRequestBody(enc)
		if err != nil || again != b {
			t.Fatalf("round trip %+v -> %s -> %+v (%v)", b, enc, again, err)
		}
	})
}

// FuzzSetMessageRequestModeBody: as FuzzQueryAssignmentBody for
// SET_MESSAGE_REQUEST_MODE.
func FuzzSetMessageRequestModeBody(f *testing.F) {
	for _, s := range []string{
		`{"consumerGroup":"cg","mode":"POP","popShareQueueNum":2,"topic":"T"}`,
		`{"consumerGroup":"cg","topic":"T"}`, `{"consumerGroup":"cg","mode":"PUSH","topic":"T"}`,
		`{"topic":"T","popShareQueueNum":"x"}`, ``, `{`, `null`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := DecodeSetMessageRequestModeRequestBody(data)
		if err != nil {
			if !errors.Is(err, ErrAssignmentBody) {
				t.Fatalf("error without ErrAssignmentBody: %v", err)
			}
			return
		}
		enc, err := MarshalFastJSON(&b)
		if err != nil {
			t.Fatal(err)
		}
		again, err := DecodeSetMessageRequestModeRequestBody(enc)
		if err != nil || again != b {
			t.Fatalf("round trip %+v -> %s -> %+v (%v)", b, enc, again, err)
		}
	})
}

// FuzzPullHeader: the PULL_MESSAGE / LITE_PULL_MESSAGE header decoder
// never panics, fails only with a FieldError, and accepted values
// re-encode to an equal header.
func FuzzPullHeader(f *testing.F) {
	f.Add("cg", "T", "0", "5", "32", "22", "0", "20000", "*", "0", "TAG", "")
	f.Add("", "", "-1", "x", "", "", "", "", "", "", "", "99999999999")
	f.Fuzz(func(t *testing.T, group, topic, queue, offset, maxNums, sysFlag, commit, suspend, sub, subVersion, exprType, maxBytes string) {
		ext := map[string]string{
			"consumerGroup": group, "topic": topic, "queueId": queue, "queueOffset": offset, "maxMsgNums": maxNums,
			"sysFlag": sysFlag, "commitOffset": commit, "suspendTimeoutMillis": suspend, "subscription": sub,
			"subVersion": subVersion, "expressionType": exprType,
		}
		if maxBytes != "" {
			ext["maxMsgBytes"] = maxBytes
		}
		var h PullMessageRequestHeader
		if err := h.Decode(ext); err != nil {
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("not a FieldError: %v", err)
			}
			return
		}
		var back PullMessageRequestHeader
		if err := back.Decode(Ext(&h)); err != nil || back != h {
			t.Fatalf("round trip %+v -> %+v (%v)", h, back, err)
		}
	})
}
