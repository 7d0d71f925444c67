// Package processor holds the broker's request processors, one file per
// request family, following RocketMQ 4.9.8's broker processors
// (rocketmq-spec.md §13, §14; go-client-wire.md for what the Go client
// needs):
//
//	send.go    SEND_MESSAGE (10), SEND_MESSAGE_V2 (310), SEND_BATCH_MESSAGE (320)
//	sendback.go CONSUMER_SEND_MSG_BACK (36): to %RETRY%group with a delay level, or %DLQ%group
//	txn.go     the half-message branch of the send path, END_TRANSACTION (37)
//	request_reply.go SEND_REPLY_MESSAGE (324), SEND_REPLY_MESSAGE_V2 (325):
//	           push to the requester (PUSH_REPLY_MESSAGE_TO_CLIENT, 326), then
//	           store in <cluster>_REPLY_TOPIC when storeReplyMessageEnable
//	pull.go    PULL_MESSAGE (11) with long polling
//	litepull.go LITE_PULL_MESSAGE (361, the 5.x lite pull consumer): the pull path
//	           behind litePullMessageEnable and a check of the required header fields
//	pop.go     POP_MESSAGE (200050) with long polling, ACK_MESSAGE (200051),
//	           BATCH_ACK_MESSAGE (200151), CHANGE_MESSAGE_INVISIBLETIME (200053):
//	           header checks and the pull path's filter here, the rest in package pop
//	assignment.go QUERY_ASSIGNMENT (400), SET_MESSAGE_REQUEST_MODE (401): server-side
//	           rebalance (allocate.go: Java's AVG, AVG_BY_CIRCLE and POP sharing)
//	offset.go  QUERY_CONSUMER_OFFSET, UPDATE_CONSUMER_OFFSET, GET_MAX_OFFSET,
//	           GET_MIN_OFFSET, SEARCH_OFFSET_BY_TIMESTAMP, GET_EARLIEST_MSG_STORETIME
//	client.go  HEART_BEAT, UNREGISTER_CLIENT, GET_CONSUMER_LIST_BY_GROUP,
//	           LOCK_BATCH_MQ, UNLOCK_BATCH_MQ
//	topic.go   UPDATE_AND_CREATE_TOPIC (answers after the NameServer registration
//	           round with the topic, as Java does), DELETE_TOPIC_IN_BROKER,
//	           GET_TOPIC_STATS_INFO
//	replication.go GET_ALL_TOPIC_CONFIG, GET_ALL_CONSUMER_OFFSET, GET_ALL_DELAY_OFFSET,
//	           GET_ALL_SUBSCRIPTIONGROUP_CONFIG (versioned for a rocketd slave:
//	           protocol doc.go, "Slave metadata copy")
//	admin.go   GET_CONSUME_STATS, UPDATE_AND_CREATE_SUBSCRIPTIONGROUP,
//	           GET_CONSUMER_CONNECTION_LIST, GET_PRODUCER_CONNECTION_LIST,
//	           QUERY_TOPIC_CONSUME_BY_WHO, VIEW_MESSAGE_BY_ID
//	brokerconfig.go GET_BROKER_CONFIG, UPDATE_BROKER_CONFIG (live keys: config.Runtime)
//	admin_timer.go GET_TIMER_CHECK_POINT, GET_TIMER_METRICS
//	recall.go  RECALL_MESSAGE (370, 5.3.x): Java's RecallMessageProcessor checks
//	           (recallMessageEnable, master, handle, topic, broker, timestamp),
//	           the recall marker put to the timer topic, then timer.Service.Recall;
//	           a single held timer message's send answers its recallHandle
//	admin_txn.go RESUME_CHECK_HALF_MESSAGE
//	admin_forbidden.go UPDATE_AND_GET_GROUP_FORBIDDEN (pull.go refuses a forbidden group)
//	admin_stats.go GET_BROKER_RUNTIME_INFO (28), VIEW_BROKER_STATS_DATA (315);
//	           stats.go counts puts and pulls into package stats
//	query.go   QUERY_MESSAGE (by KEYS entry or UNIQ_KEY, from the store's key index)
//	filter.go  the TAG subscription filter (FuzzTagFilter, corpus in testdata/fuzz)
//	sqlfilter.go CHECK_CLIENT_CONFIG (46) and the SQL92 filter of pulls
//
// # Families
//
// Each request family is its own type holding only the dependencies its
// handlers use, and routes its own codes (register): sendFamily (send.go),
// pullFamily (pull.go), offsetFamily (offset.go), clientFamily (client.go),
// popFamily (pop.go), authFamily (users.go), and the admin codes in
// topicAdmin (topic.go), groupAdmin (groupconfig.go), consumerAdmin
// (admin.go), brokerAdmin (admin_stats.go), storeAdmin (admin_store.go) and
// messageAdmin (query.go). What several families use is a small shared
// type, not the Processor: base (configuration, role, logger), staticRW
// (static topics' mapping and forwarding) and filters (a pull's message
// filter and the SQL92 expression cache). Processor only composes: New
// builds the families from Deps, Register runs each one's register, the
// Local* methods call the family that serves the code. A new family is one
// type and one line in New, and one row of familyDeps in families_test.go,
// which checks that each family holds exactly what it lists and reads all
// of it, and that every handler is on a family.
//
// # Runtime statistics
//
// Every stored send is counted (package stats: TopicPut) under the
// record's topic after the put (SCHEDULE_TOPIC_XXXX for a delay level, the
// half topic for a prepared message) by its message count and stored
// bytes; a committed transaction under its real topic (txn.Config.
// Committed); a stored reply; a send-back as SNDBCK_PUT_NUMS only; a pull
// answered with messages as GROUP_GET_* of group@topic, any other pull as
// a store miss. The broker counts the delay and timer deliveries under
// their real topic (its countedStore), as Java does; op records and other
// internal puts are not counted. GET_BROKER_RUNTIME_INFO
// answers Java 5.x's keys with these differences: getTransferedTps (the
// 4.x spelling, read by mqadmin 4.9.8 clusterList) is sent besides
// getTransferredTps; the put latency figures time the store call of the
// sends (not of internal puts), getMessageEntireTimeMax the pulls from
// their arrival (Java: the store call), dispatchMaxBuffer is 0 as in Java
// (nothing raises it); the *HeadWaitTimeMills
// are 0 (queued requests carry no time unless brokerFastFailureEnable);
// lite pulls wait in the pull queue and END_TRANSACTION in the send queue,
// whose lengths their keys repeat. The broker adds (Deps.RuntimeExtras)
// scheduleMessageOffset_<level> and the timer figures; without it the
// timer keys have Java's values for timerWheelEnable=false.
//
// Protocol statuses are response codes, never Go errors: a header that does
// not decode is answered SYSTEM_ERROR with the decoder's text (Java's
// processors throw, and the transport answers the exception the same way);
// a store status is mapped to the code Java's broker answers with.
//
// # Send responses
//
// Every send response carries the ext fields MSG_REGION and TRACE_ON, also on
// errors (the Java client reads the map unconditionally), and msgId (the
// offset message id: store host + CommitLog offset, comma-joined for a
// batch), queueId and queueOffset whenever the message was stored, including
// FLUSH_DISK_TIMEOUT, FLUSH_SLAVE_TIMEOUT and SLAVE_NOT_AVAILABLE. The
// stored properties are the producer's with CLUSTER, MSG_REGION (regionId)
// and TRACE_ON (traceOn) set as Java 5.x sets them, replacing a producer's
// own, and WAIT removed (WAIT=false still makes the put answer before the
// flush); a batch item gets them with the batch-level properties. Java's
// broker does not check a message against its topic's message.type (its
// 5.x proxy does), and neither does rocketd.
//
// # Topic and group attributes
//
// UPDATE_AND_CREATE_TOPIC applies its header's attributes text
// ("+message.type=FIFO,-reserve.time") with Java 5.x's rules and messages
// (meta.ParseAttributeChanges, meta.AlterTopicAttributes; refusals are
// SYSTEM_ERROR with Java's text; MIXED needs enableMixedMessageType;
// queue.type=BatchCQ and cleanup.policy=COMPACTION are refused since the
// store has neither); a request that changes nothing is answered without
// a new DataVersion or registration. GET_TOPIC_CONFIG (351, topicconfig.go)
// answers one topic's config, attributes included, as Java's
// TopicConfigAndQueueMapping, with this broker's mapping detail of a
// static topic when asked (lo=true). UPDATE_AND_CREATE_STATIC_TOPIC (513,
// statictopic.go) updates a static topic's config and mapping
// (meta.Mappings) together or, refused, neither; DELETE_TOPIC_IN_BROKER
// drops the mapping too. A send to a static topic names a logic queue
// (logicqueue.go): it goes to the physical queue of the chain's leader
// and is answered with the logic queue and logic offset; a logic queue led
// by another broker gets NOT_LEADER_FOR_QUEUE, as in Java. Pulls and
// offset requests still take the queue id as a physical one (in a cluster
// of one broker group updateStaticTopic maps logic queue i to physical
// queue i, gen 0, so both agree), the lo header (false: a broker's
// forwarded request) is not read, and registrations do not carry the
// mapping to the NameServers yet.
// UPDATE_AND_CREATE_TOPIC_LIST (18, topiclist.go) does the same for each
// config of its body (the attributes map is the modification), checking
// them all before applying any; unlike Java it does not stop at a config
// equal to the current one, and refuses a topic named twice.
// GET_SUBSCRIPTIONGROUP_CONFIG (352, groupconfig.go) answers one group's
// config without creating it.
// UPDATE_AND_CREATE_SUBSCRIPTIONGROUP stores the whole 5.x group config;
// retryMaxTimes decides the DLQ (send.go, sendback.go), consumeEnable and
// consumeBroadcastEnable gate pulls (pull.go); consumeMessageOrderly,
// groupRetryPolicy and consumeTimeoutMinute are stored and returned (Java's
// broker reads them only for its proxy and pop paths).
//
// The send codes are registered with HandleLazyExt: the request header is
// read where it arrived (SendMessageRequestHeader.DecodeFrom), and the
// response header is a typed encoder (send_reply.go) that writes the same
// bytes the map would, so a send builds no ext map either way; the request
// header, the response and its header are one allocation.
//
// Half messages (TRAN_MSG=true) go to the transaction service (txn.go,
// internal/broker/txn): stored in RMQ_SYS_TRANS_HALF_TOPIC queue 0, the
// response carrying the half record's msgId and half-queue offset and the
// queue id the producer asked for. With rejectTransactionMessage=true, or
// without a transaction service (Deps.Txn nil), they are refused with
// NO_PERMISSION.
//
// # Pull responses
//
// nextBeginOffset, minOffset, maxOffset and suggestWhichBrokerId are always
// present (the Go client reads a missing nextBeginOffset as 0 and rewinds).
// The body is the stored records back to back; the remark is the store
// status name. Store statuses map to codes as a master does (§13.1):
//
//	FOUND                                   SUCCESS
//	NO_MATCHED_MESSAGE, MESSAGE_WAS_REMOVING PULL_RETRY_IMMEDIATELY
//	NO_MESSAGE_IN_QUEUE, NO_MATCHED_LOGIC_QUEUE
//	                                        PULL_NOT_FOUND at offset 0, else PULL_OFFSET_MOVED
//	OFFSET_OVERFLOW_ONE, OFFSET_FOUND_NULL   PULL_NOT_FOUND
//	OFFSET_TOO_SMALL, OFFSET_OVERFLOW_BADLY  PULL_OFFSET_MOVED
//
// OFFSET_OVERFLOW_BADLY (past the end) moves the consumer to the max
// offset, as 5.x and 4.9.4+ do, even when the min offset is 0 (older 4.x
// sent it back to 0, so it read the whole queue again).
//
// A master that answers PULL_OFFSET_MOVED also stores an OffsetMovedEvent
// (JSON, tag and key = group) in OFFSET_MOVED_EVENT, as Java does.
//
// A PULL_NOT_FOUND with the suspend flag is held by the longpoll.Holder
// (capped at its MaxSuspend, 20 s, below the clients' 30 s timeout) and
// re-run when dispatch announces a matching message or the hold ends; the
// re-run neither holds again nor commits the offset again.
//
// The subscription comes from the request when it has the subscription flag
// (pull consumers), otherwise from the group's heartbeat (push consumers,
// the Go client always). Tag matching: see tagFilter — the ConsumeQueue's
// Java hash, or the Go client's UTF-8 hash, then an exact TAGS comparison.
//
// A SQL92 subscription (internal/broker/filter) is evaluated over each
// record's properties (TAGS included). Its compiled form comes from the
// pull itself (compiled through a 100-entry cache) or from the heartbeat
// (compiled once per subscription version by the client registry), in
// Java's order of answers: SUBSCRIPTION_PARSE_FAILED (23) for a carried
// expression that does not compile, SUBSCRIPTION_NOT_LATEST, then
// FILTER_DATA_NOT_EXIST (27) when the heartbeat's never compiled,
// FILTER_DATA_NOT_LATEST (28) when the compiled one is older than the
// pull's subVersion, and SYSTEM_ERROR while enablePropertyFilter is false.
// With filterSupportRetry, a SQL92 pull of %RETRY%group judges each message
// by the group's filter of its RETRY_TOPIC (ExpressionForRetryMessageFilter).
// A held SQL92 pull wakes on an arrival whose tags code the expression
// admits (filter.Expr.MayMatchTagsCode: only an expression that requires
// TAGS = 'x' or TAGS IN (...) refuses any; arrivals carry no other
// properties); the re-run filters, and one that found nothing answers
// PULL_RETRY_IMMEDIATELY past the skipped messages, as Java's does.
//
// CHECK_CLIENT_CONFIG (Java clients, before a SQL92 consumer starts)
// answers SUCCESS for TAG or no subscription, SYSTEM_ERROR "The broker does
// not support consumer to filter message by SQL92" while
// enablePropertyFilter is false, SUBSCRIPTION_PARSE_FAILED with the
// compiler's message for a bad expression.
//
// # Server-side rebalance
//
// QUERY_ASSIGNMENT's body is JSON {topic, consumerGroup, clientId,
// strategyName, messageModel}; the answer {messageQueueAssignments:
// [{messageQueue, mode}]}, or {} where Java answers null (unknown topic,
// strategy or group, no client id): the client then keeps its queues.
// The queues are the readable queues of the topic's route, asked of the
// NameServer on each query (Deps.TopicRoute; Java caches it for 30 s), so
// every broker's queues are split; a broker without NameServer uses its
// own topic config.
// serverLoadBalancerEnable=false gives every client every queue.
// SET_MESSAGE_REQUEST_MODE's body {topic, consumerGroup, mode PULL|POP,
// popShareQueueNum} is kept in config/messageRequestMode.json (meta);
// topic@groups without one get defaultMessageRequestMode (retry topics
// always PULL). Malformed bodies are answered SYSTEM_ERROR naming the
// field.
//
// # Offsets
//
// QUERY_CONSUMER_OFFSET answers a stored offset; otherwise 0 when the queue
// still starts at 0 and its first message is in memory (Java's rule, so a
// new group with CONSUME_FROM_LAST_OFFSET reads a young queue from the
// start); otherwise QUERY_NOT_FOUND (22), which makes clients fall back to
// their consume-from-where.
//
// # Request-reply
//
// A requester (DefaultMQProducer.request, the Go client's Request) sends
// an ordinary message carrying CORRELATION_ID, REPLY_TO_CLIENT (its client
// id) and TTL; the replier answers with MessageUtil.createReplyMessage:
// topic <CLUSTER>_REPLY_TOPIC (the CLUSTER property the send path added to
// the request), MSG_TYPE=reply, code 324/325. The broker finds the
// requester's heartbeat channel by REPLY_TO_CLIENT and sends it
//
//	code 326, extFields ReplyMessageRequestHeader (the send header's fields
//	as long keys, properties + PUSH_REPLY_TIME, bornHost, storeHost,
//	storeTimestamp), body as sent
//
// waiting at most 10 s. The replier's answer is SUCCESS (msgId "0",
// queueOffset 0 unless stored) only if that push succeeded; otherwise
// SYSTEM_ERROR with Java's remarks: "reply message
// properties[REPLY_TO_CLIENT] is null", "push reply message fail, channel
// of <id> not found.", "push reply message to <id>fail.". A reply is
// stored (when enabled) whether or not the push succeeded, with its
// property string unchanged and only the compression bits of its sysFlag
// (Java stores 0, which leaves a compressed reply unreadable). A request missing a required send-header key
// is answered SYSTEM_ERROR "the custom field <key> is null".
package processor
