package message

import (
	"strings"
	"testing"
)

// refDeleteProperty and refSetProperty are the property editors as they
// were before SetPropertyWithout: the reference the rewrite must match
// byte for byte.
func refDeleteProperty(props, key string) string {
	if _, ok := Property(props, key); !ok {
		return props
	}
	b := make([]byte, 0, len(props))
	rest := props
	for len(rest) > 0 {
		entry := rest
		if i := strings.IndexByte(rest, PropertySeparator); i >= 0 {
			entry, rest = rest[:i], rest[i+1:]
		} else {
			rest = ""
		}
		if k, v, ok := strings.Cut(entry, string(NameValueSeparator)); ok && k == key && v != "" {
			continue
		}
		if entry == "" {
			continue
		}
		if len(b) > 0 {
			b = append(b, PropertySeparator)
		}
		b = append(b, entry...)
	}
	return string(b)
}

func refSetProperty(props, key, value string) string {
	props = refDeleteProperty(props, key)
	b := make([]byte, 0, len(props)+len(key)+len(value)+2)
	b = append(b, props...)
	return string(AppendProperty(b, key, value))
}

// FuzzSetPropertyWithout: the one-pass editors give exactly the bytes of
// the step-by-step reference, for keys present, absent, empty or odd.
func FuzzSetPropertyWithout(f *testing.F) {
	f.Add("WAIT\x01true\x02TAGS\x01TagA\x02UNIQ_KEY\x01C0A8", "WAIT", "CLUSTER", "DefaultCluster")
	f.Add("TAGS\x01a\x02\x02CLUSTER\x01old\x02", "WAIT", "CLUSTER", "c")
	f.Add("\x02\x02WAIT\x01\x02WAIT\x01false\x02\x01x", "WAIT", "WAIT", "true")
	f.Add("a\x01b", "", "a", "")
	f.Add("", "WAIT", "", "v")
	f.Fuzz(func(t *testing.T, props, without, key, value string) {
		want := refSetProperty(refDeleteProperty(props, without), key, value)
		if got := SetPropertyWithout(props, without, key, value); got != want {
			t.Fatalf("SetPropertyWithout(%q, %q, %q, %q) = %q, want %q", props, without, key, value, got, want)
		}
		if got, want := SetProperty(props, key, value), refSetProperty(props, key, value); got != want {
			t.Fatalf("SetProperty(%q, %q, %q) = %q, want %q", props, key, value, got, want)
		}
		if got, want := DeleteProperty(props, without), refDeleteProperty(props, without); got != want {
			t.Fatalf("DeleteProperty(%q, %q) = %q, want %q", props, without, got, want)
		}
	})
}

// TestSetPropertyWithoutAllocations: the send path's edit is one
// allocation.
func TestSetPropertyWithoutAllocations(t *testing.T) {
	props := "WAIT\x01true\x02TAGS\x01TagA\x02UNIQ_KEY\x017F0000010F2418B4AAC2654C6A270000"
	if n := testing.AllocsPerRun(100, func() {
		_ = SetPropertyWithout(props, PropertyWaitStoreMsgOK, PropertyCluster, "DefaultCluster")
	}); n != 1 {
		t.Fatalf("%v allocations", n)
	}
}

// BenchmarkSendPropertyEdit is the send path's edit of a producer's
// properties: drop WAIT, add CLUSTER, step by step or in one pass.
func BenchmarkSendPropertyEdit(b *testing.B) {
	props := "WAIT\x01true\x02TAGS\x01TagA\x02UNIQ_KEY\x017F0000010F2418B4AAC2654C6A270000"
	b.Run("delete-then-set", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = SetProperty(DeleteProperty(props, PropertyWaitStoreMsgOK), PropertyCluster, "DefaultCluster")
		}
	})
	b.Run("set-without", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = SetPropertyWithout(props, PropertyWaitStoreMsgOK, PropertyCluster, "DefaultCluster")
		}
	})
}
