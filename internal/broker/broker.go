package broker

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rocketd/rocketd/internal/auth"
	"github.com/rocketd/rocketd/internal/broker/client"
	"github.com/rocketd/rocketd/internal/broker/longpoll"
	"github.com/rocketd/rocketd/internal/broker/meta"
	"github.com/rocketd/rocketd/internal/broker/pop"
	"github.com/rocketd/rocketd/internal/broker/processor"
	"github.com/rocketd/rocketd/internal/broker/role"
	"github.com/rocketd/rocketd/internal/broker/stats"
	"github.com/rocketd/rocketd/internal/broker/timer"
	"github.com/rocketd/rocketd/internal/broker/txn"
	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/console"
	"github.com/rocketd/rocketd/internal/grpc"
	"github.com/rocketd/rocketd/internal/ha"
	"github.com/rocketd/rocketd/internal/metrics"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
	"github.com/rocketd/rocketd/internal/store"
	"github.com/rocketd/rocketd/internal/vfs"
)

// Config describes a Broker.
type Config struct {
	// Broker is the broker.conf configuration. Start from
	// config.NewBrokerConfig; EnsureDefaults and Validate are applied.
	Broker config.BrokerConfig
	// ConfigFile is the properties file UPDATE_BROKER_CONFIG writes the
	// changed keys to: the -c file the broker was started with. Empty:
	// Broker.RuntimeConfigFile() (<storePathRootDir>/config/broker.properties).
	ConfigFile string
	// ListenAddr, when set, overrides the listen address built from
	// listenPort (all interfaces). "127.0.0.1:0" in tests: the broker then
	// advertises brokerIP1 with the port actually bound.
	ListenAddr string
	// FS holds the store and config files. Default vfs.Default.
	FS vfs.FS
	// Logger receives structured logs. Default: discard.
	Logger *slog.Logger
	// Tune, when set, adjusts the store configuration derived from Broker
	// before the store opens (tests: small ConsumeQueue files, a clock).
	Tune func(*store.Config)
	// MaxSuspend caps a held pull (default longpoll.DefaultMaxSuspend,
	// 20 s: below the clients' 30 s request timeout).
	MaxSuspend time.Duration
	// ClientScanInterval is the idle-client scan period (default 10 s).
	ClientScanInterval time.Duration
	// SendHooks observe every send request (tracing, metrics).
	SendHooks []processor.SendHook
	// HAListenAddr, when set, overrides the HA listen address built from
	// haListenPort ("127.0.0.1:0" in tests: the bound port is advertised).
	HAListenAddr string
	// SlaveSyncInterval is how often a slave polls a rocketd master's
	// metadata (default 500 ms).
	SlaveSyncInterval time.Duration
	// SlaveFullSyncInterval is how often a slave copies the metadata of a
	// master that answers in full, without versions (Java): default 10 s,
	// Java's own period, and never below SlaveSyncInterval.
	SlaveFullSyncInterval time.Duration
	// Authenticator, when set, checks the broker's requests instead of one
	// built from Broker.Auth: rocketd serve shares one with its NameServer.
	Authenticator *auth.Authenticator
	// MetricsAddr, when set, overrides the metrics listener's address
	// (metricsPromExporterHost:metricsPromExporterPort; "127.0.0.1:0" in
	// tests). Metrics are served only with metricsExporterType=PROM.
	MetricsAddr string
	// GRPCListenAddr, when set, overrides the gRPC service's address
	// (bindAddress:grpcServerPort; "127.0.0.1:0" in tests).
	GRPCListenAddr string
}

// UsersPath is the broker's users file: <storePathRootDir>/config/users.json.
func UsersPath(bc *config.BrokerConfig) string {
	return filepath.Join(meta.ConfigDir(bc.StorePathRootDir), auth.UsersFile)
}

