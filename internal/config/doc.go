// Package config holds rocketd's configuration structs, their defaults and
// validation, and the loader for the Java properties files RocketMQ
// operators already have (broker.conf, namesrv.conf).
//
// Shape (style.md §8): plain structs whose zero value means "default",
// EnsureDefaults() to fill them in, Validate() to reject what cannot work.
// Configuration is loaded once in cmd/ and passed down; there are no globals.
//
// File format: java.util.Properties text (see ParseProperties for the exact
// rules: '#'/'!' comment lines, '=' ':' or blank separators, backslash
// continuations and escapes). Bind maps keys onto struct fields by name, as
// RocketMQ maps them onto setters, and returns unknown keys so the caller can
// warn about them.
//
// TLS (tls.go): RocketMQ's tls.* keys (Java reads them as system properties
// and from tls.config.file) are read from broker.conf / namesrv.conf, then
// from tls.config.file (default /etc/rocketmq/tls.properties when it
// exists), whose values win except for tls.server.mode, tls.enable and
// useTLS. Defaults are Java's: permissive, test mode (a self-signed
// certificate made at start). Certificates and keys are PEM; keys PKCS#8
// (plain, or encrypted with PBES2 or PKCS#12 PBE-SHA1-RC4-128/3DES and a
// keyPassword), PKCS#1 or SEC1.
// Settings Java would silently ignore (an unknown mode, certificate paths
// in test mode) are refused. TLS settings are never rendered anywhere
// (GET_BROKER_CONFIG skips them; fields tagged secret are never shown),
// except that GET_BROKER_CONFIG shows useTLS, the effective client
// setting (ClientEnabled), as Java's answer does.
//
// Web console (console.go, rocketd's own keys): consoleEnable (false),
// consoleListenAddr (DefaultConsoleListenAddr, loopback), and
// consoleAccessKey/consoleSecretKey, the credentials the console signs its
// admin calls with whenever set (else, with authenticationEnabled, the
// broker's innerClientAuthenticationCredentials). The secret is never shown.
//
// Keys at start: a key rocketd does not know is accepted and ignored with
// a warning naming it (the caller logs Bind's unknown keys), as a Java
// broker.conf carries many; a known key whose value does not parse or
// cannot work stops the start. Keys tagged `effect:"none"` (forceRegister,
// compressedRegister, transferMsgByHeap, the query and end-transaction
// pools, the heartbeat and transaction queue waits,
// disableConsumeIfConsumerReadSlowly, consumerFallbehindThreshold,
// storePathCommitLog, timerPrecisionMs) are
// parsed and validated but nothing reads them; GET_BROKER_CONFIG leaves
// them out, so its answer lists what rocketd honours, and at start one
// warning names those the file sets (NoEffectBrokerKeys). wiring_test.go
// lists, for every other key, the package that reads it and checks the
// source.
//
// Runtime updates (runtime.go): UPDATE_BROKER_CONFIG and
// UPDATE_NAMESRV_CONFIG go through one Runtime per server. Readers take an
// immutable snapshot with one atomic load; an update checks every key
// first (black-listed: configBlackList plus Java's fixed brokerConfigPath,
// rocketmqHome, configBlackList, and for the NameServer configStorePath and
// kvConfigPath; known but read only at start; unknown: all refused, naming
// the key, and nothing changes), binds the values onto a copy, validates
// it, writes the changed keys to the config file, then publishes the copy
// and bumps the data version GET_*_CONFIG answers. The keys that change
// live:
//
//	broker key                        what reads it (per request)
//	maxMessageSize                    send body limit; at most the value at start
//	                                  (the CommitLog sizes its buffers for it)
//	startAcceptSendRequestTimeStamp   sends before it are refused
//	rejectTransactionMessage          half messages refused
//	enableMixedMessageType            topic attribute message.type=MIXED
//	timerWheelEnable, timerMaxDelaySec  timer messages accepted, longest delay
//	recallMessageEnable, allowRecallWhenBrokerNotWriteable  RECALL_MESSAGE served
//	litePullMessageEnable             LITE_PULL_MESSAGE served
//	slaveReadEnable                   far-behind pulls redirected to a slave
//	enablePropertyFilter              SQL92 subscriptions accepted
//	filterSupportRetry                SQL92 filters judge retry messages
//	useServerSideResetOffset          how a reset offset reaches consumers
//	serverLoadBalancerEnable          QUERY_ASSIGNMENT splits queues
//	defaultMessageRequestMode         PULL or POP for unset topic@group
//	defaultPopShareQueueNum           share number of the default POP mode
//	storeReplyMessageEnable           replies stored in <cluster>_REPLY_TOPIC
//	defaultQueryMaxNum                QUERY_MESSAGE's default result count
//
//	NameServer key                    what reads it
//	orderMessageEnable                route answers (orderTopicConf)
//	scanNotActiveBrokerInterval       the expiry scan, from its next round
//	brokerChannelExpiredTime          the expiry scan, from its next round
//
// Every other broker key (store flush and sizes, ports, identity, pools,
// HA, tls.*, authentication) is read at start only: the store, the
// listeners and the worker pools are built from it once.
//
// Persisted file: the -c file the server started with (namesrv: Java's
// configStorePath, which -c sets), else for the broker
// <storePathRootDir>/config/broker.properties and for the NameServer
// configStorePath ($HOME/namesrv/namesrv.properties); cmd/rocketd reads
// that default file back at start. Only the changed keys are written
// (UpdatePropertiesFile): each replaces its first definition in place,
// comments and other lines stay, new keys are appended; the file is
// replaced atomically (temp file, fsync, rename, fsync of the directory).
// Java instead rewrites the whole file from its merged properties.
//
// gRPC MessagingService (grpc.go): grpcServerEnable (rocketd's own key;
// false, turned on by rocketd serve) and grpcServerPort (Java's proxy key,
// DefaultGrpcServerPort 8081, 1..65535, not listenPort); it listens on
// bindAddress.
package config
