package config

import (
	"errors"
	"fmt"
	"math"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// FlushDiskType is MessageStoreConfig.flushDiskType, written by its Java
// enum name.
type FlushDiskType string

const (
	AsyncFlush FlushDiskType = "ASYNC_FLUSH"
	SyncFlush  FlushDiskType = "SYNC_FLUSH"
)

// The values of commitLogCorruptionAction.
const (
	CorruptionRefuse   = "refuse"
	CorruptionTruncate = "truncate"
)

// BrokerRole is MessageStoreConfig.brokerRole, written by its Java enum name.
type BrokerRole string

const (
	AsyncMaster BrokerRole = "ASYNC_MASTER"
	SyncMaster  BrokerRole = "SYNC_MASTER"
	Slave       BrokerRole = "SLAVE"
)

// Broker defaults (rocketmq-spec.md §14.1; BrokerConfig, MessageStoreConfig
// and NettyServerConfig of 4.9.8).
const (
	DefaultBrokerClusterName = "DefaultCluster"
	// DefaultBrokerName is used instead of Java's host name: it is what
	// RocketMQ's shipped conf/broker.conf says, it is a valid topic name
	// (the broker creates a topic of that name; host names may hold '.'),
	// and a store directory does not change owner when the host is renamed.
	DefaultBrokerName                  = "broker-a"
	DefaultBrokerListenPort            = 10911
	DefaultBrokerPermission            = 6 // PERM_READ | PERM_WRITE
	DefaultTopicQueueNums              = 8
	DefaultMsgTraceTopicName           = "RMQ_SYS_TRACE_TOPIC"
	DefaultRegionID                    = "DefaultRegion"
	DefaultMappedFileSizeCommitLog     = 1 << 30
	DefaultMappedFileSizeConsumeQueue  = 300000 * 20
	DefaultDeleteWhenHours             = "04"
	DefaultFileReservedHours           = 72
	DefaultBrokerDiskMaxUsedSpaceRatio = 75
	DefaultDiskSpaceCleanForciblyRatio = 85
	DefaultDiskSpaceWarningLevelRatio  = 90
	DefaultCleanResourceInterval       = 10 * time.Second
	DefaultMaxMessageSize              = 4 << 20
	DefaultSyncFlushTimeout            = 5 * time.Second
	DefaultFlushIntervalCommitLog      = 500 * time.Millisecond
	DefaultFlushCommitLogLeastPages    = 4
	DefaultFlushCommitLogThorough      = 10 * time.Second
	DefaultFlushIntervalConsumeQueue   = time.Second
	DefaultFlushConsumeQueueLeastPages = 2
	DefaultFlushConsumeQueueThorough   = 60 * time.Second
	DefaultMessageDelayLevel           = "1s 5s 10s 30s 1m 2m 3m 4m 5m 6m 7m 8m 9m 10m 20m 30m 1h 2h"
	DefaultShortPollingTime            = time.Second
	DefaultTransactionTimeout          = 6 * time.Second
	DefaultTransactionCheckMax         = 15
	DefaultTransactionCheckInterval    = 60 * time.Second
	DefaultRegisterBrokerTimeout       = 6 * time.Second
	DefaultRegisterNameServerPeriod    = 30 * time.Second
	DefaultFlushConsumerOffsetInterval = 5 * time.Second
	// DefaultTransactionMetricFlushInterval is Java's
	// transactionMetricFlushInterval.
	DefaultTransactionMetricFlushInterval = 10 * time.Second
	// POP consumption (package broker/pop).
	DefaultReviveQueueNum = 8
	DefaultReviveInterval = time.Second
	// Receipt-handle auto-renew of gRPC push consumers (Java's
	// ProxyConfig defaults).
	DefaultInvisibleTimeForRenew      = 60 * time.Second
	DefaultRenewAheadTime             = 10 * time.Second
	DefaultRenewMaxTime               = 3 * time.Hour
	DefaultRenewSchedulePeriod        = 5 * time.Second
	DefaultMaxRenewRetryTimes         = 3
	DefaultInvisibleTimeWhenClear     = time.Second
	DefaultPopFromRetryProbability    = 20
	DefaultFlushDelayOffsetInterval   = 10 * time.Second
	DefaultTimerMaxDelaySec           = 3 * 24 * 3600
	DefaultTimerPrecisionMs           = 1000
	DefaultOSPageCacheBusyTimeout     = time.Second
	DefaultMaxTransferBytesInMemory   = 256 << 10
	DefaultMaxTransferCountInMemory   = 32
	DefaultMaxTransferBytesInDisk     = 64 << 10
	DefaultMaxTransferCountInDisk     = 8
	DefaultAccessMessageInMemoryRatio = 40
	DefaultHASendHeartbeatInterval    = 5 * time.Second
	DefaultHAHousekeepingInterval     = 20 * time.Second
	DefaultHATransferBatchSize        = 32 << 10
	DefaultHASlaveFallbehindMax       = 256 << 20
	// Controller mode (Java's BrokerConfig and MessageStoreConfig).
	DefaultMinInSyncReplicas           = 1
	DefaultHAMaxTimeSlaveNotCatchup    = 15 * time.Second
	DefaultSyncBrokerMetadataPeriod    = 5 * time.Second
	DefaultCheckSyncStateSetPeriod     = 5 * time.Second
	DefaultSendHeartbeatTimeout        = time.Second
	DefaultBrokerHeartbeatInterval     = time.Second
	DefaultControllerHeartBeatTimeout  = 10 * time.Second
	DefaultBrokerElectionPriority      = math.MaxInt32
	DefaultWaitTimeInSendQueue         = 200 * time.Millisecond
	DefaultWaitTimeInPullQueue         = 5 * time.Second
	DefaultWaitTimeInHeartbeatQueue    = 31 * time.Second
	DefaultWaitTimeInTransactionQueue  = 3 * time.Second
	DefaultConsumerFallbehindThreshold = 16 << 30
	DefaultMaxHashSlotNum              = 5000000
	DefaultMaxIndexNum                 = 20000000
	DefaultQueryMaxNum                 = 32
	DefaultMaxMsgsNumBatch             = 64
	DefaultCommitLogCorruptionAction   = CorruptionRefuse
	DefaultMessageRequestMode          = "PULL"
	DefaultBrokerConfigBlackList       = "configBlackList;brokerConfigPath"

	DefaultSendThreadPoolQueueCapacity       = 10000
	DefaultPullThreadPoolQueueCapacity       = 100000
	DefaultQueryThreadPoolQueueCapacity      = 20000
	DefaultClientManagerThreadPoolQueueCap   = 1000000
	DefaultConsumerManagerThreadPoolQueueCap = 1000000
	DefaultHeartbeatThreadPoolQueueCapacity  = 50000
	DefaultEndTransactionPoolQueueCapacity   = 100000
	DefaultReplyThreadPoolQueueCapacity      = 10000
	DefaultAdminBrokerThreadPoolNums         = 16
	DefaultClientManageThreadPoolNums        = 32
	DefaultConsumerManageThreadPoolNums      = 32

	// Java clamps the disk ratios to these ranges (percent):
	// MessageStoreConfig.getDiskMaxUsedSpaceRatio, and CleanCommitLogService's
	// getDiskSpaceCleanForciblyRatio / getDiskSpaceWarningLevelRatio (5.x).
	minDiskMaxUsedSpaceRatio, maxDiskMaxUsedSpaceRatio             = 10, 95
	minDiskSpaceCleanForciblyRatio, maxDiskSpaceCleanForciblyRatio = 30, 85
	minDiskSpaceWarningLevelRatio, maxDiskSpaceWarningLevelRatio   = 35, 90
	// Java clamps registerNameServerPeriod to this range.
	minRegisterNameServerPeriod = 10 * time.Second
	maxRegisterNameServerPeriod = 60 * time.Second
	// cqUnitSize is the size of one ConsumeQueue unit.
	cqUnitSize = 20

	// MinOpenConsumeQueueFiles is the smallest maxOpenConsumeQueueFiles
	// accepted, and the floor of its derived default.
	MinOpenConsumeQueueFiles = 64
	// maxDerivedOpenConsumeQueueFiles bounds the derived default when the
	// descriptor limit is huge or unlimited.
	maxDerivedOpenConsumeQueueFiles = 1 << 20
	// fallbackOpenFileLimit stands for RLIMIT_NOFILE where it cannot be read.
	fallbackOpenFileLimit = 1024
)

// DefaultMaxOpenConsumeQueueFiles is maxOpenConsumeQueueFiles when unset:
// half of the process's descriptor limit (RLIMIT_NOFILE; the Go runtime
// raises the soft limit to the hard one at start), the other half left for
// sockets, CommitLog segments and the rest, with a floor of
// MinOpenConsumeQueueFiles. With ulimit -n 2048: 1024.
func DefaultMaxOpenConsumeQueueFiles() int {
	return openFilesShare(openFileLimit())
}

func openFilesShare(limit uint64) int {
	return int(min(max(limit/2, MinOpenConsumeQueueFiles), maxDerivedOpenConsumeQueueFiles))
}

// BrokerConfig is a broker's configuration: RocketMQ's BrokerConfig, the
// netty listenPort and the MessageStoreConfig settings a broker.conf
// carries, under the same property names (rocketmq-spec.md §14.1).
//
// Start from NewBrokerConfig (or LoadBrokerFile / BrokerConfigFromProperties):
// several Java booleans default to true, which a Go zero value cannot say.
// EnsureDefaults fills the zero non-boolean fields, so a struct literal that
// only sets a few numbers and strings still gets usable values; its booleans
// stay as written.
type BrokerConfig struct {
	// Identity and addresses.

	// BrokerClusterName (DefaultCluster).
	BrokerClusterName string `prop:"brokerClusterName"`
	// BrokerName (DefaultBrokerName; Java: the host name).
	BrokerName string `prop:"brokerName"`
	// BrokerID: 0 is the master, > 0 a slave.
	BrokerID int64 `prop:"brokerId"`
	// NamesrvAddr is the ';'-separated NameServer list (empty: none).
	NamesrvAddr string `prop:"namesrvAddr"`
	// ListenPort is the remoting port (10911). Zero means the default, so
	// an embedding that wants an ephemeral port listens itself and stores
	// the bound port here before the broker registers.
	ListenPort int `prop:"listenPort"`
	// BindAddress is the IP the remoting and HA ports listen on (Java's
	// NettyServerConfig.bindAddress; empty or 0.0.0.0: all interfaces).
	BindAddress string `prop:"bindAddress"`
	// BrokerIP1 is the address advertised to clients and written into
	// records as store host (default: the first non-loopback IPv4 address,
	// else 127.0.0.1).
	BrokerIP1 string `prop:"brokerIP1"`
	// BrokerIP2 is the address slaves use for HA (default BrokerIP1).
	BrokerIP2 string `prop:"brokerIP2"`
	// HAListenPort is the HA port (0: ListenPort+1). Java 4.9 always uses
	// listenPort+1 and ignores this key; rocketd honours an explicit value.
	HAListenPort int `prop:"haListenPort"`
	// HAMasterAddress is a slave's fixed master HA address (empty: the one
	// the NameServer answers).
	HAMasterAddress string `prop:"haMasterAddress"`
	// TLS is the tls.* settings (tls.go); GET_BROKER_CONFIG shows only
	// the effective useTLS.
	TLS TLSConfig `prop:"-"`
	// RegionID is echoed in send responses as MSG_REGION (DefaultRegion).
	RegionID string `prop:"regionId"`
	// TraceOn is echoed in send responses as TRACE_ON (true).
	TraceOn bool `prop:"traceOn"`

	// Topics and groups.

	// BrokerPermission is PermName bits (6 = R+W); when not both, every
	// topic is registered with this perm.
	BrokerPermission int32 `prop:"brokerPermission"`
	// AutoCreateTopicEnable creates TBW102 as an inheritable template, so
	// sends to unknown topics create them (true).
	AutoCreateTopicEnable bool `prop:"autoCreateTopicEnable"`
	// DefaultTopicQueueNums is TBW102's queue count (8).
	DefaultTopicQueueNums int32 `prop:"defaultTopicQueueNums"`
	// AutoCreateSubscriptionGroup creates unknown groups on use (true).
	AutoCreateSubscriptionGroup bool `prop:"autoCreateSubscriptionGroup"`
	// ClusterTopicEnable: the cluster-name topic gets perm 7, else 1 (true).
	ClusterTopicEnable bool `prop:"clusterTopicEnable"`
	// BrokerTopicEnable: the broker-name topic gets perm 7, else 1 (true).
	BrokerTopicEnable bool `prop:"brokerTopicEnable"`
	// TraceTopicEnable creates MsgTraceTopicName at startup (false).
	TraceTopicEnable bool `prop:"traceTopicEnable"`
	// FilterServerNums is how many filter-server processes a RocketMQ 4.x
	// broker started next to itself (0). RocketMQ 5 removed them; rocketd
	// filters (TAG and SQL92) inside the broker, so only 0 is accepted. The
	// key exists because mqadmin 4.9.8's exportConfigs reads it from
	// GET_BROKER_CONFIG and fails without it.
	FilterServerNums int32 `prop:"filterServerNums"`
	// MsgTraceTopicName (RMQ_SYS_TRACE_TOPIC).
	MsgTraceTopicName string `prop:"msgTraceTopicName"`
	// EnableMixedMessageType lets UPDATE_AND_CREATE_TOPIC set the topic
	// attribute message.type=MIXED (false: refused, as in Java 5.x).
	EnableMixedMessageType bool `prop:"enableMixedMessageType"`

	// Transactions.

	// RejectTransactionMessage answers prepared sends NO_PERMISSION (false).
	RejectTransactionMessage bool `prop:"rejectTransactionMessage"`
	// TransactionTimeout: younger half messages are not checked (6 s).
	TransactionTimeout time.Duration `prop:"transactionTimeOut" unit:"ms"`
	// TransactionCheckMax is the number of back-checks before discarding (15).
	TransactionCheckMax int `prop:"transactionCheckMax"`
	// TransactionCheckInterval is the check period (60 s, 4.9.8).
	TransactionCheckInterval time.Duration `prop:"transactionCheckInterval" unit:"ms"`

	// NameServer registration.

	// RegisterBrokerTimeout bounds one REGISTER_BROKER (6 s).
	RegisterBrokerTimeout time.Duration `prop:"registerBrokerTimeoutMills" unit:"ms"`
	// RegisterNameServerPeriod is the registration period (30 s); see
	// RegisterPeriod for the clamped value Java uses.
	RegisterNameServerPeriod time.Duration `prop:"registerNameServerPeriod" unit:"ms"`
	// ForceRegister registers every period even when nothing changed (true).
	ForceRegister bool `prop:"forceRegister" effect:"none"`
	// CompressedRegister sends the zlib REGISTER_BROKER body (false).
	CompressedRegister bool `prop:"compressedRegister" effect:"none"`

	// Pull and consumer management.

	// LongPollingEnable holds pulls that find nothing (true).
	LongPollingEnable bool `prop:"longPollingEnable"`
	// ShortPollingTime is the hold of a pull when long polling is off (1 s).
	ShortPollingTime time.Duration `prop:"shortPollingTimeMills" unit:"ms"`
	// NotifyConsumerIdsChangedEnable sends NOTIFY_CONSUMER_IDS_CHANGED (true).
	NotifyConsumerIdsChangedEnable bool `prop:"notifyConsumerIdsChangedEnable"`
	// SlaveReadEnable lets consumers be redirected to a slave (false).
	SlaveReadEnable bool `prop:"slaveReadEnable"`
	// LitePullMessageEnable serves LITE_PULL_MESSAGE (true); false
	// answers it NO_PERMISSION.
	LitePullMessageEnable bool `prop:"litePullMessageEnable"`
	// UseServerSideResetOffset (true, Java 5.x): INVOKE_BROKER_TO_RESET_OFFSET
	// records the new offsets on the broker, and each consumer learns its
	// queue's from its next pull (PULL_OFFSET_MOVED); false: the 4.x way,
	// the broker tells online consumers (RESET_CONSUMER_CLIENT_OFFSET).
	UseServerSideResetOffset bool `prop:"useServerSideResetOffset"`
	// ServerLoadBalancerEnable lets QUERY_ASSIGNMENT split a clustering
	// group's queues among its clients (true); false gives each client
	// every queue.
	ServerLoadBalancerEnable bool `prop:"serverLoadBalancerEnable"`
	// DefaultMessageRequestMode is the mode of a topic@group no
	// SET_MESSAGE_REQUEST_MODE named: PULL (default) or POP.
	DefaultMessageRequestMode string `prop:"defaultMessageRequestMode"`
	// DefaultPopShareQueueNum goes with a default POP mode (-1: every
	// consumer reads every queue; 0 means the same).
	DefaultPopShareQueueNum int `prop:"defaultPopShareQueueNum"`
	// ReviveQueueNum is the POP revive topic's queue count (8): check
	// points and acks spread over them (package broker/pop).
	ReviveQueueNum int `prop:"reviveQueueNum"`
	// ReviveInterval is how often the POP revive service scans the revive
	// topic for check points whose invisibility is over (1 s).
	ReviveInterval time.Duration `prop:"reviveInterval" unit:"ms"`
	// PopFromRetryProbability is the percentage of POP requests that read
	// the group's pop retry topic before the topic (20; 0..100).
	PopFromRetryProbability int `prop:"popFromRetryProbability"`
	// EnableRetryTopicV2 names pop retry topics %RETRY%group+topic instead
	// of %RETRY%group_topic (false).
	EnableRetryTopicV2 bool `prop:"enableRetryTopicV2"`
	// TransferMsgByHeap copies pull bodies into the response (true).
	TransferMsgByHeap bool `prop:"transferMsgByHeap" effect:"none"`
	// FlushConsumerOffsetInterval is the consumerOffset.json period (5 s).
	FlushConsumerOffsetInterval time.Duration `prop:"flushConsumerOffsetInterval" unit:"ms"`

	// Worker pools (one per request family) and their queue capacities.

	SendMessageThreadPoolNums       int `prop:"sendMessageThreadPoolNums"`
	PullMessageThreadPoolNums       int `prop:"pullMessageThreadPoolNums"`
	QueryMessageThreadPoolNums      int `prop:"queryMessageThreadPoolNums" effect:"none"`
	AdminBrokerThreadPoolNums       int `prop:"adminBrokerThreadPoolNums"`
	ClientManageThreadPoolNums      int `prop:"clientManageThreadPoolNums" effect:"none"`
	ConsumerManageThreadPoolNums    int `prop:"consumerManageThreadPoolNums"`
	HeartbeatThreadPoolNums         int `prop:"heartbeatThreadPoolNums"`
	EndTransactionThreadPoolNums    int `prop:"endTransactionThreadPoolNums" effect:"none"`
	SendThreadPoolQueueCapacity     int `prop:"sendThreadPoolQueueCapacity"`
	PullThreadPoolQueueCapacity     int `prop:"pullThreadPoolQueueCapacity"`
	QueryThreadPoolQueueCapacity    int `prop:"queryThreadPoolQueueCapacity" effect:"none"`
	ClientManagerThreadPoolQueueCap int `prop:"clientManagerThreadPoolQueueCapacity"`
	ConsumerManagerThreadPoolQueue  int `prop:"consumerManagerThreadPoolQueueCapacity"`
	HeartbeatThreadPoolQueueCap     int `prop:"heartbeatThreadPoolQueueCapacity"`
	EndTransactionPoolQueueCapacity int `prop:"endTransactionPoolQueueCapacity" effect:"none"`
	// The request-reply family (SEND_REPLY_MESSAGE): 16+2*cores workers
	// (a push to the requester may wait up to 10 s) and 10000 queued.
	ProcessReplyMessageThreadPoolNums int `prop:"processReplyMessageThreadPoolNums"`
	ReplyThreadPoolQueueCapacity      int `prop:"replyThreadPoolQueueCapacity"`
	// StoreReplyMessageEnable stores each reply in <cluster>_REPLY_TOPIC
	// besides pushing it to the requester (true).
	StoreReplyMessageEnable bool `prop:"storeReplyMessageEnable"`
	// BrokerFastFailureEnable answers requests that waited too long in a
	// queue with SYSTEM_BUSY (true).
	BrokerFastFailureEnable bool `prop:"brokerFastFailureEnable"`
	// WaitTimeInSendQueue (200 ms), WaitTimeInPullQueue (5 s),
	// WaitTimeInHeartbeatQueue (31 s), WaitTimeInTransactionQueue (3 s):
	// the longest a request may wait in its family's queue before a fast
	// failure.
	WaitTimeInSendQueue        time.Duration `prop:"waitTimeMillsInSendQueue" unit:"ms"`
	WaitTimeInPullQueue        time.Duration `prop:"waitTimeMillsInPullQueue" unit:"ms"`
	WaitTimeInHeartbeatQueue   time.Duration `prop:"waitTimeMillsInHeartbeatQueue" unit:"ms" effect:"none"`
	WaitTimeInTransactionQueue time.Duration `prop:"waitTimeMillsInTransactionQueue" unit:"ms" effect:"none"`
	// StartAcceptSendRequestTimeStamp: sends before this time (ms since the
	// epoch) are refused with SYSTEM_ERROR (0: none).
	StartAcceptSendRequestTimeStamp int64 `prop:"startAcceptSendRequestTimeStamp"`
	// DisableConsumeIfConsumerReadSlowly turns off consumption for a group
	// more than ConsumerFallbehindThreshold bytes behind (false, 16 GiB).
	DisableConsumeIfConsumerReadSlowly bool  `prop:"disableConsumeIfConsumerReadSlowly" effect:"none"`
	ConsumerFallbehindThreshold        int64 `prop:"consumerFallbehindThreshold" effect:"none"`
	// EnablePropertyFilter allows SQL92 subscriptions (false): when off,
	// CHECK_CLIENT_CONFIG and SQL92 pulls answer SYSTEM_ERROR, as Java's.
	// FilterSupportRetry judges a SQL92 pull of %RETRY%group by the
	// group's filter of each message's RETRY_TOPIC (false).
	EnablePropertyFilter bool `prop:"enablePropertyFilter"`
	FilterSupportRetry   bool `prop:"filterSupportRetry"`

	// Message store.

	// StorePathRootDir is the store root ($HOME/store).
	StorePathRootDir string `prop:"storePathRootDir"`
	// StorePathCommitLog is the CommitLog directory (default
	// <storePathRootDir>/commitlog, as in 4.9.8; some older releases
	// defaulted to $HOME/store/commitlog whatever the root).
	StorePathCommitLog string `prop:"storePathCommitLog" effect:"none"`
	// MappedFileSizeCommitLog is the CommitLog segment size (1 GiB). The
	// old spelling mapedFileSizeCommitLog is accepted too.
	MappedFileSizeCommitLog int64 `prop:"mappedFileSizeCommitLog"`
	// MappedFileSizeConsumeQueue is a ConsumeQueue file's size in bytes
	// (300000*20); rounded up to whole 20-byte units like Java. Old
	// spelling mapedFileSizeConsumeQueue accepted.
	MappedFileSizeConsumeQueue int64 `prop:"mappedFileSizeConsumeQueue"`
	// FlushDiskType: ASYNC_FLUSH (default) or SYNC_FLUSH.
	FlushDiskType FlushDiskType `prop:"flushDiskType"`
	// BrokerRole: ASYNC_MASTER (default), SYNC_MASTER or SLAVE.
	BrokerRole BrokerRole `prop:"brokerRole"`
	// SyncFlushTimeout bounds a SYNC_FLUSH put's wait (5 s).
	SyncFlushTimeout time.Duration `prop:"syncFlushTimeout" unit:"ms"`
	// FlushIntervalCommitLog is the async flush period (500 ms).
	FlushIntervalCommitLog time.Duration `prop:"flushIntervalCommitLog" unit:"ms"`
	// FlushCommitLogLeastPages is the dirty-page minimum of an async flush (4).
	FlushCommitLogLeastPages int `prop:"flushCommitLogLeastPages"`
	// FlushCommitLogThoroughInterval forces a flush of any amount (10 s).
	FlushCommitLogThoroughInterval time.Duration `prop:"flushCommitLogThoroughInterval" unit:"ms"`
	// FlushIntervalConsumeQueue (1 s), FlushConsumeQueueLeastPages (2),
	// FlushConsumeQueueThoroughInterval (60 s): the ConsumeQueue flush.
	FlushIntervalConsumeQueue         time.Duration `prop:"flushIntervalConsumeQueue" unit:"ms"`
	FlushConsumeQueueLeastPages       int           `prop:"flushConsumeQueueLeastPages"`
	FlushConsumeQueueThoroughInterval time.Duration `prop:"flushConsumeQueueThoroughInterval" unit:"ms"`
	// DeleteWhen: the hours at which expired files are deleted, ';'-separated ("04").
	DeleteWhen string `prop:"deleteWhen"`
	// FileReservedTime is the CommitLog retention in hours (72); see
	// FileReservedDuration.
	FileReservedTime int `prop:"fileReservedTime"`
	// The disk ratios are whole percents of the CommitLog's disk in use,
	// counted as df's Use% (used / (used + available)), and compared with
	// ">". Any order is accepted, as in Java; values outside Java's ranges
	// are clamped as Java clamps them (see clampDiskRatios).
	//
	// DiskMaxUsedSpaceRatio (75; 10..95): above it, expired files are
	// deleted at any hour, not only at deleteWhen.
	DiskMaxUsedSpaceRatio int `prop:"diskMaxUsedSpaceRatio"`
	// DiskSpaceCleanForciblyRatio (85; 30..85): above it, the oldest files
	// are deleted whatever their age (when CleanFileForciblyEnable), even
	// if they hold messages not yet consumed.
	DiskSpaceCleanForciblyRatio int `prop:"diskSpaceCleanForciblyRatio"`
	// DiskSpaceWarningLevelRatio (90; 35..90): above it, puts are refused;
	// they are accepted again once use is at or below both this and
	// DiskSpaceCleanForciblyRatio.
	DiskSpaceWarningLevelRatio int `prop:"diskSpaceWarningLevelRatio"`
	// CleanFileForciblyEnable (true) lets the cleanup delete files before
	// fileReservedTime when use is above DiskSpaceCleanForciblyRatio. When
	// false, files are only deleted once expired, and a filling disk ends
	// in refused puts (above DiskSpaceWarningLevelRatio) rather than in
	// lost messages.
	CleanFileForciblyEnable bool `prop:"cleanFileForciblyEnable"`
	// MaxMessageSize bounds a message body (4 MiB).
	MaxMessageSize int `prop:"maxMessageSize"`
	// MessageDelayLevel lists the delay levels ("1s 5s ... 2h"); see DelayLevels.
	MessageDelayLevel string `prop:"messageDelayLevel"`
	// FlushDelayOffsetInterval is the delayOffset.json period (10 s).
	FlushDelayOffsetInterval time.Duration `prop:"flushDelayOffsetInterval" unit:"ms"`
	// TimerWheelEnable accepts timer messages (TIMER_DELIVER_MS,
	// TIMER_DELAY_SEC, TIMER_DELAY_MS); refused when false (true).
	TimerWheelEnable bool `prop:"timerWheelEnable"`
	// TimerMaxDelaySec bounds a timer message's delay (259200 = 3 days;
	// a year or more works).
	TimerMaxDelaySec int64 `prop:"timerMaxDelaySec"`
	// RecallMessageEnable serves RECALL_MESSAGE and gRPC RecallMessage
	// (false, as Java: a recall is then NO_PERMISSION).
	RecallMessageEnable bool `prop:"recallMessageEnable"`
	// AllowRecallWhenBrokerNotWriteable lets recalls through while
	// brokerPermission has no write bit (true).
	AllowRecallWhenBrokerNotWriteable bool `prop:"allowRecallWhenBrokerNotWriteable"`
	// TimerPrecisionMs is accepted for compatibility (1000): rocketd's
	// timer delivers at the requested millisecond, never earlier.
	TimerPrecisionMs int64 `prop:"timerPrecisionMs" effect:"none"`
	// OSPageCacheBusyTimeout: puts are refused while the put lock has been
	// held longer (1 s).
	OSPageCacheBusyTimeout time.Duration `prop:"osPageCacheBusyTimeOutMills" unit:"ms"`
	// MaxTransferBytesOnMessageInMemory (256 KiB) and
	// MaxTransferCountOnMessageInMemory (32) bound one pull of hot data;
	// ...InDisk (64 KiB, 8) one pull of data beyond the memory ratio.
	MaxTransferBytesOnMessageInMemory int `prop:"maxTransferBytesOnMessageInMemory"`
	MaxTransferCountOnMessageInMemory int `prop:"maxTransferCountOnMessageInMemory"`
	MaxTransferBytesOnMessageInDisk   int `prop:"maxTransferBytesOnMessageInDisk"`
	MaxTransferCountOnMessageInDisk   int `prop:"maxTransferCountOnMessageInDisk"`
	// AccessMessageInMemoryMaxRatio (40): the percent of physical memory
	// the newest CommitLog bytes are assumed to occupy in the page cache; a
	// pull further behind is "on disk" (the ...InDisk limits, the slave
	// hint, and a new group's first offset: see InMemoryBytes).
	AccessMessageInMemoryMaxRatio int `prop:"accessMessageInMemoryMaxRatio"`
	// CleanResourceInterval is the period of the file cleanup (10 s): how
	// often disk use is checked and up to 10 expired (or forced) CommitLog
	// files are deleted.
	CleanResourceInterval time.Duration `prop:"cleanResourceInterval" unit:"ms"`
	// HASendHeartbeatInterval (5 s): a slave reports its offset at least
	// this often; HAHousekeepingInterval (20 s): a silent HA connection is
	// closed; HATransferBatchSize (32 KiB): bytes per HA transfer;
	// HASlaveFallbehindMax (256 MiB): a SYNC_MASTER answers
	// SLAVE_NOT_AVAILABLE when the slave is further behind.
	HASendHeartbeatInterval time.Duration `prop:"haSendHeartbeatInterval" unit:"ms"`
	HAHousekeepingInterval  time.Duration `prop:"haHousekeepingInterval" unit:"ms"`
	HATransferBatchSize     int           `prop:"haTransferBatchSize"`
	HASlaveFallbehindMax    int64         `prop:"haSlaveFallbehindMax"`
	// EnableControllerMode (false): the broker takes its brokerId and its
	// role from the controller group of ControllerAddr (role package,
	// controller.go) instead of brokerId/brokerRole.
	EnableControllerMode bool `prop:"enableControllerMode"`
	// EnableSlaveActingMaster (false) is Java's slave-acting-master mode
	// (RIP-32: the lowest live broker id of a group takes over timer,
	// transaction checks and POP revive for a dead master). rocketd does not
	// offer it: its automatic fail-over is controller mode, which promotes a
	// slave for writes too; only false is accepted, so a broker.conf that
	// asks for it stops the start instead of running without it.
	EnableSlaveActingMaster bool `prop:"enableSlaveActingMaster"`
	// ControllerAddr lists the controllers, "host:port;host:port".
	ControllerAddr string `prop:"controllerAddr"`
	// AllAckInSyncStateSet (false): in controller mode a send is answered
	// once every member of the SyncStateSet has it.
	AllAckInSyncStateSet bool `prop:"allAckInSyncStateSet"`
	// MinInSyncReplicas (1): in controller mode a master refuses a send
	// that waits (WAIT not false), before writing it, while the
	// SyncStateSet (the master included) has fewer members: SYSTEM_ERROR
	// "in-sync replicas not enough", as Java's IN_SYNC_REPLICAS_NOT_ENOUGH.
	MinInSyncReplicas int `prop:"minInSyncReplicas"`
	// HAMaxTimeSlaveNotCatchup (15 s): a master drops a slave from the
	// SyncStateSet that has not caught up for this long.
	HAMaxTimeSlaveNotCatchup time.Duration `prop:"haMaxTimeSlaveNotCatchup" unit:"ms"`
	// SyncFromLastFile (false): in controller mode an empty slave
	// replicates from the start of its master's last CommitLog segment
	// instead of from its first byte (the AutoSwitch handshake's flag).
	SyncFromLastFile bool `prop:"syncFromLastFile"`
	// AsyncLearner (false): in controller mode this slave replicates but
	// never joins the SyncStateSet (the AutoSwitch handshake's flag).
	AsyncLearner bool `prop:"asyncLearner"`
	// SyncBrokerMetadataPeriod (5 s): how often a broker in controller
	// mode asks the controller for its set's master (GET_REPLICA_INFO).
	SyncBrokerMetadataPeriod time.Duration `prop:"syncBrokerMetadataPeriod" unit:"ms"`
	// CheckSyncStateSetPeriod (5 s): how often a master checks its
	// SyncStateSet against the slaves' progress.
	CheckSyncStateSetPeriod time.Duration `prop:"checkSyncStateSetPeriod" unit:"ms"`
	// BrokerHeartbeatInterval (1 s): how often a broker in controller mode
	// sends BROKER_HEARTBEAT to every controller; SendHeartbeatTimeout
	// (1 s) bounds one; ControllerHeartBeatTimeout (10 s) is the silence
	// after which the controller takes the broker for dead (sent with
	// each heartbeat).
	BrokerHeartbeatInterval    time.Duration `prop:"brokerHeartbeatInterval" unit:"ms"`
	SendHeartbeatTimeout       time.Duration `prop:"sendHeartbeatTimeoutMillis" unit:"ms"`
	ControllerHeartBeatTimeout time.Duration `prop:"controllerHeartBeatTimeoutMills" unit:"ms"`
	// BrokerElectionPriority (2147483647): sent with each heartbeat; the
	// controller prefers the smaller value among equal candidates.
	BrokerElectionPriority int32 `prop:"brokerElectionPriority"`
	// CheckCRCOnRecover verifies body CRCs during recovery (true); false
	// keeps a record whose body no longer matches its CRC, as Java does.
	CheckCRCOnRecover bool `prop:"checkCRCOnRecover"`
	// CommitLogCorruptionAction is rocketd's own key (Java has none): what
	// recovery does with an invalid CommitLog record before data known to
	// be durable (after a clean shutdown, or older than the checkpoint).
	// "refuse" (default): the broker does not start, and the error names
	// the segment file and offset. "truncate": the log is cut there, losing
	// every later record (what RocketMQ does silently), logged at Error.
	// A torn tail after a crash is always cut.
	CommitLogCorruptionAction string `prop:"commitLogCorruptionAction"`
	// MessageIndexEnable builds the key index (true); MessageIndexSafe (false).
	MessageIndexEnable bool `prop:"messageIndexEnable"`
	MessageIndexSafe   bool `prop:"messageIndexSafe"`
	// MaxOpenConsumeQueueFiles (rocketd-specific; Java maps every file and
	// keeps it mapped) caps the ConsumeQueue files the store keeps open at
	// once: files are opened on demand and the least recently used idle
	// ones closed, so the broker's descriptors do not grow with the number
	// of queues. Default: DefaultMaxOpenConsumeQueueFiles (half of
	// RLIMIT_NOFILE, at least 64). A cap below the number of queues being
	// written still works, at a cost: writing to a queue whose file was
	// closed reopens it, and closing a file with unflushed units syncs it
	// first (an fsync in the dispatcher's path).
	MaxOpenConsumeQueueFiles int `prop:"maxOpenConsumeQueueFiles"`
	// MaxHashSlotNum (5,000,000) and MaxIndexNum (20,000,000) size an index file.
	MaxHashSlotNum int `prop:"maxHashSlotNum"`
	MaxIndexNum    int `prop:"maxIndexNum"`
	// DefaultQueryMaxNum (32) and MaxMsgsNumBatch (64) bound key queries.
	DefaultQueryMaxNum int `prop:"defaultQueryMaxNum"`
	MaxMsgsNumBatch    int `prop:"maxMsgsNumBatch"`

	// Metrics (metrics.go).

	// MetricsExporterType is Java's metricsExporterType: DISABLE (default)
	// or PROM, an HTTP listener serving /metrics; OTLP_GRPC and LOG are
	// refused (see ParseMetricsExporterType).
	MetricsExporterType string `prop:"metricsExporterType"`
	// MetricsPromExporterHost is the IP or host the metrics listener binds
	// (default DefaultMetricsPromExporterHost, loopback; Java's default is
	// brokerIP1). MetricsPromExporterPort is its port (5557).
	MetricsPromExporterHost string `prop:"metricsPromExporterHost"`
	MetricsPromExporterPort int    `prop:"metricsPromExporterPort"`
	// MetricsPprofEnable (rocketd's own key; false) serves net/http/pprof
	// under /debug/pprof/ on the metrics listener.
	MetricsPprofEnable bool `prop:"metricsPprofEnable"`
	// TransactionMetricFlushInterval is how often the half-message counts
	// of rocketmq_half_messages are saved to config/transactionMetrics
	// (Java's TransactionMetricsFlushService; 10 s), besides a clean
	// close: after a crash they are at most this old.
	TransactionMetricFlushInterval time.Duration `prop:"transactionMetricFlushInterval" unit:"ms"`
	// ConfigBlackList lists the ';'-separated keys UPDATE_BROKER_CONFIG
	// refuses besides Java's fixed brokerConfigPath, rocketmqHome and
	// configBlackList (default "configBlackList;brokerConfigPath").
	ConfigBlackList string `prop:"configBlackList"`

	// Auth holds the authentication keys (auth.go), bound from the same
	// file; not listed by GET_BROKER_CONFIG (it holds secrets).
	Auth AuthConfig `prop:"-"`

	// The web console (rocketd's own keys; console.go): ConsoleEnable
	// serves it (false), on ConsoleListenAddr (DefaultConsoleListenAddr,
	// loopback). ConsoleAccessKey/ConsoleSecretKey sign its admin calls
	// (with authenticationEnabled and none set:
	// innerClientAuthenticationCredentials).
	ConsoleEnable     bool   `prop:"consoleEnable"`
	ConsoleListenAddr string `prop:"consoleListenAddr"`
	ConsoleAccessKey  string `prop:"consoleAccessKey"`
	ConsoleSecretKey  string `prop:"consoleSecretKey" secret:"true"`

	// The gRPC MessagingService of RocketMQ 5 (internal/grpc):
	// GrpcServerEnable (rocketd's own key; false, true in rocketd serve)
	// serves it on bindAddress:GrpcServerPort (Java's proxy key,
	// DefaultGrpcServerPort).
	GrpcServerEnable bool `prop:"grpcServerEnable"`
	GrpcServerPort   int  `prop:"grpcServerPort"`
	// Receipt-handle auto-renew of push consumers, with Java's proxy keys
	// (internal/grpc renew.go). EnableProxyAutoRenew (true): a message
	// received with auto_renew gets DefaultInvisibleTime (60 s) and,
	// every RenewSchedulePeriod (5 s), the ones due to become visible
	// within RenewAheadTime (10 s) are made invisible again (1 m, 3 m,
	// 5 m, 10 m, 30 m, then 1 h each time) until acked, the client is
	// gone (then visible after InvisibleTimeWhenClear, 1 s) or
	// RenewMaxTime (3 h) after the receive (then visible after the
	// group's retry delay). A renewal that fails is retried
	// MaxRenewRetryTimes (3) times.
	EnableProxyAutoRenew   bool          `prop:"enableProxyAutoRenew"`
	DefaultInvisibleTime   time.Duration `prop:"defaultInvisibleTimeMills" unit:"ms"`
	RenewAheadTime         time.Duration `prop:"renewAheadTimeMillis" unit:"ms"`
	RenewMaxTime           time.Duration `prop:"renewMaxTimeMillis" unit:"ms"`
	RenewSchedulePeriod    time.Duration `prop:"renewSchedulePeriodMillis" unit:"ms"`
	MaxRenewRetryTimes     int           `prop:"maxRenewRetryTimes"`
	InvisibleTimeWhenClear time.Duration `prop:"invisibleTimeMillisWhenClear" unit:"ms"`
}

// brokerKeyAliases maps old property spellings that Java releases accepted to the
// current key. When both appear, the current key wins.
var brokerKeyAliases = map[string]string{
	"mapedFileSizeCommitLog":    "mappedFileSizeCommitLog",
	"mapedFileSizeConsumeQueue": "mappedFileSizeConsumeQueue",
}

// NewBrokerConfig returns a BrokerConfig holding the defaults, as Java's
// config objects do after construction: the starting point to bind a
// broker.conf onto or to set fields on. The settings derived from others
// (brokerIP2 from brokerIP1, storePathCommitLog from storePathRootDir,
// endTransactionThreadPoolNums from sendMessageThreadPoolNums) are left
// empty so that changing their source still moves them: call
// EnsureDefaults when done.
func NewBrokerConfig() BrokerConfig {
	c := BrokerConfig{
		TraceOn:                           true,
		AutoCreateTopicEnable:             true,
		AutoCreateSubscriptionGroup:       true,
		ClusterTopicEnable:                true,
		BrokerTopicEnable:                 true,
		ForceRegister:                     true,
		LongPollingEnable:                 true,
		LitePullMessageEnable:             true,
		UseServerSideResetOffset:          true,
		ServerLoadBalancerEnable:          true,
		DefaultPopShareQueueNum:           -1,
		PopFromRetryProbability:           DefaultPopFromRetryProbability,
		NotifyConsumerIdsChangedEnable:    true,
		TransferMsgByHeap:                 true,
		BrokerFastFailureEnable:           true,
		CleanFileForciblyEnable:           true,
		CheckCRCOnRecover:                 true,
		MessageIndexEnable:                true,
		TimerWheelEnable:                  true,
		StoreReplyMessageEnable:           true,
		AllowRecallWhenBrokerNotWriteable: true,
		EnableProxyAutoRenew:              true,
	}
	c.ensureBaseDefaults()
	return c
}

// EnsureDefaults fills every zero non-boolean field with its default, then
// the derived ones (brokerIP2 from brokerIP1, the CommitLog path from the
// root, the end-transaction pool from the send pool), and clamps the disk
// ratios to Java's ranges.
func (c *BrokerConfig) EnsureDefaults() {
	c.ensureBaseDefaults()
	c.clampDiskRatios()
	if c.BrokerIP2 == "" {
		c.BrokerIP2 = c.BrokerIP1
	}
	if c.StorePathCommitLog == "" {
		c.StorePathCommitLog = filepath.Join(c.StorePathRootDir, "commitlog")
	}
	if c.EndTransactionThreadPoolNums == 0 {
		c.EndTransactionThreadPoolNums = max(8+runtime.NumCPU()*2, c.SendMessageThreadPoolNums*4)
	}
}

// ensureBaseDefaults fills the zero non-boolean fields that do not derive
// from other fields.
func (c *BrokerConfig) ensureBaseDefaults() {
	setString := func(p *string, v string) {
		if *p == "" {
			*p = v
		}
	}
	setInt := func(p *int, v int) {
		if *p == 0 {
			*p = v
		}
	}
	setDur := func(p *time.Duration, v time.Duration) {
		if *p == 0 {
			*p = v
		}
	}
	setString(&c.BrokerClusterName, DefaultBrokerClusterName)
	setString(&c.BrokerName, DefaultBrokerName)
	setInt(&c.ListenPort, DefaultBrokerListenPort)
	setString(&c.BrokerIP1, defaultBrokerIP())
	setString(&c.RegionID, DefaultRegionID)
	setString(&c.ConsoleListenAddr, DefaultConsoleListenAddr)
	setInt(&c.GrpcServerPort, DefaultGrpcServerPort)
	setDur(&c.DefaultInvisibleTime, DefaultInvisibleTimeForRenew)
	setDur(&c.RenewAheadTime, DefaultRenewAheadTime)
	setDur(&c.RenewMaxTime, DefaultRenewMaxTime)
	setDur(&c.RenewSchedulePeriod, DefaultRenewSchedulePeriod)
	setInt(&c.MaxRenewRetryTimes, DefaultMaxRenewRetryTimes)
	setDur(&c.InvisibleTimeWhenClear, DefaultInvisibleTimeWhenClear)
	if c.BrokerPermission == 0 {
		c.BrokerPermission = DefaultBrokerPermission
	}
	if c.DefaultTopicQueueNums == 0 {
		c.DefaultTopicQueueNums = DefaultTopicQueueNums
	}
	setString(&c.MsgTraceTopicName, DefaultMsgTraceTopicName)

	setDur(&c.TransactionTimeout, DefaultTransactionTimeout)
	setInt(&c.TransactionCheckMax, DefaultTransactionCheckMax)
	setDur(&c.TransactionCheckInterval, DefaultTransactionCheckInterval)
	setDur(&c.RegisterBrokerTimeout, DefaultRegisterBrokerTimeout)
	setDur(&c.RegisterNameServerPeriod, DefaultRegisterNameServerPeriod)
	setDur(&c.ShortPollingTime, DefaultShortPollingTime)
	setDur(&c.FlushConsumerOffsetInterval, DefaultFlushConsumerOffsetInterval)
	setDur(&c.TransactionMetricFlushInterval, DefaultTransactionMetricFlushInterval)
	setInt(&c.ReviveQueueNum, DefaultReviveQueueNum)
	setDur(&c.ReviveInterval, DefaultReviveInterval)
	setString(&c.DefaultMessageRequestMode, DefaultMessageRequestMode)

	// Pool sizes as 4.9.8 derives them from the processor count.
	cpus := runtime.NumCPU()
	setInt(&c.SendMessageThreadPoolNums, min(cpus, 4))
	setInt(&c.PullMessageThreadPoolNums, 16+cpus*2)
	setInt(&c.QueryMessageThreadPoolNums, 8+cpus)
	setInt(&c.AdminBrokerThreadPoolNums, DefaultAdminBrokerThreadPoolNums)
	setInt(&c.ClientManageThreadPoolNums, DefaultClientManageThreadPoolNums)
	setInt(&c.ConsumerManageThreadPoolNums, DefaultConsumerManageThreadPoolNums)
	setInt(&c.HeartbeatThreadPoolNums, min(32, cpus))
	setInt(&c.SendThreadPoolQueueCapacity, DefaultSendThreadPoolQueueCapacity)
	setInt(&c.PullThreadPoolQueueCapacity, DefaultPullThreadPoolQueueCapacity)
	setInt(&c.QueryThreadPoolQueueCapacity, DefaultQueryThreadPoolQueueCapacity)
	setInt(&c.ClientManagerThreadPoolQueueCap, DefaultClientManagerThreadPoolQueueCap)
	setInt(&c.ConsumerManagerThreadPoolQueue, DefaultConsumerManagerThreadPoolQueueCap)
	setInt(&c.HeartbeatThreadPoolQueueCap, DefaultHeartbeatThreadPoolQueueCapacity)
	setInt(&c.EndTransactionPoolQueueCapacity, DefaultEndTransactionPoolQueueCapacity)
	setInt(&c.ProcessReplyMessageThreadPoolNums, 16+cpus*2)
	setInt(&c.ReplyThreadPoolQueueCapacity, DefaultReplyThreadPoolQueueCapacity)
	setDur(&c.WaitTimeInSendQueue, DefaultWaitTimeInSendQueue)
	setDur(&c.WaitTimeInPullQueue, DefaultWaitTimeInPullQueue)
	setDur(&c.WaitTimeInHeartbeatQueue, DefaultWaitTimeInHeartbeatQueue)
	setDur(&c.WaitTimeInTransactionQueue, DefaultWaitTimeInTransactionQueue)
	if c.ConsumerFallbehindThreshold == 0 {
		c.ConsumerFallbehindThreshold = DefaultConsumerFallbehindThreshold
	}

	setString(&c.StorePathRootDir, defaultStoreRoot())
	if c.MappedFileSizeCommitLog == 0 {
		c.MappedFileSizeCommitLog = DefaultMappedFileSizeCommitLog
	}
	if c.MappedFileSizeConsumeQueue == 0 {
		c.MappedFileSizeConsumeQueue = DefaultMappedFileSizeConsumeQueue
	}
	if c.FlushDiskType == "" {
		c.FlushDiskType = AsyncFlush
	}
	if c.BrokerRole == "" {
		c.BrokerRole = AsyncMaster
	}
	setDur(&c.SyncFlushTimeout, DefaultSyncFlushTimeout)
	setDur(&c.FlushIntervalCommitLog, DefaultFlushIntervalCommitLog)
	setInt(&c.FlushCommitLogLeastPages, DefaultFlushCommitLogLeastPages)
	setDur(&c.FlushCommitLogThoroughInterval, DefaultFlushCommitLogThorough)
	setDur(&c.FlushIntervalConsumeQueue, DefaultFlushIntervalConsumeQueue)
	setInt(&c.FlushConsumeQueueLeastPages, DefaultFlushConsumeQueueLeastPages)
	setDur(&c.FlushConsumeQueueThoroughInterval, DefaultFlushConsumeQueueThorough)
	setString(&c.DeleteWhen, DefaultDeleteWhenHours)
	setInt(&c.FileReservedTime, DefaultFileReservedHours)
	setInt(&c.DiskMaxUsedSpaceRatio, DefaultBrokerDiskMaxUsedSpaceRatio)
	setInt(&c.DiskSpaceCleanForciblyRatio, DefaultDiskSpaceCleanForciblyRatio)
	setInt(&c.DiskSpaceWarningLevelRatio, DefaultDiskSpaceWarningLevelRatio)
	setInt(&c.MaxMessageSize, DefaultMaxMessageSize)
	setString(&c.MessageDelayLevel, DefaultMessageDelayLevel)
	setDur(&c.FlushDelayOffsetInterval, DefaultFlushDelayOffsetInterval)
	if c.TimerMaxDelaySec == 0 {
		c.TimerMaxDelaySec = DefaultTimerMaxDelaySec
	}
	if c.TimerPrecisionMs == 0 {
		c.TimerPrecisionMs = DefaultTimerPrecisionMs
	}
	setDur(&c.OSPageCacheBusyTimeout, DefaultOSPageCacheBusyTimeout)
	setInt(&c.MaxTransferBytesOnMessageInMemory, DefaultMaxTransferBytesInMemory)
	setInt(&c.MaxTransferCountOnMessageInMemory, DefaultMaxTransferCountInMemory)
	setInt(&c.MaxTransferBytesOnMessageInDisk, DefaultMaxTransferBytesInDisk)
	setInt(&c.MaxTransferCountOnMessageInDisk, DefaultMaxTransferCountInDisk)
	setInt(&c.AccessMessageInMemoryMaxRatio, DefaultAccessMessageInMemoryRatio)
	setDur(&c.CleanResourceInterval, DefaultCleanResourceInterval)
	setDur(&c.HASendHeartbeatInterval, DefaultHASendHeartbeatInterval)
	setDur(&c.HAHousekeepingInterval, DefaultHAHousekeepingInterval)
	setInt(&c.HATransferBatchSize, DefaultHATransferBatchSize)
	if c.HASlaveFallbehindMax == 0 {
		c.HASlaveFallbehindMax = DefaultHASlaveFallbehindMax
	}
	setInt(&c.MinInSyncReplicas, DefaultMinInSyncReplicas)
	setDur(&c.HAMaxTimeSlaveNotCatchup, DefaultHAMaxTimeSlaveNotCatchup)
	setDur(&c.SyncBrokerMetadataPeriod, DefaultSyncBrokerMetadataPeriod)
	setDur(&c.CheckSyncStateSetPeriod, DefaultCheckSyncStateSetPeriod)
	setDur(&c.SendHeartbeatTimeout, DefaultSendHeartbeatTimeout)
	setDur(&c.BrokerHeartbeatInterval, DefaultBrokerHeartbeatInterval)
	setDur(&c.ControllerHeartBeatTimeout, DefaultControllerHeartBeatTimeout)
	if c.BrokerElectionPriority == 0 {
		c.BrokerElectionPriority = DefaultBrokerElectionPriority
	}
	if c.MaxOpenConsumeQueueFiles == 0 {
		c.MaxOpenConsumeQueueFiles = DefaultMaxOpenConsumeQueueFiles()
	}
	setInt(&c.MaxHashSlotNum, DefaultMaxHashSlotNum)
	setInt(&c.MaxIndexNum, DefaultMaxIndexNum)
	setInt(&c.DefaultQueryMaxNum, DefaultQueryMaxNum)
	setInt(&c.MaxMsgsNumBatch, DefaultMaxMsgsNumBatch)
	setString(&c.CommitLogCorruptionAction, DefaultCommitLogCorruptionAction)
	c.ensureMetricsDefaults()
	setString(&c.ConfigBlackList, DefaultBrokerConfigBlackList)
}

// Validate reports every setting that cannot work (after EnsureDefaults).
// Each message names the property key.
func (c *BrokerConfig) Validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("config: "+format, args...))
	}
	if c.BrokerClusterName == "" {
		bad("brokerClusterName is empty")
	}
	if c.BrokerName == "" {
		bad("brokerName is empty")
	}
	if c.EnableControllerMode {
		if len(c.ControllerAddrs()) == 0 {
			bad("enableControllerMode=true needs controllerAddr (host:port;host:port)")
		}
		if c.MinInSyncReplicas < 1 {
			bad("minInSyncReplicas %d must be at least 1", c.MinInSyncReplicas)
		}
		// authenticationEnabled is accepted as Java 5.x accepts it: the
		// broker's remoting ports check every request, its own requests
		// (NameServer, controller, master) are signed with
		// innerClientAuthenticationCredentials, and the AutoSwitch HA
		// port is unauthenticated as Java's is (the broker warns at
		// start naming it; internal/broker/role doc.go).
	}
	if c.EnableSlaveActingMaster {
		bad("enableSlaveActingMaster=true: rocketd does not offer slave acting master (RIP-32); its automatic fail-over is controller mode (enableControllerMode=true, controllerAddr), which promotes a slave for writes too")
	}
	if c.FilterServerNums != 0 {
		bad("filterServerNums %d: filter servers were removed in RocketMQ 5 and rocketd has none (TAG and SQL92 filters run in the broker); only 0 is accepted", c.FilterServerNums)
	}
	switch c.BrokerRole {
	case AsyncMaster, SyncMaster:
		// Java's BrokerStartup silently resets a master's brokerId to 0;
		// saying so is kinder than registering something else than asked.
		if c.BrokerID != 0 {
			bad("brokerId %d: a master (brokerRole %s) must have brokerId 0", c.BrokerID, c.BrokerRole)
		}
	case Slave:
		if c.BrokerID <= 0 {
			bad("brokerId %d: a slave must have brokerId > 0", c.BrokerID)
		}
	default:
		bad("brokerRole %q: want ASYNC_MASTER, SYNC_MASTER or SLAVE", c.BrokerRole)
	}
	switch c.FlushDiskType {
	case AsyncFlush, SyncFlush:
	default:
		bad("flushDiskType %q: want ASYNC_FLUSH or SYNC_FLUSH", c.FlushDiskType)
	}
	if c.PopFromRetryProbability < 0 || c.PopFromRetryProbability > 100 {
		bad("popFromRetryProbability %d: want 0..100", c.PopFromRetryProbability)
	}
	switch c.DefaultMessageRequestMode {
	case "PULL", "POP":
	default:
		bad("defaultMessageRequestMode %q: want PULL or POP", c.DefaultMessageRequestMode)
	}
	switch c.CommitLogCorruptionAction {
	case CorruptionRefuse, CorruptionTruncate:
	default:
		bad("commitLogCorruptionAction %q: want %s or %s", c.CommitLogCorruptionAction, CorruptionRefuse, CorruptionTruncate)
	}
	for _, p := range []struct {
		key  string
		port int
	}{{"listenPort", c.ListenPort}, {"haListenPort", c.HAListenPort}} {
		if p.port < 0 || p.port > 65535 {
			bad("%s %d out of range 0..65535", p.key, p.port)
		}
	}
	if c.HAListenPort == 0 && c.ListenPort == 65535 {
		bad("listenPort 65535 leaves no port for HA (listenPort+1): set haListenPort")
	}
	if c.HAListenPort != 0 && c.HAListenPort == c.ListenPort {
		bad("haListenPort %d is listenPort too", c.HAListenPort)
	}
	if err := checkBindAddress(c.BindAddress); err != nil {
		errs = append(errs, err)
	}
	if err := c.TLS.Validate(); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, c.validateMetrics()...)
	if err := c.validateConsole(); err != nil {
		errs = append(errs, err)
	}
	if err := c.validateGrpc(); err != nil {
		errs = append(errs, err)
	}
	if c.AccessMessageInMemoryMaxRatio <= 0 || c.AccessMessageInMemoryMaxRatio > 100 {
		bad("accessMessageInMemoryMaxRatio %d out of range 1..100", c.AccessMessageInMemoryMaxRatio)
	}
	if c.ConsumerFallbehindThreshold <= 0 || c.HASlaveFallbehindMax <= 0 {
		bad("consumerFallbehindThreshold %d and haSlaveFallbehindMax %d must be positive", c.ConsumerFallbehindThreshold, c.HASlaveFallbehindMax)
	}
	for _, ip := range []struct{ key, v string }{{"brokerIP1", c.BrokerIP1}, {"brokerIP2", c.BrokerIP2}} {
		if _, err := netip.ParseAddr(ip.v); err != nil {
			bad("%s %q is not an IP address", ip.key, ip.v)
		}
	}
	for _, addr := range c.NamesrvAddrs() {
		if _, _, err := net.SplitHostPort(addr); err != nil {
			bad("namesrvAddr %q: %q is not host:port", c.NamesrvAddr, addr)
		}
	}
	if c.BrokerPermission < 0 || c.BrokerPermission > 15 {
		bad("brokerPermission %d: want PermName bits 0..15", c.BrokerPermission)
	}
	if c.DefaultTopicQueueNums <= 0 {
		bad("defaultTopicQueueNums %d must be positive", c.DefaultTopicQueueNums)
	}
	if c.MsgTraceTopicName == "" {
		bad("msgTraceTopicName is empty")
	}
	if c.StorePathRootDir == "" {
		bad("storePathRootDir is empty")
	}
	if c.StorePathCommitLog == "" {
		bad("storePathCommitLog is empty")
	}
	if c.MappedFileSizeCommitLog <= 0 || c.MappedFileSizeCommitLog > math.MaxInt32 {
		// Java maps a segment with one MappedByteBuffer: at most 2 GiB - 1.
		bad("mappedFileSizeCommitLog %d out of range 1..%d", c.MappedFileSizeCommitLog, math.MaxInt32)
	}
	if c.MappedFileSizeConsumeQueue < cqUnitSize || c.MappedFileSizeConsumeQueue > math.MaxInt32 {
		bad("mappedFileSizeConsumeQueue %d out of range %d..%d", c.MappedFileSizeConsumeQueue, cqUnitSize, math.MaxInt32)
	}
	if c.MaxMessageSize <= 0 {
		bad("maxMessageSize %d must be positive", c.MaxMessageSize)
	}
	for _, d := range []struct {
		key string
		v   time.Duration
	}{
		{"defaultInvisibleTimeMills", c.DefaultInvisibleTime}, {"renewAheadTimeMillis", c.RenewAheadTime},
		{"renewMaxTimeMillis", c.RenewMaxTime}, {"renewSchedulePeriodMillis", c.RenewSchedulePeriod},
		{"invisibleTimeMillisWhenClear", c.InvisibleTimeWhenClear},
	} {
		if d.v < time.Millisecond {
			bad("%s %d must be at least 1 (ms)", d.key, d.v.Milliseconds())
		}
	}
	if c.MaxRenewRetryTimes < 0 {
		bad("maxRenewRetryTimes %d must not be negative", c.MaxRenewRetryTimes)
	}
	if c.MaxOpenConsumeQueueFiles < MinOpenConsumeQueueFiles {
		bad("maxOpenConsumeQueueFiles %d: want at least %d", c.MaxOpenConsumeQueueFiles, MinOpenConsumeQueueFiles)
	}
	if _, err := ParseDeleteWhen(c.DeleteWhen); err != nil {
		bad("deleteWhen: %w", err)
	}
	if c.FileReservedTime <= 0 {
		bad("fileReservedTime %d (hours) must be positive", c.FileReservedTime)
	}
	for _, r := range []struct {
		key            string
		v, least, most int
	}{
		{"diskMaxUsedSpaceRatio", c.DiskMaxUsedSpaceRatio, minDiskMaxUsedSpaceRatio, maxDiskMaxUsedSpaceRatio},
		{"diskSpaceCleanForciblyRatio", c.DiskSpaceCleanForciblyRatio, minDiskSpaceCleanForciblyRatio, maxDiskSpaceCleanForciblyRatio},
		{"diskSpaceWarningLevelRatio", c.DiskSpaceWarningLevelRatio, minDiskSpaceWarningLevelRatio, maxDiskSpaceWarningLevelRatio},
	} {
		// EnsureDefaults clamps: only a value set after it lands here.
		if r.v < r.least || r.v > r.most {
			bad("%s %d out of range %d..%d", r.key, r.v, r.least, r.most)
		}
	}
	if _, err := ParseDelayLevels(c.MessageDelayLevel); err != nil {
		bad("messageDelayLevel: %w", err)
	}
	if c.TimerMaxDelaySec <= 0 || c.TimerMaxDelaySec > 100*365*24*3600 {
		bad("timerMaxDelaySec %d out of range 1..3153600000 (100 years)", c.TimerMaxDelaySec)
	}
	if c.TimerPrecisionMs <= 0 {
		bad("timerPrecisionMs %d must be positive", c.TimerPrecisionMs)
	}
	for _, d := range []struct {
		key string
		v   time.Duration
	}{
		{"syncFlushTimeout", c.SyncFlushTimeout},
		{"flushIntervalCommitLog", c.FlushIntervalCommitLog},
		{"flushCommitLogThoroughInterval", c.FlushCommitLogThoroughInterval},
		{"flushIntervalConsumeQueue", c.FlushIntervalConsumeQueue},
		{"flushConsumeQueueThoroughInterval", c.FlushConsumeQueueThoroughInterval},
		{"flushConsumerOffsetInterval", c.FlushConsumerOffsetInterval},
		{"transactionMetricFlushInterval", c.TransactionMetricFlushInterval},
		{"flushDelayOffsetInterval", c.FlushDelayOffsetInterval},
		{"registerBrokerTimeoutMills", c.RegisterBrokerTimeout},
		{"registerNameServerPeriod", c.RegisterNameServerPeriod},
		{"shortPollingTimeMills", c.ShortPollingTime},
		{"transactionTimeOut", c.TransactionTimeout},
		{"transactionCheckInterval", c.TransactionCheckInterval},
		{"osPageCacheBusyTimeOutMills", c.OSPageCacheBusyTimeout},
		{"waitTimeMillsInSendQueue", c.WaitTimeInSendQueue},
		{"waitTimeMillsInPullQueue", c.WaitTimeInPullQueue},
		{"waitTimeMillsInHeartbeatQueue", c.WaitTimeInHeartbeatQueue},
		{"waitTimeMillsInTransactionQueue", c.WaitTimeInTransactionQueue},
		{"cleanResourceInterval", c.CleanResourceInterval},
		{"haSendHeartbeatInterval", c.HASendHeartbeatInterval},
		{"haHousekeepingInterval", c.HAHousekeepingInterval},
		{"haMaxTimeSlaveNotCatchup", c.HAMaxTimeSlaveNotCatchup},
		{"syncBrokerMetadataPeriod", c.SyncBrokerMetadataPeriod},
		{"checkSyncStateSetPeriod", c.CheckSyncStateSetPeriod},
		{"sendHeartbeatTimeoutMillis", c.SendHeartbeatTimeout},
		{"brokerHeartbeatInterval", c.BrokerHeartbeatInterval},
		{"controllerHeartBeatTimeoutMills", c.ControllerHeartBeatTimeout},
	} {
		if d.v <= 0 {
			bad("%s %v must be positive", d.key, d.v)
		}
	}
	for _, n := range []struct {
		key string
		v   int
	}{
		{"flushCommitLogLeastPages", c.FlushCommitLogLeastPages},
		{"flushConsumeQueueLeastPages", c.FlushConsumeQueueLeastPages},
		{"transactionCheckMax", c.TransactionCheckMax},
		{"sendMessageThreadPoolNums", c.SendMessageThreadPoolNums},
		{"pullMessageThreadPoolNums", c.PullMessageThreadPoolNums},
		{"queryMessageThreadPoolNums", c.QueryMessageThreadPoolNums},
		{"adminBrokerThreadPoolNums", c.AdminBrokerThreadPoolNums},
		{"clientManageThreadPoolNums", c.ClientManageThreadPoolNums},
		{"consumerManageThreadPoolNums", c.ConsumerManageThreadPoolNums},
		{"heartbeatThreadPoolNums", c.HeartbeatThreadPoolNums},
		{"endTransactionThreadPoolNums", c.EndTransactionThreadPoolNums},
		{"sendThreadPoolQueueCapacity", c.SendThreadPoolQueueCapacity},
		{"pullThreadPoolQueueCapacity", c.PullThreadPoolQueueCapacity},
		{"queryThreadPoolQueueCapacity", c.QueryThreadPoolQueueCapacity},
		{"clientManagerThreadPoolQueueCapacity", c.ClientManagerThreadPoolQueueCap},
		{"consumerManagerThreadPoolQueueCapacity", c.ConsumerManagerThreadPoolQueue},
		{"heartbeatThreadPoolQueueCapacity", c.HeartbeatThreadPoolQueueCap},
		{"endTransactionPoolQueueCapacity", c.EndTransactionPoolQueueCapacity},
		{"processReplyMessageThreadPoolNums", c.ProcessReplyMessageThreadPoolNums},
		{"replyThreadPoolQueueCapacity", c.ReplyThreadPoolQueueCapacity},
		{"maxTransferBytesOnMessageInMemory", c.MaxTransferBytesOnMessageInMemory},
		{"maxTransferCountOnMessageInMemory", c.MaxTransferCountOnMessageInMemory},
		{"maxTransferBytesOnMessageInDisk", c.MaxTransferBytesOnMessageInDisk},
		{"maxTransferCountOnMessageInDisk", c.MaxTransferCountOnMessageInDisk},
		{"haTransferBatchSize", c.HATransferBatchSize},
		{"maxHashSlotNum", c.MaxHashSlotNum},
		{"maxIndexNum", c.MaxIndexNum},
		{"defaultQueryMaxNum", c.DefaultQueryMaxNum},
		{"maxMsgsNumBatch", c.MaxMsgsNumBatch},
	} {
		if n.v <= 0 {
			bad("%s %d must be positive", n.key, n.v)
		}
	}
	if err := c.Auth.Validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// BrokerConfigFromProperties binds props onto NewBrokerConfig's defaults
