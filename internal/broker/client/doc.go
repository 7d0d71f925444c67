// Package client is the broker's registry of its clients: Java's
// ProducerManager, ConsumerManager (with ConsumerGroupInfo) and
// RebalanceLockManager, with the ClientHousekeepingService scan
// (rocketmq-spec.md §4.5, §4.6, §13.3; go-client-wire.md §5, §6.2, §9.2).
//
// # Tables
//
//	producers: group -> { Channel -> clientID, language, version, last heartbeat }
//	consumers: group -> { Channel -> clientID, language, version, last heartbeat }
//	                    + subscriptions topic -> SubscriptionData
//	                    + filters topic -> compiled SQL92 expression and its subVersion
//	                      (compiled when a heartbeat brings a new version; one that does
//	                      not compile keeps the previous filter, as Java's ConsumerFilterManager)
//	                    + consumeType, messageModel, consumeFromWhere (latest heartbeat)
//	locks:     group -> { MessageQueue -> owner clientID, last renewal }
//	producer index: clientID -> { Channel -> number of groups }
//
// The producer index is Java's clientChannelTable: SEND_REPLY_MESSAGE
// finds the requester by the reply's REPLY_TO_CLIENT (its client id) and
// PushReply sends it PUSH_REPLY_MESSAGE_TO_CLIENT (326) there, waiting at
// most ReplyPushTimeout (10 s, Java's callClient) with no lock held.
//
// A Channel is the connection a heartbeat came on (*remoting.Conn). Clients
// are keyed by channel, not by client id, as Java keys them by Netty
// channel: a client that dials this broker on two addresses has two
// channels, and a closed connection can be removed without knowing who was
// on it.
//
// # Life of a channel
//
//   - HEART_BEAT registers it in each producer group (RegisterProducer)
//     and consumer group (RegisterConsumer) of the body, refreshing its
//     heartbeat time.
//   - UNREGISTER_CLIENT removes it from the named groups (Java clients
//     send it on shutdown; the Go client never does).
//   - A closed connection is removed from every group at once
//     (RemoveChannel, wired to remoting.Server.OnConnClose).
//   - The idle scan (every ScanInterval, 10 s) removes channels without a
//     heartbeat for ChannelExpiry (120 s) and closes their connections.
//
// A consumer group without channels is forgotten, subscriptions included;
// so is an empty producer group.
//
// # NOTIFY_CONSUMER_IDS_CHANGED
//
// When a consumer group gains or loses a channel, or a topic enters or
// leaves its subscription table, every channel the group has afterwards is
// sent a oneway request (the clients react by rebalancing at once instead
// of on their 20 s timer):
//
//	code 40 (NOTIFY_CONSUMER_IDS_CHANGED), flag oneway,
//	extFields {"consumerGroup": <group>}, no body
//
// only if the group's notifyConsumerIdsChangedEnable is true (the
// heartbeat and unregister paths pass it in, close and expiry ask
// Config.NotifyEnabled) and the broker's is too (Config.NotifyDisabled
// false; ConfigFromBroker maps broker.conf). Sends happen on the registry's notifier
// goroutines, never under a table lock and never on the caller's
// goroutine; queued duplicates (same channel and group) are merged, and a
// full queue drops the notification (logged).
//
// # Rebalance locks
//
// Locks implements LOCK_BATCH_MQ / UNLOCK_BATCH_MQ: a queue is granted to
// a client when unowned, already its own (renewal), or its owner's lock is
// older than LockMaxLive (60 s); the reply lists the queues the caller
// holds now. Only the owner can unlock. The idle scan also forgets expired
// locks.
//
// # Concurrency
//
// Producers, consumers, locks and the notifier each have their own mutex;
// no method holds two of them at once, and none is held across a
// Channel's I/O (InvokeOneway, Close) or a call of Config.NotifyEnabled. Lookups on the pull path
// (FindSubscription) take a read lock and allocate nothing.
package client
