package txn

import (
	"strconv"
	"strings"
	"testing"

	"github.com/rocketd/rocketd/internal/message"
)

// FuzzParseOp feeds op record bodies (written by any broker version) to
// parseOp: it never panics, returns only non-negative offsets, and the
// offsets it returns re-encode in the 5.x form to a body that parses the
// same.
func FuzzParseOp(f *testing.F) {
	for _, s := range []string{"17", "17,18,21,", "", ",", "-1", "9223372036854775807", "99999999999999999999", "1,,2", "x"} {
		f.Add([]byte(s))
	}
	tags := message.SetProperty("", message.PropertyTags, opTag)
	f.Fuzz(func(t *testing.T, body []byte) {
		offs := parseOp(tags, body)
		var b strings.Builder
		for _, o := range offs {
			if o < 0 {
				t.Fatalf("negative offset %d from %q", o, body)
			}
			b.WriteString(strconv.FormatInt(o, 10))
			b.WriteByte(',')
		}
		again := parseOp(tags, []byte(b.String()))
		if len(again) != len(offs) {
			t.Fatalf("%q -> %v -> %q -> %v", body, offs, b.String(), again)
		}
		for i := range offs {
			if again[i] != offs[i] {
				t.Fatalf("%q -> %v -> %v", body, offs, again)
			}
		}
	})
}
