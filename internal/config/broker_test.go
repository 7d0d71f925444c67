package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestBrokerConfigDefaults(t *testing.T) {
	c := NewBrokerConfig()
	if c.BrokerIP2 != "" || c.StorePathCommitLog != "" || c.EndTransactionThreadPoolNums != 0 {
		t.Fatalf("derived settings filled before EnsureDefaults: %q %q %d", c.BrokerIP2, c.StorePathCommitLog, c.EndTransactionThreadPoolNums)
	}
	c.EnsureDefaults()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		key       string
		got, want any
	}{
		{"brokerClusterName", c.BrokerClusterName, "DefaultCluster"},
		{"brokerName", c.BrokerName, "broker-a"},
		{"brokerId", c.BrokerID, int64(0)},
		{"listenPort", c.ListenPort, 10911},
		{"brokerIP2", c.BrokerIP2, c.BrokerIP1},
		{"brokerPermission", c.BrokerPermission, int32(6)},
		{"autoCreateTopicEnable", c.AutoCreateTopicEnable, true},
		{"autoCreateSubscriptionGroup", c.AutoCreateSubscriptionGroup, true},
		{"clusterTopicEnable", c.ClusterTopicEnable, true},
		{"brokerTopicEnable", c.BrokerTopicEnable, true},
		{"traceTopicEnable", c.TraceTopicEnable, false},
		{"msgTraceTopicName", c.MsgTraceTopicName, "RMQ_SYS_TRACE_TOPIC"},
		{"filterServerNums", c.FilterServerNums, int32(0)},
		{"defaultTopicQueueNums", c.DefaultTopicQueueNums, int32(8)},
		{"rejectTransactionMessage", c.RejectTransactionMessage, false},
		{"transactionTimeOut", c.TransactionTimeout, 6 * time.Second},
		{"transactionCheckMax", c.TransactionCheckMax, 15},
		{"transactionCheckInterval", c.TransactionCheckInterval, 60 * time.Second},
		{"registerBrokerTimeoutMills", c.RegisterBrokerTimeout, 6 * time.Second},
		{"registerNameServerPeriod", c.RegisterNameServerPeriod, 30 * time.Second},
		{"forceRegister", c.ForceRegister, true},
		{"longPollingEnable", c.LongPollingEnable, true},
		{"shortPollingTimeMills", c.ShortPollingTime, time.Second},
		{"traceOn", c.TraceOn, true},
		{"regionId", c.RegionID, "DefaultRegion"},
		{"flushConsumerOffsetInterval", c.FlushConsumerOffsetInterval, 5 * time.Second},
		{"sendMessageThreadPoolNums", c.SendMessageThreadPoolNums, min(runtime.NumCPU(), 4)},
		{"sendThreadPoolQueueCapacity", c.SendThreadPoolQueueCapacity, 10000},
		{"pullThreadPoolQueueCapacity", c.PullThreadPoolQueueCapacity, 100000},
		{"storeReplyMessageEnable", c.StoreReplyMessageEnable, true},
		{"processReplyMessageThreadPoolNums", c.ProcessReplyMessageThreadPoolNums, 16 + 2*runtime.NumCPU()},
		{"replyThreadPoolQueueCapacity", c.ReplyThreadPoolQueueCapacity, 10000},
		{"mappedFileSizeCommitLog", c.MappedFileSizeCommitLog, int64(1 << 30)},
		{"mappedFileSizeConsumeQueue", c.MappedFileSizeConsumeQueue, int64(6000000)},
		{"flushDiskType", c.FlushDiskType, AsyncFlush},
		{"brokerRole", c.BrokerRole, AsyncMaster},
		{"deleteWhen", c.DeleteWhen, "04"},
		{"fileReservedTime", c.FileReservedTime, 72},
		{"diskMaxUsedSpaceRatio", c.DiskMaxUsedSpaceRatio, 75},
		{"diskSpaceCleanForciblyRatio", c.DiskSpaceCleanForciblyRatio, 85},
		{"diskSpaceWarningLevelRatio", c.DiskSpaceWarningLevelRatio, 90},
		{"cleanFileForciblyEnable", c.CleanFileForciblyEnable, true},
		{"cleanResourceInterval", c.CleanResourceInterval, 10 * time.Second},
		{"maxMessageSize", c.MaxMessageSize, 4194304},
		{"syncFlushTimeout", c.SyncFlushTimeout, 5 * time.Second},
		{"flushIntervalCommitLog", c.FlushIntervalCommitLog, 500 * time.Millisecond},
		{"flushCommitLogLeastPages", c.FlushCommitLogLeastPages, 4},
		{"flushCommitLogThoroughInterval", c.FlushCommitLogThoroughInterval, 10 * time.Second},
		{"messageDelayLevel", c.MessageDelayLevel, "1s 5s 10s 30s 1m 2m 3m 4m 5m 6m 7m 8m 9m 10m 20m 30m 1h 2h"},
		{"waitTimeMillsInHeartbeatQueue", c.WaitTimeInHeartbeatQueue, 31 * time.Second},
		{"consumerFallbehindThreshold", c.ConsumerFallbehindThreshold, int64(16 << 30)},
		{"accessMessageInMemoryMaxRatio", c.AccessMessageInMemoryMaxRatio, 40},
		{"maxTransferBytesOnMessageInDisk", c.MaxTransferBytesOnMessageInDisk, 64 << 10},
		{"haSendHeartbeatInterval", c.HASendHeartbeatInterval, 5 * time.Second},
		{"haSlaveFallbehindMax", c.HASlaveFallbehindMax, int64(256 << 20)},
		{"enablePropertyFilter", c.EnablePropertyFilter, false},
		{"commitLogCorruptionAction", c.CommitLogCorruptionAction, "refuse"},
		{"HAPort", c.HAPort(), 10912},
		{"ConsumeQueueUnitsPerFile", c.ConsumeQueueUnitsPerFile(), 300000},
		{"FileReservedDuration", c.FileReservedDuration(), 72 * time.Hour},
		{"IsMaster", c.IsMaster(), true},
	}
	for _, ch := range checks {
		if !reflect.DeepEqual(ch.got, ch.want) {
			t.Errorf("%s = %v, want %v", ch.key, ch.got, ch.want)
		}
	}
	if !strings.HasSuffix(c.StorePathRootDir, "store") || c.StorePathCommitLog != filepath.Join(c.StorePathRootDir, "commitlog") {
		t.Errorf("store paths %s %s", c.StorePathRootDir, c.StorePathCommitLog)
	}
	levels, err := c.DelayLevels()
	if err != nil || len(levels) != 18 || levels[0] != time.Second || levels[17] != 2*time.Hour {
		t.Errorf("delay levels %v %v", levels, err)
	}
}

