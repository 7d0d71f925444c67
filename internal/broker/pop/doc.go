// Package pop serves RocketMQ 5's POP consumption over remoting
// (POP_MESSAGE 200050, ACK_MESSAGE 200051, CHANGE_MESSAGE_INVISIBLETIME
// 200053, BATCH_ACK_MESSAGE 200151): the broker, not the client, keeps
// each group's position, hands messages out for an invisible time and
// makes the unacked ones visible again (Java's PopMessageProcessor,
// AckMessageProcessor, ChangeInvisibleTimeProcessor, PopReviveService,
// QueueLockManager, ConsumerOrderInfoManager). The processor decodes the
// requests and builds the filter (the pull path's); this package does the
// rest.
//
// # Pop
//
// A pop reads one queue, or every readable queue of the topic (queueId
// -1, starting at a random one), under a per topic@group@queue lock (a
// busy queue is skipped). In popFromRetryProbability percent of the pops
// the group's pop retry topic is read first, else after the topic when the
// batch is not full (never for an orderly pop). The queue's position is
// the group's consumer offset in consumerOffset.json; a group without
// one starts at the queue's min offset with initMode MIN (1) or in a
// retry topic, at 0 while the queue still starts at 0 (Java's
// initPopOffsetByCheckMsgInMem), else at the last message.
//
// For each queue that yields messages a check point ("ck" record, below)
// is stored, waiting for the store, before the consumer offset moves past
// the messages: nothing is handed out that no check point can bring back.
// Messages the filter skips move the offset at once.
//
// Pop retry topics are %RETRY%<group>_<topic> (Java's v1 naming, the
// default) or %RETRY%<group>+<topic> with enableRetryTopicV2. They are
// created with one queue when the revive service first writes to them;
// their messages are answered with the retry topic as stored (Java's
// popResponseReturnActualRetryTopic): the client maps them back with the
// receipt handle's mark.
//
// A pop that finds nothing with pollTime > 0 waits in the broker's
// long-polling Holder on the topic with a negative queue key (HoldQueue:
// -1 for a pop of every queue, -2-q for queue q) so that pulls and pops
// never share a key; Service.Arrived, the store's arrival listener, wakes
// those whose filter may match the arrival's tags code (an arrival in a
// pop retry topic wakes the pops of its topic; an ack that unblocks an
// orderly queue wakes its pops with WakeAll). The re-run answers
// POLLING_TIMEOUT when still nothing is there.
//
// # Response header and receipt handle (ExtraInfo)
//
// POP_MESSAGE answers popTime, invisibleTime, reviveQid, restNum and,
// per queue read, entries joined by ";":
//
//	startOffsetInfo  "<mark> <queueId> <startOffset>"
//	msgOffsetInfo    "<mark> <queueId> <offset>,<offset>,..."
//	orderCountInfo   "<mark> qo<queueId>%<offset> <count>"   (orderly pops)
//
// mark is "0" for the topic, "1" for a retry topic (v1 or a push
// consumer's %RETRY%group), "2" for a v2 pop retry topic. The Java client
// turns them into each message's POP_CK property, the receipt handle it
// sends back in ACK_MESSAGE and CHANGE_MESSAGE_INVISIBLETIME:
//
//	"<ckQueueOffset> <popTime> <invisibleTime> <reviveQid> <mark> <brokerName> <queueId> <queueOffset>"
//
// (space separated; ckQueueOffset is the pop's start offset in the queue).
// reviveQid 999 marks an orderly pop.
//
// # Revive log
//
// Check points and acks are messages in rmq_sys_REVIVE_LOG_<cluster>
// (reviveQueueNum queues, 8), a pop's queue chosen round robin, with
// Java's tags, keys (UNIQ_KEY) and fastjson bodies:
//
//	tag "ck"    PopCheckPoint {"so":start,"pt":popTime,"it":invisibleTime,"bm":0,"n":count,
//	            "q":queueId,"t":topic,"c":group,"ro":0,"d":[offset-start,...],"bn":brokerName,
//	            "reviveTime":pt+it}
//	            UNIQ_KEY topic@queueId@start@group@popTime@brokerName@ck
//	tag "ack"   AckMsg {"ao":offset,"so":start,"c":group,"t":topic,"q":queueId,"pt":popTime,"bn":brokerName}
//	            UNIQ_KEY topic@queueId@offset@group@popTime@brokerName@ack
//	tag "bAck"  BatchAckMsg: AckMsg with "ao":-1 and "aol":[offset,...]
//	            UNIQ_KEY topic@queueId@[o1, o2]@group@popTime@bAck
//
// An ack belongs to the check point with its topic, queueId, start
// offset, group, popTime and brokerName. CHANGE_MESSAGE_INVISIBLETIME
// writes a one-message check point (popTime now, the new invisible time,
// start = the message's offset; popTime is the old one + 1 ms when now
// would give it the old check point's key, which the ack would resolve
// too) and then an ack of the message in its old
// check point, both in the handle's revive queue; it answers the new
// popTime, invisibleTime and reviveQid.
//
// Java hands these records to its timer wheel (deliver time: the revive
// time) so that they reach the revive queue only when due; rocketd stores
// them in the revive queue at once and the revive service waits instead.
// The bodies, tags and keys are Java's.
//
// # Revive service
//
// A goroutine (Start, Close) runs every reviveInterval (1 s): for each
// revive queue it reads the records after its position, keeps the check
// points read and marks their acks; a fully acked check point is
// resolved. A check point whose revive time (popTime+invisibleTime) has
// passed has each unacked message copied, with the reconsume count raised
// and 1ST_POP_TIME set (first revive), into the pop retry topic (queue 0)
// — or, once the message was delivered retryMaxTimes times (the group's
// config, 16), into %DLQ%<group> with RETRY_TOPIC and ORIGIN_MESSAGE_ID
// (Java leaves this to the client or proxy; rocketd does it here as the
// sendback path does). A failed put keeps the check point for the next
// round. The queue's position is then committed under group
// CID_RMQ_SYS_REVIVE_GROUP: the offset of its oldest unresolved check
// point, so a restart (kill -9 included) reads every open check point and
// its acks again; at worst a message revived just before a crash is
// revived twice (at least once, as in Java).
//
// # Orderly pops
//
// An orderly pop (order=true) writes no check point: the queue's state in
// consumerOrderInfo.json (Java's layout: {"table":{"topic@group":
// {queueId:{"popTime","invisibleTime","offsetList":[first,diff,...],
// "offsetNextVisibleTime":{},"offsetConsumedCount":{},
// "lastConsumeTimestamp","commitOffsetBit","attemptId"}}}}) records the
// batch handed out. While the batch has an unacked message still
// invisible, the queue hands out nothing (the same attemptId excepted).
// The consumer offset stays at the batch's first unacked message; an ack
// sets its bit and moves the offset; once invisible no more, the unacked
// rest is handed out again, each message's count in orderCountInfo (the
// client's reconsume times). CHANGE_MESSAGE_INVISIBLETIME of an orderly
// message sets its next visible time. The file is written by the revive
// goroutine after a change and at Close.
package pop
