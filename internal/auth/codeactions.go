package auth

import (
	"strings"

	"github.com/rocketd/rocketd/internal/protocol"
)

// What each request code needs, as RocketMQ 5.3's
// DefaultAuthorizationContextBuilder builds it for remoting requests: a
// hand-written case for the messaging codes (below, in requestChecks),
// and for every other code the @RocketMQAction annotation of its request
// header class, listed in codeRules. A code in neither is not checked,
// as in Java (the issue: any authenticated user may send it), except the
// rows marked "rocketd:" that close Java's gaps a NORMAL user could use to
// read every topic (lite pull), dump all configs or change the broker's.

// resField is a header field Java annotates with @RocketMQResource.
type resField struct {
	key   string       // the ext field
	typ   ResourceType // Topic, Group or Cluster
	split string       // a separator when the field lists several ("")
}

// codeRule is one @RocketMQAction.
type codeRule struct {
	code    int32
	name    string // Java's RequestCode constant
	actions ActionSet
	// cluster: resource = ResourceType.CLUSTER, so Cluster:<the server's
	// cluster> is checked when no annotated field is present.
	cluster bool
	fields  []resField
	keys    []string // the fields' keys, for one LookupExt
}

func topicF(k string) resField   { return resField{key: k, typ: ResTopic} }
func groupF(k string) resField   { return resField{key: k, typ: ResGroup} }
func clusterF(k string) resField { return resField{key: k, typ: ResCluster} }

var (
	aPub    = Actions(ActionPub)
	aSub    = Actions(ActionSub)
	aGet    = Actions(ActionGet)
	aList   = Actions(ActionList)
	aCreate = Actions(ActionCreate)
	aUpdate = Actions(ActionUpdate)
	aDelete = Actions(ActionDelete)
)

