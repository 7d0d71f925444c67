package protocol

// The request-code map: every code of Java RocketMQ 5.x's RequestCode
// (5.2.0, 5.3.x and the development head, ACL 1.0's removed codes included),
// which side serves it in Java, and what rocketd does with it. The broker's
// and the NameServer's tests check the map against the handlers they
// register, and docs/request-codes.md is rendered from it
// (TestRequestCodeMapDoc; `go test ./internal/protocol -run CodeMapDoc
// -update` rewrites it).

// CodeSide is who serves a request code in Java RocketMQ.
type CodeSide uint8

const (
	SideBroker     CodeSide = iota + 1 // the broker (remoting port; the VIP channel on listenPort-2 serves all but the consuming codes)
	SideNameServer                     // the NameServer
	SideClient                         // the client: the broker sends it
	SideController                     // the controller (5.x fail-over)
	SideContainer                      // Java's BrokerContainer (several brokers in one process)
)

func (s CodeSide) String() string {
	switch s {
	case SideBroker:
		return "broker"
	case SideNameServer:
		return "namesrv"
	case SideClient:
		return "client"
	case SideController:
		return "controller"
	case SideContainer:
		return "container"
	}
	return "?"
}

// CodeStatus is what rocketd does with a request code.
type CodeStatus uint8

const (
	// CodeServed: the side's server has a handler with Java's semantics.
	CodeServed CodeStatus = iota + 1
	// CodeSent: a code the broker sends to clients (SideClient), and does.
	CodeSent
	// CodeRefused: answered REQUEST_CODE_NOT_SUPPORTED on purpose; the
	// note, which the answer's remark carries, says why.
	CodeRefused
	// CodeLater: not served yet; the note names the issue that brings it.
	CodeLater
)

func (s CodeStatus) String() string {
	switch s {
	case CodeServed:
		return "served"
	case CodeSent:
		return "sent"
	case CodeRefused:
		return "refused on purpose"
	case CodeLater:
		return "later"
	}
	return "?"
}

// CodeInfo is one row of the request-code map.
type CodeInfo struct {
	Code   int32
	Name   string // Java's RequestCode constant
	Side   CodeSide
	Status CodeStatus
	Note   string // why (refused), which issue (later), or what it does
}

