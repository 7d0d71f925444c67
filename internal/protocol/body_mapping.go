package protocol

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
)

// Static topics (RIP-21, logic queues): a topic whose queue ids are global
// ("logic") ids, each backed by a chain of physical queues on brokers. The
// types below are Java's (remoting.protocol.statictopic), written as
// fastjson writes them: properties sorted by name, integer map keys
// unquoted.

// MetadataScopeGlobal is the default scope of a mapping
// (MixAll.METADATA_SCOPE_GLOBAL).
const MetadataScopeGlobal = "__global__"

// LogicQueueMappingItem is one physical queue in a logic queue's chain: the
// queue QueueID of broker Bname holds the logic offsets from LogicOffset
// on, its own offsets from StartOffset to EndOffset (exclusive; -1: still
// open). Gen grows along the chain; the last item is the leader, the one
// that takes new messages.
type LogicQueueMappingItem struct {
	Gen         int32  `json:"gen"`
	QueueID     int32  `json:"queueId"`
	Bname       string `json:"bname"`
	LogicOffset int64  `json:"logicOffset"` // -1: not decided yet (a queue just mapped in)
	StartOffset int64  `json:"startOffset"`
	EndOffset   int64  `json:"endOffset"`
	TimeOfStart int64  `json:"timeOfStart"`
	TimeOfEnd   int64  `json:"timeOfEnd"`
}

// UnmarshalJSON starts from Java's field defaults (endOffset and the times
// -1).
func (it *LogicQueueMappingItem) UnmarshalJSON(data []byte) error {
	type plain LogicQueueMappingItem
	v := plain{EndOffset: -1, TimeOfStart: -1, TimeOfEnd: -1}
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	*it = LogicQueueMappingItem(v)
	return nil
}

// StaticOffsetLoosely is computeStaticQueueOffsetLoosely: the logic offset
// of a physical offset, clamped to the item's range; -1 while the item's
// logic offset is undecided.
func (it LogicQueueMappingItem) StaticOffsetLoosely(physical int64) int64 {
	if it.LogicOffset < 0 {
		return -1
	}
	if physical < it.StartOffset {
		return it.LogicOffset
	}
	if it.EndOffset >= it.StartOffset && it.EndOffset < physical {
		return it.LogicOffset + (it.EndOffset - it.StartOffset)
	}
	return it.LogicOffset + (physical - it.StartOffset)
}

// PhysicalOffset is computePhysicalQueueOffset: the physical offset of a
// logic offset in this item.
func (it LogicQueueMappingItem) PhysicalOffset(logic int64) int64 {
	return logic - it.LogicOffset + it.StartOffset
}

// MaxStaticOffset is computeMaxStaticQueueOffset.
func (it LogicQueueMappingItem) MaxStaticOffset() int64 {
	if it.EndOffset >= it.StartOffset {
		return it.LogicOffset + it.EndOffset - it.StartOffset
	}
	return it.LogicOffset
}

// TopicQueueMappingDetail is one broker's part of a static topic's mapping
// (TopicQueueMappingDetail): the chains of the logic queues it hosts (as
// leader or as an earlier item) besides the topic-wide figures.
type TopicQueueMappingDetail struct {
	Topic       string `json:"topic"`
	Scope       string `json:"scope"`
	TotalQueues int32  `json:"totalQueues"`
	Bname       string `json:"bname"` // the hosting broker
	Epoch       int64  `json:"epoch"` // fences older mapping data
	Dirty       bool   `json:"dirty"`
	// CurrIDMap is what a broker registers (logic id -> physical id of the
	// logic queues it leads); Java's detail carries it too, mostly empty.
	CurrIDMap    map[int32]int32                   `json:"currIdMap"`
	HostedQueues map[int32][]LogicQueueMappingItem `json:"hostedQueues"`
}

// UnmarshalJSON starts from Java's defaults (scope __global__).
func (d *TopicQueueMappingDetail) UnmarshalJSON(data []byte) error {
	type plain TopicQueueMappingDetail
	v := plain{Scope: MetadataScopeGlobal}
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	if v.CurrIDMap == nil {
		v.CurrIDMap = map[int32]int32{}
	}
	if v.HostedQueues == nil {
		v.HostedQueues = map[int32][]LogicQueueMappingItem{}
	}
	*d = TopicQueueMappingDetail(v)
	return nil
}

