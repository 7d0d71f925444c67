package processor

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/protocol"
)

func recordWithTag(tag string) []byte {
	r := message.Record{Topic: "T", Body: []byte("b"), BornHost: netip.MustParseAddrPort("1.2.3.4:5"),
		StoreHost: netip.MustParseAddrPort("1.2.3.4:6")}
	if tag != "" {
		r.Properties = string(message.AppendProperty(nil, message.PropertyTags, tag))
	}
	return message.AppendRecord(nil, &r)
}

func TestTagFilter(t *testing.T) {
	// The Go client's heartbeat: codes hashed over UTF-8 (differs from
	// Java's for non-ASCII tags); the tag strings decide.
	sub := &protocol.SubscriptionData{Topic: "T", SubString: "A || Bé", TagsSet: []string{"A", "Bé"},
		CodeSet: protocol.CodeSet{goClientHash("A"), goClientHash("Bé")}}
	f := newTagFilter(sub)
	for _, c := range []struct {
		tag  string
		want bool
	}{{"A", true}, {"Bé", true}, {"B", false}, {"", false}, {"a", false}} {
		code := message.TagsCode(c.tag) // what the ConsumeQueue holds
		got := f.MatchTagsCode(code) && f.MatchRecord(recordWithTag(c.tag))
		if got != c.want {
			t.Errorf("tag %q: match %v, want %v", c.tag, got, c.want)
		}
	}
	if message.JavaHash("Bé") == goClientHash("Bé") {
		t.Fatal("test needs a tag whose Java and Go hashes differ")
	}
	for _, all := range []*protocol.SubscriptionData{nil, {SubString: "*"}, {SubString: ""}, {SubString: " * "}} {
		if f := newTagFilter(all); !f.MatchTagsCode(12345) || !f.MatchRecord([]byte("garbage")) {
			t.Errorf("%+v does not match everything", all)
		}
	}
	if got := splitTags(" a ||b|| ||c "); strings.Join(got, ",") != "a,b,c" {
		t.Fatalf("splitTags: %q", got)
	}
}

// FuzzTagFilter: any expression and any record bytes are matched without a
// panic, and a record carrying one of the expression's tags matches.
func FuzzTagFilter(f *testing.F) {
	f.Add("A || B", "A", []byte{})
	f.Add("*", "", []byte{0, 0, 0, 1})
	f.Add("é||ü||", "ü", recordWithTag("x"))
	f.Fuzz(func(t *testing.T, expr, tag string, raw []byte) {
		flt := newTagFilter(subscriptionFromExpr("T", expr, protocol.ExpressionTag))
		flt.MatchRecord(raw)
		flt.MatchTagsCode(int64(len(raw)))
		if strings.ContainsAny(tag, "\x01\x02") || len(tag) > 1000 {
			return
		}
		for _, want := range splitTags(expr) {
			if want == tag && tag != "*" {
				if !flt.MatchTagsCode(message.TagsCode(tag)) || !flt.MatchRecord(recordWithTag(tag)) {
					t.Fatalf("expr %q does not match its own tag %q", expr, tag)
				}
			}
		}
	})
}