// (old key spellings accepted), fills derived defaults and validates. It
// returns the keys rocketd does not know (the caller warns about them); a
// value that does not parse or a setting that cannot work is an error
// naming the key.
func BrokerConfigFromProperties(props Properties) (BrokerConfig, []string, error) {
	// Derived defaults are filled after binding: a file that sets only
	// storePathRootDir moves the CommitLog with it, only brokerIP1 moves
	// brokerIP2.
	c := NewBrokerConfig()
	props = resolveAliases(props)
	if err := checkDiskRatioSyntax(props); err != nil {
		return c, nil, err
	}
	unknown, err := bindSections(props, &c, &c.TLS, &c.Auth)
	if err != nil {
		return c, unknown, err
	}
	// Before EnsureDefaults: an explicit 0 means Java's minimum, not "unset".
	c.clampDiskRatios()
	// Java's enum valueOf is case-sensitive; accepting any case costs
	// nothing and spares an operator a failed start.
	c.FlushDiskType = FlushDiskType(strings.ToUpper(string(c.FlushDiskType)))
	c.BrokerRole = BrokerRole(strings.ToUpper(string(c.BrokerRole)))
	c.DefaultMessageRequestMode = strings.ToUpper(c.DefaultMessageRequestMode)
	c.CommitLogCorruptionAction = strings.ToLower(c.CommitLogCorruptionAction)
	c.EnsureDefaults()
	if err := c.Validate(); err != nil {
		return c, unknown, err
	}
	return c, unknown, nil
}

