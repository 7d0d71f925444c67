package protocol

import (
	"maps"
	"slices"
)

// SubscriptionGroupConfig is one consumer group's settings
// (subscriptionGroup.json; UPDATE_AND_CREATE_SUBSCRIPTIONGROUP), with the
// properties RocketMQ 5.x added. Those are left out of the JSON text while
// they hold Java's default, so a group 4.9.x could have written is written
// as 4.9.x writes it; readers apply the defaults for absent properties.
type SubscriptionGroupConfig struct {
	GroupName                      string `json:"groupName"`
	ConsumeEnable                  bool   `json:"consumeEnable"`
	ConsumeFromMinEnable           bool   `json:"consumeFromMinEnable"`
	ConsumeBroadcastEnable         bool   `json:"consumeBroadcastEnable"`
	RetryQueueNums                 int32  `json:"retryQueueNums"`
	RetryMaxTimes                  int32  `json:"retryMaxTimes"`
	BrokerID                       int64  `json:"brokerId"`
	WhichBrokerWhenConsumeSlowly   int64  `json:"whichBrokerWhenConsumeSlowly"`
	NotifyConsumerIdsChangedEnable bool   `json:"notifyConsumerIdsChangedEnable"`

	// 5.x properties.
	ConsumeMessageOrderly bool             `json:"consumeMessageOrderly"`
	GroupRetryPolicy      GroupRetryPolicy `json:"groupRetryPolicy"`
	GroupSysFlag          int32            `json:"groupSysFlag"`
	// ConsumeTimeoutMinute is read by push consumers only (default 15).
	ConsumeTimeoutMinute int32                    `json:"consumeTimeoutMinute"`
	SubscriptionDataSet  []SimpleSubscriptionData `json:"subscriptionDataSet,omitempty"` // Java null: omitted
	Attributes           map[string]string        `json:"attributes,omitempty"`

	// Unknown are the properties of a decoded text this type does not
	// model, written back as they came.
	Unknown UnknownMembers `json:"-"`
}

// Java's defaults of the 5.x group properties.
const (
	DefaultConsumeTimeoutMinute = 15
	RetryPolicyCustomized       = "CUSTOMIZED"
	RetryPolicyExponential      = "EXPONENTIAL"
)

// GroupRetryPolicy is a 5.x group's retry back-off (GroupRetryPolicy): the
// type, and the parameters of the chosen policy (null: its defaults).
type GroupRetryPolicy struct {
	Type                   string                  `json:"type"`
	ExponentialRetryPolicy *ExponentialRetryPolicy `json:"exponentialRetryPolicy"`
	CustomizedRetryPolicy  *CustomizedRetryPolicy  `json:"customizedRetryPolicy"`
}

// ExponentialRetryPolicy: delay initial*multiplier^n ms, at most max.
type ExponentialRetryPolicy struct {
	Initial    int64 `json:"initial"`
	Max        int64 `json:"max"`
	Multiplier int64 `json:"multiplier"`
}

// CustomizedRetryPolicy: the delays in ms, by retry.
type CustomizedRetryPolicy struct {
	Next []int64 `json:"next"`
}

// SimpleSubscriptionData is one subscription a 5.x group declares.
type SimpleSubscriptionData struct {
	Topic          string `json:"topic"`
	ExpressionType string `json:"expressionType"`
	Expression     string `json:"expression"`
	Version        int64  `json:"version"`
}

// NewSubscriptionGroupConfig returns a group with Java's defaults (§4.6).
func NewSubscriptionGroupConfig(group string) SubscriptionGroupConfig {
	return SubscriptionGroupConfig{
		GroupName:                      group,
		ConsumeEnable:                  true,
		ConsumeFromMinEnable:           true,
		ConsumeBroadcastEnable:         true,
		RetryQueueNums:                 1,
		RetryMaxTimes:                  16,
		BrokerID:                       0,
		WhichBrokerWhenConsumeSlowly:   1,
		NotifyConsumerIdsChangedEnable: true,
		GroupRetryPolicy:               GroupRetryPolicy{Type: RetryPolicyCustomized},
		ConsumeTimeoutMinute:           DefaultConsumeTimeoutMinute,
	}
}

// UnmarshalJSON starts from the defaults so that absent properties read as
// Java reads them, and keeps the properties this type does not model.
func (g *SubscriptionGroupConfig) UnmarshalJSON(data []byte) error {
	type plain SubscriptionGroupConfig
	v := plain(NewSubscriptionGroupConfig(""))
	unknown, err := decodeWithUnknown(data, &v)
	if err != nil {
		return err
	}
	v.Unknown = unknown
	// Empty reads as absent: both are written as absent.
	if len(v.Attributes) == 0 {
		v.Attributes = nil
	}
	if len(v.SubscriptionDataSet) == 0 {
		v.SubscriptionDataSet = nil
	}
	*g = SubscriptionGroupConfig(v)
	return nil
}

// omitDefault leaves out the 5.x properties while they hold Java's default.
func (g SubscriptionGroupConfig) omitDefault(property string) bool {
	switch property {
	case "consumeMessageOrderly":
		return !g.ConsumeMessageOrderly
	case "groupRetryPolicy":
		p := g.GroupRetryPolicy
		return p.Type == RetryPolicyCustomized && p.ExponentialRetryPolicy == nil && p.CustomizedRetryPolicy == nil
	case "groupSysFlag":
		return g.GroupSysFlag == 0
	case "consumeTimeoutMinute":
		return g.ConsumeTimeoutMinute == DefaultConsumeTimeoutMinute
	}
	return false
}

// Clone returns a copy that shares no map or slice with g.
func (g SubscriptionGroupConfig) Clone() SubscriptionGroupConfig {
	g.SubscriptionDataSet = slices.Clone(g.SubscriptionDataSet)
	if g.Attributes != nil {
		g.Attributes = maps.Clone(g.Attributes)
	}
	if g.Unknown != nil {
		g.Unknown = cloneUnknown(g.Unknown)
	}
	if p := g.GroupRetryPolicy.ExponentialRetryPolicy; p != nil {
		c := *p
		g.GroupRetryPolicy.ExponentialRetryPolicy = &c
	}
	if p := g.GroupRetryPolicy.CustomizedRetryPolicy; p != nil {
		g.GroupRetryPolicy.CustomizedRetryPolicy = &CustomizedRetryPolicy{Next: slices.Clone(p.Next)}
	}
	return g
}