// codeRules are the @RocketMQAction annotations of Java's request headers
// (the development head after 5.3.3), in code order. Rows whose resource
// is a topic or a group and that have no annotated field build no check
// in Java (GET_ALL_TOPIC_CONFIG, HEART_BEAT's header, ...): they are
// listed for completeness and check nothing here either.
var codeRules = []codeRule{
	{code: 10, name: "SEND_MESSAGE", actions: aPub, fields: []resField{topicF("topic")}},
	{code: 11, name: "PULL_MESSAGE", actions: aSub, fields: []resField{groupF("consumerGroup"), topicF("topic")}},
	{code: 12, name: "QUERY_MESSAGE", actions: aSub | aGet, fields: []resField{topicF("topic")}},
	{code: 14, name: "QUERY_CONSUMER_OFFSET", actions: aGet, fields: []resField{groupF("consumerGroup"), topicF("topic")}},
	{code: 15, name: "UPDATE_CONSUMER_OFFSET", actions: aSub, fields: []resField{groupF("consumerGroup"), topicF("topic")}},
	{code: 17, name: "UPDATE_AND_CREATE_TOPIC", actions: aCreate, fields: []resField{topicF("topic")}},
	{code: 18, name: "UPDATE_AND_CREATE_TOPIC_LIST", actions: aCreate},
	// rocketd: Java checks nothing for GET_ALL_TOPIC_CONFIG (its resource
	// has no annotated field); a dump of every topic's config is a
	// cluster read here.
	{code: 21, name: "GET_ALL_TOPIC_CONFIG", actions: aGet, cluster: true},
	// rocketd: UPDATE_BROKER_CONFIG has no annotation in Java, so any
	// authenticated user could change the broker's configuration.
	{code: 25, name: "UPDATE_BROKER_CONFIG", actions: aUpdate, cluster: true},
	{code: 29, name: "SEARCH_OFFSET_BY_TIMESTAMP", actions: aGet, fields: []resField{topicF("topic")}},
	{code: 30, name: "GET_MAX_OFFSET", actions: aGet, fields: []resField{topicF("topic")}},
	{code: 31, name: "GET_MIN_OFFSET", actions: aGet, fields: []resField{topicF("topic")}},
	{code: 32, name: "GET_EARLIEST_MSG_STORETIME", actions: aGet, fields: []resField{topicF("topic")}},
	{code: 33, name: "VIEW_MESSAGE_BY_ID", actions: aGet, fields: []resField{topicF("topic")}},
	{code: 34, name: "HEART_BEAT", actions: aPub | aSub},
	{code: 35, name: "UNREGISTER_CLIENT", actions: aPub | aSub, fields: []resField{groupF("consumerGroup")}},
	{code: 36, name: "CONSUMER_SEND_MSG_BACK", actions: aSub, fields: []resField{groupF("group"), topicF("originTopic")}},
	{code: 37, name: "END_TRANSACTION", actions: aPub, fields: []resField{topicF("topic")}},
	{code: 38, name: "GET_CONSUMER_LIST_BY_GROUP", actions: aSub, fields: []resField{groupF("consumerGroup")}},
	{code: 39, name: "CHECK_TRANSACTION_STATE", actions: aPub, fields: []resField{topicF("topic")}},
	{code: 40, name: "NOTIFY_CONSUMER_IDS_CHANGED", actions: aSub, fields: []resField{groupF("consumerGroup")}},
	{code: 41, name: "LOCK_BATCH_MQ", actions: aSub},
	{code: 42, name: "UNLOCK_BATCH_MQ", actions: aSub},
	{code: 100, name: "PUT_KV_CONFIG", actions: aUpdate, cluster: true},
	{code: 101, name: "GET_KV_CONFIG", actions: aGet, cluster: true},
	{code: 102, name: "DELETE_KV_CONFIG", actions: aUpdate, cluster: true},
	{code: 103, name: "REGISTER_BROKER", actions: aUpdate, cluster: true, fields: []resField{clusterF("clusterName")}},
	{code: 104, name: "UNREGISTER_BROKER", actions: aUpdate, cluster: true, fields: []resField{clusterF("clusterName")}},
	{code: 105, name: "GET_ROUTEINFO_BY_TOPIC", actions: aGet, cluster: true},
	// rocketd: Java's annotation names no field (the group is in the
	// body), so it checks nothing; creating or changing a group's
	// config is a cluster update here.
	{code: 200, name: "UPDATE_AND_CREATE_SUBSCRIPTIONGROUP", actions: aCreate | aUpdate, cluster: true},
	// rocketd: as GET_ALL_TOPIC_CONFIG above, a cluster read.
	{code: 201, name: "GET_ALL_SUBSCRIPTIONGROUP_CONFIG", actions: aGet, cluster: true},
	{code: 202, name: "GET_TOPIC_STATS_INFO", actions: aGet, fields: []resField{topicF("topic")}},
	{code: 203, name: "GET_CONSUMER_CONNECTION_LIST", actions: aGet, fields: []resField{groupF("consumerGroup")}},
	{code: 204, name: "GET_PRODUCER_CONNECTION_LIST", actions: aGet, cluster: true},
	{code: 205, name: "WIPE_WRITE_PERM_OF_BROKER", actions: aUpdate, cluster: true},
	{code: 207, name: "DELETE_SUBSCRIPTIONGROUP", actions: aDelete, fields: []resField{groupF("groupName")}},
	{code: 208, name: "GET_CONSUME_STATS", actions: aGet, fields: []resField{groupF("consumerGroup"), topicF("topic"), topicF("topicList")}},
	{code: 215, name: "DELETE_TOPIC_IN_BROKER", actions: aDelete, fields: []resField{topicF("topic")}},
	{code: 216, name: "DELETE_TOPIC_IN_NAMESRV", actions: aUpdate, cluster: true, fields: []resField{clusterF("clusterName")}},
	{code: 217, name: "REGISTER_TOPIC_IN_NAMESRV", actions: aUpdate, cluster: true},
	{code: 219, name: "GET_KVLIST_BY_NAMESPACE", actions: aGet, cluster: true},
	{code: 222, name: "INVOKE_BROKER_TO_RESET_OFFSET", actions: aUpdate, fields: []resField{groupF("group"), topicF("topic")}},
	{code: 223, name: "INVOKE_BROKER_TO_GET_CONSUMER_STATUS", actions: aGet, fields: []resField{topicF("topic"), groupF("group")}},
	{code: 224, name: "GET_TOPICS_BY_CLUSTER", actions: aList},
	{code: 300, name: "QUERY_TOPIC_CONSUME_BY_WHO", actions: aGet, fields: []resField{topicF("topic")}},
	{code: 303, name: "QUERY_CONSUME_TIME_SPAN", actions: aGet, fields: []resField{topicF("topic"), groupF("group")}},
	{code: 307, name: "GET_CONSUMER_RUNNING_INFO", actions: aGet, fields: []resField{groupF("consumerGroup")}},
	{code: 308, name: "QUERY_CORRECTION_OFFSET", actions: aGet, fields: []resField{{key: "filterGroups", typ: ResGroup, split: ","}, groupF("compareGroup"), topicF("topic")}},
	{code: 309, name: "CONSUME_MESSAGE_DIRECTLY", actions: aSub, fields: []resField{groupF("consumerGroup"), topicF("topic")}},
	{code: 310, name: "SEND_MESSAGE_V2", actions: aPub, fields: []resField{topicF("b")}},
	{code: 314, name: "CLONE_GROUP_OFFSET", actions: aUpdate, fields: []resField{groupF("destGroup"), topicF("topic")}},
	{code: 315, name: "VIEW_BROKER_STATS_DATA", actions: aGet, cluster: true},
	{code: 317, name: "GET_BROKER_CONSUME_STATS", actions: aGet, cluster: true},
	{code: 321, name: "QUERY_CONSUME_QUEUE", actions: aGet, fields: []resField{topicF("topic"), groupF("consumerGroup")}},
	{code: 322, name: "QUERY_DATA_VERSION", actions: aGet, cluster: true, fields: []resField{clusterF("clusterName")}},
	{code: 323, name: "RESUME_CHECK_HALF_MESSAGE", actions: aUpdate, fields: []resField{topicF("topic")}},
	{code: 326, name: "PUSH_REPLY_MESSAGE_TO_CLIENT", actions: aSub, fields: []resField{groupF("producerGroup"), topicF("topic")}},
	{code: 327, name: "ADD_WRITE_PERM_OF_BROKER", actions: aUpdate, cluster: true},
	{code: 328, name: "GET_ALL_PRODUCER_INFO", actions: aGet, cluster: true},
	{code: 343, name: "QUERY_TOPICS_BY_CONSUMER", actions: aGet, fields: []resField{groupF("group")}},
	{code: 345, name: "QUERY_SUBSCRIPTION_BY_CONSUMER", actions: aGet, fields: []resField{groupF("group"), topicF("topic")}},
	{code: 351, name: "GET_TOPIC_CONFIG", actions: aGet, fields: []resField{topicF("topic")}},
	{code: 352, name: "GET_SUBSCRIPTIONGROUP_CONFIG", actions: aGet, fields: []resField{groupF("group")}},
	{code: 353, name: "UPDATE_AND_GET_GROUP_FORBIDDEN", actions: aUpdate, fields: []resField{groupF("group"), topicF("topic")}},
	{code: 354, name: "CHECK_ROCKSDB_CQ_WRITE_PROGRESS", actions: aGet, fields: []resField{topicF("topic")}},
	{code: 355, name: "EXPORT_ROCKSDB_CONFIG_TO_JSON", actions: aGet, cluster: true},
	{code: 370, name: "RECALL_MESSAGE", actions: aPub, fields: []resField{topicF("topic")}},
	{code: 901, name: "GET_BROKER_MEMBER_GROUP", actions: aGet, fields: []resField{clusterF("clusterName")}},
	{code: 902, name: "ADD_BROKER", actions: aUpdate, cluster: true},
	{code: 903, name: "REMOVE_BROKER", actions: aUpdate, cluster: true, fields: []resField{clusterF("brokerClusterName")}},
	{code: 904, name: "BROKER_HEARTBEAT", actions: aUpdate, cluster: true, fields: []resField{clusterF("clusterName")}},
	{code: 905, name: "NOTIFY_MIN_BROKER_ID_CHANGE", actions: aUpdate, cluster: true},
	{code: 906, name: "EXCHANGE_BROKER_HA_INFO", actions: aUpdate, cluster: true},
	{code: 908, name: "RESET_MASTER_FLUSH_OFFSET", actions: aUpdate, cluster: true},
	{code: 1001, name: "CONTROLLER_ALTER_SYNC_STATE_SET", actions: aUpdate, cluster: true},
	{code: 1002, name: "CONTROLLER_ELECT_MASTER", actions: aUpdate, cluster: true, fields: []resField{clusterF("clusterName")}},
	{code: 1003, name: "CONTROLLER_REGISTER_BROKER", actions: aUpdate, cluster: true, fields: []resField{clusterF("clusterName")}},
	{code: 1004, name: "CONTROLLER_GET_REPLICA_INFO", actions: aGet, cluster: true},
	{code: 1008, name: "NOTIFY_BROKER_ROLE_CHANGED", actions: aUpdate, cluster: true},
	{code: 1011, name: "CLEAN_BROKER_DATA", actions: aUpdate, cluster: true, fields: []resField{clusterF("clusterName")}},
	{code: 1012, name: "CONTROLLER_GET_NEXT_BROKER_ID", actions: aGet, cluster: true, fields: []resField{clusterF("clusterName")}},
	{code: 1013, name: "CONTROLLER_APPLY_BROKER_ID", actions: aUpdate, cluster: true, fields: []resField{clusterF("clusterName")}},
	{code: 3001, name: "AUTH_CREATE_USER", actions: aUpdate, cluster: true},
	{code: 3002, name: "AUTH_UPDATE_USER", actions: aUpdate, cluster: true},
	{code: 3003, name: "AUTH_DELETE_USER", actions: aUpdate, cluster: true},
	{code: 3004, name: "AUTH_GET_USER", actions: aGet, cluster: true},
	{code: 3005, name: "AUTH_LIST_USER", actions: aGet, cluster: true},
	{code: 3006, name: "AUTH_CREATE_ACL", actions: aUpdate, cluster: true},
	{code: 3007, name: "AUTH_UPDATE_ACL", actions: aUpdate, cluster: true},
	{code: 3008, name: "AUTH_DELETE_ACL", actions: aUpdate, cluster: true},
	{code: 3009, name: "AUTH_GET_ACL", actions: aGet, cluster: true},
	{code: 3010, name: "AUTH_LIST_ACL", actions: aGet, cluster: true},
	{code: 200050, name: "POP_MESSAGE", actions: aSub, fields: []resField{groupF("consumerGroup"), topicF("topic")}},
	{code: 200051, name: "ACK_MESSAGE", actions: aSub, fields: []resField{groupF("consumerGroup"), topicF("topic")}},
	{code: 200052, name: "PEEK_MESSAGE", actions: aSub, fields: []resField{topicF("topic"), groupF("consumerGroup")}},
	{code: 200053, name: "CHANGE_MESSAGE_INVISIBLETIME", actions: aSub, fields: []resField{groupF("consumerGroup"), topicF("topic")}},
	{code: 200054, name: "NOTIFICATION", actions: aSub, fields: []resField{groupF("consumerGroup"), topicF("topic")}},
	{code: 200055, name: "POLLING_INFO", actions: aGet, fields: []resField{groupF("consumerGroup"), topicF("topic")}},
}

