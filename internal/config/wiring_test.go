package config

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// brokerFieldReaders says, for every BrokerConfig field not tagged
// effect:"none", which package reads it: "dir" (the field is read there
// as .Field) or "dir:Accessor" (read through a BrokerConfig method or a
// runtime reader of this package). TestBrokerFieldsWired checks each
// against the source.
var brokerFieldReaders = map[string]string{
	"BrokerClusterName":                 "internal/broker",
	"BrokerName":                        "internal/broker",
	"BrokerID":                          "internal/broker/processor",
	"NamesrvAddr":                       "internal/broker",
	"ListenPort":                        "internal/broker",
	"BindAddress":                       "internal/broker",
	"BrokerIP1":                         "internal/broker",
	"BrokerIP2":                         "internal/broker/role:HAServerAddr",
	"HAListenPort":                      "internal/broker/role",
	"HAMasterAddress":                   "internal/broker/role",
	"RegionID":                          "internal/broker/processor",
	"TraceOn":                           "internal/broker/processor",
	"FilterServerNums":                  "internal/config",
	"EnableSlaveActingMaster":           "internal/config",
	"BrokerPermission":                  "internal/broker",
	"AutoCreateTopicEnable":             "internal/broker/meta",
	"DefaultTopicQueueNums":             "internal/broker/meta",
	"AutoCreateSubscriptionGroup":       "internal/broker/meta",
	"ClusterTopicEnable":                "internal/broker/meta",
	"BrokerTopicEnable":                 "internal/broker/meta",
	"TraceTopicEnable":                  "internal/broker/meta",
	"MsgTraceTopicName":                 "internal/broker/meta",
	"EnableMixedMessageType":            "internal/broker/processor",
	"RejectTransactionMessage":          "internal/broker/processor",
	"TransactionTimeout":                "internal/broker",
	"TransactionCheckMax":               "internal/broker",
	"TransactionCheckInterval":          "internal/broker",
	"RegisterBrokerTimeout":             "internal/broker/role",
	"RegisterNameServerPeriod":          "internal/broker/role:RegisterPeriod",
	"LongPollingEnable":                 "internal/broker",
	"ShortPollingTime":                  "internal/broker",
	"NotifyConsumerIdsChangedEnable":    "internal/broker",
	"SlaveReadEnable":                   "internal/broker/processor",
	"LitePullMessageEnable":             "internal/broker/processor",
	"UseServerSideResetOffset":          "internal/broker/processor",
	"ServerLoadBalancerEnable":          "internal/broker/processor",
	"DefaultMessageRequestMode":         "internal/broker/processor",
	"DefaultPopShareQueueNum":           "internal/broker/processor",
	"ReviveQueueNum":                    "internal/broker",
	"ReviveInterval":                    "internal/broker",
	"PopFromRetryProbability":           "internal/broker",
	"EnableRetryTopicV2":                "internal/broker",
	"FlushConsumerOffsetInterval":       "internal/broker",
	"SendMessageThreadPoolNums":         "internal/broker",
	"PullMessageThreadPoolNums":         "internal/broker",
	"AdminBrokerThreadPoolNums":         "internal/broker",
	"ConsumerManageThreadPoolNums":      "internal/broker",
	"HeartbeatThreadPoolNums":           "internal/broker",
	"SendThreadPoolQueueCapacity":       "internal/broker",
	"PullThreadPoolQueueCapacity":       "internal/broker",
	"ClientManagerThreadPoolQueueCap":   "internal/broker",
	"ConsumerManagerThreadPoolQueue":    "internal/broker",
	"HeartbeatThreadPoolQueueCap":       "internal/broker",
	"ProcessReplyMessageThreadPoolNums": "internal/broker",
	"ReplyThreadPoolQueueCapacity":      "internal/broker",
	"StoreReplyMessageEnable":           "internal/broker/processor",
	"BrokerFastFailureEnable":           "internal/broker",
	"WaitTimeInSendQueue":               "internal/broker",
	"WaitTimeInPullQueue":               "internal/broker",
	"StartAcceptSendRequestTimeStamp":   "internal/broker/processor",
	"EnablePropertyFilter":              "internal/broker/processor",
	"FilterSupportRetry":                "internal/broker/processor",
	"StorePathRootDir":                  "internal/broker",
	"MappedFileSizeCommitLog":           "internal/broker",
	"MappedFileSizeConsumeQueue":        "internal/broker:ConsumeQueueUnitsPerFile",
	"FlushDiskType":                     "internal/broker",
	"BrokerRole":                        "internal/broker",
	"SyncFlushTimeout":                  "internal/broker",
	"FlushIntervalCommitLog":            "internal/broker",
	"FlushCommitLogLeastPages":          "internal/broker",
	"FlushCommitLogThoroughInterval":    "internal/broker",
	"FlushIntervalConsumeQueue":         "internal/broker",
	"FlushConsumeQueueLeastPages":       "internal/broker",
	"FlushConsumeQueueThoroughInterval": "internal/broker",
	"DeleteWhen":                        "internal/broker",
	"FileReservedTime":                  "internal/broker:FileReservedDuration",
	"DiskMaxUsedSpaceRatio":             "internal/broker",
	"DiskSpaceCleanForciblyRatio":       "internal/broker",
	"DiskSpaceWarningLevelRatio":        "internal/broker",
	"CleanFileForciblyEnable":           "internal/broker",
	"MaxMessageSize":                    "internal/broker/processor",
	"MessageDelayLevel":                 "internal/broker:DelayLevels",
	"FlushDelayOffsetInterval":          "internal/broker",
	"TimerWheelEnable":                  "internal/broker/processor",
	"TimerMaxDelaySec":                  "internal/broker/processor",
	"RecallMessageEnable":               "internal/broker/processor",
	"EnableProxyAutoRenew":              "internal/grpc",
	"DefaultInvisibleTime":              "internal/grpc",
	"RenewAheadTime":                    "internal/grpc",
	"RenewMaxTime":                      "internal/grpc",
	"RenewSchedulePeriod":               "internal/grpc",
	"MaxRenewRetryTimes":                "internal/grpc",
	"InvisibleTimeWhenClear":            "internal/grpc",
	"AllowRecallWhenBrokerNotWriteable": "internal/broker/processor",
	"OSPageCacheBusyTimeout":            "internal/broker",
	"MaxTransferBytesOnMessageInMemory": "internal/broker",
	"MaxTransferCountOnMessageInMemory": "internal/broker",
	"MaxTransferBytesOnMessageInDisk":   "internal/broker",
	"MaxTransferCountOnMessageInDisk":   "internal/broker",
	"AccessMessageInMemoryMaxRatio":     "internal/broker:InMemoryBytes",
	"CleanResourceInterval":             "internal/broker",
	"HASendHeartbeatInterval":           "internal/broker/role",
	"HAHousekeepingInterval":            "internal/broker/role",
	"HATransferBatchSize":               "internal/broker/role",
	"HASlaveFallbehindMax":              "internal/broker/role",
	"CheckCRCOnRecover":                 "internal/broker",
	"CommitLogCorruptionAction":         "internal/broker",
	"MessageIndexEnable":                "internal/broker",
	"MessageIndexSafe":                  "internal/broker",
	"MaxOpenConsumeQueueFiles":          "internal/broker",
	"MaxHashSlotNum":                    "internal/broker",
	"MaxIndexNum":                       "internal/broker",
	"DefaultQueryMaxNum":                "internal/broker/processor",
	"MaxMsgsNumBatch":                   "internal/broker",
	"MetricsExporterType":               "internal/broker:MetricsEnabled",
	"MetricsPromExporterHost":           "internal/broker:MetricsAddr",
	"MetricsPromExporterPort":           "internal/broker:MetricsAddr",
	"MetricsPprofEnable":                "internal/broker",
	"TransactionMetricFlushInterval":    "internal/broker",
	"ConfigBlackList":                   "internal/config:BlackList",
	"ConsoleEnable":                     "internal/broker",
	"ConsoleListenAddr":                 "internal/broker",
	"ConsoleAccessKey":                  "internal/broker:ConsoleCredentials",
	"ConsoleSecretKey":                  "internal/broker:ConsoleCredentials",
	"GrpcServerEnable":                  "internal/broker",
	"GrpcServerPort":                    "internal/broker",
	"EnableControllerMode":              "internal/broker",
	"ControllerAddr":                    "internal/broker/role:ControllerAddrs",
	"AllAckInSyncStateSet":              "internal/broker/role",
	"MinInSyncReplicas":                 "internal/broker/role",
	"HAMaxTimeSlaveNotCatchup":          "internal/broker/role",
	"SyncFromLastFile":                  "internal/broker/role",
	"AsyncLearner":                      "internal/broker/role",
	"SyncBrokerMetadataPeriod":          "internal/broker/role",
	"CheckSyncStateSetPeriod":           "internal/broker/role",
	"BrokerHeartbeatInterval":           "internal/broker/role",
	"SendHeartbeatTimeout":              "internal/broker/role",
	"ControllerHeartBeatTimeout":        "internal/broker/role",
	"BrokerElectionPriority":            "internal/broker/role",
}

