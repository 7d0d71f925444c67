package protocol

// Request-reply headers (rocketmq-spec.md §3.2: SEND_REPLY_MESSAGE 324 and
// SEND_REPLY_MESSAGE_V2 325 carry the send header; the broker pushes the
// reply to the requester with PUSH_REPLY_MESSAGE_TO_CLIENT 326).

// ReplyMessageRequestHeader is PUSH_REPLY_MESSAGE_TO_CLIENT (326), sent by
// the broker to the requesting producer: the reply's send header plus
// where and when it passed the broker. The body is the reply's body as
// sent (compressed when SysFlag says so).
type ReplyMessageRequestHeader struct {
	ProducerGroup         string          `ext:"producerGroup"` // the replier's group
	Topic                 string          `ext:"topic"`         // <cluster>_REPLY_TOPIC
	DefaultTopic          string          `ext:"defaultTopic"`
	DefaultTopicQueueNums int32           `ext:"defaultTopicQueueNums"`
	QueueID               int32           `ext:"queueId"`
	SysFlag               int32           `ext:"sysFlag"`
	BornTimestamp         int64           `ext:"bornTimestamp"`
	Flag                  int32           `ext:"flag"`
	Properties            string          `ext:"properties"` // encoded; CORRELATION_ID matches the request
	ReconsumeTimes        Optional[int32] `ext:"reconsumeTimes"`
	UnitMode              bool            `ext:"unitMode"`
	BornHost              string          `ext:"bornHost"`       // replier's "ip:port"
	StoreHost             string          `ext:"storeHost"`      // broker's "ip:port"
	StoreTimestamp        int64           `ext:"storeTimestamp"` // ms
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
