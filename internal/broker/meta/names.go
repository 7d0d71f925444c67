package meta

import (
	"errors"
	"maps"
	"slices"
	"strings"
)

// Topics and groups RocketMQ knows by name (rocketmq-spec.md §10, §11.1,
// §14.4, §14.5; TopicValidator and MixAll of 4.9.8).
const (
	// AutoCreateTopic is the template for auto-created topics (TBW102).
	AutoCreateTopic    = "TBW102"
	ScheduleTopic      = "SCHEDULE_TOPIC_XXXX"
	BenchmarkTopic     = "BenchmarkTest"
	TransHalfTopic     = "RMQ_SYS_TRANS_HALF_TOPIC"
	TransOpHalfTopic   = "RMQ_SYS_TRANS_OP_HALF_TOPIC"
	TransCheckMaxTopic = "TRANS_CHECK_MAX_TIME_TOPIC"
	TraceTopic         = "RMQ_SYS_TRACE_TOPIC"
	SelfTestTopic      = "SELF_TEST_TOPIC"
	OffsetMovedTopic   = "OFFSET_MOVED_EVENT"
	// SystemTopicPrefix: every topic starting with it is a system topic.
	SystemTopicPrefix = "rmq_sys_"
	// ReplyTopicSuffix follows the cluster name in the request/reply topic.
	ReplyTopicSuffix = "_REPLY_TOPIC"

	RetryGroupTopicPrefix = "%RETRY%"
	DLQGroupTopicPrefix   = "%DLQ%"
	// SysConsumerGroupPrefix: groups the broker creates even when
	// autoCreateSubscriptionGroup is off.
	SysConsumerGroupPrefix = "CID_RMQ_SYS_"
	// TransCheckGroup keeps the progress of the transaction checker.
	TransCheckGroup = "CID_RMQ_SYS_TRANS"

	// ScheduleQueueNums is the queue count of SCHEDULE_TOPIC_XXXX: one per
	// default delay level.
	ScheduleQueueNums = 18
	// DLQQueueNums is the queue count of a %DLQ% topic (DLQ_NUMS_PER_GROUP).
	DLQQueueNums = 1
	// MaxTopicLength is the longest topic name (bytes, all ASCII).
	MaxTopicLength = 127
	// MaxGroupLength is the longest group name auto-creation accepts
	// (Validators.CHARACTER_MAX_LENGTH).
	MaxGroupLength = 255
)

// ErrInvalidName marks a topic or group name that breaks the naming rules;
// the error's text is the remark Java's broker answers with.
var ErrInvalidName = errors.New("meta: invalid name")

// NameError is a rejected topic name. Error returns the remark the Java
// broker puts in its SYSTEM_ERROR response.
type NameError struct {
	Name   string
	Remark string
}

func (e *NameError) Error() string        { return e.Remark }
func (e *NameError) Is(target error) bool { return target == ErrInvalidName }

// ValidateTopic applies the topic name rules of §14.4: not blank, only
// characters of ^[%|a-zA-Z0-9_-]+$, at most 127 characters.
func ValidateTopic(topic string) error {
	if strings.TrimSpace(topic) == "" {
		return &NameError{Name: topic, Remark: "The specified topic is blank."}
	}
	if !legalName(topic) {
		return &NameError{Name: topic, Remark: "The specified topic contains illegal characters, allowing only ^[%|a-zA-Z0-9_-]+$"}
	}
	if len(topic) > MaxTopicLength {
		return &NameError{Name: topic, Remark: "The specified topic is longer than topic max length."}
	}
	return nil
}

// legalName reports whether s uses only the characters of ^[%|a-zA-Z0-9_-]+$.
func legalName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c == '%', c == '|', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}

// fixedSystemTopics are the system topics every broker has; the cluster,
// broker-name, reply and trace topics depend on the configuration (see
// Topics.IsSystemTopic).
var fixedSystemTopics = map[string]bool{
	AutoCreateTopic: true, ScheduleTopic: true, BenchmarkTopic: true, TransHalfTopic: true,
	TraceTopic: true, TransOpHalfTopic: true, TransCheckMaxTopic: true, SelfTestTopic: true,
	OffsetMovedTopic: true,
}

// FixedSystemTopics lists the fixed system topics, sorted
// (GET_SYSTEM_TOPIC_LIST_FROM_BROKER).
func FixedSystemTopics() []string {
	return slices.Sorted(maps.Keys(fixedSystemTopics))
}

// isFixedSystemTopic reports a system topic that does not depend on the
// broker's configuration.
func isFixedSystemTopic(topic string) bool {
	return fixedSystemTopics[topic] || strings.HasPrefix(topic, SystemTopicPrefix)
}

// SendForbidden reports a topic producers may not send to: the broker
// answers NO_PERMISSION with SendForbiddenRemark (§14.4).
func SendForbidden(topic string) bool {
	switch topic {
	case ScheduleTopic, TransHalfTopic, TransOpHalfTopic, TransCheckMaxTopic, SelfTestTopic, OffsetMovedTopic:
		return true
	}
	return false
}

// SendForbiddenRemark is the remark of the NO_PERMISSION answer to a send
// to a topic SendForbidden reports.
func SendForbiddenRemark(topic string) string {
	return "Sending message to topic[" + topic + "] is forbidden."
}

// SystemTopicConflictRemark is the remark of the SYSTEM_ERROR answer to an
// admin create/update/delete of a system topic.
func SystemTopicConflictRemark(topic string) string {
	return "The topic[" + topic + "] is conflict with system topic."
}

// RetryTopic is the retry topic of a consumer group (%RETRY%group).
func RetryTopic(group string) string { return RetryGroupTopicPrefix + group }

// DLQTopic is the dead-letter topic of a consumer group (%DLQ%group).
func DLQTopic(group string) string { return DLQGroupTopicPrefix + group }

// IsRetryTopic reports a %RETRY% topic.
func IsRetryTopic(topic string) bool { return strings.HasPrefix(topic, RetryGroupTopicPrefix) }

// IsDLQTopic reports a %DLQ% topic.
func IsDLQTopic(topic string) bool { return strings.HasPrefix(topic, DLQGroupTopicPrefix) }

// IsSysConsumerGroup reports a group named CID_RMQ_SYS_*.
func IsSysConsumerGroup(group string) bool { return strings.HasPrefix(group, SysConsumerGroupPrefix) }

// validAutoCreateGroup is the check Java 5.x applies before auto-creating a
// subscription group (4.9.8 creates any name): the topic character set, at
// most 255 characters.
func validAutoCreateGroup(group string) bool {
	return legalName(group) && len(group) <= MaxGroupLength
}
