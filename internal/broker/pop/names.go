package pop

import "strings"

// Java's constants (PopAckConstants, KeyBuilder).
const (
	// ReviveTopicPrefix + brokerClusterName is the revive log topic.
	ReviveTopicPrefix = "rmq_sys_REVIVE_LOG_"
	// ReviveGroup is the group under which the revive service's progress
	// in each revive queue is kept in consumerOffset.json.
	ReviveGroup = "CID_RMQ_SYS_REVIVE_GROUP"
	// OrderReviveQueue is the reviveQid of an orderly pop: its messages
	// have no check point and are not revived through the log.
	OrderReviveQueue = 999

	ckTag       = "ck"
	ackTag      = "ack"
	batchAckTag = "bAck"
	keySplit    = "@"

	retryPrefix = "%RETRY%"
	retrySepV1  = "_"
	retrySepV2  = "+"
)

// ReviveTopic is the revive log topic of a cluster.
func ReviveTopic(cluster string) string { return ReviveTopicPrefix + cluster }

// RetryTopic is the pop retry topic of topic for group:
// %RETRY%group_topic (v1, Java's default) or %RETRY%group+topic
// (enableRetryTopicV2). It is not the push consumers' %RETRY%group.
func RetryTopic(topic, group string, v2 bool) string {
	if v2 {
		return retryPrefix + group + retrySepV2 + topic
	}
	return retryPrefix + group + retrySepV1 + topic
}

// topicMark is ExtraInfoUtil.getRetry: "0" a normal topic, "1" a retry
// topic (v1, or a push consumer's %RETRY%group), "2" a v2 pop retry topic.
func topicMark(topic string) string {
	if !strings.HasPrefix(topic, retryPrefix) {
		return "0"
	}
	if strings.Contains(topic, retrySepV2) {
		return "2"
	}
	return "1"
}

// TopicMark is topicMark for the gRPC service, which builds the receipt
// handles of popped messages as Java's client does.
func TopicMark(topic string) string { return topicMark(topic) }

// RealTopic is ExtraInfoUtil.getRealTopic: the topic a mark stands for.
func RealTopic(topic, group, mark string) (string, bool) {
	switch mark {
	case "0":
		return topic, true
	case "1":
		return RetryTopic(topic, group, false), true
	case "2":
		return RetryTopic(topic, group, true), true
	}
	return "", false
}