// clampDiskRatios clamps the disk ratios as Java does when it reads them:
// diskMaxUsedSpaceRatio to 10..95, diskSpaceCleanForciblyRatio to 30..85,
// diskSpaceWarningLevelRatio to 35..90. So a Java broker.conf means the
// same here ("diskSpaceWarningLevelRatio=95" refuses puts above 90 %, as in
// Java), and GET_BROKER_CONFIG shows the values in effect.
func (c *BrokerConfig) clampDiskRatios() {
	c.DiskMaxUsedSpaceRatio = min(max(c.DiskMaxUsedSpaceRatio, minDiskMaxUsedSpaceRatio), maxDiskMaxUsedSpaceRatio)
	c.DiskSpaceCleanForciblyRatio = min(max(c.DiskSpaceCleanForciblyRatio, minDiskSpaceCleanForciblyRatio), maxDiskSpaceCleanForciblyRatio)
	c.DiskSpaceWarningLevelRatio = min(max(c.DiskSpaceWarningLevelRatio, minDiskSpaceWarningLevelRatio), maxDiskSpaceWarningLevelRatio)
}

// checkDiskRatioSyntax refuses a disk ratio written as a fraction ("0.9"),
// the form of 4.x's -Drocketmq.broker.diskSpace...Ratio JVM options: Java
// 5.x cannot parse it as a broker.conf value either (it silently keeps the
// default), and taking it for 0 % would refuse every put.
func checkDiskRatioSyntax(props Properties) error {
	for _, key := range []string{"diskMaxUsedSpaceRatio", "diskSpaceCleanForciblyRatio", "diskSpaceWarningLevelRatio"} {
		v, ok := props[key]
		if !ok {
			continue
		}
		if _, err := strconv.ParseInt(v, 10, 32); err != nil {
			return fmt.Errorf("config: %s=%q: want a whole percent such as %s=90", key, v, key)
		}
	}
	return nil
}

