package meta

import (
	"path/filepath"
	"testing"

	"github.com/rocketd/rocketd/internal/vfs"
)

func TestTablesLifecycle(t *testing.T) {
	mem := vfs.NewMem()
	installFixture(t, mem, "java-consumerOffset.json", ConsumerOffsetFile)
	bc := testBrokerConfig()
	tb, err := Open(memOptions(mem), bc)
	if err != nil {
		t.Fatal(err)
	}
	if err := tb.Start(); err != nil {
		t.Fatal(err)
	}
	if off, _ := tb.Offsets.Query("please_rename_unique_group_name_4", "TopicTest", 1); off != 249 {
		t.Fatalf("offsets not loaded: %d", off)
	}
	tb.Offsets.Commit("g", "T", 0, 3)
	tb.DelayOffsets.Set(1, 9)
	if err := tb.Close(); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{TopicsFile, SubscriptionGroupFile, ConsumerOffsetFile, DelayOffsetFile} {
		if _, err := mem.Stat(filepath.Join(testDir, name)); err != nil {
			t.Errorf("%s not written on Close: %v", name, err)
		}
	}
	again, err := Open(memOptions(mem.CrashClone()), bc)
	if err != nil {
		t.Fatal(err)
	}
	if off, _ := again.Offsets.Query("g", "T", 0); off != 3 {
		t.Fatal("offset lost")
	}
	if off, _ := again.DelayOffsets.Get(1); off != 9 {
		t.Fatal("delay offset lost")
	}

	// A corrupt file stops Open with an error naming it.
	writeRaw(t, mem, filepath.Join(testDir, SubscriptionGroupFile), []byte("{broken"))
	if _, err := Open(memOptions(mem), bc); err == nil {
		t.Fatal("corrupt subscriptionGroup.json accepted")
	}
	if _, err := Open(Options{}, bc); err == nil {
		t.Fatal("empty Dir accepted")
	}
}