func TestDerivedDefaultsFollowTheirSource(t *testing.T) {
	c := NewBrokerConfig()
	c.StorePathRootDir = "/data/store"
	c.BrokerIP1 = "10.9.9.9"
	c.SendMessageThreadPoolNums = 64
	c.EnsureDefaults()
	if c.StorePathCommitLog != "/data/store/commitlog" || c.BrokerIP2 != "10.9.9.9" || c.EndTransactionThreadPoolNums != 256 {
		t.Fatalf("%q %q %d", c.StorePathCommitLog, c.BrokerIP2, c.EndTransactionThreadPoolNums)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	var bare BrokerConfig
	bare.BrokerIP1 = "10.1.1.1"
	if bare.HAServerAddr() != "10.1.1.1:1" {
		t.Fatalf("HAServerAddr without brokerIP2: %s", bare.HAServerAddr())
	}
}

func TestBrokerIPDefault(t *testing.T) {
	ip := defaultBrokerIP()
	c := BrokerConfig{}
	c.EnsureDefaults()
	if c.BrokerIP1 != ip || c.BrokerIP2 != ip || ip == "" {
		t.Fatalf("brokerIP1 %q brokerIP2 %q, default %q", c.BrokerIP1, c.BrokerIP2, ip)
	}
	if strings.HasPrefix(ip, "127.") && ip != "127.0.0.1" {
		t.Fatalf("unexpected loopback %s", ip)
	}
	if c.BrokerAddr() != ip+":10911" || c.HAServerAddr() != ip+":10912" {
		t.Fatalf("%s %s", c.BrokerAddr(), c.HAServerAddr())
	}
}

func TestLoadBrokerFile(t *testing.T) {
	conf := `# a Java broker.conf
brokerClusterName = ProdCluster
brokerName = broker-b   
brokerId = 1
namesrvAddr = 10.0.0.1:9876;10.0.0.2:9876
deleteWhen = 04;16
fileReservedTime = 48
brokerRole = SLAVE
flushDiskType = sync_flush
listenPort = 20911
brokerIP1 = 10.0.0.5
storePathRootDir = /data/rocketmq/store
mapedFileSizeCommitLog = 536870912
mapedFileSizeConsumeQueue = 100
autoCreateTopicEnable = false
defaultTopicQueueNums = 4
syncFlushTimeout = 2000
messageDelayLevel = 1s 1m 1h 1d
registerNameServerPeriod = 5000
commitLogCorruptionAction = Truncate
rocketmqHome = /opt/rocketmq
aclEnable = false
`
	path := filepath.Join(t.TempDir(), "broker.conf")
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	c, unknown, err := LoadBrokerFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(unknown, []string{"aclEnable", "rocketmqHome"}) {
		t.Errorf("unknown %v", unknown)
	}
	if c.BrokerClusterName != "ProdCluster" || c.BrokerName != "broker-b" || c.BrokerID != 1 || c.BrokerRole != Slave ||
		c.FlushDiskType != SyncFlush || c.ListenPort != 20911 || c.BrokerIP1 != "10.0.0.5" || c.BrokerIP2 != "10.0.0.5" ||
		c.AutoCreateTopicEnable || !c.AutoCreateSubscriptionGroup || c.DefaultTopicQueueNums != 4 ||
		c.SyncFlushTimeout != 2*time.Second || c.FileReservedTime != 48 || c.DeleteWhen != "04;16" ||
		c.CommitLogCorruptionAction != CorruptionTruncate {
		t.Fatalf("loaded %+v", c)
	}
	if c.StorePathCommitLog != "/data/rocketmq/store/commitlog" {
		t.Errorf("commitlog path %s follows the root", c.StorePathCommitLog)
	}
	if c.MappedFileSizeCommitLog != 512<<20 || c.MappedFileSizeConsumeQueue != 100 || c.ConsumeQueueUnitsPerFile() != 5 {
		t.Errorf("old spellings: %d %d", c.MappedFileSizeCommitLog, c.MappedFileSizeConsumeQueue)
	}
	if got := c.NamesrvAddrs(); !reflect.DeepEqual(got, []string{"10.0.0.1:9876", "10.0.0.2:9876"}) {
		t.Errorf("namesrv %v", got)
	}
	if c.BrokerAddr() != "10.0.0.5:20911" || c.HAServerAddr() != "10.0.0.5:20912" || c.IsMaster() {
		t.Errorf("addrs %s %s", c.BrokerAddr(), c.HAServerAddr())
	}
	if c.RegisterPeriod() != 10*time.Second {
		t.Errorf("register period %v not clamped", c.RegisterPeriod())
	}
	levels, _ := c.DelayLevels()
	if !reflect.DeepEqual(levels, []time.Duration{time.Second, time.Minute, time.Hour, 24 * time.Hour}) {
		t.Errorf("levels %v", levels)
	}
	if _, _, err := LoadBrokerFile(filepath.Join(t.TempDir(), "missing.conf")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing file: %v", err)
	}
}

func TestBrokerConfigAliasPrecedence(t *testing.T) {
	c, unknown, err := BrokerConfigFromProperties(Properties{
		"mapedFileSizeCommitLog": "1000", "mappedFileSizeCommitLog": "2000", "brokerIP1": "10.1.1.1", "brokerIP2": "10.2.2.2", "haListenPort": "30000",
	})
	if err != nil || len(unknown) != 0 {
		t.Fatal(err, unknown)
	}
	if c.MappedFileSizeCommitLog != 2000 || c.BrokerIP2 != "10.2.2.2" || c.HAServerAddr() != "10.2.2.2:30000" {
		t.Fatalf("%+v", c)
	}
	if c.RegisterPeriod() != 30*time.Second {
		t.Fatal(c.RegisterPeriod())
	}
	c.RegisterNameServerPeriod = 10 * time.Minute
	if c.RegisterPeriod() != time.Minute {
		t.Fatal(c.RegisterPeriod())
	}
}

func TestBrokerConfigErrorsNameTheKey(t *testing.T) {
	cases := map[string]Properties{
		"listenPort":                    {"listenPort": "abc"},
		"brokerId":                      {"brokerId": "x"},
		"autoCreateTopicEnable":         {"autoCreateTopicEnable": "maybe"},
		"syncFlushTimeout":              {"syncFlushTimeout": "soon"},
		"brokerRole":                    {"brokerRole": "LEADER"},
		"filter servers were removed":   {"filterServerNums": "2"},
		"slave acting master (RIP-32)":  {"enableSlaveActingMaster": "true"},
		"flushDiskType":                 {"flushDiskType": "SOMETIMES"},
		"messageDelayLevel":             {"messageDelayLevel": "1s 5x"},
		"deleteWhen":                    {"deleteWhen": "25"},
		"a slave must have brokerId":    {"brokerRole": "SLAVE"},
		"must have brokerId 0":          {"brokerId": "2"},
		"brokerIP1":                     {"brokerIP1": "not-an-ip"},
		"namesrvAddr":                   {"namesrvAddr": "10.0.0.1"},
		"maxMessageSize":                {"maxMessageSize": "-1"},
		"mappedFileSizeCommitLog":       {"mappedFileSizeCommitLog": "4294967296"},
		"diskMaxUsedSpaceRatio":         {"diskMaxUsedSpaceRatio": "0.75"},
		"fileReservedTime":              {"fileReservedTime": "-3"},
		"defaultTopicQueueNums":         {"defaultTopicQueueNums": "-8"},
		"registerNameServerPeriod":      {"registerNameServerPeriod": "-1"},
		"brokerPermission":              {"brokerPermission": "99"},
		"haListenPort 10911":            {"haListenPort": "10911"},
		"accessMessageInMemoryMaxRatio": {"accessMessageInMemoryMaxRatio": "101"},
		"waitTimeMillsInPullQueue":      {"waitTimeMillsInPullQueue": "-5"},
		"commitLogCorruptionAction":     {"commitLogCorruptionAction": "repair"},
	}
	for want, props := range cases {
		_, _, err := BrokerConfigFromProperties(props)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%v: error %v, want mention of %q", props, err, want)
		}
	}
}

