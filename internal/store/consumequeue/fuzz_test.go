package consumequeue

import (
	"bytes"
	"testing"
)

// FuzzUnits feeds arbitrary bytes to the unit reader (recovery's scanner):
// the valid prefix never exceeds the input, each unit in it is valid and the
// one after is not, and re-encoding the prefix gives the same bytes.
func FuzzUnits(f *testing.F) {
	var valid []byte
	for i := int64(0); i < 3; i++ {
		valid = unitFor(i).AppendTo(valid)
	}
	f.Add(valid)
	f.Add([]byte{})
	f.Add(valid[:UnitSize+7])
	f.Add(append(filler.AppendTo(nil), valid...))
	f.Add(append(valid, make([]byte, UnitSize)...))
	f.Add(Unit{Offset: -1, Size: 5}.AppendTo(nil))
	f.Fuzz(func(t *testing.T, b []byte) {
		n := ValidPrefix(b)
		if n*UnitSize > len(b) {
			t.Fatalf("prefix %d units beyond %d bytes", n, len(b))
		}
		var re []byte
		for i := 0; i < n; i++ {
			u, err := ParseUnit(b[i*UnitSize:])
			if err != nil || !u.Valid() {
				t.Fatalf("unit %d: %+v %v", i, u, err)
			}
			re = u.AppendTo(re)
		}
		if !bytes.Equal(re, b[:n*UnitSize]) {
			t.Fatal("re-encoding differs")
		}
		if (n+1)*UnitSize <= len(b) {
			if u, _ := ParseUnit(b[n*UnitSize:]); u.Valid() {
				t.Fatalf("scan stopped at a valid unit %+v", u)
			}
		}
		// Two halves: the prefix of the first half is a prefix of the whole.
		h := len(b) / 2
		if m := ValidPrefix(b[:h]); m > n {
			t.Fatalf("half %d > whole %d", m, n)
		}
	})
}
