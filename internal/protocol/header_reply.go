package protocol

// Request-reply headers (rocketmq-spec.md §3.2: SEND_REPLY_MESSAGE 324 and
// SEND_REPLY_MESSAGE_V2 325 carry the send header; the broker pushes the
// reply to the requester with PUSH_REPLY_MESSAGE_TO_CLIENT 326).

// ReplyMessageRequestHeader is PUSH_REPLY_MESSAGE_TO_CLIENT (326), sent by
// the broker to the requesting producer: the reply's send header plus
// where and when it passed the broker. The body is the reply's body as
// sent (compressed when SysFlag says so).
type ReplyMessageRequestHeader struct {
	ProducerGroup         string // the replier's group
	Topic                 string // <cluster>_REPLY_TOPIC
	DefaultTopic          string
	DefaultTopicQueueNums int32
	QueueID               int32
	SysFlag               int32
	BornTimestamp         int64
	Flag                  int32
	Properties            string // encoded; CORRELATION_ID matches the request
	ReconsumeTimes        Optional[int32]
	UnitMode              bool
	BornHost              string // replier's "ip:port"
	StoreHost             string // broker's "ip:port"
	StoreTimestamp        int64  // ms
}

func (h *ReplyMessageRequestHeader) AppendExt(m map[string]string) {
	putStr(m, "producerGroup", h.ProducerGroup)
	putStr(m, "topic", h.Topic)
	putStr(m, "defaultTopic", h.DefaultTopic)
	putInt32(m, "defaultTopicQueueNums", h.DefaultTopicQueueNums)
	putInt32(m, "queueId", h.QueueID)
	putInt32(m, "sysFlag", h.SysFlag)
	putInt64(m, "bornTimestamp", h.BornTimestamp)
	putInt32(m, "flag", h.Flag)
	putStr(m, "properties", h.Properties)
	putOptInt32(m, "reconsumeTimes", h.ReconsumeTimes)
	putBool(m, "unitMode", h.UnitMode)
	putStr(m, "bornHost", h.BornHost)
	putStr(m, "storeHost", h.StoreHost)
	putInt64(m, "storeTimestamp", h.StoreTimestamp)
}

func (h *ReplyMessageRequestHeader) Decode(ext map[string]string) error {
	r := extReader{header: "ReplyMessageRequestHeader", ext: ext}
	h.ProducerGroup = r.str("producerGroup")
	h.Topic = r.str("topic")
	h.DefaultTopic = r.str("defaultTopic")
	h.DefaultTopicQueueNums = r.int32("defaultTopicQueueNums")
	h.QueueID = r.int32("queueId")
	h.SysFlag = r.int32("sysFlag")
	h.BornTimestamp = r.int64("bornTimestamp")
	h.Flag = r.int32("flag")
	h.Properties = r.str("properties")
	h.ReconsumeTimes = r.optInt32("reconsumeTimes")
	h.UnitMode = r.bool("unitMode")
	h.BornHost = r.str("bornHost")
	h.StoreHost = r.str("storeHost")
	h.StoreTimestamp = r.int64("storeTimestamp")
	return r.err
}

// requiredSendFields is how many leading keys of the send header Java
// declares @CFNotNull: producerGroup through flag (a..h).
const requiredSendFields = 8

// MissingSendField returns the first required send-header key that src
// lacks in the form requests with code carry (Java's long-form decoder
// refuses such a header: "the custom field <key> is null"), or "".
func MissingSendField(code RequestCode, src ExtSource) string {
	keys := sendKeysV1[:requiredSendFields]
	if IsSendV2(code) {
		keys = sendKeysV2[:requiredSendFields]
	}
	v := src.LookupExt(keys)
	for i, k := range keys {
		if !v.Has(i) {
			return k
		}
	}
	return ""
}
