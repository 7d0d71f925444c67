package message

import (
	"errors"
	"maps"
	"net/netip"
	"testing"
	"unicode/utf16"
)

// javaHashUTF16 is an independent reference: it converts to UTF-16 with the
// standard library and applies the Java definition s[0]*31^(n-1) + ... .
func javaHashUTF16(s string) int32 {
	units := utf16.Encode([]rune(s))
	var h int32
	for _, u := range units {
		h = h*31 + int32(u)
	}
	return h
}

func TestTagsCode(t *testing.T) {
	cases := map[string]int64{
		"":                   0,
		"a":                  97,
		"TagA":               2598919, // the go-client-wire.md codeSet example
		"中文":                 646394,  // '中'=0x4E2D=20013, '文'=0x6587=25991: 20013*31 + 25991
		"polygenelubricants": int64(int32(-2147483648)),
	}
	for tag, want := range cases {
		if got := TagsCode(tag); got != want {
			t.Errorf("TagsCode(%q) = %d, want %d", tag, got, want)
		}
	}
	for _, s := range []string{"TagA", "中文", "日本語のタグ", "emoji 😀 tag", "𝄞", "mixed-Ünïcödé-123", "a\u0000b"} {
		if got, want := JavaHash(s), javaHashUTF16(s); got != want {
			t.Errorf("JavaHash(%q) = %d, UTF-16 reference %d", s, got, want)
		}
	}
}

func TestOffsetMsgID(t *testing.T) {
	h := netip.MustParseAddrPort("127.0.0.1:10911")
	if got := OffsetMsgID(h, 0); got != "7F00000100002A9F0000000000000000" {
		t.Fatalf("OffsetMsgID = %s", got)
	}
	for _, c := range []struct {
		host string
		off  int64
		len  int
	}{
		{"127.0.0.1:10911", 0, 32},
		{"10.20.30.40:65535", 1<<40 + 5, 32},
		{"[::ffff:10.0.0.1]:10911", 77, 32},
		{"[2001:db8::7]:10911", 123456789, 56},
	} {
		host := netip.MustParseAddrPort(c.host)
		id := OffsetMsgID(host, c.off)
		if len(id) != c.len {
			t.Fatalf("%v: id %s has length %d", host, id, len(id))
		}
		gotHost, gotOff, err := ParseOffsetMsgID(id)
		if err != nil || gotOff != c.off || gotHost.Addr() != host.Addr().Unmap() || gotHost.Port() != host.Port() {
			t.Fatalf("Parse(%s) = %v %d %v", id, gotHost, gotOff, err)
		}
	}
	if _, off, err := ParseOffsetMsgID("7f00000100002a9f00000000000000ff"); err != nil || off != 255 {
		t.Fatalf("lowercase: %d %v", off, err)
	}
	for _, bad := range []string{"", "7F", "7F00000100002A9F000000000000000G", "7F0000010001FFFF0000000000000000"} {
		if _, _, err := ParseOffsetMsgID(bad); !errors.Is(err, ErrBadMsgID) {
			t.Errorf("Parse(%q): %v", bad, err)
		}
	}
}

func TestProperties(t *testing.T) {
	m := map[string]string{"TAGS": "TagA", "KEYS": "k1 k2", "UNIQ_KEY": "C0A8", "WAIT": "true"}
	s := EncodeProperties(m)
	if s != "KEYS\x01k1 k2\x02TAGS\x01TagA\x02UNIQ_KEY\x01C0A8\x02WAIT\x01true" {
		t.Fatalf("EncodeProperties = %q", s)
	}
	if got := ParseProperties(s); !maps.Equal(got, m) {
		t.Fatalf("round trip = %v", got)
	}
	if got := ParseProperties(s + "\x02"); !maps.Equal(got, m) {
		t.Fatalf("trailing separator: %v", got)
	}
	// Java drops entries with an empty key or value and ones without \x01;
	// the value runs to the next \x02 and may hold \x01; the last key wins.
	odd := "\x01v\x02k\x01\x02noval\x02a\x01b\x01c\x02\x02x\x011\x02x\x012"
	want := map[string]string{"a": "b\x01c", "x": "2"}
	if got := ParseProperties(odd); !maps.Equal(got, want) {
		t.Fatalf("ParseProperties(odd) = %q", got)
	}
	for k, v := range want {
		if got, ok := Property(odd, k); !ok || got != v {
			t.Fatalf("Property(%q) = %q %v", k, got, ok)
		}
	}
	for _, k := range []string{"", "k", "noval", "TAGS", "x\x011"} {
		if v, ok := Property(odd, k); ok {
			t.Fatalf("Property(%q) found %q", k, v)
		}
	}
	if v, ok := Property(s, "TAGS"); !ok || v != "TagA" {
		t.Fatalf("Property(TAGS) = %q %v", v, ok)
	}
	if v, ok := Property("TAGSX\x01no\x02TAGS\x01yes", "TAGS"); !ok || v != "yes" {
		t.Fatalf("prefix key confusion: %q %v", v, ok)
	}
	if got := EncodeProperties(map[string]string{"": "x", "y": ""}); got != "" {
		t.Fatalf("empty entries encoded: %q", got)
	}
}

func TestPropertyEditing(t *testing.T) {
	s := "TAGS\x01a\x02WAIT\x01true\x02KEYS\x01k"
	if got := DeleteProperty(s, "WAIT"); got != "TAGS\x01a\x02KEYS\x01k" {
		t.Fatalf("DeleteProperty = %q", got)
	}
	if got := DeleteProperty(s, "NONE"); got != s {
		t.Fatalf("DeleteProperty of an absent key changed the string: %q", got)
	}
	if got := DeleteProperty("WAIT\x01true\x02", "WAIT"); got != "" {
		t.Fatalf("DeleteProperty last entry = %q", got)
	}
	if got := SetProperty(s, "CLUSTER", "c1"); got != s+"\x02CLUSTER\x01c1" {
		t.Fatalf("SetProperty = %q", got)
	}
	if got := SetProperty(s, "TAGS", "b"); ParseProperties(got)["TAGS"] != "b" || len(ParseProperties(got)) != 3 {
		t.Fatalf("SetProperty replace = %q", got)
	}
	if got := string(AppendProperty([]byte("A\x011\x02"), "B", "2")); got != "A\x011\x02B\x012" {
		t.Fatalf("AppendProperty after trailing separator = %q", got)
	}
	var n int
	for k, v := range AllProperties(s) {
		if k == "" || v == "" {
			t.Fatal("empty entry yielded")
		}
		n++
		if n == 2 {
			break
		}
	}
	if n != 2 {
		t.Fatal("AllProperties ignored break")
	}
	if a := testing.AllocsPerRun(100, func() { _, _ = Property(s, "KEYS") }); a != 0 {
		t.Fatalf("Property allocates %v", a)
	}
}

func TestSysFlag(t *testing.T) {
	f := SysFlagCompressed | TransactionPreparedType | SysFlagBornHostV6
	if TransactionType(f) != TransactionPreparedType || Dispatched(f) || !IsCompressed(f) {
		t.Fatal("prepared record misread")
	}
	f = WithTransactionType(f, TransactionCommitType)
	if TransactionType(f) != TransactionCommitType || !Dispatched(f) || f&SysFlagBornHostV6 == 0 || !IsCompressed(f) {
		t.Fatalf("WithTransactionType = %#x", f)
	}
	if Dispatched(TransactionRollbackType) || !Dispatched(0) {
		t.Fatal("Dispatched")
	}
	if CompressionType(SysFlagCompressed|CompressionZSTD) != CompressionZSTD {
		t.Fatal("CompressionType")
	}
}
