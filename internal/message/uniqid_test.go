package message

import (
	"errors"
	"net/netip"
	"strings"
	"testing"
	"time"
)

func TestUniqIDLayout(t *testing.T) {
	loc := time.FixedZone("test", 3600)
	g := NewUniqIDGenerator(netip.MustParseAddr("192.168.1.2"), 0x1234, -1)
	// 2 days, 3 ms into March (local).
	g.now = func() time.Time { return time.Date(2026, 3, 3, 0, 0, 0, 3_000_000, loc) }
	id1, id2 := g.Next(), g.Next()
	// ip C0A80102 | pid 1234 | loader FFFFFFFF | 2d+3ms = 172800003 = 0A4CB803 | counter
	if id1 != "C0A801021234FFFFFFFF0A4CB8030000" || id2 != "C0A801021234FFFFFFFF0A4CB8030001" {
		t.Fatalf("ids %s %s", id1, id2)
	}
	now := time.Date(2026, 3, 20, 0, 0, 0, 0, loc)
	got, err := UniqIDTime(id1, now)
	if err != nil || !got.Equal(g.now()) {
		t.Fatalf("UniqIDTime = %v %v, want %v", got, err, g.now())
	}
	// Early in the next month, an offset later than now means last month.
	got, _ = UniqIDTime(id1, time.Date(2026, 4, 1, 1, 0, 0, 0, loc))
	if !got.Equal(g.now()) {
		t.Fatalf("previous month: %v", got)
	}
	if a, err := UniqIDAddr(id1); err != nil || a != netip.MustParseAddr("192.168.1.2") {
		t.Fatalf("UniqIDAddr = %v %v", a, err)
	}
	v6 := NewUniqIDGenerator(netip.MustParseAddr("2001:db8::1"), 1, 1).Next()
	if len(v6) != UniqIDLenV6 || !strings.HasPrefix(v6, "20010DB8") {
		t.Fatalf("v6 id %s", v6)
	}
	if a, _ := UniqIDAddr(v6); a != netip.MustParseAddr("2001:db8::1") {
		t.Fatalf("v6 addr %v", a)
	}
	for _, bad := range []string{"", "XYZ", strings.Repeat("G", 32)} {
		if _, err := UniqIDTime(bad, now); !errors.Is(err, ErrBadMsgID) {
			t.Fatalf("UniqIDTime(%q) = %v", bad, err)
		}
	}
}

func TestUniqIDUnique(t *testing.T) {
	g := NewUniqIDGenerator(netip.MustParseAddr("10.0.0.1"), 7, 99)
	seen := map[string]bool{}
	for range 1000 {
		id := g.Next()
		if seen[id] {
			t.Fatalf("duplicate id %s", id)
		}
		seen[id] = true
	}
}

// TestUniqIDAppendNext: AppendNext appends what Next returns, after what
// dst holds, without allocating once dst has room.
func TestUniqIDAppendNext(t *testing.T) {
	loc := time.FixedZone("test", 3600)
	g := NewUniqIDGenerator(netip.MustParseAddr("192.168.1.2"), 0x1234, -1)
	g.now = func() time.Time { return time.Date(2026, 3, 3, 0, 0, 0, 3_000_000, loc) }
	if got := string(g.AppendNext([]byte("UNIQ_KEY\x01"))); got != "UNIQ_KEY\x01C0A801021234FFFFFFFF0A4CB8030000" {
		t.Fatalf("AppendNext = %q", got)
	}
	if got := g.Next(); got != "C0A801021234FFFFFFFF0A4CB8030001" {
		t.Fatalf("Next after AppendNext = %s", got)
	}
	buf := make([]byte, 0, 64)
	if n := testing.AllocsPerRun(100, func() { buf = g.AppendNext(buf[:0]) }); n != 0 {
		t.Fatalf("AppendNext allocates %v times", n)
	}
}
