package auth

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/rocketd/rocketd/internal/remoting"
)

// referenceOrder is the content order spelled out: the fields the
// signature covers, stably sorted by javaCompare, as indices.
func referenceOrder(fields []remoting.ExtEntry, skipUnique bool) []int {
	var idx []int
	for i, f := range fields {
		if f.Key != FieldSignature && !(skipUnique && f.Key == uniqueKeyQuery) {
			idx = append(idx, i)
		}
	}
	slices.SortStableFunc(idx, func(a, b int) int { return javaCompare(fields[a].Key, fields[b].Key) })
	return idx
}

func checkContentOrder(t *testing.T, fields []remoting.ExtEntry, skipUnique bool) {
	t.Helper()
	var got []int
	ord, index := contentOrder(nil, fields, skipUnique)
	for _, o := range ord {
		got = append(got, int(o&index))
	}
	if want := referenceOrder(fields, skipUnique); !slices.Equal(got, want) {
		keys := func(idx []int) (ks []string) {
			for _, i := range idx {
				ks = append(ks, fields[i].Key)
			}
			return ks
		}
		t.Fatalf("order of %q (skipUnique %v):\n got  %q %v\n want %q %v", fields, skipUnique, keys(got), got, keys(want), want)
	}
}

// orderKeys are keys whose order is easy to get wrong: sharing 7- and
// 8-byte prefixes, shorter than 7 bytes with a zero byte after them, non-ASCII
// inside and after the prefix (UTF-16 order differs from UTF-8 between
// supplementary characters and U+E000..), invalid UTF-8, and the keys the
// content leaves out.
var orderKeys = []string{
	"", "a", "a\x00", "a\x00b", "b", "A", "z", "AccessKey", "SecurityToken", FieldSignature, uniqueKeyQuery,
	"topic", "queueId", "queueOffset", "defaultTopic", "defaultTopicQueueNums", "defaultT", "defaultT\x00",
	"consumerGroup", "consumerGroupX", "consumer", "consumerA", "consumer\u00e9", "consumer\ue000",
	"consumer\U0001F600", "\u00e9", "\ue000", "\U0001F600", "a\ue000", "a\U0001F600", "abcdefg\ue000",
	"abcdefg\U0001F600", "abcdef\u00e9", "abcdefg\xff", "\xff", "\xef\xbf\xbd", "\x7f", "\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f",
	"abcdefgh", "abcdefg", "abcdefgi", "abcdef", "abcdef\x00",
}

// TestContentOrderMatchesJavaCompare checks the packed-prefix sort against
// the plain stable sort by javaCompare over random headers of awkward
// keys, repeated keys included (their received order must stay: the last
// one's value is signed).
func TestContentOrderMatchesJavaCompare(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 2))
	for range 20000 {
		n := rng.IntN(24)
		fields := make([]remoting.ExtEntry, n)
		ascii := rng.IntN(2) == 0 // half the headers: keys whose first 8 bytes are ASCII
		for i := range fields {
			k := orderKeys[rng.IntN(len(orderKeys))]
			for ascii && keyPrefix(k)&asciiBits != 0 {
				k = orderKeys[rng.IntN(len(orderKeys))]
			}
			fields[i] = remoting.ExtEntry{Key: k, Value: string(rune('0' + i))}
		}
		checkContentOrder(t, fields, rng.IntN(2) == 0)
	}
}

// TestContentOrderManyFields: more fields than an element's index holds
// take the general sort.
func TestContentOrderManyFields(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 3))
	fields := make([]remoting.ExtEntry, orderIndex+40)
	for i := range fields {
		fields[i] = remoting.ExtEntry{Key: orderKeys[rng.IntN(len(orderKeys))]}
	}
	checkContentOrder(t, fields, false)
}

// FuzzContentOrder: any keys, each a length byte then the key.
func FuzzContentOrder(f *testing.F) {
	f.Add([]byte("\x01a\x01b\x05topic\x07queueId\x01a"))
	f.Add([]byte("\x08consumer\x0dconsumerGroup\x03\xee\x80\x80\x04\xf0\x9f\x98\x80\x02a\x00\x01a"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var fields []remoting.ExtEntry
		for len(data) > 0 {
			n := min(int(data[0]), len(data)-1)
			fields = append(fields, remoting.ExtEntry{Key: string(data[1 : 1+n])})
			data = data[1+n:]
		}
		checkContentOrder(t, fields, false)
		checkContentOrder(t, fields, true)
	})
}