// Clone returns a deep copy.
func (d *TopicQueueMappingDetail) Clone() *TopicQueueMappingDetail {
	if d == nil {
		return nil
	}
	c := *d
	c.CurrIDMap = maps.Clone(d.CurrIDMap)
	if c.CurrIDMap == nil {
		c.CurrIDMap = map[int32]int32{}
	}
	c.HostedQueues = make(map[int32][]LogicQueueMappingItem, len(d.HostedQueues))
	for id, items := range d.HostedQueues {
		c.HostedQueues[id] = slices.Clone(items)
	}
	return &c
}

// Leader returns the last item of logic queue id's chain (the queue that
// takes its new messages); false when this detail has no chain for id.
func (d *TopicQueueMappingDetail) Leader(id int32) (LogicQueueMappingItem, bool) {
	items := d.HostedQueues[id]
	if len(items) == 0 {
		return LogicQueueMappingItem{}, false
	}
	return items[len(items)-1], true
}

// TopicQueueMappingInfo is what a broker registers of a static topic with
// the NameServers and what routes carry in topicQueueMappingByBroker
// (Java's TopicQueueMappingInfo): the detail without its chains, CurrIDMap
// the logic queues the broker leads (logic id -> physical id).
type TopicQueueMappingInfo struct {
	Topic       string          `json:"topic"`
	Scope       string          `json:"scope"`
	TotalQueues int32           `json:"totalQueues"`
	Bname       string          `json:"bname"`
	Epoch       int64           `json:"epoch"`
	Dirty       bool            `json:"dirty"`
	CurrIDMap   map[int32]int32 `json:"currIdMap"`
}

// UnmarshalJSON starts from Java's defaults (scope __global__, an empty
// currIdMap).
func (m *TopicQueueMappingInfo) UnmarshalJSON(data []byte) error {
	type plain TopicQueueMappingInfo
	v := plain{Scope: MetadataScopeGlobal}
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	if v.CurrIDMap == nil {
		v.CurrIDMap = map[int32]int32{}
	}
	*m = TopicQueueMappingInfo(v)
	return nil
}

// MappingInfo is TopicQueueMappingDetail.cloneAsMappingInfo: the detail's
// figures and its LEVEL_0 id map (LeaderIDMap); dirty is false.
func (d *TopicQueueMappingDetail) MappingInfo() *TopicQueueMappingInfo {
	return &TopicQueueMappingInfo{Topic: d.Topic, Scope: d.Scope, TotalQueues: d.TotalQueues, Bname: d.Bname,
		Epoch: d.Epoch, CurrIDMap: d.LeaderIDMap()}
}

// LeaderIDMap is buildIdMap(LEVEL_0): logic id -> physical queue id of the
// logic queues whose leader is on this detail's broker.
func (d *TopicQueueMappingDetail) LeaderIDMap() map[int32]int32 {
	m := map[int32]int32{}
	for id, items := range d.HostedQueues {
		if len(items) > 0 && items[len(items)-1].Bname == d.Bname {
			m[id] = items[len(items)-1].QueueID
		}
	}
	return m
}

// CheckItemOffsets is TopicQueueMappingUtils.checkLogicQueueMappingItemOffset:
// a chain's fields are not negative, only its last item may have an
// undecided logic offset, and gens and logic offsets grow along it.
func CheckItemOffsets(items []LogicQueueMappingItem) error {
	lastGen, lastOffset := int32(-1), int64(-1)
	for i := len(items) - 1; i >= 0; i-- {
		it := items[i]
		if it.StartOffset < 0 || it.Gen < 0 || it.QueueID < 0 {
			return errors.New("The field is illegal, should not be negative")
		}
		if len(items) >= 2 && i <= len(items)-2 && it.LogicOffset < 0 {
			return errors.New("The non-latest item has negative logic offset")
		}
		if lastGen != -1 && it.Gen >= lastGen {
			return errors.New("The gen dose not increase monotonically")
		}
		if it.EndOffset != -1 && it.EndOffset < it.StartOffset {
			return errors.New("The endOffset is smaller than the start offset")
		}
		if lastOffset != -1 && it.LogicOffset != -1 {
			if it.LogicOffset >= lastOffset {
				return errors.New("The base logic offset dose not increase monotonically")
			}
			if it.MaxStaticOffset() >= lastOffset {
				return errors.New("The max logic offset dose not increase monotonically")
			}
		}
		lastGen, lastOffset = it.Gen, it.LogicOffset
	}
	return nil
}

