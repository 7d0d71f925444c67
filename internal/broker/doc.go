// Package broker wires a RocketMQ broker (master or slave) together: the remoting
// server with the processors (internal/broker/processor), the message store,
// the metadata tables (internal/broker/meta), the client registry
// (internal/broker/client), long polling (internal/broker/longpoll) and the
// registration with the NameServers.
//
// # Wiring
//
//	remoting.Server ── families (bounded worker pools; SYSTEM_BUSY when full)
//	  send            SEND_MESSAGE(_V2), SEND_BATCH_MESSAGE, END_TRANSACTION
//	  pull            PULL_MESSAGE
//	  consumerManage  QUERY/UPDATE_CONSUMER_OFFSET, GET_CONSUMER_LIST_BY_GROUP
//	  heartbeat       HEART_BEAT, UNREGISTER_CLIENT
//	  admin           topics, offsets by queue, locks, stats, everything else
//	store arrival listener ──> longpoll.Holder.Notify (held pulls wake) and
//	                           pop.Service.Arrived (held pops wake: negative queue keys)
//	pop.Service            ──> POP consumption: check points and acks in
//	                           rmq_sys_REVIVE_LOG_<cluster>, a revive goroutine
//	                           (every reviveInterval), consumerOrderInfo.json
//	connection closed      ──> client.Registry.RemoveChannel, Holder.DropConn
//	meta.Topics.OnChange   ──> registration round (role: kick)
//	meta.Offsets           ──> consumerOffset.json every flushConsumerOffsetInterval (5 s)
//	txn.Service (txn.go)   ──> half messages and END_TRANSACTION; on a master a
//	                           check-back goroutine (every transactionCheckInterval)
//	                           asks client.Registry.PickProducerChannel's connection
//
// # NameServer registration and roles
//
// internal/broker/role owns what the broker is now (master or slave): its
// replication (HA server or client), a slave's copy of its master's
// metadata and the NameServer registration (role doc.go). The broker hands
// it the store and the metadata tables (role.Tables); it needs nothing
// else of the Broker. The services a master runs beside replication
// follow a runtime role change through role.MasterServices
// (roleservices.go): a promotion starts the delay-level and timer
// delivery and the transaction check-back, once the store takes puts; a
// demotion stops them, and they save their progress, before it refuses
// puts. The timer of a promoted slave goes on from its old master's
// checkpoint, which the slave copies (GET_TIMER_CHECK_POINT) into
// <storePathRootDir>/config/masterTimerCheckpoint (Java's 56-byte
// TimerCheckpoint, protocol.TimerCheckpoint); its own timerbuckets
// directory, of an earlier term as master if any, is dropped. The POP
// service still runs only on a broker started as master.
//
// # Addresses
//
// The broker listens on listenPort (or Config.ListenAddr) and advertises
// brokerIP1 with the port actually bound: that address goes to the
// NameServers and into every stored record as the store host, so offset
// message ids point back at this broker.
//
// The main and HA ports listen on bindAddress (empty: all interfaces). The tls.*
// settings (config.TLSConfig) give them the same TLS policy
// (remoting.TLSListener: disabled, permissive or enforcing) and decide
// whether the NameServer, HA and slave-sync connections use TLS (tls.go).
//
// It also listens on listenPort-2 (same bind address and TLS policy), the VIP channel (Java's
// fastRemotingServer, vip.go): clients with sendMessageWithVIPChannel
// (the default before client 4.5.1, and rocketmq-dashboard's) derive that
// port from the registered address and send and make admin calls there.
// It serves the same handlers on workers of its own, except the consuming
// codes (PULL_MESSAGE, LITE_PULL_MESSAGE, POP_MESSAGE, PEEK_MESSAGE,
// NOTIFICATION, POLLING_INFO: REQUEST_CODE_NOT_SUPPORTED, as in Java). As in
// Java there is no key for it and nothing extra is registered; a port
// below 0 becomes 0 (ephemeral: with Config.ListenAddr port 0 in tests the
// VIP port is ephemeral too and never collides), and a taken port fails
// the start. It stops with the main server, just before it.
//
// # Authentication
//
// With authenticationEnabled=true (broker.conf, internal/auth) every
// request must carry the signature of an enabled user of
// <storePathRootDir>/config/users.json, checked by the remoting server's
// guard before any handler (the "starting" one included): otherwise
// NO_PERMISSION with Java's remark. The broker's own requests
// (registration, slave metadata sync) are signed with
// innerClientAuthenticationCredentials, which also answer a master's HA
// challenge (ha doc.go, "Authentication"); the users named by
// initAuthenticationUser and innerClientAuthenticationCredentials are
// created at start. Users are managed with the user admin requests
// AUTH_CREATE_USER .. AUTH_LIST_USER (3001-3005, processor/users.go:
// mqadmin's createUser ... listUser), authentication on or off; with
// authentication on only SUPER users may send them (Java lets any user
// through while authorization is off, and GET_USER returns passwords). A
// slave copies its master's users and ACLs every slave full-sync interval
// (10 s) with AUTH_LIST_USER and AUTH_LIST_ACL signed by its inner
// credentials (slavesync_auth.go; Java 5.3 copies neither), so a change is
// made on the master; the start-up users are created on each broker. rocketd serve shares the broker's
// Authenticator with its NameServer (Config.Authenticator).
//
// With authorizationEnabled=true (which needs authentication) the same
// guard then checks each request against the ACL of its user
// (<storePathRootDir>/config/acls.json; the rules and remarks are in
// auth's doc.go), the Cluster resource of cluster-wide codes being
// brokerClusterName. ACLs are managed with AUTH_CREATE_ACL ..
// AUTH_LIST_ACL (3006-3010, processor/acls.go: mqadmin's createAcl ...
// listAcl), SUPER users only, authorization on or off.
// migrateAuthFromV1Enabled imports ACL 1.0's plain_acl.yml at start.
//
// # Metrics (metrics.go)
//
// With metricsExporterType=PROM the broker serves Prometheus metrics
// (internal/metrics: RocketMQ 5's families and rocketmq-exporter's) on
// metricsPromExporterHost:metricsPromExporterPort (127.0.0.1:5557 by
// default; Config.MetricsAddr in tests), plus /debug/pprof/ with
// metricsPprofEnable. The scrape reads the store, the metadata and the
// client registry (metricsSource); both remoting servers report every
// answered request to rocketmq_rpc_latency. With tls.server.mode=enforcing
// the listener serves HTTPS only (the broker's certificate); otherwise
// plain HTTP. OTLP_GRPC and LOG are refused at start. The message and byte
// counts are the runtime statistics' (package broker/stats). The
// transaction and DLQ families are counted as things happen
// (metrics.Events): the transaction service reports half messages stored,
// settled and discarded (txn.Observer), the send-back and %RETRY% send
// paths and the POP revive service report DLQ stores, the POP service
// its revive log records put and read (pop.ReviveObserver); the revive
// lag is read from the POP service at scrape time. The half-message
// counts are saved to <storePathRootDir>/config/transactionMetrics (Java's
// file and JSON) every transactionMetricFlushInterval (10 s, an owned
// goroutine, as Java's TransactionMetricsFlushService) and at a clean
// close, and loaded at start. After a crash (the store's last exit not
// clean) they are rebuilt before any request is served from the half
// and op queues (txn.Service.CountLive, one read from the check
// progress to the queues' ends); only if that fails are the saved counts
// used, missing what changed in the last interval before the crash.
// The timer families are read from the timer at scrape time.
//
// # Lifecycle
//
// Start opens everything in dependency order and undoes what it did on
// error; Shutdown stops in the order of architecture.md (see its comment).
package broker