// resolveAliases returns a copy of props with old spellings renamed to the
// current key (the current key wins when both are set) and every value
// trimmed of surrounding blanks, as Java's properties2Object trims strings
// ("brokerName = b1  " names b1).
func resolveAliases(props Properties) Properties {
	out := make(Properties, len(props))
	for k, v := range props {
		out[k] = strings.TrimSpace(v)
	}
	for old, cur := range brokerKeyAliases {
		v, ok := out[old]
		if !ok {
			continue
		}
		delete(out, old)
		if _, has := out[cur]; !has {
			out[cur] = v
		}
	}
	return out
}

// LoadBrokerFile reads a broker.conf properties file (see
// BrokerConfigFromProperties).
func LoadBrokerFile(path string) (BrokerConfig, []string, error) {
	props, err := LoadPropertiesFile(path)
	if err != nil {
		return BrokerConfig{}, nil, err
	}
	c, unknown, err := BrokerConfigFromProperties(props)
	if err != nil {
		return c, unknown, fmt.Errorf("%s: %w", path, err)
	}
	return c, unknown, nil
}

// RuntimeConfigFile is where UPDATE_BROKER_CONFIG persists changed keys
// when the broker was started without a config file:
// <storePathRootDir>/config/broker.properties (Java: always
// $HOME/store/config/broker.properties, whatever the store root). The
// broker reads it back at start.
func (c *BrokerConfig) RuntimeConfigFile() string {
	return filepath.Join(c.StorePathRootDir, "config", "broker.properties")
}

