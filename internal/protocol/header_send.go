package protocol

// Send headers (rocketmq-spec.md §3.2; go-client-wire.md §4.2, §4.3).

// SendMessageRequestHeader is the header of SEND_MESSAGE (10, long keys) and
// of SEND_MESSAGE_V2 / SEND_BATCH_MESSAGE / SEND_REPLY_MESSAGE_V2 (310, 320,
// 325, one-letter keys). One struct, two encodings: Decode/AppendExt for the
// long form, DecodeV2/AppendExtV2 for the letter form, DecodeFor to choose
// by request code.
type SendMessageRequestHeader struct {
	ProducerGroup         string          // a
	Topic                 string          // b
	DefaultTopic          string          // c, normally TBW102
	DefaultTopicQueueNums int32           // d
	QueueID               int32           // e, key queueId; negative: broker picks
	SysFlag               int32           // f, MessageSysFlag bits
	BornTimestamp         int64           // g, ms
	Flag                  int32           // h, user flag
	Properties            string          // i, encoded property string
	ReconsumeTimes        Optional[int32] // j
	UnitMode              Optional[bool]  // k
	// MaxReconsumeTimes (l) is honoured only when the request version is >=
	// V3_4_9; absent means "use the group's retryMaxTimes".
	MaxReconsumeTimes Optional[int32]
	Batch             Optional[bool] // m
	BrokerName        string         // n, key bname; optional
}

// V1 (long) and V2 (letter) keys, in field order.
var (
	sendKeysV1 = [...]string{"producerGroup", "topic", "defaultTopic", "defaultTopicQueueNums", "queueId",
		"sysFlag", "bornTimestamp", "flag", "properties", "reconsumeTimes", "unitMode",
		"maxReconsumeTimes", "batch", "bname"}
	sendKeysV2 = [...]string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n"}
)

// IsSendV2 reports whether requests with this code carry the letter header.
func IsSendV2(code RequestCode) bool {
	switch code {
	case SendMessageV2, SendBatchMessage, SendReplyMessageV2:
		return true
	}
	return false
}

// DecodeFor decodes the header form that requests with code carry.
func (h *SendMessageRequestHeader) DecodeFor(code RequestCode, ext map[string]string) error {
	if IsSendV2(code) {
		return h.DecodeV2(ext)
	}
	return h.Decode(ext)
}

// Decode reads the long-key form (SEND_MESSAGE, SEND_REPLY_MESSAGE).
func (h *SendMessageRequestHeader) Decode(ext map[string]string) error {
	return h.decode("SendMessageRequestHeader", ext, &sendKeysV1)
}

// DecodeV2 reads the letter form (SendMessageRequestHeaderV2).
func (h *SendMessageRequestHeader) DecodeV2(ext map[string]string) error {
	return h.decode("SendMessageRequestHeaderV2", ext, &sendKeysV2)
}

func (h *SendMessageRequestHeader) decode(header string, ext map[string]string, k *[14]string) error {
	r := extReader{header: header, ext: ext}
	h.ProducerGroup = r.str(k[0])
	h.Topic = r.str(k[1])
	h.DefaultTopic = r.str(k[2])
	h.DefaultTopicQueueNums = r.int32(k[3])
	h.QueueID = r.int32(k[4])
	h.SysFlag = r.int32(k[5])
	h.BornTimestamp = r.int64(k[6])
	h.Flag = r.int32(k[7])
	h.Properties = r.str(k[8])
	h.ReconsumeTimes = r.optInt32(k[9])
	h.UnitMode = r.optBool(k[10])
	h.MaxReconsumeTimes = r.optInt32(k[11])
	h.Batch = r.optBool(k[12])
	h.BrokerName = r.str(k[13])
	return r.err
}

// AppendExt writes the long-key form. Properties is always written (Java
// clients send "" for a message without properties).
func (h *SendMessageRequestHeader) AppendExt(m map[string]string) { h.appendExt(m, &sendKeysV1) }

// AppendExtV2 writes the letter form.
func (h *SendMessageRequestHeader) AppendExtV2(m map[string]string) { h.appendExt(m, &sendKeysV2) }

func (h *SendMessageRequestHeader) appendExt(m map[string]string, k *[14]string) {
	putStr(m, k[0], h.ProducerGroup)
	putStr(m, k[1], h.Topic)
	putStr(m, k[2], h.DefaultTopic)
	putInt32(m, k[3], h.DefaultTopicQueueNums)
	putInt32(m, k[4], h.QueueID)
	putInt32(m, k[5], h.SysFlag)
	putInt64(m, k[6], h.BornTimestamp)
	putInt32(m, k[7], h.Flag)
	putStr(m, k[8], h.Properties)
	putOptInt32(m, k[9], h.ReconsumeTimes)
	putOptBool(m, k[10], h.UnitMode)
	putOptInt32(m, k[11], h.MaxReconsumeTimes)
	putOptBool(m, k[12], h.Batch)
	putOptStr(m, k[13], h.BrokerName)
}

// SendMessageResponseHeader answers the send codes. A send response must
// always carry extFields (the Java client dereferences them), also for
// FLUSH_DISK_TIMEOUT, FLUSH_SLAVE_TIMEOUT and SLAVE_NOT_AVAILABLE.
type SendMessageResponseHeader struct {
	MsgID         string // key msgId: offset message id; comma-joined for a batch
	QueueID       int32  // key queueId
	QueueOffset   int64
	TransactionID string // key transactionId; optional
	// MsgRegion (key MSG_REGION) and TraceOn (key TRACE_ON) are not header
	// fields in Java but the send processor always adds them; the Java
	// client reads both. Empty MsgRegion / unset TraceOn are not written.
	MsgRegion string
	TraceOn   Optional[bool]
}

func (h *SendMessageResponseHeader) AppendExt(m map[string]string) {
	putStr(m, "msgId", h.MsgID)
	putInt32(m, "queueId", h.QueueID)
	putInt64(m, "queueOffset", h.QueueOffset)
	putOptStr(m, "transactionId", h.TransactionID)
	putOptStr(m, "MSG_REGION", h.MsgRegion)
	putOptBool(m, "TRACE_ON", h.TraceOn)
}

func (h *SendMessageResponseHeader) Decode(ext map[string]string) error {
	r := extReader{header: "SendMessageResponseHeader", ext: ext}
	h.MsgID = r.str("msgId")
	h.QueueID = r.int32("queueId")
	h.QueueOffset = r.int64("queueOffset")
	h.TransactionID = r.str("transactionId")
	h.MsgRegion = r.str("MSG_REGION")
	h.TraceOn = r.optBool("TRACE_ON")
	return r.err
}