// rulesByCode indexes codeRules.
var rulesByCode = func() map[int32]*codeRule {
	m := make(map[int32]*codeRule, len(codeRules))
	for i := range codeRules {
		r := &codeRules[i]
		for _, f := range r.fields {
			r.keys = append(r.keys, f.key)
		}
		m[r.code] = r
	}
	return m
}()

// check is one authorization context: a resource and the actions of
// which the subject needs one.
type check struct {
	typ     ResourceType
	name    string
	actions ActionSet
}

// key returns the requested resource's key ("Topic:abc").
func (c *check) key() string { return c.typ.String() + ":" + c.name }

const retryPrefix = "%RETRY%"

func isRetryTopic(t string) bool { return strings.HasPrefix(t, retryPrefix) }

// groupCheck is Java's Resource.ofGroup: a retry topic names its group.
func groupCheck(name string, actions ActionSet) check {
	if isRetryTopic(name) {
		name = strings.TrimPrefix(name, retryPrefix)
	}
	return check{typ: ResGroup, name: name, actions: actions}
}

// The fields the hand-written cases read.
var (
	keysTopic      = []string{"topic", "group"}
	keysSendV2     = []string{"b", "a"}
	keysGroup      = []string{"group"}
	keysPull       = []string{"topic", "consumerGroup"}
	keysConsumerGr = []string{"consumerGroup"}
)

