// Package grpc serves apache.rocketmq.v2.MessagingService, the gRPC API
// of the RocketMQ 5 SDKs, inside the broker as Java's proxy does in Local
// mode (proxy module: GrpcMessagingApplication and the *Activity
// classes). It has no send or pull path of its own: each RPC is checked
// as the proxy checks it, then turned into the remoting request the
// proxy would build and run by the broker's processors (the Local*
// methods of internal/broker/processor: send, END_TRANSACTION,
// CONSUMER_SEND_MSG_BACK, POP_MESSAGE, ACK_MESSAGE,
// CHANGE_MESSAGE_INVISIBLETIME, PULL_MESSAGE, UPDATE_CONSUMER_OFFSET,
// QUERY_CONSUMER_OFFSET, GET_MIN_OFFSET, GET_MAX_OFFSET,
// SEARCH_OFFSET_BY_TIMESTAMP).
//
// # Types
//
// The protocol types and service stubs are the generated code of
// github.com/apache/rocketmq-clients/golang/v5/protocol/v2, pinned at
// v5.1.4 in go.mod: the same .proto files (apache/rocketmq-apis) the
// Java proxy and every SDK are built from, already generated for Go, so
// the wire format cannot drift from the SDKs' and no protoc step is
// needed. google.golang.org/grpc is the version that SDK release takes.
//
// # Listener
//
// Started by the broker with grpcServerEnable (rocketd serve turns it on
// unless broker.conf sets it) on
// bindAddress:grpcServerPort (8081; rocketd serve --grpc-port) with the
// remoting ports' tls.server.mode: permissive serves TLS (ALPN h2, as
// gRPC clients require; the SDKs dial TLS by default) and plaintext on
// the one port, telling them apart by the first byte; enforcing TLS
// only; disabled plaintext. Bounds: MaxInboundMessageSize (130 MiB, Java's
// grpcMaxInboundMessageSize), MaxConcurrentStreams per connection,
// keepalive pings after 30 s idle (20 s to answer), client pings at most
// every 5 s; fixed 1 MiB flow-control windows per stream and connection
// (grpc-java's, as Java's proxy runs: no BDP pings, which cost a frame
// each way on nearly every small RPC), RPCs run on a pool of
// GOMAXPROCS+128 goroutines (a new one when all are busy; the 128 are for
// the streams that stay open, a Telemetry stream per SDK client and held
// receives, which keep their worker). Close ends held receives and
// telemetry streams, then waits for the running RPCs.
//
// # Authentication
//
// With authenticationEnabled (Config.Auth) a unary and a stream
// interceptor check every request message, as Java's
// AuthenticationPipeline and AuthorizationPipeline do for each message:
// the authorization and x-mq-date-time headers against the broker's users
// (auth.AuthenticateGRPC, see internal/auth), then, with
// authorizationEnabled, the resources the message names (authactions.go:
// Java's DefaultAuthorizationContextBuilder for gRPC) against the same
// ACLs as remoting requests, the source being the connection's address.
// A refusal is the RPC's own response with status UNAUTHORIZED (40100)
// and Java's remark, for authentication and authorization alike: the
// proxy's ResponseBuilder maps both exceptions to UNAUTHORIZED (5.3.x;
// FORBIDDEN is never its answer to an ACL refusal). A refused
// ReceiveMessage answers that one status message and ends; a refused
// Telemetry command is answered with a status command and the stream
// goes on.
//
// # RPCs
//
// Answers carry apache.rocketmq.v2.Code in their Status (never a gRPC
// error), as Java's do; remoting codes map as ResponseBuilder maps them
// (remotingCode).
//
//   - QueryRoute: the topic's NameServer route (this broker's topic config
//     when it has no NameServer), queues numbered read-only, write-only,
//     read-write (RouteActivity). Each broker's endpoint is its own gRPC
//     service: this server's bound address for this broker, the master's
//     host with grpcServerPort for the others. In Local mode every broker
//     runs its own proxy and a message must reach the broker that owns
//     its queue, so a route never names a shared proxy. accept_message_types
//     is the topic's message.type attribute (NORMAL when unset; MIXED
//     accepts all four).
//   - QueryAssignment: one assignment per readable broker (queue -1: the
//     POP service chooses), one per queue for a group that consumes
//     orderly.
//   - Heartbeat: needs the x-mq-client-id header (CLIENT_ID_REQUIRED) and,
//     for consumers, a legal group name. The client is registered in the
//     broker's client registry on a channel of its own (Java's
//     GrpcClientChannel; processor.LocalHeartbeat): a consumer of its group
//     (CONSUME_PASSIVELY, CLUSTERING) with the subscriptions of its
//     settings, or a producer of each topic its settings publish to.
//     Connection queries list it; the idle scan drops it when heartbeats
//     stop; NotifyClientTermination unregisters it. The channel answers
//     NOTIFY_CONSUMER_IDS_CHANGED with nothing (POP needs no rebalance),
//     CHECK_TRANSACTION_STATE on the telemetry stream, and refuses
//     request/response commands (consumer running info, direct consume).
//   - Telemetry: each Settings command is answered with the server's part
//     filled in: for producers validate_message_type=true, max_body_size
//     (maxMessageSize), an exponential 10 ms..1 s backoff; for consumers
//     fifo (the group's consumeMessageOrderly), max attempts
//     retryMaxTimes+1, the group's retry policy as backoff (EXPONENTIAL:
//     exponential, else customized; Java's defaults for a policy without
//     parameters and for a group not created yet: the Java SDK's push
//     consumer refuses settings without a backoff strategy) and a 20 s
//     long polling timeout. The open stream
//     is also the way back to a producer: the broker's transaction
//     check-back (PickProducer, after the remoting producers) sends a
//     half message's CHECK_TRANSACTION_STATE to a producer whose settings
//     publish to its topic as a RecoverOrphanedTransactionCommand (Java's
//     GrpcClientChannel), with the transaction id of the half message's
//     latest copy; the SDK answers with EndTransaction.
//   - SendMessage: SendMessageActivity's checks (body size:
//     MESSAGE_BODY_TOO_LARGE; user properties, tag, keys, message group,
//     message id, delivery time at most 24 h ahead, transaction recovery
//     time at most 1 h), then TOPIC_NOT_FOUND for a topic this broker does
//     not have, then DefaultTopicMessageTypeValidator: the message's type
//     (TRAN_MSG, a delay property, __SHARDINGKEY, else NORMAL) must equal
//     the topic's message.type unless that is MIXED
//     (MESSAGE_PROPERTY_CONFLICT_WITH_TYPE); retry and DLQ topics are not
//     checked. The producer group is the topic (Java's choice). A single
//     message with a message group goes to queue
//     Hashing.consistentHash(group.hashCode(), writeQueueNums), anything
//     else to a random queue; several messages are one
//     SEND_BATCH_MESSAGE. Delays are TIMER_DELIVER_MS (the timer wheel).
//     A transaction's transaction_id is "<offsetMsgId>-<queueOffset>" of
//     its half message: what END_TRANSACTION needs, without the proxy's
//     table.
//   - ReceiveMessage: a POP with queue -1 (orderly for a group with
//     consumeMessageOrderly), initMode MAX, long polling for the request's
//     long_polling_timeout clamped to 5..20 s and to the deadline (less
//     100 ms), waiting in the broker's long-polling holder. invisible
//     duration 10 s..12 h (ILLEGAL_INVISIBLE_TIME); an auto_renew receive
//     (push consumers) with enableProxyAutoRenew gets
//     defaultInvisibleTimeMills (60 s) instead, and its messages are
//     renewed while the client holds them (renew.go, Java's
//     DefaultReceiptHandleManager): each message written to a client
//     with a registry channel is kept under (client id, group, message
//     id, handle); every renewSchedulePeriodMillis (5 s) one goroutine
//     changes the invisible time of those visible within
//     renewAheadTimeMillis (10 s) to 1 m, 3 m, 5 m, 10 m, 30 m, then 1 h
//     (RenewStrategyPolicy). It stops when the client acks, changes the
//     invisible time of or forwards the message (those RPCs then use the
//     message's current handle in place of the one the client sent,
//     waiting for a renewal in flight), when the client is gone
//     (terminated or its heartbeats stopped: visible again after
//     invisibleTimeMillisWhenClear, 1 s), after renewMaxTimeMillis (3 h:
//     visible again after the group's retry delay) or after
//     maxRenewRetryTimes (3) failed renewals. The renewals are in memory,
//     as Java's: after a restart an unacked message is visible again when
//     its last invisible time ends. The stream is a status
//     (OK, MESSAGE_NOT_FOUND "no new message", TOO_MANY_REQUESTS "polling
//     full") then one response per message; messages that cannot be
//     written are made visible again in 1 s. Before answering, a message
//     whose reconsume count reached the consumer's max attempts (the
//     group's retryMaxTimes+1, what the settings' backoff policy says)
//     is forwarded to the group's DLQ and acked instead of delivered
//     (PopMessageResultFilterImpl's TO_DLQ): this ends a FIFO message's
//     redeliveries, which the broker's revive never sees. A message's receipt handle is
//     its POP_CK as Java's client builds it from the response header
//     ("<startOffset> <popTime> <invisibleTime> <reviveQid> <mark>
//     <brokerName> <queueId> <queueOffset>") plus " <commitLogOffset>"
//     (ConsumerProcessor.createHandle); delivery_attempt is the reconsume
//     count + 1 (an orderly pop's count from orderCountInfo). A message
//     revived into the pop retry topic is answered under the requested
//     topic, its handle's mark naming the retry topic.
//   - AckMessage, ChangeInvisibleDuration: the handle's mark gives the
//     real topic (ReceiptHandle.getRealTopic); an unparsable handle is
//     INVALID_RECEIPT_HANDLE. ChangeInvisibleDuration answers the
//     message's new handle (ExtraInfoUtil.buildExtraInfo with the new pop
//     time, start = the message's offset).
//   - ForwardMessageToDeadLetterQueue: CONSUMER_SEND_MSG_BACK with delay
//     level -1 by the handle's commit-log offset, then an ack.
//   - EndTransaction: END_TRANSACTION from the transaction id.
//   - NotifyClientTermination: unregisters and forgets the client.
//   - PullMessage, UpdateOffset, GetOffset, QueryOffset: Apache
//     RocketMQ's proxy (through 5.3.3) has no gRPC activity for them; they
//     follow its ConsumerProcessor (pullMessage, updateConsumerOffset,
//     queryConsumerOffset, getMinOffset, getMaxOffset), as the remoting
//     client's pull consumer uses the broker. Each checks the group name
//     (ILLEGAL_CONSUMER_GROUP), the topic name (ILLEGAL_TOPIC), that this
//     broker has the topic (TOPIC_NOT_FOUND) and the queue id against its
//     read queues (BAD_REQUEST); UpdateOffset and GetOffset also that the
//     group exists or may be created (CONSUMER_GROUP_NOT_FOUND).
//     PullMessage is a PULL_MESSAGE with the request's filter (TAG "*"
//     when none; no heartbeat needed), batch_size messages (32 when 0),
//     no offset commit, held up to long_polling_timeout (at most 20 s,
//     within the deadline) while the queue has nothing beyond the offset.
//     Its stream is a status (OK; MESSAGE_NOT_FOUND for nothing new or
//     nothing matching; ILLEGAL_OFFSET for an offset out of the queue;
//     ILLEGAL_FILTER_EXPRESSION for an unparsable filter), the messages
//     (no receipt handle: a pulled message is not acked), then next_offset
//     whenever the store was read (the corrected offset after
//     ILLEGAL_OFFSET). UpdateOffset stores any offset >= 0 (a lower one is
//     a reset). GetOffset is the group's committed offset; none is
//     OFFSET_NOT_FOUND, except 0 while the queue's first message is in
//     memory, as QUERY_CONSUMER_OFFSET answers. QueryOffset answers the
//     queue's min offset (BEGINNING), max offset (END) or the lower
//     boundary search for timestamp (TIMESTAMP, BAD_REQUEST without one).
//   - RecallMessage: RecallMessageActivity and ProducerProcessor in Local
//     mode: the topic name (ILLEGAL_TOPIC), the topic's message type
//     must be DELAY or MIXED (MESSAGE_PROPERTY_CONFLICT_WITH_TYPE; a topic
//     this broker does not have is UNSPECIFIED, a conflict too), the
//     handle must decode (INTERNAL_SERVER_ERROR "recall handle is
//     invalid"), then the broker's RECALL_MESSAGE (processor.LocalRecall,
//     see package timer "Recall"); every refusal of the broker is
//     INTERNAL_SERVER_ERROR with its remark, as LocalMessageService maps
//     it ("recall failed, operation is forbidden" while
//     recallMessageEnable=false, Java's default; "recall failed,
//     timestamp invalid" once the message's time was reached). OK answers
//     the message id. SendMessage's entry carries the recall_handle the
//     broker answered for a single timer message (none for a batch).
//   - SyncLiteSubscription: NOT_IMPLEMENTED with the reason. It belongs
//     to the lite topics of newer rocketmq-apis, which neither this store
//     nor Apache RocketMQ 5.3 has; the answer lets the SDKs report the
//     missing feature instead of misbehaving.
//
// # RPC table
//
//	RPC                              served                          test (internal/broker unless named)
//	QueryRoute                       yes                             TestGRPCRawReceiveAck, TestGRPCBadInput
//	Heartbeat                        yes                             TestGRPCRawReceiveAck
//	SendMessage                      yes (+ recall_handle)           TestGRPCProducerAndSimpleConsumer, TestGRPCRecallRaw
//	QueryAssignment                  yes                             TestGRPCSDKConsumers
//	ReceiveMessage                   yes                             TestGRPCRawReceiveAck, TestGRPCProducerAndSimpleConsumer
//	AckMessage                       yes                             TestGRPCRawReceiveAck, TestGRPCBadInput
//	ForwardMessageToDeadLetterQueue  yes                             TestGRPCRawReceiveAck
//	PullMessage                      yes                             TestGRPCRawPullAndOffsets
//	UpdateOffset, GetOffset          yes                             TestGRPCRawPullAndOffsets
//	QueryOffset                      yes                             TestGRPCRawPullAndOffsets
//	EndTransaction                   yes                             TestGRPCProducerAndSimpleConsumer/transaction
//	Telemetry                        yes                             TestGRPCRawReceiveAck, TestGRPCTransactionCheck
//	NotifyClientTermination          yes                             TestGRPCRawReceiveAck
//	ChangeInvisibleDuration          yes                             TestGRPCProducerAndSimpleConsumer
//	RecallMessage                    yes (recallMessageEnable=true)  TestGRPCRecallSDK, TestGRPCRecallRaw
//	SyncLiteSubscription             no: NOT_IMPLEMENTED, no lite    TestGRPCBadInput
//	                                 topics in rocketd or Java 5.3
package grpc
