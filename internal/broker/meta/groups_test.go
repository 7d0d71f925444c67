package meta

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/vfs"
)

func openGroups(t *testing.T, fs vfs.FS, mutate func(*config.BrokerConfig)) *Groups {
	t.Helper()
	bc := testBrokerConfig()
	if mutate != nil {
		mutate(bc)
	}
	g, err := OpenGroups(memOptions(fs), bc)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestBuiltinGroups(t *testing.T) {
	g := openGroups(t, vfs.NewMem(), nil)
	want := []string{"CID_ONS-HTTP-PROXY", "CID_ONSAPI_OWNER", "CID_ONSAPI_PERMISSION", "CID_ONSAPI_PULL",
		"FILTERSRV_CONSUMER", "SELF_TEST_C_GROUP", "TOOLS_CONSUMER"}
	if got := g.Names(); !reflect.DeepEqual(got, want) {
		t.Fatalf("built-in groups %v", got)
	}
	cfg, ok := g.Get("CID_ONSAPI_OWNER")
	if !ok || !cfg.ConsumeBroadcastEnable || cfg.RetryQueueNums != 1 || cfg.RetryMaxTimes != 16 || cfg.GroupName != "CID_ONSAPI_OWNER" {
		t.Fatalf("%+v", cfg)
	}
}

func TestFindOrCreate(t *testing.T) {
	fs := vfs.NewMem()
	g := openGroups(t, fs, nil)
	v0 := g.DataVersion()
	cfg, ok := g.FindOrCreate("app_group")
	if !ok || !reflect.DeepEqual(cfg, protocol.NewSubscriptionGroupConfig("app_group")) {
		t.Fatalf("auto-create: %+v %v", cfg, ok)
	}
	if g.DataVersion().Counter != v0.Counter+1 {
		t.Fatal("no version bump on creation")
	}
	if !strings.Contains(readRaw(t, fs, filepath.Join(testDir, SubscriptionGroupFile)), `"app_group":{`) {
		t.Fatal("subscriptionGroup.json not written on creation")
	}
	if _, ok := g.FindOrCreate("app_group"); !ok || g.DataVersion().Counter != v0.Counter+1 {
		t.Fatal("second FindOrCreate changed the version")
	}
	for _, bad := range []string{"bad group", "a.b", strings.Repeat("g", 256), ""} {
		if _, ok := g.FindOrCreate(bad); ok {
			t.Errorf("%q created", bad)
		}
	}

	// autoCreateSubscriptionGroup=false: only CID_RMQ_SYS_ groups.
	off := openGroups(t, vfs.NewMem(), func(bc *config.BrokerConfig) { bc.AutoCreateSubscriptionGroup = false })
	if _, ok := off.FindOrCreate("app_group"); ok {
		t.Fatal("created with auto-creation off")
	}
	if _, ok := off.FindOrCreate(TransCheckGroup); !ok {
		t.Fatal("CID_RMQ_SYS_ group not created with auto-creation off")
	}
	if _, ok := off.FindOrCreate("TOOLS_CONSUMER"); !ok {
		t.Fatal("built-in group not found")
	}
}

func TestGroupsPutDeleteReload(t *testing.T) {
	fs := vfs.NewMem()
	g := openGroups(t, fs, nil)
	cfg := protocol.NewSubscriptionGroupConfig("g1")
	cfg.RetryMaxTimes, cfg.ConsumeEnable = 3, false
	if err := g.Put(cfg); err != nil {
		t.Fatal(err)
	}
	if err := g.Put(protocol.SubscriptionGroupConfig{}); err == nil {
		t.Fatal("empty name accepted")
	}
	if _, err := g.Delete("TOOLS_CONSUMER"); err != nil {
		t.Fatal(err)
	}
	g2 := openGroups(t, fs, nil)
	if got, _ := g2.Get("g1"); !reflect.DeepEqual(got, cfg) {
		t.Fatalf("reloaded %+v", got)
	}
	if _, ok := g2.Get("TOOLS_CONSUMER"); !ok {
		// Java reloads built-ins and merges the file over them: a deleted
		// built-in comes back, as it does in Java.
		t.Fatal("built-in group missing after reload")
	}
	if g2.DataVersion() != g.DataVersion() {
		t.Fatalf("version %+v, want %+v", g2.DataVersion(), g.DataVersion())
	}
	if existed, err := g2.Delete("nope"); existed || err != nil {
		t.Fatal(existed, err)
	}
}

func TestLoadJavaGroups(t *testing.T) {
	fs := vfs.NewMem()
	installFixture(t, fs, "java-subscriptionGroup.json", SubscriptionGroupFile)
	g := openGroups(t, fs, nil)
	if dv := g.DataVersion(); dv.Counter != 3 || dv.Timestamp != 1690000000456 {
		t.Fatalf("version %+v", dv)
	}
	slow, ok := g.Get("slowGroup")
	want := protocol.SubscriptionGroupConfig{GroupName: "slowGroup", ConsumeFromMinEnable: true, RetryQueueNums: 2,
		RetryMaxTimes: 3, BrokerID: 1, WhichBrokerWhenConsumeSlowly: 1,
		GroupRetryPolicy: protocol.GroupRetryPolicy{Type: protocol.RetryPolicyCustomized}, ConsumeTimeoutMinute: 15}
	if !ok || !reflect.DeepEqual(slow, want) {
		t.Fatalf("slowGroup %+v", slow)
	}
	if _, ok := g.Get("CID_ONSAPI_PULL"); !ok {
		t.Fatal("built-ins not merged")
	}
	if err := g.Persist(); err != nil {
		t.Fatal(err)
	}
	g2 := openGroups(t, fs, nil)
	if !reflect.DeepEqual(g.Snapshot(), g2.Snapshot()) {
		t.Fatal("round trip changed the table")
	}
}

// TestLoadGroups5x reads a 5.x subscriptionGroup.json: the properties 4.9
// does not know (forbiddenTable, groupRetryPolicy, attributes, ...) are
// ignored, and absent ones take Java's defaults.
func TestLoadGroups5x(t *testing.T) {
	text := "{\n\t\"dataVersion\":{\n\t\t\"counter\":2,\n\t\t\"stateVersion\":0,\n\t\t\"timestamp\":7\n\t},\n\t\"forbiddenTable\":{},\n" +
		"\t\"subscriptionGroupTable\":{\n\t\t\"g5\":{\n\t\t\t\"attributes\":{},\n\t\t\t\"brokerId\":0,\n\t\t\t\"consumeBroadcastEnable\":true,\n" +
		"\t\t\t\"consumeEnable\":true,\n\t\t\t\"consumeFromMinEnable\":true,\n\t\t\t\"consumeMessageOrderly\":false,\n" +
		"\t\t\t\"consumeTimeoutMinute\":15,\n\t\t\t\"groupName\":\"g5\",\n\t\t\t\"groupRetryPolicy\":{\n\t\t\t\t\"type\":\"CUSTOMIZED\"\n\t\t\t},\n" +
		"\t\t\t\"groupSysFlag\":0,\n\t\t\t\"notifyConsumerIdsChangedEnable\":true,\n\t\t\t\"retryMaxTimes\":5,\n\t\t\t\"retryQueueNums\":1,\n" +
		"\t\t\t\"subscriptionDataSet\":[],\n\t\t\t\"whichBrokerWhenConsumeSlowly\":1\n\t\t},\n\t\t\"sparse\":{\n\t\t\t\"retryMaxTimes\":2\n\t\t}\n\t}\n}"
	fs := vfs.NewMem()
	writeRaw(t, fs, filepath.Join(testDir, SubscriptionGroupFile), []byte(text))
	g := openGroups(t, fs, nil)
	if cfg, _ := g.Get("g5"); cfg.RetryMaxTimes != 5 || !cfg.ConsumeEnable {
		t.Fatalf("g5 %+v", cfg)
	}
	want := protocol.NewSubscriptionGroupConfig("sparse")
	want.RetryMaxTimes = 2
	if cfg, _ := g.Get("sparse"); !reflect.DeepEqual(cfg, want) {
		t.Fatalf("sparse %+v", cfg)
	}
}