// noEffectDisplayReads are the files allowed to read a field tagged
// effect:"none": they only show its value (Java's GET_BROKER_RUNTIME_INFO
// lists these keys), nothing behaves differently.
var noEffectDisplayReads = map[string][]string{
	"QueryThreadPoolQueueCapacity":    {"internal/broker/processor/admin_stats.go"},
	"EndTransactionPoolQueueCapacity": {"internal/broker/processor/admin_stats.go"},
	// The disk ratio reported for the CommitLog's path (runtime info and
	// metrics); the store itself always uses <storePathRootDir>/commitlog.
	"StorePathCommitLog": {"internal/broker/processor/admin_stats.go", "internal/broker/metrics.go"},
}

// sourceFiles maps each non-test .go file under cmd/ and internal/ of the
// module (relative, slash-separated) to its text.
func sourceFiles(t *testing.T) map[string]string {
	t.Helper()
	root := filepath.Join("..", "..")
	out := map[string]string{}
	for _, top := range []string{"cmd", "internal"} {
		err := filepath.WalkDir(filepath.Join(root, top), func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
				return err
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			out[filepath.ToSlash(rel)] = string(b)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(out) < 50 {
		t.Fatalf("only %d source files found from %s", len(out), root)
	}
	return out
}

// TestBrokerFieldsWired: every broker.conf key is either read by the
// package brokerFieldReaders names (checked in its source) or tagged
// effect:"none" and then read nowhere outside this package except for
// display.
func TestBrokerFieldsWired(t *testing.T) {
	src := sourceFiles(t)
	readIn := func(dir, name string) []string {
		re := regexp.MustCompile(`\.` + name + `\b`)
		var files []string
		for p, text := range src {
			if (dir == "" || filepath.ToSlash(filepath.Dir(p)) == dir) && re.MatchString(text) {
				files = append(files, p)
			}
		}
		slices.Sort(files)
		return files
	}
	typ := reflect.TypeFor[BrokerConfig]()
	seen := map[string]bool{}
	for i := range typ.NumField() {
		f := typ.Field(i)
		if key := f.Tag.Get("prop"); key == "" || key == "-" {
			continue
		}
		seen[f.Name] = true
		reader, listed := brokerFieldReaders[f.Name]
		if f.Tag.Get("effect") == "none" {
			if listed {
				t.Errorf("%s is tagged effect:\"none\" but listed as read in %s", f.Name, reader)
			}
			for _, p := range readIn("", f.Name) {
				if !strings.HasPrefix(p, "internal/config/") && !slices.Contains(noEffectDisplayReads[f.Name], p) {
					t.Errorf("%s is tagged effect:\"none\" but %s reads it: wire it (drop the tag) or say why", f.Name, p)
				}
			}
			continue
		}
		if !listed {
			t.Errorf("%s: neither listed in brokerFieldReaders nor tagged effect:\"none\"", f.Name)
			continue
		}
		dir, accessor, _ := strings.Cut(reader, ":")
		if accessor == "" {
			accessor = f.Name
		}
		if len(readIn(dir, accessor)) == 0 {
			t.Errorf("%s: no .%s in %s", f.Name, accessor, dir)
		}
	}
	for name := range brokerFieldReaders {
		if !seen[name] {
			t.Errorf("brokerFieldReaders lists %s, which is no BrokerConfig key", name)
		}
	}
}