// TestDiskKeys: the disk keys take every value a Java 5.x broker.conf may
// hold and mean what Java makes of it (MessageStoreConfig and
// CleanCommitLogService): whole percents in any order, clamped to Java's
// ranges; only what Java cannot parse is refused.
func TestDiskKeys(t *testing.T) {
	type disk struct {
		maxUsed, forcibly, warning int
		forceEnable                bool
		interval                   time.Duration
	}
	def := disk{75, 85, 90, true, 10 * time.Second}
	with := func(f func(*disk)) disk { d := def; f(&d); return d }
	cases := []struct {
		name  string
		props Properties
		want  disk
	}{
		{"defaults", Properties{}, def},
		{"maxUsed 88 above forcibly", Properties{"diskMaxUsedSpaceRatio": "88"}, with(func(d *disk) { d.maxUsed = 88 })},
		{"maxUsed 90 at warning", Properties{"diskMaxUsedSpaceRatio": "90"}, with(func(d *disk) { d.maxUsed = 90 })},
		{"maxUsed 95", Properties{"diskMaxUsedSpaceRatio": "95"}, with(func(d *disk) { d.maxUsed = 95 })},
		{"maxUsed 100 clamped", Properties{"diskMaxUsedSpaceRatio": "100"}, with(func(d *disk) { d.maxUsed = 95 })},
		{"maxUsed 101 clamped", Properties{"diskMaxUsedSpaceRatio": "101"}, with(func(d *disk) { d.maxUsed = 95 })},
		{"maxUsed 0 clamped", Properties{"diskMaxUsedSpaceRatio": "0"}, with(func(d *disk) { d.maxUsed = 10 })},
		{"maxUsed -5 clamped", Properties{"diskMaxUsedSpaceRatio": "-5"}, with(func(d *disk) { d.maxUsed = 10 })},
		{"forcibly 70", Properties{"diskSpaceCleanForciblyRatio": "70"}, with(func(d *disk) { d.forcibly = 70 })},
		{"forcibly 95 clamped", Properties{"diskSpaceCleanForciblyRatio": "95"}, with(func(d *disk) { d.forcibly = 85 })},
		{"forcibly 0 clamped", Properties{"diskSpaceCleanForciblyRatio": "0"}, with(func(d *disk) { d.forcibly = 30 })},
		{"warning 80", Properties{"diskSpaceWarningLevelRatio": "80"}, with(func(d *disk) { d.warning = 80 })},
		{"warning 99 clamped", Properties{"diskSpaceWarningLevelRatio": "99"}, with(func(d *disk) { d.warning = 90 })},
		{"warning 0 clamped", Properties{"diskSpaceWarningLevelRatio": "0"}, with(func(d *disk) { d.warning = 35 })},
		{"warning below forcibly", Properties{"diskSpaceWarningLevelRatio": "50", "diskSpaceCleanForciblyRatio": "60"},
			with(func(d *disk) { d.warning, d.forcibly = 50, 60 })},
		{"all inverted", Properties{"diskMaxUsedSpaceRatio": "90", "diskSpaceCleanForciblyRatio": "80", "diskSpaceWarningLevelRatio": "70"},
			disk{90, 80, 70, true, 10 * time.Second}},
		{"blanks", Properties{"diskSpaceWarningLevelRatio": " 88 "}, with(func(d *disk) { d.warning = 88 })},
		{"forced cleanup off", Properties{"cleanFileForciblyEnable": "false"}, with(func(d *disk) { d.forceEnable = false })},
		{"interval ms", Properties{"cleanResourceInterval": "2000"}, with(func(d *disk) { d.interval = 2 * time.Second })},
		{"interval Go", Properties{"cleanResourceInterval": "250ms"}, with(func(d *disk) { d.interval = 250 * time.Millisecond })},
	}
	for _, tc := range cases {
		c, unknown, err := BrokerConfigFromProperties(tc.props)
		if err != nil || len(unknown) != 0 {
			t.Errorf("%s: %v, unknown %v", tc.name, err, unknown)
			continue
		}
		got := disk{c.DiskMaxUsedSpaceRatio, c.DiskSpaceCleanForciblyRatio, c.DiskSpaceWarningLevelRatio, c.CleanFileForciblyEnable, c.CleanResourceInterval}
		if got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}

	refused := []struct {
		props Properties
		want  string
	}{
		{Properties{"diskSpaceWarningLevelRatio": "0.9"}, "diskSpaceWarningLevelRatio=\"0.9\": want a whole percent"},
		{Properties{"diskSpaceCleanForciblyRatio": "85%"}, "diskSpaceCleanForciblyRatio"},
		{Properties{"diskMaxUsedSpaceRatio": "high"}, "diskMaxUsedSpaceRatio"},
		{Properties{"diskMaxUsedSpaceRatio": ""}, "diskMaxUsedSpaceRatio"},
		{Properties{"diskMaxUsedSpaceRatio": "99999999999"}, "diskMaxUsedSpaceRatio"},
		{Properties{"cleanFileForciblyEnable": "sometimes"}, "cleanFileForciblyEnable"},
		{Properties{"cleanResourceInterval": "-10"}, "cleanResourceInterval"},
		{Properties{"cleanResourceInterval": "soon"}, "cleanResourceInterval"},
	}
	for _, tc := range refused {
		_, _, err := BrokerConfigFromProperties(tc.props)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want mention of %q", tc.props, err, tc.want)
		}
	}

	// A struct built in code: zero ratios take the defaults, others are
	// clamped by EnsureDefaults; Validate catches a value set after it.
	c := NewBrokerConfig()
	c.DiskMaxUsedSpaceRatio, c.DiskSpaceCleanForciblyRatio, c.DiskSpaceWarningLevelRatio = 0, 200, -1
	c.EnsureDefaults()
	if c.DiskMaxUsedSpaceRatio != 75 || c.DiskSpaceCleanForciblyRatio != 85 || c.DiskSpaceWarningLevelRatio != 35 {
		t.Errorf("EnsureDefaults: %d %d %d", c.DiskMaxUsedSpaceRatio, c.DiskSpaceCleanForciblyRatio, c.DiskSpaceWarningLevelRatio)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	c.DiskSpaceWarningLevelRatio = 95
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "diskSpaceWarningLevelRatio 95 out of range 35..90") {
		t.Errorf("Validate after EnsureDefaults: %v", err)
	}
}