// BrokerAddr is the address the broker registers and clients dial:
// brokerIP1:listenPort.
func (c *BrokerConfig) BrokerAddr() string {
	return net.JoinHostPort(c.BrokerIP1, strconv.Itoa(c.ListenPort))
}

// HAServerAddr is the address slaves replicate from: brokerIP2 (else
// brokerIP1):haListenPort.
func (c *BrokerConfig) HAServerAddr() string {
	ip := c.BrokerIP2
	if ip == "" {
		ip = c.BrokerIP1
	}
	return net.JoinHostPort(ip, strconv.Itoa(c.HAPort()))
}

// HAPort is haListenPort, or listenPort+1 when unset.
func (c *BrokerConfig) HAPort() int {
	if c.HAListenPort != 0 {
		return c.HAListenPort
	}
	return c.ListenPort + 1
}

// IsMaster reports a master role (brokerId 0).
func (c *BrokerConfig) IsMaster() bool { return c.BrokerRole != Slave }

// ControllerAddrs splits controllerAddr on ';' (blank entries dropped).
func (c *BrokerConfig) ControllerAddrs() []string { return splitAddrs(c.ControllerAddr) }

// NamesrvAddrs splits namesrvAddr on ';' (blank entries dropped).
func (c *BrokerConfig) NamesrvAddrs() []string { return splitAddrs(c.NamesrvAddr) }

