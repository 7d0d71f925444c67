package remoting

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// fuzzSeeds are valid, empty, truncated and odd frames (without the length
// field) shared by the fuzz targets.
func fuzzSeeds() [][]byte {
	var seeds [][]byte
	add := func(c *Command) {
		f, err := c.AppendFrame(nil)
		if err != nil {
			panic(err)
		}
		seeds = append(seeds, f[4:], f[4:len(f)/2+2])
	}
	for _, st := range []SerializeType{JSON, RocketMQ} {
		add(&Command{Code: 105, Version: 409, Opaque: 3, ExtFields: map[string]string{"topic": "TopicTest"}, SerializeType: st})
		add(&Command{Code: 0, Flag: 1, Remark: "no route \"x\"\n", Body: []byte("body"), SerializeType: st})
		add(&Command{Code: 310, Language: GO, Version: 317, ExtFields: sendV2Fields(), Body: make([]byte, 64), SerializeType: st})
		add(&Command{Code: 17, ExtFields: map[string]string{}, SerializeType: st})
	}
	seeds = append(seeds, nil, []byte{0, 0, 0, 0}, []byte{0, 0xFF, 0xFF, 0xFF}, []byte{1, 0, 0, 0},
		frameOf(JSON, []byte(`{"code":"1","language":9,"extFields":{"n":1,"o":{"a":[true,null]}},"x":[]}`), nil)[4:],
		frameOf(JSON, []byte(`{"remark":"\ud83d\ude00\u00e9\ud800"}`), nil)[4:])
	return seeds
}

// sendV2Fields is a realistic SEND_MESSAGE_V2 custom header (letter keys).
func sendV2Fields() map[string]string {
	return map[string]string{
		"a": "please_rename_unique_group_name", "b": "TopicTest", "c": "TBW102", "d": "4", "e": "3",
		"f": "0", "g": "1764451200123", "h": "0",
		"i": "KEYS\x01order-4711\x02UNIQ_KEY\x017F0000010F2418B4AAC2654C6A270000\x02WAIT\x01true\x02TAGS\x01TagA\x02",
		"j": "0", "k": "false", "l": "16", "m": "false", "n": "broker-a",
	}
}

// equalCommands compares decoded commands, treating an empty ext map like
// none (the ROCKETMQ header cannot tell them apart).
func equalCommands(a, b *Command) bool {
	x, y := *a, *b
	if len(x.ExtFields) == 0 {
		x.ExtFields = nil
	}
	if len(y.ExtFields) == 0 {
		y.ExtFields = nil
	}
	return reflect.DeepEqual(&x, &y)
}

// FuzzDecodeFrame: decoding never panics; a decoded command re-encodes to a
// canonical frame that decodes to the same command and re-encodes to the
// same bytes.
func FuzzDecodeFrame(f *testing.F) {
	for _, s := range fuzzSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, frame []byte) {
		c1, err := DecodeFrame(frame)
		if err != nil {
			return
		}
		if c1.Body != nil && len(c1.Body) > len(frame) {
			t.Fatal("body longer than the frame")
		}
		e1, err := c1.AppendFrame(nil)
		if err != nil {
			t.Fatalf("re-encoding %+v: %v", c1, err)
		}
		if got := int(binary.BigEndian.Uint32(e1)); got != len(e1)-4 {
			t.Fatalf("length field %d, frame %d", got, len(e1)-4)
		}
		c2, err := DecodeFrame(e1[4:])
		if err != nil {
			t.Fatalf("decoding our own frame %q: %v", e1, err)
		}
		if !equalCommands(c1, c2) {
			t.Fatalf("round trip changed the command\n%+v\n%+v", c1, c2)
		}
		e2, err := c2.AppendFrame(nil)
		if err != nil || !bytes.Equal(e1, e2) {
			t.Fatalf("canonical frame not stable (%v)\n%q\n%q", err, e1, e2)
		}
	})
}