// CheckItemsImmutable is TopicQueueMappingUtils.makeSureLogicQueueMappingItemImmutable:
// the items both chains have (same gen) must agree on broker, queue, start
// offset and a decided logic offset; with equal epochs the leader must not
// change. Java checks the first with asserts (off in production); rocketd
// refuses such data.
func CheckItemsImmutable(oldItems, newItems []LogicQueueMappingItem, epochEqual bool) error {
	if len(oldItems) == 0 {
		return nil
	}
	if len(newItems) == 0 {
		return errors.New("The new item list is null or empty")
	}
	for io, in := 0, 0; io < len(oldItems) && in < len(newItems); {
		o, n := oldItems[io], newItems[in]
		switch {
		case n.Gen < o.Gen:
			in++
		case o.Gen < n.Gen:
			io++
		default:
			if o.Bname != n.Bname || o.QueueID != n.QueueID || o.StartOffset != n.StartOffset ||
				(o.LogicOffset != -1 && o.LogicOffset != n.LogicOffset) {
				return fmt.Errorf("The item of gen %d changed: %+v -> %+v", o.Gen, o, n)
			}
			io++
			in++
		}
	}
	if epochEqual {
		o, n := oldItems[len(oldItems)-1], newItems[len(newItems)-1]
		if n.Gen != o.Gen || n.Bname != o.Bname || n.QueueID != o.QueueID || n.StartOffset != o.StartOffset {
			return errors.New("The new leader is different but epoch equal")
		}
	}
	return nil
}

// TopicConfigAndQueueMapping is GET_TOPIC_CONFIG's body (5.x): the topic's
// config and, when asked for (lo=true) and the topic is static, this
// broker's mapping detail. Java's class extends TopicConfig; the
// properties are TopicConfig's plus mappingDetail.
type TopicConfigAndQueueMapping struct {
	TopicName       string                   `json:"topicName"`
	ReadQueueNums   int32                    `json:"readQueueNums"`
	WriteQueueNums  int32                    `json:"writeQueueNums"`
	Perm            int32                    `json:"perm"`
	TopicFilterType TopicFilterType          `json:"topicFilterType"`
	TopicSysFlag    int32                    `json:"topicSysFlag"`
	Order           bool                     `json:"order"`
	Attributes      map[string]string        `json:"attributes,omitempty"`
	MappingDetail   *TopicQueueMappingDetail `json:"mappingDetail,omitempty"`
	Unknown         UnknownMembers           `json:"-"`
}

// NewTopicConfigAndQueueMapping joins a topic config and a mapping (nil:
// none).
func NewTopicConfigAndQueueMapping(tc TopicConfig, d *TopicQueueMappingDetail) TopicConfigAndQueueMapping {
	return TopicConfigAndQueueMapping{
		TopicName: tc.TopicName, ReadQueueNums: tc.ReadQueueNums, WriteQueueNums: tc.WriteQueueNums,
		Perm: tc.Perm, TopicFilterType: tc.TopicFilterType, TopicSysFlag: tc.TopicSysFlag, Order: tc.Order,
		Attributes: tc.Attributes, MappingDetail: d, Unknown: tc.Unknown,
	}
}

// TopicQueueMappingSerializeWrapper is config/topicQueueMapping.json: each
// static topic's detail on this broker and the table's version.
type TopicQueueMappingSerializeWrapper struct {
	TopicQueueMappingInfoMap map[string]*TopicQueueMappingDetail `json:"topicQueueMappingInfoMap"`
	DataVersion              DataVersion                         `json:"dataVersion"`
}