func splitAddrs(list string) []string {
	var out []string
	for _, a := range strings.Split(list, ";") {
		if a = strings.TrimSpace(a); a != "" {
			out = append(out, a)
		}
	}
	return out
}

// RegisterPeriod is registerNameServerPeriod clamped to [10 s, 60 s], as
// the Java broker schedules it.
func (c *BrokerConfig) RegisterPeriod() time.Duration {
	return min(max(c.RegisterNameServerPeriod, minRegisterNameServerPeriod), maxRegisterNameServerPeriod)
}

// InMemoryBytes is how far behind the CommitLog end a message still counts
// as in the page cache, given the machine's RAM (PhysicalMemoryBytes):
// accessMessageInMemoryMaxRatio percent of it, as Java's
// TOTAL_PHYSICAL_MEMORY_SIZE * (ratio / 100.0). 0 (RAM unknown) means every
// message is in memory.
func (c *BrokerConfig) InMemoryBytes(physical uint64) int64 {
	return int64(float64(physical) * (float64(c.AccessMessageInMemoryMaxRatio) / 100.0))
}

// FileReservedDuration is fileReservedTime as a duration.
func (c *BrokerConfig) FileReservedDuration() time.Duration {
	return time.Duration(c.FileReservedTime) * time.Hour
}

