package filter

import (
	"testing"

	"github.com/rocketd/rocketd/internal/message"
)

// benchProps is a typical producer's property string: system properties
// first, then the user's.
var benchProps = message.EncodeProperties(map[string]string{
	"TAGS": "TagA", "KEYS": "order-1234", "UNIQ_KEY": "7F000001000018B4AAC21A2B3C4D0000",
	"WAIT": "true", "CLUSTER": "DefaultCluster", "a": "6", "b": "x", "region": "eu-west-1",
})

// BenchmarkMatchTwoProperties is gt_and_eq over a property string holding
// only a and b: the evaluation cost without the search through a typical
// producer's system properties.
func BenchmarkMatchTwoProperties(b *testing.B) {
	e, err := Compile("a > 5 AND b = 'x'")
	if err != nil {
		b.Fatal(err)
	}
	props := "a\x016\x02b\x01x"
	if !e.Match(props) {
		b.Fatal("no match")
	}
	b.ReportAllocs()
	for b.Loop() {
		e.Match(props)
	}
}

func BenchmarkMatch(b *testing.B) {
	for _, c := range []struct{ name, expr string }{
		{"gt_and_eq", "a > 5 AND b = 'x'"},
		{"tags_in", "TAGS IN ('TagA', 'TagB', 'TagC')"},
		{"between", "a BETWEEN 1 AND 10"},
		{"is_null_or", "c IS NULL OR c = 'y'"},
		{"startswith", "region STARTSWITH 'eu-'"},
		{"float", "a > 5.5"},
	} {
		e, err := Compile(c.expr)
		if err != nil {
			b.Fatal(err)
		}
		if !e.Match(benchProps) {
			b.Fatalf("%s does not match", c.expr)
		}
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				e.Match(benchProps)
			}
		})
	}
}
