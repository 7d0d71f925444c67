package remoting

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// specRequest is the typical request of rocketmq-spec.md §1.3.
func specRequest() *Command {
	return &Command{Code: 105, Language: JAVA, Version: 409, Opaque: 3,
		ExtFields: map[string]string{"topic": "TopicTest"}}
}

const specJSON = `{"code":105,"extFields":{"topic":"TopicTest"},"flag":0,"language":"JAVA","opaque":3,"serializeTypeCurrentRPC":"JSON","version":409}`

// specBinary is the ROCKETMQ twin of specJSON, built field by field from §1.4.
func specBinary() []byte {
	var h []byte
	h = append(h, 0x00, 0x69)             // code 105
	h = append(h, 0x00)                   // language JAVA
	h = append(h, 0x01, 0x99)             // version 409
	h = append(h, 0x00, 0x00, 0x00, 0x03) // opaque 3
	h = append(h, 0x00, 0x00, 0x00, 0x00) // flag 0
	h = append(h, 0x00, 0x00, 0x00, 0x00) // remark length 0
	// ext fields: keyLen 5 "topic" valLen 9 "TopicTest" = 2+5+4+9 = 20
	h = append(h, 0x00, 0x00, 0x00, 20)
	h = append(h, 0x00, 0x05)
	h = append(h, "topic"...)
	h = append(h, 0x00, 0x00, 0x00, 0x09)
	h = append(h, "TopicTest"...)
	return h
}

func frameOf(t SerializeType, header, body []byte) []byte {
	var f []byte
	f = binary.BigEndian.AppendUint32(f, uint32(4+len(header)+len(body)))
	f = binary.BigEndian.AppendUint32(f, uint32(t)<<24|uint32(len(header)))
	f = append(f, header...)
	return append(f, body...)
}

func TestEncodeJSONByteExact(t *testing.T) {
	got, err := specRequest().AppendFrame(nil)
	if err != nil {
		t.Fatal(err)
	}
	want := frameOf(JSON, []byte(specJSON), nil)
	if !bytes.Equal(got, want) {
		t.Fatalf("JSON frame\n got %q\nwant %q", got, want)
	}
}

func TestEncodeBinaryByteExact(t *testing.T) {
	c := specRequest()
	c.SerializeType = RocketMQ
	got, err := c.AppendFrame(nil)
	if err != nil {
		t.Fatal(err)
	}
	want := frameOf(RocketMQ, specBinary(), nil)
	if !bytes.Equal(got, want) {
		t.Fatalf("ROCKETMQ frame\n got % x\nwant % x", got, want)
	}
}

func TestDecodeBothSerializationsAgree(t *testing.T) {
	body := []byte("hello")
	for _, f := range [][]byte{frameOf(JSON, []byte(specJSON), body), frameOf(RocketMQ, specBinary(), body)} {
		c, err := DecodeFrame(f[4:])
		if err != nil {
			t.Fatal(err)
		}
		want := specRequest()
		want.Body = body
		want.SerializeType = c.SerializeType
		if !reflect.DeepEqual(c, want) {
			t.Fatalf("decoded %+v, want %+v", c, want)
		}
	}
}

func TestRoundTripBothSerializations(t *testing.T) {
	cmds := []*Command{
		{Code: 0, Flag: 1, Opaque: -7, Remark: "", Language: GO, Version: 317},
		{Code: 310, Remark: "quote \" back \\ nl \n tab \t ctl \x01 utf8 é 中", Language: NODE_JS,
			ExtFields: map[string]string{"a": "PG", "b": "T", "weird \"key\"": "v\x00\x1f"}, Body: []byte{0, 1, 2}},
		{Code: -1, Version: -2, Opaque: 1 << 30, Flag: 3, ExtFields: map[string]string{}},
		{Code: 26, ExtFields: manyFields(maxOrderedFields + 8)}, // the allocating path
		{Code: 26, ExtFields: manyFields(maxOrderedFields)},
	}
	for _, st := range []SerializeType{JSON, RocketMQ} {
		for _, c := range cmds {
			c.SerializeType = st
			f, err := c.AppendFrame([]byte("prefix"))
			if err != nil {
				t.Fatal(err)
			}
			if string(f[:6]) != "prefix" {
				t.Fatal("AppendFrame clobbered dst")
			}
			got, err := DecodeFrame(f[10:])
			if err != nil {
				t.Fatalf("%v: %v", st, err)
			}
			want := *c
			if st == RocketMQ && len(want.ExtFields) == 0 {
				want.ExtFields = nil // binary cannot tell empty from absent
			}
			if !reflect.DeepEqual(got, &want) {
				t.Fatalf("%v round trip\n got %+v\nwant %+v", st, got, &want)
			}
		}
	}
}

func manyFields(n int) map[string]string {
	m := make(map[string]string, n)
	for i := range n {
		m["key"+strconv.Itoa(n-i)] = strconv.Itoa(i)
	}
	return m
}

// TestExtFieldsSortedWhateverTheCount checks both ordering paths write keys
// in ascending order.
func TestExtFieldsSortedWhateverTheCount(t *testing.T) {
	for _, n := range []int{1, 2, 13, maxOrderedFields, maxOrderedFields + 1, 100} {
		c := &Command{ExtFields: manyFields(n)}
		h := string(appendJSONHeader(nil, c))
		var keys []string
		for _, part := range strings.Split(h, `"key`)[1:] {
			keys = append(keys, "key"+part[:strings.IndexByte(part, '"')])
		}
		if len(keys) != n || !slices.IsSorted(keys) {
			t.Fatalf("%d fields: keys in order %v", n, keys)
		}
	}
}