// ConsumeQueueUnitsPerFile is mappedFileSizeConsumeQueue in 20-byte units,
// rounded up as Java's getMappedFileSizeConsumeQueue does.
func (c *BrokerConfig) ConsumeQueueUnitsPerFile() int {
	return int((c.MappedFileSizeConsumeQueue + cqUnitSize - 1) / cqUnitSize)
}

// DelayLevels parses messageDelayLevel (already checked by Validate).
func (c *BrokerConfig) DelayLevels() ([]time.Duration, error) {
	return ParseDelayLevels(c.MessageDelayLevel)
}

// ParseDelayLevels parses a messageDelayLevel value: blank-separated
// levels, each a positive integer followed by one unit, s, m, h or d
// ("1s 5s 10s 30s 1m ... 2h"). Level i+1 is element i.
func ParseDelayLevels(s string) ([]time.Duration, error) {
	units := map[byte]time.Duration{'s': time.Second, 'm': time.Minute, 'h': time.Hour, 'd': 24 * time.Hour}
	var out []time.Duration
	for _, f := range strings.Fields(s) {
		unit, ok := units[f[len(f)-1]]
		if !ok || len(f) < 2 {
			return nil, fmt.Errorf("level %q: want a number followed by s, m, h or d", f)
		}
		n, err := strconv.ParseInt(f[:len(f)-1], 10, 64)
		if err != nil || n <= 0 || n > int64(math.MaxInt64/unit) {
			return nil, fmt.Errorf("level %q: want a positive number followed by s, m, h or d", f)
		}
		out = append(out, time.Duration(n)*unit)
	}
	if len(out) == 0 {
		return nil, errors.New("no delay levels")
	}
	return out, nil
}

