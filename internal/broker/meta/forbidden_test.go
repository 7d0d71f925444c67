package meta

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/rocketd/rocketd/internal/vfs"
)

// TestGroupForbidden: the read bit is set and cleared per group and topic,
// persisted in Java's forbiddenTable form and read back; deleting the
// group drops its entry.
func TestGroupForbidden(t *testing.T) {
	fs := vfs.NewMem()
	g := openGroups(t, fs, nil)
	v0 := g.DataVersion()
	if g.ReadForbidden("g1", "T") {
		t.Fatal("forbidden from the start")
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(g.SetReadForbidden("g1", "T", true))
	must(g.SetReadForbidden("g1", "U", true))
	if !g.ReadForbidden("g1", "T") || !g.ReadForbidden("g1", "U") || g.ReadForbidden("g2", "T") || g.DataVersion() == v0 {
		t.Fatal("set: wrong state")
	}
	raw := readRaw(t, fs, filepath.Join(testDir, SubscriptionGroupFile))
	if !strings.Contains(raw, `"forbiddenTable":{`) || !strings.Contains(raw, `"g1":{`) || !strings.Contains(raw, `"T":4`) {
		t.Fatalf("file lacks the forbidden table:\n%s", raw)
	}
	// Clearing one topic leaves the other forbidden (Java would drop both).
	must(g.SetReadForbidden("g1", "T", false))
	if g.ReadForbidden("g1", "T") || !g.ReadForbidden("g1", "U") {
		t.Fatal("clear: wrong state")
	}
	g2 := openGroups(t, fs, nil)
	if g2.ReadForbidden("g1", "T") || !g2.ReadForbidden("g1", "U") {
		t.Fatal("reloaded: wrong state")
	}
	if snap := g2.Snapshot(); snap.ForbiddenTable["g1"]["U"] != 4 {
		t.Fatalf("snapshot forbidden table %v", snap.ForbiddenTable)
	}
	// Setting what is already set changes nothing.
	v := g2.DataVersion()
	must(g2.SetReadForbidden("g1", "U", true))
	if g2.DataVersion() != v {
		t.Fatal("no-op bumped the version")
	}
	if _, err := g2.Delete("g1"); err != nil {
		t.Fatal(err)
	}
	if g2.ReadForbidden("g1", "U") {
		t.Fatal("forbidden after the group was deleted")
	}
}