// stdHeader is the JSON header in the shape encoding/json can check.
type stdHeader struct {
	Code      int32             `json:"code"`
	Flag      int32             `json:"flag"`
	Opaque    int32             `json:"opaque"`
	Version   int32             `json:"version"`
	Language  *string           `json:"language"`
	Remark    string            `json:"remark"`
	ExtFields map[string]string `json:"extFields"`
}

var stdHeaderNames = []string{"code", "flag", "opaque", "version", "language", "remark", "extFields"}

// FuzzJSONHeader: the hand-written scanner never panics, and whenever
// encoding/json reads a header of the standard shape, the scanner reads the
// same values.
func FuzzJSONHeader(f *testing.F) {
	for _, s := range fuzzSeeds() {
		if len(s) >= 4 && s[0] == 0 {
			f.Add(s[4:])
		}
	}
	f.Add([]byte(specJSON))
	f.Add([]byte(`{"code":105,"language":"GO","version":317,"opaque":2,"flag":0,"remark":"","extFields":{"topic":"T"}}`))
	f.Fuzz(func(t *testing.T, h []byte) {
		var got Command
		err := decodeJSONHeader(h, &got)
		if err == nil {
			// Stable under re-encoding.
			var again Command
			if err := decodeJSONHeader(appendJSONHeader(nil, &got), &again); err != nil || !equalCommands(&got, &again) {
				t.Fatalf("re-encoded header reads back as %+v (%v), want %+v", again, err, got)
			}
		}
		if !utf8.Valid(h) || !std(h) {
			return
		}
		var want stdHeader
		if json.Unmarshal(h, &want) != nil {
			return
		}
		if err != nil {
			t.Fatalf("encoding/json reads %q, the scanner fails: %v", h, err)
		}
		lang := LanguageCode(0)
		if want.Language != nil {
			lang = languageByName([]byte(*want.Language))
		}
		if got.Code != want.Code || got.Flag != want.Flag || got.Opaque != want.Opaque || got.Version != want.Version ||
			got.Language != lang || got.Remark != want.Remark || !reflect.DeepEqual(got.ExtFields, want.ExtFields) {
			t.Fatalf("%q:\nscanner       %+v\nencoding/json %+v", h, got, want)
		}
	})
}

// std reports whether h's known property names appear only in their exact
// case and only once (encoding/json matches names case-insensitively; the
// scanner, like fastjson, exactly) and extFields has no duplicate keys in
// a different case.
func std(h []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(h))
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		return false
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		name := tok.(string)
		for _, n := range stdHeaderNames {
			if strings.EqualFold(name, n) && name != n {
				return false
			}
		}
		if seen[name] {
			return false
		}
		seen[name] = true
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return false
		}
		if name == "language" && string(skip) == "null" {
			return false // encoding/json leaves the pointer nil; so do we: fine, but keep it simple
		}
	}
	return true
}

// FuzzBinaryHeader: the ROCKETMQ decoder never panics, rejects lengths past
// the header, and what it accepts re-encodes to a header that decodes the
// same.
func FuzzBinaryHeader(f *testing.F) {
	f.Add(specBinary())
	for _, s := range fuzzSeeds() {
		if len(s) >= 4 && s[0] == 1 {
			f.Add(s[4:])
		}
	}
	f.Add(append(specBinary()[:13], 0xFF, 0xFF, 0xFF, 0xFF))
	f.Fuzz(func(t *testing.T, h []byte) {
		var got Command
		if err := decodeBinaryHeader(h, &got); err != nil {
			return
		}
		if len(got.Remark) > len(h) {
			t.Fatal("remark longer than the header")
		}
		enc, err := appendBinaryHeader(nil, &got)
		if err != nil {
			t.Fatalf("re-encoding %+v: %v", got, err)
		}
		var again Command
		if err := decodeBinaryHeader(enc, &again); err != nil || !equalCommands(&got, &again) {
			t.Fatalf("re-encoded header reads back as %+v (%v), want %+v", again, err, got)
		}
	})
}