// TestJSONHeaderIsValidJSON checks the hand-written encoder against
// encoding/json's parser, including escaping.
func TestJSONHeaderIsValidJSON(t *testing.T) {
	c := &Command{Code: 10, Remark: "a\"b\\c\nd\x02", ExtFields: map[string]string{"k\t": "v\"", "x": ""}}
	h := appendJSONHeader(nil, c)
	var v struct {
		Code      int
		Remark    string
		ExtFields map[string]string
	}
	if err := json.Unmarshal(h, &v); err != nil {
		t.Fatalf("%s: %v", h, err)
	}
	if v.Remark != c.Remark || !maps.Equal(v.ExtFields, c.ExtFields) || v.Code != 10 {
		t.Fatalf("encoding/json read %+v from %s", v, h)
	}
}

func TestJSONDecodeLenient(t *testing.T) {
	cases := []struct {
		in   string
		want Command
	}{
		{`{"code":105,"language":"GO","version":317,"opaque":2,"flag":0,"remark":"","extFields":{"topic":"T"}}`,
			Command{Code: 105, Language: GO, Version: 317, Opaque: 2, ExtFields: map[string]string{"topic": "T"}}},
		{` { "opaque" : 9 , "unknown" : {"x":[1,2,{"y":null}]}, "code" : "12", "language" : 9 } `,
			Command{Code: 12, Opaque: 9, Language: GO}},
		{`{"code":1,"remark":null,"extFields":null,"language":null}`, Command{Code: 1}},
		{`{"code":1,"language":"KLINGON"}`, Command{Code: 1, Language: OTHER}},
		{`{"code":1,"language":200}`, Command{Code: 1, Language: OTHER}},
		{`{"extFields":{"n":5,"f":-1.5e3,"b":true,"z":null,"o":{"a":1},"arr":[1, 2],"s":"\u00e9\ud83d\ude00\n\/"}}`,
			Command{ExtFields: map[string]string{"n": "5", "f": "-1.5e3", "b": "true", "o": `{"a":1}`, "arr": "[1, 2]", "s": "é😀\n/"}}},
		{`{"remark":"lone \ud800 surrogate"}`, Command{Remark: "lone \uFFFD surrogate"}},
		{`{}`, Command{}},
	}
	for _, tc := range cases {
		got, err := DecodeFrame(frameOf(JSON, []byte(tc.in), nil)[4:])
		if err != nil {
			t.Errorf("%s: %v", tc.in, err)
			continue
		}
		if !reflect.DeepEqual(*got, tc.want) {
			t.Errorf("%s\n got %+v\nwant %+v", tc.in, *got, tc.want)
		}
	}
}

func TestDecodeRejectsMalformed(t *testing.T) {
	bad := [][]byte{
		nil,
		{0, 0},
		{0, 0, 0, 9, '{', '}'}, // header length past the frame
		{2, 0, 0, 2, '{', '}'}, // unknown serialize type
		{0, 0xFF, 0xFF, 0xFF},  // header length 16M in a 4-byte frame
		frameOf(JSON, []byte(`{`), nil)[4:],
		frameOf(JSON, []byte(`{"code":}`), nil)[4:],
		frameOf(JSON, []byte(`{"code":1.5}`), nil)[4:],
		frameOf(JSON, []byte(`{"code":99999999999}`), nil)[4:],
		frameOf(JSON, []byte(`{"code":1} x`), nil)[4:],
		frameOf(JSON, []byte(`{"remark":"abc`), nil)[4:],
		frameOf(JSON, []byte(`{"remark":"\q"}`), nil)[4:],
		frameOf(JSON, []byte(`{"extFields":{1:2}}`), nil)[4:],
		frameOf(JSON, []byte(`{"x":`+strings.Repeat("[", 100)+strings.Repeat("]", 100)+`}`), nil)[4:],
		frameOf(JSON, []byte(`garbage`), nil)[4:],
		frameOf(RocketMQ, []byte{0, 1, 2}, nil)[4:],
		frameOf(RocketMQ, specBinary()[:len(specBinary())-1], nil)[4:],
		frameOf(RocketMQ, append(specBinary()[:13], 0x7F, 0, 0, 0), nil)[4:],    // remark length huge
		frameOf(RocketMQ, append(specBinary()[:13], 0xFF, 0xFF, 0, 0), nil)[4:], // negative remark length
	}
	for i, f := range bad {
		c, err := DecodeFrame(f)
		if err == nil {
			t.Errorf("case %d (% x): decoded %+v, want error", i, f, c)
			continue
		}
		if !errors.Is(err, ErrMalformed) {
			t.Errorf("case %d: error %v does not wrap ErrMalformed", i, err)
		}
	}
}

func TestEncodeRejectsUnrepresentable(t *testing.T) {
	for _, c := range []*Command{
		{Code: 200050, SerializeType: RocketMQ},
		{Code: 1, Version: 40000, SerializeType: RocketMQ},
		{Code: 1, SerializeType: 7},
	} {
		dst := []byte("keep")
		out, err := c.AppendFrame(dst)
		if !errors.Is(err, ErrNotEncodable) {
			t.Errorf("%+v: err %v, want ErrNotEncodable", c, err)
		}
		if string(out) != "keep" {
			t.Errorf("%+v: dst changed to %q", c, out)
		}
	}
	// JSON can carry any int32 code.
	if _, err := (&Command{Code: 200050}).AppendFrame(nil); err != nil {
		t.Fatal(err)
	}
}

func TestLanguageNames(t *testing.T) {
	for l := LanguageCode(0); l <= NODE_JS; l++ {
		if got := languageByName([]byte(l.String())); got != l {
			t.Errorf("%d: name %q maps back to %d", l, l.String(), got)
		}
	}
	if LanguageCode(99).String() != "OTHER" || languageOf(99) != OTHER {
		t.Error("unknown language code must be OTHER")
	}
}
