package protocol

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// Client heartbeat and connection bodies (rocketmq-spec.md §4.5, §4.6;
// go-client-wire.md §5).

// ConsumeType tells push from pull consumers.
type ConsumeType string

const (
	ConsumeActively  ConsumeType = "CONSUME_ACTIVELY"  // pull consumer
	ConsumePassively ConsumeType = "CONSUME_PASSIVELY" // push consumer
)

// MessageModel is CLUSTERING or BROADCASTING.
type MessageModel string

const (
	Clustering   MessageModel = "CLUSTERING"
	Broadcasting MessageModel = "BROADCASTING"
)

// ConsumeFromWhere is where a new consumer group starts.
type ConsumeFromWhere string

const (
	ConsumeFromLastOffset  ConsumeFromWhere = "CONSUME_FROM_LAST_OFFSET"
	ConsumeFromFirstOffset ConsumeFromWhere = "CONSUME_FROM_FIRST_OFFSET"
	ConsumeFromTimestamp   ConsumeFromWhere = "CONSUME_FROM_TIMESTAMP"
	// Deprecated values Java still accepts.
	ConsumeFromLastOffsetAndFromMinWhenBootFirst ConsumeFromWhere = "CONSUME_FROM_LAST_OFFSET_AND_FROM_MIN_WHEN_BOOT_FIRST"
	ConsumeFromMinOffset                         ConsumeFromWhere = "CONSUME_FROM_MIN_OFFSET"
	ConsumeFromMaxOffset                         ConsumeFromWhere = "CONSUME_FROM_MAX_OFFSET"
)

// Subscription expression types.
const (
	ExpressionTag   = "TAG"
	ExpressionSQL92 = "SQL92"
	SubAll          = "*" // subString matching every tag
)

// HeartbeatData is the HEART_BEAT (34) body.
type HeartbeatData struct {
	ClientID        string         `json:"clientID"`
	ProducerDataSet []ProducerData `json:"producerDataSet"`
	ConsumerDataSet []ConsumerData `json:"consumerDataSet"`
}

// ProducerData names a producer group of the client.
type ProducerData struct {
	GroupName string `json:"groupName"`
}

// ConsumerData is one consumer group of the client with its subscriptions.
type ConsumerData struct {
	GroupName           string             `json:"groupName"`
	ConsumeType         ConsumeType        `json:"consumeType"`
	MessageModel        MessageModel       `json:"messageModel"`
	ConsumeFromWhere    ConsumeFromWhere   `json:"consumeFromWhere"`
	SubscriptionDataSet []SubscriptionData `json:"subscriptionDataSet"`
	UnitMode            bool               `json:"unitMode"`
}

// SubscriptionData is one topic subscription with its tag filter.
type SubscriptionData struct {
	ClassFilterMode bool     `json:"classFilterMode"`
	Topic           string   `json:"topic"`
	SubString       string   `json:"subString"` // "*" or tags joined by "||", or SQL92
	TagsSet         []string `json:"tagsSet"`
	// CodeSet holds the tag hash codes. Java computes String.hashCode over
	// UTF-16 units and sends numbers; the Go client hashes UTF-8 bytes and
	// sends strings: both are read, numbers are written.
	CodeSet        CodeSet `json:"codeSet"`
	SubVersion     int64   `json:"subVersion"` // ms from Java, ns from the Go client
	ExpressionType string  `json:"expressionType"`
}

// CodeSet is a set of tag hash codes that reads JSON numbers and numeric
// strings alike.
type CodeSet []int32

// UnmarshalJSON accepts [1,2] and ["1","2"]. A value outside int32 wraps
// as Java's int arithmetic would.
func (c *CodeSet) UnmarshalJSON(data []byte) error {
	if bytes.Equal(data, []byte("null")) {
		*c = nil
		return nil
	}
	var raw []json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return fmt.Errorf("codeSet: %w", err)
	}
	out := make(CodeSet, 0, len(raw))
	for _, r := range raw {
		s := string(r)
		if len(r) > 0 && r[0] == '"' {
			if err := json.Unmarshal(r, &s); err != nil {
				return fmt.Errorf("codeSet: %w", err)
			}
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return fmt.Errorf("codeSet: element %s: %w", r, err)
		}
		out = append(out, int32(n))
	}
	*c = out
	return nil
}

// GetConsumerListByGroupResponseBody answers GET_CONSUMER_LIST_BY_GROUP.
type GetConsumerListByGroupResponseBody struct {
	ConsumerIDList []string `json:"consumerIdList"`
}

// Connection describes one client channel (GET_CONSUMER_CONNECTION_LIST,
// GET_PRODUCER_CONNECTION_LIST).
type Connection struct {
	ClientID   string `json:"clientId"`
	ClientAddr string `json:"clientAddr"`
	Language   string `json:"language"` // LanguageCode enum name, e.g. "JAVA", "GO"
	Version    int32  `json:"version"`
}

// ConsumerConnection answers GET_CONSUMER_CONNECTION_LIST.
type ConsumerConnection struct {
	ConnectionSet     []Connection                `json:"connectionSet"`
	SubscriptionTable map[string]SubscriptionData `json:"subscriptionTable"` // topic -> subscription
	ConsumeType       ConsumeType                 `json:"consumeType,omitempty"`
	MessageModel      MessageModel                `json:"messageModel,omitempty"`
	ConsumeFromWhere  ConsumeFromWhere            `json:"consumeFromWhere,omitempty"`
}

// ProducerConnection answers GET_PRODUCER_CONNECTION_LIST.
type ProducerConnection struct {
	ConnectionSet []Connection `json:"connectionSet"`
}
