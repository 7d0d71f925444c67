// Package role is the broker's role in its broker group and what comes
// with it: on a master the HA server, on a slave the HA client and the
// copy of the master's metadata (slaveSync), and on both the registration
// with the NameServers (registrar). The broker wires it: New before the
// store opens (a master's store waits on the HA server, a slave's refuses
// puts), StartHA on the opened store, Start on the opened metadata tables
// (Tables: narrow interfaces over internal/broker/meta and internal/auth),
// Unregister and Close at shutdown. Role holds no pointer to the Broker.
//
// # Role changes at runtime (change.go)
//
// Role is the one owner of what the broker is now: a state (role, brokerId,
// epoch and the services of that role) replaced whole under Role.mu, read
// without a lock. BecomeMaster(epoch) stops a slave's metadata copy and HA
// client, lets the store take puts (store.BecomeMaster: dispatch caught up,
// next queue offsets rebuilt), starts the HA server and registers with
// brokerId 0; a promoted SLAVE runs as ASYNC_MASTER (a configured master
// keeps its brokerRole). BecomeSlave(masterAddr, masterHAAddr, brokerId,
// epoch) makes the store refuse puts and waits for the ones in flight
// (store.BecomeSlave: each admitted put is written whole and answered, a
// SYNC_MASTER's after its replica wait on the still running HA server),
// stops the HA server, starts the HA client and the metadata copy towards
// the named master (which haMasterAddress and the NameServer's answers no
// longer override) and registers with brokerId. Both return after a
// registration round that began after the change, so the NameServers route
// by the new role when they return. A promotion to epoch e > 0 records e
// in the store's epoch file from the CommitLog's end (entries of e and
// later dropped first, as Java's changeToMaster); a master ordered to a
// newer epoch records it the same way; epoch 0 (no controller) writes
// nothing. A change to an epoch below the
// current one is refused (StaleEpochError); concurrent calls are
// serialized. The processors read the role through Role.BrokerRole
// (processor.Deps.Role). The services a master runs beside replication
// (Config.Services, MasterServices: the delay/timer delivery and the
// transaction check-back) follow the runtime role: BecomeMaster starts
// them once the store takes puts (if they fail to start, the promotion
// is undone as when the store cannot take puts), BecomeSlave stops them
// before the store refuses puts. What still follows broker.conf's role
// and not the runtime one: the POP service runs only on a broker started
// as master.
//
// # Controller mode (controller.go, metadata.go, syncstate.go, variant.go)
//
// With enableControllerMode=true the controller group of controllerAddr
// names the role, as Java's ReplicasManager: the broker starts undecided
// (store refusing puts, nothing replicating, no NameServer registration),
// takes its brokerId from the metadata file <storePathRootDir>/brokerIdentity
// ("cluster#broker#id", Java's BrokerMetadata), else applies for the one
// GET_NEXT_BROKER_ID names with APPLY_BROKER_ID and a registerCheckCode
// ("addr;millis", kept first in brokerIdentity-temp so that a crash
// re-applies with the same code), registers with
// REGISTER_BROKER_TO_CONTROLLER and takes the role the answer names
// (CONTROLLER_ELECT_MASTER when the set has none). One loop then applies
// NOTIFY_BROKER_ROLE_CHANGED (pushed by the controller; an older master
// epoch than the one followed is fenced) and GET_REPLICA_INFO every
// syncBrokerMetadataPeriod; a newer epoch naming this broker is
// BecomeMaster(epoch), naming another BecomeSlave of it. Another loop
// sends BROKER_HEARTBEAT to every controller each brokerHeartbeatInterval
// (epoch file's last epoch, CommitLog end, confirm offset,
// brokerElectionPriority, controllerHeartBeatTimeoutMills).
//
// Controller mode replicates with RocketMQ 5's AutoSwitch HA protocol
// (internal/ha, doc.go "AutoSwitch mode"; variant.go); master/slave mode
// without a controller stays on the classic one. A slave of a
// controller-named master first asks it for its epoch file
// (GET_BROKER_EPOCH_CACHE, which every controller-mode broker serves,
// with rocketd's haServerAddr member naming the HA address) until the
// file holds the epoch followed; its HA client then handshakes with its
// brokerId, refuses a master older than that epoch, cuts the store to
// the consistent point of the two epoch files before it reports anything
// (no local epochs: a new replica, nothing cut; no shared epoch: it
// replicates nothing and says why) and appends each epoch's entry as the
// epoch's first bytes arrive. syncFromLastFile and asyncLearner are the
// handshake's flags.
//
// A master keeps the SyncStateSet: its HA server knows each slave's ack
// and caught-up time by brokerId and proposes the set
// (ha.Server.ProposeSyncStateSet: Java's maybeShrinkSyncStateSet and
// maybeExpandInSyncStateSet, the one copy of those rules), every
// checkSyncStateSetPeriod and whenever a slave connects, disconnects or
// catches up (OnSlaveChange; at most once a second after a refusal); a
// change goes through ALTER_SYNC_STATE_SET with both epochs and, once
// accepted, to the HA server (SetSyncStateSet). With
// allAckInSyncStateSet=true a put waits in the HA server for every
// member's ack; else brokerRole's SYNC_MASTER/ASYNC_MASTER rule over any
// slave. While the set is smaller than minInSyncReplicas a put that waits
// is refused before it is written, IN_SYNC_REPLICAS_NOT_ENOUGH
// (inSyncPolicy), as Java's CommitLog does.
//
// authenticationEnabled in controller mode is Java 5.x's: the broker's
// remoting ports check every request; the broker signs what it sends (the
// controller requests, the NameServer's, the slave's to its master) with
// innerClientAuthenticationCredentials, as Java's BrokerOuterAPI does
// (AclClientRPCHook); the controller checks nothing (neither Java's nor
// rocketd's); the AutoSwitch HA port has no authentication, as Java's
// has none and Java's slaves could not answer a challenge: the broker
// warns at start naming it, to be firewalled. The controllers'
// NOTIFY_BROKER_ROLE_CHANGED is unsigned: its content is not trusted,
// it only makes the broker ask the controller at once
// (HandleRoleChangedUnsigned).
//
// # NameServer registration
//
// One goroutine (registrar) sends REGISTER_BROKER to every address of
// namesrvAddr in parallel: at start, every registerNameServerPeriod (30 s,
// clamped to [10 s, 60 s] as Java does) and after every topic change (a
// slave's table changes when it copies its master's). UPDATE_AND_CREATE_TOPIC
// answers only after a round with the new topic ended (Role.AwaitRegistration),
// as Java's registers before it answers: an acknowledged topic is routed
// even if the master dies right after. The body is the
// fastjson RegisterBrokerBody (topic table + data version) and the header
// carries its masked CRC32 (bodyCrc32). Shutdown sends UNREGISTER_BROKER.
// A slave learns its master's addresses from the answers: until it has,
// it registers again after 1, 2, 4 and then every 5 s (a slave started
// before its master would otherwise wait for the 30 s period), and while
// its master does not answer it registers again at 1, 2, 4 ... 30 s, so
// that a NameServer without the master routes the slave's topics to it.
//
// # Roles (role.go, slavesync.go)
//
// Every master runs the HA server (internal/ha) on haListenPort
// (listenPort+1; an ephemeral port when Config.ListenAddr has port 0) and
// advertises it as haServerAddr; the store waits on it after each put, which
// on a SYNC_MASTER means until a slave acked the message. A slave
// (brokerId >= 1) opens its store refusing puts, replicates from
// haMasterAddress or the haServerAddr the NameServer's registration answer
// names, serves pulls, and copies the master's topics, subscription groups,
// consumer and delay offsets (slaveSync, main port of the registration
// answer's masterAddr), and the master's timer checkpoint
// (GET_TIMER_CHECK_POINT, Java's 56-byte body kept as is in
// Tables.TimerCheckpointPath; a master without a timer answers
// SYSTEM_ERROR and nothing is copied), from which a promoted slave's
// timer goes on. It polls every 500 ms (Config.SlaveSyncInterval)
// with the version of each table it holds; a rocketd master answers an
// unchanged table with an empty body and consumer offsets with the entries
// changed since, so a change reaches the slave within about a second. A
// master whose answers carry no version (Java) is polled every 10 s, as a
// Java slave polls (protocol doc.go, "Slave metadata copy").
//
// # What a promoted slave holds
//
// BecomeMaster stops the copy and keeps what it copied: the topics,
// subscription groups and consumer offsets in the tables the processors
// serve, delayOffset.json and the timer checkpoint, from which the
// delivery started by MasterServices goes on. It does not copy once more
// (the old master is usually gone, and asking a host that does not
// answer would hold the promotion up); Java's ReplicasManager.changeToMaster
// does not either, and its slave copies every 10 s (checked every 3 s)
// where this one polls every 500 ms. What the old master changed after
// the slave's last poll is not on the new master: consumer offsets
// committed in that window (the group consumes those messages again:
// TestControllerModeConsumersContinue bounds the replay by the Go
// client's 5 s commit interval plus the poll period; it measures about
// 0.3 s, since the Go client also commits with each pull), delay offsets
// (delay-level messages delivered again), and topics or groups created
// in the last poll interval before the master died (missing on the new
// master until created again).
package role