// Broker is a RocketMQ master broker: the remoting server with its
// processors, the message store, the metadata tables, the client registry,
// long polling and the NameServer registration loop.
type Broker struct {
	cfg  config.BrokerConfig
	log  *slog.Logger
	addr string // advertised brokerIP1:port

	srv      *remoting.Server
	vip      *remoting.Server // Java's fastRemotingServer on listenPort-2
	nsClient *remoting.Client
	store    *store.Store
	topics   *meta.Topics
	groups   *meta.Groups
	offsets  *meta.Offsets
	clients  *client.Registry
	holder   *longpoll.Holder
	pop      *pop.Service
	// delivery is the delay-level and timer delivery: set while the
	// broker is a master (roleservices.go).
	delivery   atomic.Pointer[delivery]
	timerRates *timerRates
	txn        *txn.Service
	stats      *stats.Stats        // counts puts and pulls for the runtime statistics
	role       *role.Role          // master or slave: replication, slave metadata copy, registration
	inner      *auth.Credentials   // innerClientAuthenticationCredentials; nil: unsigned
	authn      *auth.Authenticator // nil: authentication off
	console    *console.Server     // nil unless consoleEnable
	users      *auth.Users         // the user table (a slave copies its master's)
	acls       *auth.ACLs          // the ACL table (a slave copies its master's)
	grpc       *grpc.Server        // nil unless grpcServerEnable
	// grpcLive is grpc for the transaction check-back's goroutine, which
	// starts before it.
	grpcLive atomic.Pointer[grpc.Server]

	// The tls.* settings built once, for every listener and client.
	tlsListener remoting.TLSListener
	tlsClient   *tls.Config

	fams    processor.Families // the main server's, for the metrics
	metrics *metrics.Server    // nil: metricsExporterType is not PROM
	// events counts the transaction and DLQ families (nil: metrics off;
	// its methods are nil-safe).
	events *metrics.Events
	// txnSaver writes the half-message counts periodically and at close
	// (nil: metrics off).
	txnSaver *meta.Periodic
	bootTime time.Time

	closeOnce sync.Once
	closeErr  error
	started   atomic.Bool
}