// requestChecks appends to dst what req needs (Java's
// DefaultAuthorizationContextBuilder.build for remoting); cluster names
// the Cluster resource of cluster-wide codes. A body that does not parse
// is an error (Java: "parse authorization context error.").
func requestChecks(dst []check, v extView, cluster string) ([]check, error) {
	req := v.req
	switch req.Code {
	case protocol.GetRouteinfoByTopic:
		t := v.field("topic")
		if isRetryTopic(t) {
			return append(dst, groupCheck(t, aSub|aGet)), nil
		}
		return append(dst, check{ResTopic, t, aPub | aSub | aGet}), nil
	case protocol.SendMessage, protocol.SendMessageV2, protocol.SendBatchMessage:
		keys := keysTopic
		if req.Code != protocol.SendMessage {
			keys = keysSendV2
		}
		vals := v.lookup(keys)
		topic, group := vals.Vals[0], vals.Vals[1]
		if isRetryTopic(topic) {
			if strings.TrimSpace(group) == "" {
				group = topic
			}
			return append(dst, groupCheck(group, aSub)), nil
		}
		return append(dst, check{ResTopic, topic, aPub}), nil
	case protocol.RecallMessage:
		return append(dst, check{ResTopic, v.field("topic"), aPub}), nil
	case protocol.EndTransaction:
		if t := v.field("topic"); strings.TrimSpace(t) != "" {
			dst = append(dst, check{ResTopic, t, aPub})
		}
		return dst, nil
	case protocol.ConsumerSendMsgBack:
		return append(dst, groupCheck(v.lookup(keysGroup).Vals[0], aSub)), nil
	// LITE_PULL_MESSAGE shares PULL_MESSAGE's header, whose annotation
	// names only PULL_MESSAGE: Java checks lite pulls not at all; rocketd
	// checks them as pulls.
	case protocol.PullMessage, protocol.LitePullMessage, protocol.QueryConsumerOffset, protocol.UpdateConsumerOffset:
		actions := aSub
		switch req.Code {
		case protocol.QueryConsumerOffset:
			actions = aSub | aGet
		case protocol.UpdateConsumerOffset:
			actions = aSub | aUpdate
		}
		vals := v.lookup(keysPull)
		if !isRetryTopic(vals.Vals[0]) {
			dst = append(dst, check{ResTopic, vals.Vals[0], actions})
		}
		return append(dst, groupCheck(vals.Vals[1], actions)), nil
	case protocol.QueryMessage:
		return append(dst, check{ResTopic, v.field("topic"), aSub | aGet}), nil
	case protocol.HeartBeat:
		var hb protocol.HeartbeatData
		if err := protocol.UnmarshalFastJSON(req.Body, &hb); err != nil {
			return dst, err
		}
		for _, c := range hb.ConsumerDataSet {
			dst = append(dst, groupCheck(c.GroupName, aSub))
			for _, s := range c.SubscriptionDataSet {
				if !isRetryTopic(s.Topic) {
					dst = append(dst, check{ResTopic, s.Topic, aSub})
				}
			}
		}
		return dst, nil
	case protocol.UnregisterClient:
		if g := v.lookup(keysConsumerGr).Vals[0]; strings.TrimSpace(g) != "" {
			dst = append(dst, groupCheck(g, aSub))
		}
		return dst, nil
	case protocol.GetConsumerListByGroup:
		return append(dst, groupCheck(v.lookup(keysConsumerGr).Vals[0], aSub|aGet)), nil
	case protocol.LockBatchMQ, protocol.UnlockBatchMQ:
		var body protocol.LockBatchRequestBody
		if err := protocol.UnmarshalFastJSON(req.Body, &body); err != nil {
			return dst, err
		}
		dst = append(dst, groupCheck(body.ConsumerGroup, aSub))
		for _, q := range body.MQSet {
			if !isRetryTopic(q.Topic) {
				dst = append(dst, check{ResTopic, q.Topic, aSub})
			}
		}
		return dst, nil
	}
	r := rulesByCode[req.Code]
	if r == nil {
		return dst, nil
	}
	return r.appendChecks(dst, v, cluster), nil
}

// appendChecks is Java's buildContextByAnnotation.
func (r *codeRule) appendChecks(dst []check, ev extView, cluster string) []check {
	n := len(dst)
	if len(r.keys) > 0 {
		v := ev.lookup(r.keys)
		for i, f := range r.fields {
			if !v.Has(i) {
				continue
			}
			val := v.Vals[i]
			if f.split == "" {
				dst = r.appendValue(dst, f.typ, val)
				continue
			}
			for _, part := range strings.Split(val, f.split) {
				if part != "" { // StringUtils.split drops empty parts
					dst = r.appendValue(dst, f.typ, part)
				}
			}
		}
	}
	if len(dst) == n && r.cluster {
		dst = append(dst, check{ResCluster, cluster, r.actions})
	}
	return dst
}

func (r *codeRule) appendValue(dst []check, t ResourceType, val string) []check {
	if t == ResTopic && isRetryTopic(val) {
		return append(dst, groupCheck(val, r.actions))
	}
	return append(dst, check{t, val, r.actions})
}
