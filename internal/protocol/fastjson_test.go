package protocol

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

func TestNormalizeFastJSON(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{}`, `{}`},
		{` [ 1 , 2 ] `, `[1,2]`},
		{`{0:"a",1:"b"}`, `{"0":"a","1":"b"}`},
		{`{-1:2}`, `{"-1":2}`},
		{`{"0":"a"}`, `{"0":"a"}`},
		{`{name:"x",$y_1:true}`, `{"name":"x","$y_1":true}`},
		{"{\n\t\"a\":{0:250,1:250\n\t}\n}", `{"a":{"0":250,"1":250}}`},
		{`{"s":"with \"quote\" and \\ and {0:1}"}`, `{"s":"with \"quote\" and \\ and {0:1}"}`},
		{`{{"topic":"T","queueId":0}:5}`, `{"{\"topic\":\"T\",\"queueId\":0}":5}`},
		{`{[1,2]:3}`, `{"[1,2]":3}`},
		{`[null,false,true,-1.5e3]`, `[null,false,true,-1.5e3]`},
	} {
		got, err := NormalizeFastJSON([]byte(tc.in))
		if err != nil {
			t.Errorf("%q: %v", tc.in, err)
			continue
		}
		if string(got) != tc.want {
			t.Errorf("%q:\n got %s\nwant %s", tc.in, got, tc.want)
		}
	}
	for _, bad := range []string{``, `{`, `{"a"}`, `{"a":}`, `[1,]`, `{"a":1,}`, `"abc`, `{0:1}x`, `{:1}`,
		`undefined`, `-`, `{"a":1 "b":2}`, `[1 2]`, strings.Repeat("[", 2000)} {
		if _, err := NormalizeFastJSON([]byte(bad)); !errors.Is(err, ErrFastJSONSyntax) {
			t.Errorf("%q: want syntax error, got %v", bad, err)
		}
	}
	// Grammar the pre-pass copies through is checked by encoding/json.
	var v any
	for _, bad := range []string{`[1-2]`, `["\x"]`, `[01]`} {
		if err := UnmarshalFastJSON([]byte(bad), &v); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// goClientRoute mirrors rocketmq-client-go's TopicRouteData.decode
// (internal/route.go, unexported there): gjson fields, a strict decode of
// queueDatas, and brokerAddrs split on ',' and ':' from its raw text.
type goClientRoute struct {
	queueDatas []struct {
		BrokerName     string `json:"brokerName"`
		ReadQueueNums  int    `json:"readQueueNums"`
		WriteQueueNums int    `json:"writeQueueNums"`
		Perm           int    `json:"perm"`
	}
	brokers map[string]map[int64]string
}

func decodeLikeGoClient(t *testing.T, data string) goClientRoute {
	t.Helper()
	res := gjson.Parse(data)
	var r goClientRoute
	if err := json.Unmarshal([]byte(res.Get("queueDatas").String()), &r.queueDatas); err != nil {
		t.Fatalf("queueDatas: %v", err)
	}
	r.brokers = map[string]map[int64]string{}
	for _, v := range res.Get("brokerDatas").Array() {
		addrs := v.Get("brokerAddrs").String()
		if len(addrs) < 2 {
			t.Fatalf("brokerAddrs %q: the Go client would panic", addrs)
		}
		m := map[int64]string{}
		for _, s := range strings.Split(addrs[1:len(addrs)-1], ",") {
			i := strings.Index(s, ":")
			if i < 0 {
				continue
			}
			id, _ := strconv.ParseInt(strings.ReplaceAll(s[:i], `"`, ""), 10, 64)
			m[id] = strings.ReplaceAll(s[i+1:], `"`, "")
		}
		r.brokers[v.Get("brokerName").String()] = m
	}
	return r
}

func TestRouteReadableByGoClient(t *testing.T) {
	route := exampleRoute()
	route.BrokerDatas = append(route.BrokerDatas, BrokerData{Cluster: "c", BrokerName: "broker-b",
		BrokerAddrs: map[int64]string{0: "[::1]:10911", 2: "10.0.0.3:10911"}})
	for _, style := range []JSONStyle{JSONLegacy, JSONStandard} {
		r := decodeLikeGoClient(t, string(route.MarshalFastJSON(style)))
		if len(r.queueDatas) != 1 || r.queueDatas[0].Perm != 6 || r.queueDatas[0].WriteQueueNums != 4 {
			t.Fatalf("style %d: queueDatas %+v", style, r.queueDatas)
		}
		for _, bd := range route.BrokerDatas {
			got := r.brokers[bd.BrokerName]
			if len(got) != len(bd.BrokerAddrs) {
				t.Fatalf("style %d: %s: %v", style, bd.BrokerName, got)
			}
			for id, addr := range bd.BrokerAddrs {
				if got[id] != addr {
					t.Fatalf("style %d: %s id %d: %q want %q", style, bd.BrokerName, id, got[id], addr)
				}
			}
		}
	}
	// An empty route still gives the client an array and an object.
	r := decodeLikeGoClient(t, string((&TopicRouteData{BrokerDatas: []BrokerData{{BrokerName: "x"}}}).MarshalFastJSON(JSONLegacy)))
	if len(r.queueDatas) != 0 || len(r.brokers["x"]) != 0 {
		t.Fatalf("empty route %+v", r)
	}
}

func TestFastJSONStrings(t *testing.T) {
	for _, tc := range []struct {
		in          string
		legacy, std string
	}{
		{"a\"b\\c", `"a\"b\\c"`, `"a\"b\\c"`},
		{"\b\f\n\r\t\x01\x1f", `"\b\f\n\r\t\u0001\u001f"`, `"\b\f\n\r\t\u0001\u001f"`},
		{"x/y\x7f", "\"x/y\x7f\"", `"x\/y\u007f"`},
		{"中é", `"中é"`, `"\u4e2d\u00e9"`},
		{"\xff", `"\ufffd"`, `"\ufffd"`},
	} {
		if got := string(appendFastJSONString(nil, tc.in, JSONLegacy)); got != tc.legacy {
			t.Errorf("legacy %q: got %s want %s", tc.in, got, tc.legacy)
		}
		if got := string(appendFastJSONString(nil, tc.in, JSONStandard)); got != tc.std {
			t.Errorf("standard %q: got %s want %s", tc.in, got, tc.std)
		}
		var back string
		if err := json.Unmarshal(appendFastJSONString(nil, tc.in, JSONStandard), &back); err != nil {
			t.Errorf("%q: standard form is not JSON: %v", tc.in, err)
		}
	}
}

func TestFastJSONNumbers(t *testing.T) {
	v := struct {
		Big   int64   `json:"big"`
		Small int64   `json:"small"`
		F     float64 `json:"f"`
		G     float64 `json:"g"`
		H     float64 `json:"h"`
	}{Big: 1 << 60, Small: 1<<53 - 1, F: 1, G: 0.25, H: 1.5e10}
	legacy, _ := MarshalFastJSON(v)
	if string(legacy) != `{"big":1152921504606846976,"f":1.0,"g":0.25,"h":1.5E10,"small":9007199254740991}` {
		t.Fatalf("legacy %s", legacy)
	}
	std, _ := MarshalFastJSONStyle(v, JSONStandard)
	if !strings.HasPrefix(string(std), `{"big":"1152921504606846976",`) {
		t.Fatalf("standard %s", std)
	}
	if _, err := MarshalFastJSON(make(chan int)); err == nil {
		t.Fatal("chan accepted")
	}
	type loop struct {
		Next *loop `json:"next"`
	}
	l := &loop{}
	l.Next = l
	if _, err := MarshalFastJSON(l); err == nil {
		t.Fatal("cycle accepted")
	}
}
