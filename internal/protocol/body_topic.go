package protocol

import (
	"fmt"
	"strconv"
	"strings"
)

// TopicFilterType is Java's TopicFilterType enum, written by name.
type TopicFilterType string

const (
	SingleTag TopicFilterType = "SINGLE_TAG"
	MultiTag  TopicFilterType = "MULTI_TAG"
)

// Topic attribute names (Java's TopicAttributes) and the message types of
// message.type (TopicMessageType).
const (
	TopicAttrMessageType   = "message.type"
	TopicAttrQueueType     = "queue.type"
	TopicAttrCleanupPolicy = "cleanup.policy"
	TopicAttrReserveTime   = "reserve.time"

	MessageTypeUnspecified = "UNSPECIFIED"
	MessageTypeNormal      = "NORMAL"
	MessageTypeFIFO        = "FIFO"
	MessageTypeDelay       = "DELAY"
	MessageTypeTransaction = "TRANSACTION"
	MessageTypeMixed       = "MIXED"
)

// Java TopicConfig defaults, applied to properties a JSON text leaves out.
const (
	DefaultReadQueueNums  = 16
	DefaultWriteQueueNums = 16
	DefaultTopicPerm      = 6 // PERM_READ | PERM_WRITE
)

// TopicConfig is one topic's configuration as kept in topics.json and sent
// in REGISTER_BROKER.
type TopicConfig struct {
	TopicName       string          `json:"topicName"`
	ReadQueueNums   int32           `json:"readQueueNums"`
	WriteQueueNums  int32           `json:"writeQueueNums"`
	Perm            int32           `json:"perm"`
	TopicFilterType TopicFilterType `json:"topicFilterType"`
	TopicSysFlag    int32           `json:"topicSysFlag"`
	Order           bool            `json:"order"`
	// Attributes is a 5.x property (message.type, queue.type, ...);
	// omitted when empty.
	Attributes map[string]string `json:"attributes,omitempty"`
	// Unknown are the properties of a decoded text this type does not
	// model, written back as they came.
	Unknown UnknownMembers `json:"-"`
}

// NewTopicConfig returns a config with Java's defaults.
func NewTopicConfig(name string) TopicConfig {
	return TopicConfig{
		TopicName:       name,
		ReadQueueNums:   DefaultReadQueueNums,
		WriteQueueNums:  DefaultWriteQueueNums,
		Perm:            DefaultTopicPerm,
		TopicFilterType: SingleTag,
	}
}

// UnmarshalJSON starts from Java's defaults so that absent properties read
// as Java would read them.
func (t *TopicConfig) UnmarshalJSON(data []byte) error {
	type plain TopicConfig
	v := plain(NewTopicConfig(""))
	unknown, err := decodeWithUnknown(data, &v)
	if err != nil {
		return err
	}
	v.Unknown = unknown
	if len(v.Attributes) == 0 {
		v.Attributes = nil // "attributes":{} (5.x) is no attribute, as absent
	}
	*t = TopicConfig(v)
	return nil
}

// MessageType is the topic's message.type attribute (NORMAL when unset),
// as Java's TopicConfig.getTopicMessageType.
func (t *TopicConfig) MessageType() string {
	if v, ok := t.Attributes[TopicAttrMessageType]; ok {
		return v
	}
	return MessageTypeNormal
}

// EncodeLine returns the space-separated form carried in the compressed
// REGISTER_BROKER body (§4.4): "name read write perm filterType". Topic
// system flag and order are not part of it.
func (t *TopicConfig) EncodeLine() string {
	var b strings.Builder
	b.WriteString(t.TopicName)
	b.WriteByte(' ')
	b.WriteString(strconv.FormatInt(int64(t.ReadQueueNums), 10))
	b.WriteByte(' ')
	b.WriteString(strconv.FormatInt(int64(t.WriteQueueNums), 10))
	b.WriteByte(' ')
	b.WriteString(strconv.FormatInt(int64(t.Perm), 10))
	b.WriteByte(' ')
	b.WriteString(string(t.TopicFilterType))
	return b.String()
}

// DecodeLine parses the form written by EncodeLine. Like Java it needs
// exactly five fields.
func (t *TopicConfig) DecodeLine(s string) error {
	parts := strings.Split(s, " ")
	if len(parts) != 5 {
		return fmt.Errorf("protocol: topic config line %q: want 5 fields, have %d", s, len(parts))
	}
	var nums [3]int32
	for i, p := range parts[1:4] {
		n, err := strconv.ParseInt(p, 10, 32)
		if err != nil {
			return fmt.Errorf("protocol: topic config line %q: %w", s, err)
		}
		nums[i] = int32(n)
	}
	*t = TopicConfig{
		TopicName:       parts[0],
		ReadQueueNums:   nums[0],
		WriteQueueNums:  nums[1],
		Perm:            nums[2],
		TopicFilterType: TopicFilterType(parts[4]),
	}
	return nil
}

// DataVersion versions a broker's topic table: the name server rebuilds a
// broker's queue data only when it changes.
type DataVersion struct {
	Timestamp int64 `json:"timestamp"` // ms
	Counter   int64 `json:"counter"`
	// StateVersion is a 5.x property; omitted when zero.
	StateVersion int64 `json:"stateVersion,omitempty"`
}

// Equal is Java's DataVersion.equals: timestamp and counter match.
func (d DataVersion) Equal(o DataVersion) bool {
	return d.Timestamp == o.Timestamp && d.Counter == o.Counter
}

// TopicConfigSerializeWrapper is the topics.json document and the topic part
// of RegisterBrokerBody.
type TopicConfigSerializeWrapper struct {
	TopicConfigTable map[string]TopicConfig `json:"topicConfigTable"`
	DataVersion      DataVersion            `json:"dataVersion"`
	// TopicQueueMappingInfoMap is 5.x's TopicConfigAndMappingSerializeWrapper
	// member in REGISTER_BROKER: the static topics' mapping info, by
	// topic (omitted when nil; never in topics.json).
	TopicQueueMappingInfoMap map[string]*TopicQueueMappingInfo `json:"topicQueueMappingInfoMap,omitempty"`
	// TopicQueueMappingDetailMap and MappingDataVersion are the same
	// wrapper's members in GET_ALL_TOPIC_CONFIG's answer: the static
	// topics' mappings a slave copies (omitted when nil; Java's slave
	// reads the version whenever the map is there).
	TopicQueueMappingDetailMap map[string]*TopicQueueMappingDetail `json:"topicQueueMappingDetailMap,omitempty"`
	MappingDataVersion         *DataVersion                        `json:"mappingDataVersion,omitempty"`
	// Unknown are properties of a decoded file this type does not model.
	Unknown UnknownMembers `json:"-"`
}

// UnmarshalJSON keeps the properties this type does not model.
func (w *TopicConfigSerializeWrapper) UnmarshalJSON(data []byte) error {
	type plain TopicConfigSerializeWrapper
	var v plain
	unknown, err := decodeWithUnknown(data, &v)
	if err != nil {
		return err
	}
	v.Unknown = unknown
	*w = TopicConfigSerializeWrapper(v)
	return nil
}

// CreateTopicListRequestBody is the body of UPDATE_AND_CREATE_TOPIC_LIST
// (18, 5.x): each config's attributes map is a modification ("+key" ->
// value, "-key").
type CreateTopicListRequestBody struct {
	TopicConfigList []TopicConfig `json:"topicConfigList"`
}