// RequestCodeMap lists every request code of Java RocketMQ 5.x, in code order.
var RequestCodeMap = []CodeInfo{
	{10, "SEND_MESSAGE", SideBroker, CodeServed, ""},
	{11, "PULL_MESSAGE", SideBroker, CodeServed, "long polling, TAG and SQL92 filters"},
	{12, "QUERY_MESSAGE", SideBroker, CodeServed, "by key or unique key, from the IndexFile index"},
	{13, "QUERY_BROKER_OFFSET", SideBroker, CodeRefused, "no Java broker or NameServer serves it either"},
	{14, "QUERY_CONSUMER_OFFSET", SideBroker, CodeServed, ""},
	{15, "UPDATE_CONSUMER_OFFSET", SideBroker, CodeServed, ""},
	{17, "UPDATE_AND_CREATE_TOPIC", SideBroker, CodeServed, ""},
	{18, "UPDATE_AND_CREATE_TOPIC_LIST", SideBroker, CodeServed, ""},
	{21, "GET_ALL_TOPIC_CONFIG", SideBroker, CodeServed, ""},
	{22, "GET_TOPIC_CONFIG_LIST", SideBroker, CodeRefused, "no Java broker serves it either"},
	{23, "GET_TOPIC_NAME_LIST", SideBroker, CodeRefused, "no Java broker serves it either"},
	{25, "UPDATE_BROKER_CONFIG", SideBroker, CodeServed, "live keys applied and persisted; others refused"},
	{26, "GET_BROKER_CONFIG", SideBroker, CodeServed, ""},
	{27, "TRIGGER_DELETE_FILES", SideBroker, CodeRefused, "no Java broker serves it either"},
	{28, "GET_BROKER_RUNTIME_INFO", SideBroker, CodeServed, ""},
	{29, "SEARCH_OFFSET_BY_TIMESTAMP", SideBroker, CodeServed, ""},
	{30, "GET_MAX_OFFSET", SideBroker, CodeServed, ""},
	{31, "GET_MIN_OFFSET", SideBroker, CodeServed, ""},
	{32, "GET_EARLIEST_MSG_STORETIME", SideBroker, CodeServed, ""},
	{33, "VIEW_MESSAGE_BY_ID", SideBroker, CodeServed, ""},
	{34, "HEART_BEAT", SideBroker, CodeServed, ""},
	{35, "UNREGISTER_CLIENT", SideBroker, CodeServed, ""},
	{36, "CONSUMER_SEND_MSG_BACK", SideBroker, CodeServed, "retry and DLQ"},
	{37, "END_TRANSACTION", SideBroker, CodeServed, ""},
	{38, "GET_CONSUMER_LIST_BY_GROUP", SideBroker, CodeServed, ""},
	{39, "CHECK_TRANSACTION_STATE", SideClient, CodeSent, "transaction check-back"},
	{40, "NOTIFY_CONSUMER_IDS_CHANGED", SideClient, CodeSent, "rebalance hint"},
	{41, "LOCK_BATCH_MQ", SideBroker, CodeServed, ""},
	{42, "UNLOCK_BATCH_MQ", SideBroker, CodeServed, ""},
	{43, "GET_ALL_CONSUMER_OFFSET", SideBroker, CodeServed, "slave metadata sync"},
	{45, "GET_ALL_DELAY_OFFSET", SideBroker, CodeServed, "slave metadata sync"},
	{46, "CHECK_CLIENT_CONFIG", SideBroker, CodeServed, "SQL92 subscriptions checked at consumer start"},
	{47, "GET_CLIENT_CONFIG", SideBroker, CodeRefused, "no Java broker serves it either"},
	{50, "UPDATE_AND_CREATE_ACL_CONFIG", SideBroker, CodeRefused, "ACL 1.0's admin codes (removed in Java 5.3.3): rocketd authorizes with ACL 2.0; a plain_acl.yml is migrated into users and ACLs at start (migrateAuthFromV1Enabled), managed with AUTH_* 3001-3010"},
	{51, "DELETE_ACL_CONFIG", SideBroker, CodeRefused, "ACL 1.0's admin codes (removed in Java 5.3.3): rocketd authorizes with ACL 2.0; a plain_acl.yml is migrated into users and ACLs at start (migrateAuthFromV1Enabled), managed with AUTH_* 3001-3010"},
	{52, "GET_BROKER_CLUSTER_ACL_INFO", SideBroker, CodeRefused, "ACL 1.0's admin codes (removed in Java 5.3.3): rocketd authorizes with ACL 2.0; a plain_acl.yml is migrated into users and ACLs at start (migrateAuthFromV1Enabled), managed with AUTH_* 3001-3010"},
	{53, "UPDATE_GLOBAL_WHITE_ADDRS_CONFIG", SideBroker, CodeRefused, "ACL 1.0's admin codes (removed in Java 5.3.3): rocketd authorizes with ACL 2.0; a plain_acl.yml is migrated into users and ACLs at start (migrateAuthFromV1Enabled), managed with AUTH_* 3001-3010"},
	{54, "GET_BROKER_CLUSTER_ACL_CONFIG", SideBroker, CodeRefused, "no Java broker serves it either (ACL 1.0, removed)"},
	{60, "GET_TIMER_CHECK_POINT", SideBroker, CodeServed, "rocketd's timer progress in Java's 56-byte form (no timerlog: flush position 0)"},
	{61, "GET_TIMER_METRICS", SideBroker, CodeServed, "held timer messages per topic (approximate, as Java's)"},
	{100, "PUT_KV_CONFIG", SideNameServer, CodeServed, ""},
	{101, "GET_KV_CONFIG", SideNameServer, CodeServed, ""},
	{102, "DELETE_KV_CONFIG", SideNameServer, CodeServed, ""},
	{103, "REGISTER_BROKER", SideNameServer, CodeServed, ""},
	{104, "UNREGISTER_BROKER", SideNameServer, CodeServed, ""},
	{105, "GET_ROUTEINFO_BY_TOPIC", SideNameServer, CodeServed, ""},
	{106, "GET_BROKER_CLUSTER_INFO", SideNameServer, CodeServed, ""},
	{200, "UPDATE_AND_CREATE_SUBSCRIPTIONGROUP", SideBroker, CodeServed, ""},
	{201, "GET_ALL_SUBSCRIPTIONGROUP_CONFIG", SideBroker, CodeServed, ""},
	{202, "GET_TOPIC_STATS_INFO", SideBroker, CodeServed, ""},
	{203, "GET_CONSUMER_CONNECTION_LIST", SideBroker, CodeServed, ""},
	{204, "GET_PRODUCER_CONNECTION_LIST", SideBroker, CodeServed, ""},
	{205, "WIPE_WRITE_PERM_OF_BROKER", SideNameServer, CodeServed, ""},
	{206, "GET_ALL_TOPIC_LIST_FROM_NAMESERVER", SideNameServer, CodeServed, ""},
	{207, "DELETE_SUBSCRIPTIONGROUP", SideBroker, CodeServed, ""},
	{208, "GET_CONSUME_STATS", SideBroker, CodeServed, ""},
	{209, "SUSPEND_CONSUMER", SideBroker, CodeRefused, "no Java broker or client serves it either"},
	{210, "RESUME_CONSUMER", SideBroker, CodeRefused, "no Java broker or client serves it either"},
	{211, "RESET_CONSUMER_OFFSET_IN_CONSUMER", SideBroker, CodeRefused, "no Java broker or client serves it either"},
	{212, "RESET_CONSUMER_OFFSET_IN_BROKER", SideBroker, CodeRefused, "no Java broker serves it either"},
	{213, "ADJUST_CONSUMER_THREAD_POOL", SideBroker, CodeRefused, "no Java broker or client serves it either"},
	{214, "WHO_CONSUME_THE_MESSAGE", SideBroker, CodeRefused, "no Java broker serves it either"},
	{215, "DELETE_TOPIC_IN_BROKER", SideBroker, CodeServed, ""},
	{216, "DELETE_TOPIC_IN_NAMESRV", SideNameServer, CodeServed, ""},
	{217, "REGISTER_TOPIC_IN_NAMESRV", SideNameServer, CodeServed, ""},
	{219, "GET_KVLIST_BY_NAMESPACE", SideNameServer, CodeServed, ""},
	{220, "RESET_CONSUMER_CLIENT_OFFSET", SideClient, CodeSent, "on INVOKE_BROKER_TO_RESET_OFFSET with useServerSideResetOffset=false"},
	{221, "GET_CONSUMER_STATUS_FROM_CLIENT", SideClient, CodeSent, "on INVOKE_BROKER_TO_GET_CONSUMER_STATUS"},
	{222, "INVOKE_BROKER_TO_RESET_OFFSET", SideBroker, CodeServed, "server side (5.x) or by telling the consumers (4.x)"},
	{223, "INVOKE_BROKER_TO_GET_CONSUMER_STATUS", SideBroker, CodeServed, "asks each consumer (GET_CONSUMER_STATUS_FROM_CLIENT)"},
	{224, "GET_TOPICS_BY_CLUSTER", SideNameServer, CodeServed, ""},
	{225, "UPDATE_AND_CREATE_SUBSCRIPTIONGROUP_LIST", SideBroker, CodeServed, ""},
	{300, "QUERY_TOPIC_CONSUME_BY_WHO", SideBroker, CodeServed, ""},
	{301, "REGISTER_FILTER_SERVER", SideBroker, CodeRefused, "filter servers were removed in Java 5; SQL92 filtering runs in the broker"},
	{302, "REGISTER_MESSAGE_FILTER_CLASS", SideBroker, CodeRefused, "class filters were removed in Java 5; SQL92 filtering runs in the broker"},
	{303, "QUERY_CONSUME_TIME_SPAN", SideBroker, CodeServed, ""},
	{304, "GET_SYSTEM_TOPIC_LIST_FROM_NS", SideNameServer, CodeServed, ""},
	{305, "GET_SYSTEM_TOPIC_LIST_FROM_BROKER", SideBroker, CodeServed, ""},
	{306, "CLEAN_EXPIRED_CONSUMEQUEUE", SideBroker, CodeServed, "destroys queues wholly below the CommitLog min (mqadmin cleanExpiredCQ)"},
	{307, "GET_CONSUMER_RUNNING_INFO", SideBroker, CodeServed, "forwarded to the client"},
	{308, "QUERY_CORRECTION_OFFSET", SideBroker, CodeServed, ""},
	{309, "CONSUME_MESSAGE_DIRECTLY", SideBroker, CodeServed, "forwarded to the client with the message"},
	{310, "SEND_MESSAGE_V2", SideBroker, CodeServed, ""},
	{311, "GET_UNIT_TOPIC_LIST", SideNameServer, CodeServed, ""},
	{312, "GET_HAS_UNIT_SUB_TOPIC_LIST", SideNameServer, CodeServed, ""},
	{313, "GET_HAS_UNIT_SUB_UNUNIT_TOPIC_LIST", SideNameServer, CodeServed, ""},
	{314, "CLONE_GROUP_OFFSET", SideBroker, CodeServed, ""},
	{315, "VIEW_BROKER_STATS_DATA", SideBroker, CodeServed, "minute/hour/day of a statistics item (mqadmin statsAll)"},
	{316, "CLEAN_UNUSED_TOPIC", SideBroker, CodeServed, "deletes queues of topics without config, system ones kept"},
	{317, "GET_BROKER_CONSUME_STATS", SideBroker, CodeServed, "every subscription group's progress and consumeTps (mqadmin brokerConsumeStats)"},
	{318, "UPDATE_NAMESRV_CONFIG", SideNameServer, CodeServed, "live keys applied and persisted; others refused"},
	{319, "GET_NAMESRV_CONFIG", SideNameServer, CodeServed, "tls.* and authentication settings not shown"},
	{320, "SEND_BATCH_MESSAGE", SideBroker, CodeServed, ""},
	{321, "QUERY_CONSUME_QUEUE", SideBroker, CodeServed, ""},
	{322, "QUERY_DATA_VERSION", SideNameServer, CodeServed, ""},
	{323, "RESUME_CHECK_HALF_MESSAGE", SideBroker, CodeServed, "only records of the half or check-max topic"},
	{324, "SEND_REPLY_MESSAGE", SideBroker, CodeServed, "request-reply: pushed to the requester"},
	{325, "SEND_REPLY_MESSAGE_V2", SideBroker, CodeServed, "request-reply: pushed to the requester"},
	{326, "PUSH_REPLY_MESSAGE_TO_CLIENT", SideClient, CodeSent, "the reply, to the requesting producer"},
	{327, "ADD_WRITE_PERM_OF_BROKER", SideNameServer, CodeServed, ""},
	{328, "GET_ALL_PRODUCER_INFO", SideBroker, CodeServed, ""},
	{329, "DELETE_EXPIRED_COMMITLOG", SideBroker, CodeServed, "the next 20 cleanup rounds ignore deleteWhen"},
	{343, "QUERY_TOPICS_BY_CONSUMER", SideBroker, CodeServed, ""},
	{345, "QUERY_SUBSCRIPTION_BY_CONSUMER", SideBroker, CodeServed, ""},
	{351, "GET_TOPIC_CONFIG", SideBroker, CodeServed, "with the topic attributes"},
	{352, "GET_SUBSCRIPTIONGROUP_CONFIG", SideBroker, CodeServed, ""},
	{353, "UPDATE_AND_GET_GROUP_FORBIDDEN", SideBroker, CodeServed, "read bit only (the one Java checks); forbidden pulls get NO_PERMISSION"},
	{354, "CHECK_ROCKSDB_CQ_WRITE_PROGRESS", SideBroker, CodeRefused, "rocketd keeps ConsumeQueues in Java's file format and has no RocksDB ConsumeQueue store"},
	{355, "EXPORT_ROCKSDB_CONFIG_TO_JSON", SideBroker, CodeRefused, "rocketd has no RocksDB config store; its metadata is Java's JSON files"},
	{361, "LITE_PULL_MESSAGE", SideBroker, CodeServed, "the 5.x lite pull consumer"},
	{370, "RECALL_MESSAGE", SideBroker, CodeServed, "recall of a timer message before delivery"},
	{400, "QUERY_ASSIGNMENT", SideBroker, CodeServed, "server-side rebalance"},
	{401, "SET_MESSAGE_REQUEST_MODE", SideBroker, CodeServed, ""},
	{402, "GET_ALL_MESSAGE_REQUEST_MODE", SideBroker, CodeServed, ""},
	{513, "UPDATE_AND_CREATE_STATIC_TOPIC", SideBroker, CodeServed, "mqadmin updateStaticTopic/remappingStaticTopic: topic config + mapping (config/topicQueueMapping.json, Java's update rules), read back by GET_TOPIC_CONFIG lo=true, registered with the NameServers (REGISTER_BROKER topicQueueMappingInfoMap; routes answer topicQueueMappingByBroker); sends, pulls (logic next/min/max offsets, offsetDelta, on to the next item at an item's end), QUERY/UPDATE_CONSUMER_OFFSET, GET_MAX/MIN_OFFSET, SEARCH_OFFSET_BY_TIMESTAMP and GET_EARLIEST_MSG_STORETIME name logic queues and offsets, rewritten to the mapping item holding the offset as Java 5.x; an item on another broker is forwarded there with lo=false (NOT_LEADER_FOR_QUEUE when the logic queue is led elsewhere); lo=false is a physical queue. Slaves copy the mappings with the topic table (GET_ALL_TOPIC_CONFIG topicQueueMappingDetailMap)"},
	{901, "GET_BROKER_MEMBER_GROUP", SideNameServer, CodeRefused, "slave acting master (RIP-32, enableSlaveActingMaster) is not offered: rocketd's automatic fail-over is controller mode (enableControllerMode)"},
	{902, "ADD_BROKER", SideContainer, CodeRefused, "rocketd runs one broker per process; Java's BrokerContainer is not offered"},
	{903, "REMOVE_BROKER", SideContainer, CodeRefused, "rocketd runs one broker per process; Java's BrokerContainer is not offered"},
	{904, "BROKER_HEARTBEAT", SideController, CodeServed, "broker liveness at the controller (rocketd controller, or enableControllerInNamesrv); Java's NameServer also takes it from slave-acting-master brokers (RIP-32), which rocketd does not offer"},
	{905, "NOTIFY_MIN_BROKER_ID_CHANGE", SideBroker, CodeRefused, "slave acting master (RIP-32, enableSlaveActingMaster) is not offered: rocketd's automatic fail-over is controller mode (enableControllerMode)"},
	{906, "EXCHANGE_BROKER_HA_INFO", SideBroker, CodeRefused, "slave acting master (RIP-32, enableSlaveActingMaster) is not offered: rocketd's automatic fail-over is controller mode (enableControllerMode)"},
	{907, "GET_BROKER_HA_STATUS", SideBroker, CodeServed, "master: slaves and acks; slave: its HA client (mqadmin haStatus)"},
	{908, "RESET_MASTER_FLUSH_OFFSET", SideBroker, CodeRefused, "slave acting master (RIP-32, enableSlaveActingMaster) is not offered: rocketd's automatic fail-over is controller mode (enableControllerMode)"},
	{1001, "CONTROLLER_ALTER_SYNC_STATE_SET", SideController, CodeServed, "internal/controller (rocketd controller, or enableControllerInNamesrv)"},
	{1002, "CONTROLLER_ELECT_MASTER", SideController, CodeServed, "internal/controller (rocketd controller, or enableControllerInNamesrv)"},
	{1003, "CONTROLLER_REGISTER_BROKER", SideController, CodeServed, "internal/controller (rocketd controller, or enableControllerInNamesrv)"},
	{1004, "CONTROLLER_GET_REPLICA_INFO", SideController, CodeServed, "internal/controller (rocketd controller, or enableControllerInNamesrv)"},
	{1005, "CONTROLLER_GET_METADATA_INFO", SideController, CodeServed, "internal/controller (rocketd controller, or enableControllerInNamesrv)"},
	{1006, "CONTROLLER_GET_SYNC_STATE_DATA", SideController, CodeServed, "internal/controller (rocketd controller, or enableControllerInNamesrv)"},
	{1007, "GET_BROKER_EPOCH_CACHE", SideBroker, CodeServed, "controller mode (enableControllerMode): epoch file and CommitLog end; SYSTEM_ERROR otherwise, as Java"},
	{1008, "NOTIFY_BROKER_ROLE_CHANGED", SideBroker, CodeServed, "controller mode: the broker takes the role named (stale epochs ignored)"},
	{1009, "UPDATE_CONTROLLER_CONFIG", SideController, CodeServed, "internal/controller: enableElectUncleanMaster and notifyBrokerRoleChanged change at run time"},
	{1010, "GET_CONTROLLER_CONFIG", SideController, CodeServed, "internal/controller (rocketd controller, or enableControllerInNamesrv)"},
	{1011, "CLEAN_BROKER_DATA", SideController, CodeServed, "internal/controller (rocketd controller, or enableControllerInNamesrv)"},
	{1012, "CONTROLLER_GET_NEXT_BROKER_ID", SideController, CodeServed, "internal/controller (rocketd controller, or enableControllerInNamesrv)"},
	{1013, "CONTROLLER_APPLY_BROKER_ID", SideController, CodeServed, "internal/controller (rocketd controller, or enableControllerInNamesrv)"},
	{2001, "UPDATE_COLD_DATA_FLOW_CTR_CONFIG", SideBroker, CodeRefused, "cold-data flow control throttles Java's mmap reads of paged-out data; rocketd reads with pread and has no such throttle"},
	{2002, "REMOVE_COLD_DATA_FLOW_CTR_CONFIG", SideBroker, CodeRefused, "cold-data flow control throttles Java's mmap reads of paged-out data; rocketd reads with pread and has no such throttle"},
	{2003, "GET_COLD_DATA_FLOW_CTR_INFO", SideBroker, CodeRefused, "cold-data flow control throttles Java's mmap reads of paged-out data; rocketd reads with pread and has no such throttle"},
	{2004, "SET_COMMITLOG_READ_MODE", SideBroker, CodeRefused, "the read modes pick between Java's mmap read paths; rocketd has one pread path"},
	{3001, "AUTH_CREATE_USER", SideBroker, CodeServed, ""},
	{3002, "AUTH_UPDATE_USER", SideBroker, CodeServed, ""},
	{3003, "AUTH_DELETE_USER", SideBroker, CodeServed, ""},
	{3004, "AUTH_GET_USER", SideBroker, CodeServed, ""},
	{3005, "AUTH_LIST_USER", SideBroker, CodeServed, ""},
	{3006, "AUTH_CREATE_ACL", SideBroker, CodeServed, ""},
	{3007, "AUTH_UPDATE_ACL", SideBroker, CodeServed, ""},
	{3008, "AUTH_DELETE_ACL", SideBroker, CodeServed, ""},
	{3009, "AUTH_GET_ACL", SideBroker, CodeServed, ""},
	{3010, "AUTH_LIST_ACL", SideBroker, CodeServed, ""},
	{200050, "POP_MESSAGE", SideBroker, CodeServed, "POP consumption with long polling, retry topic, orderly pops (broker/pop)"},
	{200051, "ACK_MESSAGE", SideBroker, CodeServed, "an ack record in the revive log; orderly: the queue's offset moves"},
	{200052, "PEEK_MESSAGE", SideBroker, CodeServed, "what a pop would read, taken from nothing; no official client sends it"},
	{200053, "CHANGE_MESSAGE_INVISIBLETIME", SideBroker, CodeServed, "a new check point, then an ack of the old one"},
	{200054, "NOTIFICATION", SideBroker, CodeServed, "held like a pop until a message a pop would get arrives; no official client sends it (MQClientAPIExt.notification has no caller)"},
	{200055, "POLLING_INFO", SideBroker, CodeServed, "the pops and notifications of a group held on a queue; no official client sends it"},
	{200056, "POP_ROLLBACK", SideBroker, CodeRefused, "no Java broker serves it either"},
	{200151, "BATCH_ACK_MESSAGE", SideBroker, CodeServed, "one batch-ack record per queue"},
}

// LookupRequestCode returns the map's row for code.
func LookupRequestCode(code int32) (CodeInfo, bool) {
	lo, hi := 0, len(RequestCodeMap)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if RequestCodeMap[m].Code < code {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < len(RequestCodeMap) && RequestCodeMap[lo].Code == code {
		return RequestCodeMap[lo], true
	}
	return CodeInfo{}, false
}
