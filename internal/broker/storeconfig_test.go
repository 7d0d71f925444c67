package broker

import (
	"net/netip"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/vfs"
)

// TestStoreConfigDiskKeys: the disk keys of broker.conf reach the store, and
// Java values that rocketd once refused ("disk ratios must grow":
// diskMaxUsedSpaceRatio=88 above the forcible ratio 85) make a valid store
// configuration.
func TestStoreConfigDiskKeys(t *testing.T) {
	for _, tc := range []struct {
		props              config.Properties
		maxUsed, forcibly  int
		warning            int
		keep               bool
		interval, reserved time.Duration
	}{
		{config.Properties{}, 75, 85, 90, false, 10 * time.Second, 72 * time.Hour},
		{config.Properties{"diskMaxUsedSpaceRatio": "88"}, 88, 85, 90, false, 10 * time.Second, 72 * time.Hour},
		{config.Properties{"diskMaxUsedSpaceRatio": "90"}, 90, 85, 90, false, 10 * time.Second, 72 * time.Hour},
		{config.Properties{
			"diskMaxUsedSpaceRatio": "60", "diskSpaceCleanForciblyRatio": "80", "diskSpaceWarningLevelRatio": "95",
			"cleanFileForciblyEnable": "false", "cleanResourceInterval": "2500", "fileReservedTime": "48",
		}, 60, 80, 90, true, 2500 * time.Millisecond, 48 * time.Hour},
	} {
		bc, _, err := config.BrokerConfigFromProperties(tc.props)
		if err != nil {
			t.Fatalf("%v: %v", tc.props, err)
		}
		sc, err := storeConfig(&bc, vfs.NewMem(), nil, netip.MustParseAddrPort("127.0.0.1:10911"))
		if err != nil {
			t.Fatal(err)
		}
		if sc.DiskMaxUsedSpaceRatio != tc.maxUsed || sc.DiskSpaceCleanForciblyRatio != tc.forcibly ||
			sc.DiskSpaceWarningLevelRatio != tc.warning || sc.KeepUnexpiredSegments != tc.keep ||
			sc.CleanInterval != tc.interval || sc.FileReservedTime != tc.reserved {
			t.Errorf("%v: store config %d %d %d keep=%v interval=%v reserved=%v", tc.props,
				sc.DiskMaxUsedSpaceRatio, sc.DiskSpaceCleanForciblyRatio, sc.DiskSpaceWarningLevelRatio,
				sc.KeepUnexpiredSegments, sc.CleanInterval, sc.FileReservedTime)
		}
		sc.EnsureDefaults()
		if err := sc.Validate(); err != nil {
			t.Errorf("%v: store refuses: %v", tc.props, err)
		}
	}
}

// TestStoreConfigIndexKeys: the index keys of broker.conf reach the store.
func TestStoreConfigIndexKeys(t *testing.T) {
	bc, _, err := config.BrokerConfigFromProperties(config.Properties{"messageIndexEnable": "false",
		"messageIndexSafe": "true", "maxHashSlotNum": "1000", "maxIndexNum": "5000", "maxMsgsNumBatch": "16"})
	if err != nil {
		t.Fatal(err)
	}
	sc, err := storeConfig(&bc, vfs.NewMem(), nil, netip.MustParseAddrPort("127.0.0.1:10911"))
	if err != nil {
		t.Fatal(err)
	}
	if !sc.MessageIndexDisabled || !sc.MessageIndexSafe || sc.MaxHashSlotNum != 1000 || sc.MaxIndexNum != 5000 || sc.MaxMsgsNumBatch != 16 {
		t.Fatalf("store config %+v", sc)
	}
	def := config.NewBrokerConfig()
	def.EnsureDefaults()
	if sc, _ := storeConfig(&def, vfs.NewMem(), nil, netip.MustParseAddrPort("127.0.0.1:10911")); sc.MessageIndexDisabled {
		t.Fatal("index disabled by default")
	}
}

// TestStoreConfigMemoryKeys: accessMessageInMemoryMaxRatio becomes the
// store's in-memory window (a share of the machine's RAM), and the
// ...InDisk pull limits reach the store.
func TestStoreConfigMemoryKeys(t *testing.T) {
	ram := config.PhysicalMemoryBytes()
	if ram == 0 {
		t.Fatal("physical memory size unknown on this platform")
	}
	for _, tc := range []struct {
		props        config.Properties
		ratio        float64
		bytes, count int
	}{
		{config.Properties{}, 0.40, 64 << 10, 8},
		{config.Properties{"accessMessageInMemoryMaxRatio": "10",
			"maxTransferBytesOnMessageInDisk": "4096", "maxTransferCountOnMessageInDisk": "3"}, 0.10, 4096, 3},
	} {
		bc, _, err := config.BrokerConfigFromProperties(tc.props)
		if err != nil {
			t.Fatalf("%v: %v", tc.props, err)
		}
		sc, err := storeConfig(&bc, vfs.NewMem(), nil, netip.MustParseAddrPort("127.0.0.1:10911"))
		if err != nil {
			t.Fatal(err)
		}
		if want := int64(float64(ram) * tc.ratio); sc.InMemoryBytes < want-1 || sc.InMemoryBytes > want+1 {
			t.Errorf("%v: InMemoryBytes %d, want %d (%.0f%% of %d)", tc.props, sc.InMemoryBytes, want, tc.ratio*100, ram)
		}
		if sc.MaxTransferBytesOnDisk != tc.bytes || sc.MaxTransferCountOnDisk != tc.count {
			t.Errorf("%v: on-disk limits %d bytes %d messages, want %d %d", tc.props,
				sc.MaxTransferBytesOnDisk, sc.MaxTransferCountOnDisk, tc.bytes, tc.count)
		}
	}
}

// TestStoreConfigCheckCRCOnRecover: checkCRCOnRecover=false reaches the
// store's recovery; the default checks.
func TestStoreConfigCheckCRCOnRecover(t *testing.T) {
	for _, tc := range []struct {
		props config.Properties
		skip  bool
	}{
		{config.Properties{}, false},
		{config.Properties{"checkCRCOnRecover": "true"}, false},
		{config.Properties{"checkCRCOnRecover": "false"}, true},
	} {
		bc, _, err := config.BrokerConfigFromProperties(tc.props)
		if err != nil {
			t.Fatal(err)
		}
		sc, err := storeConfig(&bc, vfs.NewMem(), nil, netip.MustParseAddrPort("127.0.0.1:10911"))
		if err != nil {
			t.Fatal(err)
		}
		if sc.SkipBodyCRCOnRecover != tc.skip {
			t.Errorf("%v: SkipBodyCRCOnRecover %v, want %v", tc.props, sc.SkipBodyCRCOnRecover, tc.skip)
		}
	}
}
