package message

import "testing"

var brokerProps = [3]Prop{
	{Key: PropertyCluster, Value: "DefaultCluster"},
	{Key: PropertyMsgRegion, Value: "DefaultRegion"},
	{Key: PropertyTraceSwitch, Value: "true"},
}

func TestReplaceProperties(t *testing.T) {
	const tail = "CLUSTER\x01DefaultCluster\x02MSG_REGION\x01DefaultRegion\x02TRACE_ON\x01true"
	for _, c := range []struct{ props, drop, want string }{
		{"", "WAIT", tail},
		{"TAGS\x01a", "WAIT", "TAGS\x01a\x02" + tail},
		{"TAGS\x01a\x02", "WAIT", "TAGS\x01a\x02" + tail}, // a trailing separator is kept, not doubled
		{"WAIT\x01true\x02TAGS\x01a", "WAIT", "TAGS\x01a\x02" + tail},
		{"MSG_REGION\x01client\x02TAGS\x01a\x02TRACE_ON\x01false\x02CLUSTER\x01c", "WAIT", "TAGS\x01a\x02" + tail},
		{"WAIT\x01true", "", "WAIT\x01true\x02" + tail},
		{"\x02\x02TAGS\x01a\x02MSG_REGION\x01x", "WAIT", "TAGS\x01a\x02" + tail},
	} {
		got := ReplaceProperties(c.props, c.drop, brokerProps[:]...)
		if got != c.want {
			t.Errorf("ReplaceProperties(%q, %q) = %q, want %q", c.props, c.drop, got, c.want)
		}
		m := ParseProperties(got)
		if m["MSG_REGION"] != "DefaultRegion" || m["TRACE_ON"] != "true" || m["CLUSTER"] != "DefaultCluster" {
			t.Errorf("%q parses as %v", got, m)
		}
	}
	// An empty value is left out, as parsers would drop it.
	if got := ReplaceProperties("TAGS\x01a", "", Prop{Key: PropertyMsgRegion, Value: ""}); got != "TAGS\x01a" {
		t.Errorf("empty value: %q", got)
	}
}

// TestReplacePropertiesAllocations: the send path's edit stays one
// allocation with the two 5.x properties added.
func TestReplacePropertiesAllocations(t *testing.T) {
	props := "WAIT\x01true\x02TAGS\x01TagA\x02UNIQ_KEY\x017F0000010F2418B4AAC2654C6A270000"
	if n := testing.AllocsPerRun(100, func() {
		_ = ReplaceProperties(props, PropertyWaitStoreMsgOK, brokerProps[:]...)
	}); n != 1 {
		t.Fatalf("%v allocations", n)
	}
}

// BenchmarkSendPropertyReplace is the send path's edit since MSG_REGION and
// TRACE_ON are stored: drop WAIT, set CLUSTER, MSG_REGION, TRACE_ON
// (compare BenchmarkSendPropertyEdit/set-without, CLUSTER only).
func BenchmarkSendPropertyReplace(b *testing.B) {
	props := "WAIT\x01true\x02TAGS\x01TagA\x02UNIQ_KEY\x017F0000010F2418B4AAC2654C6A270000"
	b.ReportAllocs()
	for b.Loop() {
		_ = ReplaceProperties(props, PropertyWaitStoreMsgOK, brokerProps[:]...)
	}
}