// Start opens the store and the metadata, starts serving on the listen
// address and registers with every configured NameServer. On error
// everything already started is stopped again.
func Start(cfg Config) (_ *Broker, err error) {
	bc := cfg.Broker
	bc.EnsureDefaults()
	if err := bc.Validate(); err != nil {
		return nil, fmt.Errorf("broker: %w", err)
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	fs := cfg.FS
	if fs == nil {
		fs = vfs.Default
	}
	// b is captured by the undo functions below: it must stay set when an
	// error return clears the named result.
	b := &Broker{cfg: bc, log: log, bootTime: time.Now()}
	var closers []func() error
	defer func() {
		if err != nil {
			for i := len(closers) - 1; i >= 0; i-- {
				_ = closers[i]()
			}
		}
	}()

	// Listen first: the advertised address (and the store host written
	// into every record) needs the port actually bound.
	listen := cfg.ListenAddr
	if listen == "" {
		listen = net.JoinHostPort(bc.BindAddress, strconv.Itoa(bc.ListenPort))
	}
	tlsl, tlsc, err := tlsSettings(&bc.TLS)
	if err != nil {
		return nil, fmt.Errorf("broker: %w", err)
	}
	b.tlsListener, b.tlsClient = tlsl, tlsc
	vipListen, err := vipListenAddr(listen)
	if err != nil {
		return nil, err
	}
	rpc := newRPCMetrics(&bc)
	if rpc != nil {
		b.events = metrics.NewEvents(metrics.BaseLabels(bc.BrokerClusterName, bc.BrokerName))
	}
	b.srv = remoting.NewServer(remoting.ServerConfig{Addr: listen, Logger: log, TLS: tlsl, Observer: observer(rpc)})
	b.vip = remoting.NewServer(remoting.ServerConfig{Addr: vipListen, Logger: log, TLS: tlsl, Observer: observer(rpc)})
	// Authentication guards every request from the first one on, on both
	// ports.
	acfg := bc.Auth
	acfg.ClusterName = bc.BrokerClusterName
	if cfg.Authenticator != nil {
		// The users, the ACLs and the import are cfg.Authenticator's.
		acfg.AuthenticationEnabled, acfg.AuthorizationEnabled, acfg.MigrateAuthFromV1Enabled = false, false, false
	}
	authn, inner, err := auth.Setup(acfg, fs, UsersPath(&bc), log)
	if err != nil {
		return nil, fmt.Errorf("broker: %w", err)
	}
	if cfg.Authenticator != nil {
		authn = cfg.Authenticator
	}
	if authn != nil {
		guard := authn.Guard
		if bc.EnableControllerMode {
			// The controllers' NOTIFY_BROKER_ROLE_CHANGED is unsigned (Java's
			// controller has no credentials): roleChanged checks it itself.
			guard = func(conn *remoting.Conn, req *remoting.Command) *remoting.Command {
				if req.Code == int32(protocol.NotifyBrokerRoleChanged) {
					return nil
				}
				return authn.Guard(conn, req)
			}
		}
		b.srv.SetGuard(guard)
		b.vip.SetGuard(authn.Guard)
	}
	b.inner, b.authn = inner, authn
	// The user table AUTH_*_USER manage, authentication on or off.
	var users *auth.Users
	var acls *auth.ACLs
	if authn != nil {
		users, acls = authn.Users(), authn.ACLs()
	} else if users, err = auth.OpenUsers(fs, UsersPath(&bc)); err != nil {
		return nil, fmt.Errorf("broker: %w", err)
	}
	// The ACL table AUTH_*_ACL manage, authorization on or off (as Java).
	if acls == nil {
		if acls, err = auth.OpenACLs(fs, auth.ACLsPath(UsersPath(&bc)), users); err != nil {
			return nil, fmt.Errorf("broker: %w", err)
		}
	}
	b.users, b.acls = users, acls
	if bc.Auth.AuthenticationEnabled && inner == nil {
		log.Warn("broker: authenticationEnabled without innerClientAuthenticationCredentials: " +
			"registrations and slave requests go out unsigned, which an authenticating NameServer or master refuses")
	}
	fams := newFamilies(b.srv, &bc, false)
	b.fams = fams
	vipFams := newFamilies(b.vip, &bc, true)
	// Until the processors are registered (the store may take a while to
	// recover), every request is answered SERVICE_NOT_AVAILABLE, a code
	// both official clients retry on another broker or later. A port
	// already taken fails the start, the VIP one too (as Java's bind).
	for _, s := range []struct {
		srv  *remoting.Server
		addr string
	}{{b.srv, listen}, {b.vip, vipListen}} {
		s.srv.HandleDefault(nil, starting)
		if err := s.srv.Start(); err != nil {
			return nil, fmt.Errorf("broker: listen %s: %w", s.addr, err)
		}
		closers = append(closers, func() error {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			return s.srv.Shutdown(ctx)
		})
	}
	port := b.srv.Addr().(*net.TCPAddr).Port
	b.addr = net.JoinHostPort(bc.BrokerIP1, strconv.Itoa(port))
	storeHost, err := netip.ParseAddrPort(b.addr)
	if err != nil {
		return nil, fmt.Errorf("broker: brokerIP1 %q is not an IP address: %w", bc.BrokerIP1, err)
	}

	// The store.
	scfg, err := storeConfig(&bc, fs, log, storeHost)
	if err != nil {
		return nil, err
	}
	// The NameServer client: registration, and a slave's metadata copy.
	nscfg := remoting.ClientConfig{Logger: log, TLS: b.tlsClient}
	if inner != nil {
		nscfg.BeforeRequest = inner.Sign
	}
	b.nsClient = remoting.NewClient(nscfg)
	closers = append(closers, b.nsClient.Close)
	b.role = role.New(role.Config{
		Broker: &b.cfg, Addr: b.addr, HAListenAddr: role.HAListenAddr(cfg.HAListenAddr, cfg.ListenAddr, &b.cfg),
		SegmentSize: scfg.SegmentSize, SlaveSyncInterval: cfg.SlaveSyncInterval, SlaveFullSyncInterval: cfg.SlaveFullSyncInterval,
		NS: b.nsClient, Authenticator: b.authn, Credentials: b.inner, TLSListener: b.tlsListener, TLSClient: b.tlsClient,
		FS: fs, Logger: log,
		// Role changes begin after role.Start, when everything is set.
		Services: masterServices{b: b, mopts: meta.Options{Dir: meta.ConfigDir(scfg.Dir), FS: fs, Logger: log}, fs: fs},
	}, &scfg)
	if cfg.Tune != nil {
		cfg.Tune(&scfg)
	}
	if b.store, err = store.Open(scfg); err != nil {
		if cerr := (*store.CorruptionError)(nil); errors.As(err, &cerr) {
			return nil, fmt.Errorf("broker: open store: %w (broker.conf: commitLogCorruptionAction=%s starts the broker with the CommitLog cut at offset %d)",
				err, config.CorruptionTruncate, cerr.Offset)
		}
		return nil, fmt.Errorf("broker: open store: %w", err)
	}
	closers = append(closers, b.store.Close)
	if err := b.role.StartHA(b.store); err != nil {
		return nil, err
	}
	closers = append(closers, b.role.Close)
	log.Info("broker: store open", "dir", scfg.Dir, "cleanLastExit", b.store.LastExitOK())

	// Metadata: topics, groups, offsets.
	mopts := meta.Options{Dir: meta.ConfigDir(scfg.Dir), FS: fs, Logger: log}
	if b.topics, err = meta.OpenTopics(mopts, &b.cfg); err != nil {
		return nil, fmt.Errorf("broker: %w", err)
	}
	if b.groups, err = meta.OpenGroups(mopts, &b.cfg); err != nil {
		return nil, fmt.Errorf("broker: %w", err)
	}
	if b.offsets, err = meta.OpenOffsets(mopts); err != nil {
		return nil, fmt.Errorf("broker: %w", err)
	}
	modes, err := meta.OpenRequestModes(mopts)
	if err != nil {
		return nil, fmt.Errorf("broker: %w", err)
	}
	mappings, err := meta.OpenMappings(mopts, bc.BrokerName)
	if err != nil {
		return nil, fmt.Errorf("broker: %w", err)
	}
	if err := b.offsets.StartAutoPersist(bc.FlushConsumerOffsetInterval); err != nil {
		return nil, fmt.Errorf("broker: %w", err)
	}
	closers = append(closers, b.offsets.Close)
	b.stats = stats.New(stats.Config{Cluster: bc.BrokerClusterName, IsSystemTopic: b.topics.IsSystemTopic})
	closers = append(closers, b.stats.Close)
	b.timerRates = newTimerRates(b.stats, b.delivery.Load)
	b.store.AddArrivalListener(func(topic string, _ int32, _, _, _ int64) {
		if topic != timer.Topic {
			return
		}
		if d := b.delivery.Load(); d != nil {
			d.timer.Notify()
		}
	})
	// Masters only; a role change starts or stops it (roleservices.go). In
	// controller mode the controller names the role first.
	if b.cfg.IsMaster() && b.cfg.BrokerRole != config.Slave && !b.cfg.EnableControllerMode {
		d, err := b.startDelivery(mopts, fs, nil)
		if err != nil {
			return nil, err
		}
		b.delivery.Store(d)
	}
	closers = append(closers, b.closeDelivery)

	// Clients and long polling.
	b.clients, err = client.New(client.Config{
		ScanInterval: cfg.ClientScanInterval,
		NotifyEnabled: func(group string) bool {
			gc, found := b.groups.Get(group)
			return !found || gc.NotifyConsumerIdsChangedEnable
		},
		Logger: log,
	})
	if err != nil {
		return nil, fmt.Errorf("broker: %w", err)
	}
	if err := b.clients.Start(); err != nil {
		return nil, fmt.Errorf("broker: %w", err)
	}
	closers = append(closers, b.clients.Close)
	b.holder, err = longpoll.New(longpoll.Config{
		ShortPolling:     !bc.LongPollingEnable,
		ShortPollingTime: bc.ShortPollingTime,
		MaxSuspend:       cfg.MaxSuspend,
		MaxOffset:        b.store.MaxOffset,
		Logger:           log,
	})
	if err != nil {
		return nil, fmt.Errorf("broker: %w", err)
	}
	if err := b.holder.Start(); err != nil {
		return nil, fmt.Errorf("broker: %w", err)
	}
	closers = append(closers, b.holder.Close)
	// POP consumption, on a master only (check points, acks and revived
	// messages are writes): its held pops wait in the same holder.
	if bc.IsMaster() {
		var reviveLog pop.ReviveObserver
		if b.events != nil {
			reviveLog = b.events
		}
		if b.pop, err = pop.New(pop.Config{
			Store: b.store, Topics: b.topics, Groups: b.groups, Offsets: b.offsets,
			BrokerName: bc.BrokerName, Cluster: bc.BrokerClusterName, StoreHost: storeHost,
			ReviveQueueNum: int32(bc.ReviveQueueNum), ReviveInterval: bc.ReviveInterval,
			RetryV2: bc.EnableRetryTopicV2, RetryProbability: bc.PopFromRetryProbability,
			OrderInfoPath: filepath.Join(mopts.Dir, pop.OrderInfoFile), FS: fs,
			Notify:         func(topic string, holdQueue int32, tagsCode int64) { b.holder.Notify(topic, holdQueue, 1, tagsCode) },
			SentToDLQ:      b.sentToDLQ(),
			RevivedToRetry: b.events.RevivedToRetryFunc(),
			ReviveLog:      reviveLog,
			Logger:         log,
		}); err != nil {
			return nil, fmt.Errorf("broker: %w", err)
		}
		b.pop.Start()
		closers = append(closers, b.pop.Close)
	}
	b.store.AddArrivalListener(func(topic string, queueID int32, queueOffset, tagsCode, _ int64) {
		b.holder.Notify(topic, queueID, queueOffset+1, tagsCode)
		if b.pop != nil {
			b.pop.Arrived(topic, queueID, tagsCode)
		}
	})
	for _, srv := range []*remoting.Server{b.srv, b.vip} {
		srv.OnConnClose(func(c *remoting.Conn) {
			b.clients.RemoveChannel(c)
			b.holder.DropConn(c)
		})
	}

	// Transactions: half messages, END_TRANSACTION, the check-back. The
	// half-message counts of the metrics start from the last save
	// (periodic, and at a clean close).
	if b.events != nil {
		if err := loadTxnMetrics(fs, mopts.Dir, b.events); err != nil {
			log.Warn("broker: half-message counts start from 0", "err", err)
		}
		save := func() error { return saveTxnMetrics(fs, mopts.Dir, b.events) }
		if b.txnSaver, err = meta.StartPeriodic(TransactionMetricsFile, bc.TransactionMetricFlushInterval, save, log); err != nil {
			return nil, fmt.Errorf("broker: %w", err)
		}
		closers = append(closers, func() error { b.txnSaver.Stop(); return nil })
	}
	if b.txn, err = b.newTxn(storeHost, scfg.FileReservedTime); err != nil {
		return nil, err
	}
	closers = append(closers, b.txn.Close)

	var route func(context.Context, string) (protocol.TopicRouteData, bool, error)
	var forward func(context.Context, string, *remoting.Command) (*remoting.Command, error)
	if len(bc.NamesrvAddrs()) > 0 {
		route = b.topicRoute
		// Static topics' requests forwarded to other brokers go out on
		// the NameServer client (signed with the inner credentials).
		forward = b.nsClient.Invoke
	}
	confFile := cfg.ConfigFile
	if confFile == "" {
		confFile = b.cfg.RuntimeConfigFile()
	}
	proc, err := processor.New(processor.Deps{
		SentToDLQ: b.sentToDLQ(),
		Config:    &b.cfg, Live: config.NewBrokerRuntime(&b.cfg, confFile), Store: b.store, Topics: b.topics, Groups: b.groups, Offsets: b.offsets,
		Clients: b.clients, Holder: b.holder, StoreHost: storeHost, InMemoryBytes: scfg.InMemoryBytes, SendHooks: cfg.SendHooks, Txn: b.txn,
		RequestModes: modes, Mappings: mappings, TopicRoute: route, Forward: forward, AwaitRegistration: b.role.AwaitRegistration, Users: users, ACLs: acls,
		HARuntime: b.role.HARuntimeInfo, Role: b.role.BrokerRole, Pop: b.pop, Stats: b.stats,
		// The delivery in service now (none on a slave).
		RuntimeExtras:   func(kv map[string]string) { b.delivery.Load().runningStats(kv) },
		TimerCheckpoint: func() (protocol.TimerCheckpoint, bool) { return b.delivery.Load().timerCheckpoint() },
		TimerMetrics:    func() (protocol.TimerMetrics, bool) { return b.delivery.Load().timerMetrics() },
		TimerRecall: func(topic, uniqKey string, deliverMs int64) (timer.RecallStatus, bool) {
			return b.delivery.Load().timerRecall(topic, uniqKey, deliverMs)
		},
		Logger: log,
	})
	if err != nil {
		return nil, err
	}
	proc.Register(b.srv, fams)
	proc.RegisterVIP(b.vip, vipFams)
	// Controller mode's broker requests (the role serves them; outside
	// controller mode GET_BROKER_EPOCH_CACHE is refused as Java does).
	b.srv.Handle(protocol.GetBrokerEpochCache, fams.Admin, b.role.HandleEpochCache)
	b.srv.Handle(protocol.NotifyBrokerRoleChanged, fams.Admin, b.roleChanged)
	// The gRPC service calls the processors proc serves remoting with.
	if err := b.startGRPC(&cfg, proc); err != nil {
		return nil, err
	}
	closers = append(closers, func() error { return b.closeGRPC(context.Background()) })

	// NameServer registration: now, every period, and after topic changes
	// (UPDATE_AND_CREATE_TOPIC waits for such a round); a slave's copy of
	// its master's metadata.
	b.role.Start(role.Tables{
		Topics: b.topics, Groups: b.groups, Offsets: b.offsets, Users: users, ACLs: acls, Mappings: mappings,
		DelayOffsetPath:     filepath.Join(mopts.Dir, meta.DelayOffsetFile),
		TimerCheckpointPath: filepath.Join(mopts.Dir, MasterTimerCheckpointFile),
	})

	// Metrics last: a scrape reads everything started above.
	if err := b.startMetrics(&cfg, rpc, fs); err != nil {
		return nil, err
	}
	closers = append(closers, func() error { return b.closeMetrics(context.Background()) })
	if err := b.startConsole(); err != nil {
		return nil, err
	}
	closers = append(closers, func() error { return b.closeConsole(context.Background()) })

	b.started.Store(true)
	log.Info("broker: started", "name", bc.BrokerName, "cluster", bc.BrokerClusterName, "addr", b.addr,
		"namesrv", bc.NamesrvAddr)
	return b, nil
}

// starting answers requests that arrive while the broker starts.
func starting(_ *remoting.Conn, _ *remoting.Command) *remoting.Command {
	return remoting.NewResponse(protocol.ServiceNotAvailable, "the broker is starting, try again later")
}

// storeConfig maps broker.conf onto the store's configuration.
func storeConfig(bc *config.BrokerConfig, fs vfs.FS, log *slog.Logger, host netip.AddrPort) (store.Config, error) {
	levels, err := bc.DelayLevels()
	if err != nil {
		return store.Config{}, fmt.Errorf("broker: messageDelayLevel: %w", err)
	}
	onCorruption, err := store.ParseCorruptionAction(bc.CommitLogCorruptionAction)
	if err != nil {
		return store.Config{}, fmt.Errorf("broker: commitLogCorruptionAction: %w", err)
	}
	physicalMemory := config.PhysicalMemoryBytes()
	if physicalMemory == 0 && log != nil {
		log.Warn("broker: physical memory size unknown: accessMessageInMemoryMaxRatio has no effect, every message counts as in memory")
	}
	return store.Config{
		Dir:                     bc.StorePathRootDir,
		FS:                      fs,
		SegmentSize:             bc.MappedFileSizeCommitLog,
		CQUnitsPerFile:          bc.ConsumeQueueUnitsPerFile(),
		MaxOpenCQFiles:          bc.MaxOpenConsumeQueueFiles,
		FlushSync:               bc.FlushDiskType == config.SyncFlush,
		SyncFlushTimeout:        bc.SyncFlushTimeout,
		FlushInterval:           bc.FlushIntervalCommitLog,
		FlushThoroughInterval:   bc.FlushCommitLogThoroughInterval,
		FlushLeastPages:         bc.FlushCommitLogLeastPages,
		CQFlushInterval:         bc.FlushIntervalConsumeQueue,
		CQFlushLeastPages:       bc.FlushConsumeQueueLeastPages,
		CQFlushThoroughInterval: bc.FlushConsumeQueueThoroughInterval,
		MaxMessageSize:          bc.MaxMessageSize,
		DelayLevels:             levels,
		StoreHost:               host,
		OSPageCacheBusyTimeout:  bc.OSPageCacheBusyTimeout,
		FileReservedTime:        bc.FileReservedDuration(),
		DeleteWhen:              bc.DeleteWhen,
		// The disk ratios arrive clamped to Java's ranges (config).
		DiskMaxUsedSpaceRatio:       bc.DiskMaxUsedSpaceRatio,
		DiskSpaceCleanForciblyRatio: bc.DiskSpaceCleanForciblyRatio,
		DiskSpaceWarningLevelRatio:  bc.DiskSpaceWarningLevelRatio,
		KeepUnexpiredSegments:       !bc.CleanFileForciblyEnable,
		CleanInterval:               bc.CleanResourceInterval,
		MaxTransferBytes:            bc.MaxTransferBytesOnMessageInMemory,
		MaxTransferCount:            bc.MaxTransferCountOnMessageInMemory,
		InMemoryBytes:               bc.InMemoryBytes(physicalMemory),
		MaxTransferBytesOnDisk:      bc.MaxTransferBytesOnMessageInDisk,
		MaxTransferCountOnDisk:      bc.MaxTransferCountOnMessageInDisk,
		CommitLogCorruptionAction:   onCorruption,
		SkipBodyCRCOnRecover:        !bc.CheckCRCOnRecover,
		MessageIndexDisabled:        !bc.MessageIndexEnable,
		MessageIndexSafe:            bc.MessageIndexSafe,
		MaxHashSlotNum:              bc.MaxHashSlotNum,
		MaxIndexNum:                 bc.MaxIndexNum,
		MaxMsgsNumBatch:             bc.MaxMsgsNumBatch,
		Logger:                      log,
	}, nil
}

// Addr is the address the broker advertises: brokerIP1 and the bound port.
func (b *Broker) Addr() string { return b.addr }

// VIPAddr is the VIP channel's bound address (Java's fastRemotingServer).
func (b *Broker) VIPAddr() string { return b.vip.Addr().String() }

// Store exposes the message store (tests, tools in the same process).
func (b *Broker) Store() *store.Store { return b.store }

// HeldRequests is how many pull and pop requests are held for new
// messages now (long polling): a test waits on it instead of guessing
// when its consumer's requests arrived.
func (b *Broker) HeldRequests() int { return b.holder.Len() }

// Role is the broker's role in its group: what it is now, and the
// operations that change it at runtime (BecomeMaster, BecomeSlave).
func (b *Broker) Role() *role.Role { return b.role }

// HAServer is the master's HA server (nil on a slave).
func (b *Broker) HAServer() *ha.Server { return b.role.HAServer() }

// HAStatus is the slave's replication status (zero on a master).
func (b *Broker) HAStatus() ha.Status { return b.role.HAStatus() }

// Shutdown stops the broker in the order of architecture.md, each step for
// a reason:
//
//  0. Close the web console (consoleEnable): no admin action starts
//     while the broker goes away; then the metrics listener: a scrape
//     reads the store, the metadata and the client tables the steps
//     below close.
//     0b. Close the gRPC service (grpcServerEnable): stop accepting, end
//     held receives and telemetry streams, wait for the running RPCs
//     (bounded by ctx). It calls the processors the steps below stop,
//     like a remoting connection, so it goes before them.
//  1. Stop the registration loop and unregister from every NameServer:
//     clients stop routing new work here while it is still served.
//  2. Shut the remoting servers, the VIP channel's first (listenPort-2,
//     Java's fastRemotingServer), then the main one: stop accepting,
//     answer late requests SYSTEM_BUSY, let accepted ones finish (bounded
//     by ctx), close the connections. Held pulls are not waited for
//     (their connections close).
//  3. Stop long polling and the client registry: nothing may call into the
//     store or write to a connection any more.
//  4. Persist consumer offsets, subscription groups and topics.
//  5. Close the store: dispatch catches up, final commit and flush,
//     checkpoint, and only then the abort file is removed — the last step,
//     so that a failure anywhere above leaves it and the next start
//     recovers abnormally (always safe).
//
// Shutdown is idempotent; it returns the first error met (the later steps
// still run).
func (b *Broker) Shutdown(ctx context.Context) error {
	b.closeOnce.Do(func() {
		var errs []error
		// The console first: it is an admin client of this broker.
		if err := b.closeConsole(ctx); err != nil {
			errs = append(errs, fmt.Errorf("broker: close console: %w", err))
		}
		errs = append(errs, b.closeMetrics(ctx))
		if err := b.closeGRPC(ctx); err != nil {
			errs = append(errs, fmt.Errorf("broker: close gRPC service: %w", err))
		}
		b.role.Unregister(ctx)
		if err := b.vip.Shutdown(ctx); err != nil {
			errs = append(errs, fmt.Errorf("broker: drain VIP-channel requests: %w", err))
		}
		if err := b.srv.Shutdown(ctx); err != nil {
			errs = append(errs, fmt.Errorf("broker: drain requests: %w", err))
		}
		// The check-back stops after the connections closed (a check
		// blocked on a client that does not read ends with its connection)
		// and before the offsets holding its progress are persisted.
		errs = append(errs, b.txn.Close())
		if b.txnSaver != nil {
			errs = append(errs, b.txnSaver.Close())
		}
		errs = append(errs, b.holder.Close(), b.clients.Close(), b.nsClient.Close())
		// Replication stops once no request runs: a SYNC_MASTER's puts
		// are answered; a slave's last appended bytes get dispatched by
		// the store's close.
		errs = append(errs, b.role.Close())
		errs = append(errs, b.closeDelivery()) // its last puts reach the store
		if b.pop != nil {
			errs = append(errs, b.pop.Close()) // revive progress before the offsets persist
		}
		errs = append(errs, b.offsets.Close(), b.groups.Persist(), b.topics.Persist(), b.stats.Close())
		if err := b.store.Close(); err != nil {
			errs = append(errs, fmt.Errorf("broker: close store: %w", err))
		}
		b.closeErr = errors.Join(errs...)
		b.log.Info("broker: stopped", "addr", b.addr, "err", b.closeErr)
	})
	return b.closeErr
}

// roleChanged serves NOTIFY_BROKER_ROLE_CHANGED. With authentication on
// (controller mode lets it past the guard) a notification the guard would
// refuse is only a hint to ask the controller now
// (role.HandleRoleChangedUnsigned); a signed one is applied.
func (b *Broker) roleChanged(conn *remoting.Conn, req *remoting.Command) *remoting.Command {
	if b.authn != nil && b.authn.Guard(conn, req) != nil {
		return b.role.HandleRoleChangedUnsigned(conn, req)
	}
	return b.role.HandleRoleChanged(conn, req)
}