// ParseDeleteWhen parses deleteWhen: hours 0..23 separated by ';' ("04",
// "04;16").
func ParseDeleteWhen(s string) ([]int, error) {
	var hours []int
	for _, part := range strings.Split(s, ";") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		h, err := strconv.Atoi(part)
		if err != nil || h < 0 || h > 23 {
			return nil, fmt.Errorf("%q: %q is not an hour 0..23", s, part)
		}
		hours = append(hours, h)
	}
	if len(hours) == 0 {
		return nil, fmt.Errorf("%q: no hour", s)
	}
	return hours, nil
}

// defaultStoreRoot is Java's $HOME/store.
func defaultStoreRoot() string {
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		home = "."
	}
	return filepath.Join(home, "store")
}

// defaultBrokerIP picks the first non-loopback IPv4 address of an up
// interface (Java's RemotingUtil.getLocalAddress prefers one too), else
// 127.0.0.1.
func defaultBrokerIP() string {
	ifaces, err := net.Interfaces()
	if err != nil {
		return "127.0.0.1"
	}
	for _, ifc := range ifaces {
		if ifc.Flags&net.FlagUp == 0 || ifc.Flags&net.FlagLoopback != 0 {
			continue
		}
		addrs, err := ifc.Addrs()
		if err != nil {
			continue
		}
		for _, a := range addrs {
			ipn, ok := a.(*net.IPNet)
			if !ok {
				continue
			}
			if ip4 := ipn.IP.To4(); ip4 != nil && !ip4.IsLoopback() && !ip4.IsLinkLocalUnicast() {
				return ip4.String()
			}
		}
	}
	return "127.0.0.1"
}
