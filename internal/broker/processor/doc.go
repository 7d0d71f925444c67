// Package processor holds the broker's request processors, one file per
// request family, following RocketMQ 4.9.8's broker processors
// (rocketmq-spec.md §13, §14; go-client-wire.md for what the Go client
// needs):
//
//	send.go    SEND_MESSAGE (10), SEND_MESSAGE_V2 (310), SEND_BATCH_MESSAGE (320)
//	sendback.go CONSUMER_SEND_MSG_BACK (36): to %RETRY%group with a delay level, or %DLQ%group
//	txn.go     the half-message branch of the send path, END_TRANSACTION (37)
//	pull.go    PULL_MESSAGE (11) with long polling
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
//	admin.go   GET_CONSUME_STATS, GET_BROKER_RUNTIME_INFO,
//	           UPDATE_AND_CREATE_SUBSCRIPTIONGROUP,
//	           GET_CONSUMER_CONNECTION_LIST, GET_PRODUCER_CONNECTION_LIST,
//	           QUERY_TOPIC_CONSUME_BY_WHO, VIEW_MESSAGE_BY_ID
//	brokerconfig.go GET_BROKER_CONFIG
//	query.go   QUERY_MESSAGE (by KEYS entry or UNIQ_KEY, from the store's key index)
//	filter.go  the TAG subscription filter (FuzzTagFilter, corpus in testdata/fuzz)
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
// stored properties are the producer's with CLUSTER added and WAIT removed
// (WAIT=false still makes the put answer before the flush).
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
// # Offsets
//
// QUERY_CONSUMER_OFFSET answers a stored offset; otherwise 0 when the queue
// still starts at 0 and its first message is in memory (Java's rule, so a
// new group with CONSUME_FROM_LAST_OFFSET reads a young queue from the
// start); otherwise QUERY_NOT_FOUND (22), which makes clients fall back to
// their consume-from-where.
package processor