func TestParseDelayLevels(t *testing.T) {
	got, err := ParseDelayLevels("  1s   5s\t2m 3h 1d ")
	if err != nil || !reflect.DeepEqual(got, []time.Duration{time.Second, 5 * time.Second, 2 * time.Minute, 3 * time.Hour, 24 * time.Hour}) {
		t.Fatal(got, err)
	}
	for _, bad := range []string{"", "  ", "s", "1", "0s", "-1s", "1.5s", "1ms", "99999999999999999999h", "1w"} {
		if _, err := ParseDelayLevels(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestParseDeleteWhen(t *testing.T) {
	if got, err := ParseDeleteWhen("04;16"); err != nil || !reflect.DeepEqual(got, []int{4, 16}) {
		t.Fatal(got, err)
	}
	for _, bad := range []string{"", ";", "24", "a", "-1"} {
		if _, err := ParseDeleteWhen(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// FuzzBrokerConfig feeds broker.conf text through the whole loader: it must
// never panic, and a configuration it accepts must validate and keep its
// delay levels parseable.
func FuzzBrokerConfig(f *testing.F) {
	for _, s := range []string{
		"", "brokerName=b\nbrokerId=0\n", "brokerRole=SLAVE\nbrokerId=1\nbrokerIP1=10.0.0.1",
		"messageDelayLevel=1s 2d\n", "deleteWhen=04;16", "listenPort=65535\nhaListenPort=1",
		"mapedFileSizeCommitLog=1024\nmappedFileSizeConsumeQueue=21", "namesrvAddr=a:1;b:2;",
		"syncFlushTimeout=2s", "brokerIP1=::1", "flushDiskType = sync_flush  ",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		props, err := ParseProperties(strings.NewReader(text))
		if err != nil {
			return
		}
		c, _, err := BrokerConfigFromProperties(props)
		if err != nil {
			return
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("accepted config does not validate: %v", err)
		}
		levels, err := c.DelayLevels()
		if err != nil || len(levels) == 0 {
			t.Fatalf("accepted delay levels %q: %v", c.MessageDelayLevel, err)
		}
		for _, d := range levels {
			if d <= 0 {
				t.Fatalf("non-positive delay level in %q", c.MessageDelayLevel)
			}
		}
		if c.ConsumeQueueUnitsPerFile() <= 0 || c.HAPort() <= 0 || c.HAPort() > 65535 {
			t.Fatalf("derived values: units %d ha %d", c.ConsumeQueueUnitsPerFile(), c.HAPort())
		}
	})
}

// TestMaxOpenConsumeQueueFiles: the default is half the descriptor limit
// with a floor; broker.conf sets it; a value below the floor is refused.
func TestMaxOpenConsumeQueueFiles(t *testing.T) {
	for _, c := range []struct {
		limit uint64
		want  int
	}{{2048, 1024}, {100, MinOpenConsumeQueueFiles}, {1 << 20, 1 << 19}, {^uint64(0), 1 << 20}} {
		if got := openFilesShare(c.limit); got != c.want {
			t.Errorf("limit %d: %d, want %d", c.limit, got, c.want)
		}
	}
	c := NewBrokerConfig()
	if c.MaxOpenConsumeQueueFiles != DefaultMaxOpenConsumeQueueFiles() || c.MaxOpenConsumeQueueFiles != openFilesShare(openFileLimit()) {
		t.Fatalf("default %d, want %d", c.MaxOpenConsumeQueueFiles, DefaultMaxOpenConsumeQueueFiles())
	}
	c, _, err := BrokerConfigFromProperties(Properties{"maxOpenConsumeQueueFiles": "500"})
	if err != nil || c.MaxOpenConsumeQueueFiles != 500 {
		t.Fatalf("set: %d %v", c.MaxOpenConsumeQueueFiles, err)
	}
	if _, _, err := BrokerConfigFromProperties(Properties{"maxOpenConsumeQueueFiles": "10"}); err == nil || !strings.Contains(err.Error(), "maxOpenConsumeQueueFiles") {
		t.Fatalf("10 accepted or unnamed: %v", err)
	}
}

// TestReplyKeys: the request-reply keys bind under Java's names, and a
// pool size below 1 is refused with the key named.
func TestReplyKeys(t *testing.T) {
	path := filepath.Join(t.TempDir(), "broker.conf")
	conf := "storeReplyMessageEnable=false\nprocessReplyMessageThreadPoolNums=3\nreplyThreadPoolQueueCapacity=7\n"
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	c, unknown, err := LoadBrokerFile(path)
	if err != nil || len(unknown) != 0 {
		t.Fatalf("load: %v, unknown %v", err, unknown)
	}
	if c.StoreReplyMessageEnable || c.ProcessReplyMessageThreadPoolNums != 3 || c.ReplyThreadPoolQueueCapacity != 7 {
		t.Fatalf("loaded %v %d %d", c.StoreReplyMessageEnable, c.ProcessReplyMessageThreadPoolNums, c.ReplyThreadPoolQueueCapacity)
	}
	c.ReplyThreadPoolQueueCapacity = -1
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "replyThreadPoolQueueCapacity") {
		t.Fatalf("negative capacity: %v", err)
	}
}
