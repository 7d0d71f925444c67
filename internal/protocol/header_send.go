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
	return h.DecodeFrom(code, MapExt(ext))
}

// Decode reads the long-key form (SEND_MESSAGE, SEND_REPLY_MESSAGE).
func (h *SendMessageRequestHeader) Decode(ext map[string]string) error {
	return h.DecodeFrom(SendMessage, MapExt(ext))
}

// DecodeV2 reads the letter form (SendMessageRequestHeaderV2).
func (h *SendMessageRequestHeader) DecodeV2(ext map[string]string) error {
	return h.DecodeFrom(SendMessageV2, MapExt(ext))
}

// DecodeFrom decodes the header form that requests with code carry from
// src: a received remoting.Command reads it in one pass over the encoded
// header, without a map. The result, and any *FieldError, is the same as
// decoding the command's ExtFields map with DecodeFor.
func (h *SendMessageRequestHeader) DecodeFrom(code RequestCode, src ExtSource) error {
	name, keys := "SendMessageRequestHeader", &sendKeysV1
	if IsSendV2(code) {
		name, keys = "SendMessageRequestHeaderV2", &sendKeysV2
	}
	v := src.LookupExt(keys[:])
	return h.decodeValues(name, keys, &v)
}

// decodeValues fills h from the values of keys k, parsed in field order so
// the first bad field is the error.
func (h *SendMessageRequestHeader) decodeValues(header string, k *[14]string, v *ExtValues) error {
	r := extReader{header: header}
	h.ProducerGroup = v.Vals[0]
	h.Topic = v.Vals[1]
	h.DefaultTopic = v.Vals[2]
	h.DefaultTopicQueueNums = r.int32Of(k[3], v.Vals[3], v.Has(3))
	h.QueueID = r.int32Of(k[4], v.Vals[4], v.Has(4))
	h.SysFlag = r.int32Of(k[5], v.Vals[5], v.Has(5))
	h.BornTimestamp = r.int64Of(k[6], v.Vals[6], v.Has(6))
	h.Flag = r.int32Of(k[7], v.Vals[7], v.Has(7))
	h.Properties = v.Vals[8]
	h.ReconsumeTimes = r.optInt32Of(k[9], v.Vals[9], v.Has(9))
	h.UnitMode = optBoolOf(v.Vals[10], v.Has(10))
	h.MaxReconsumeTimes = r.optInt32Of(k[11], v.Vals[11], v.Has(11))
	h.Batch = optBoolOf(v.Vals[12], v.Has(12))
	h.BrokerName = v.Vals[13]
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

// EncoderFor returns h as the ExtEncoder of the header form requests with
// code carry: h itself (long keys) or h.V2() (letters).
func (h *SendMessageRequestHeader) EncoderFor(code RequestCode) ExtEncoder {
	if IsSendV2(code) {
		return h.V2()
	}
	return h
}

// AppendExtJSON writes the long-key form into a JSON header (ExtEncoder).
func (h *SendMessageRequestHeader) AppendExtJSON(dst []byte) []byte {
	w := NewExtWriter(dst, false)
	h.writeExtV1(&w)
	return w.Bytes()
}

// AppendExtBinary writes the long-key form into a ROCKETMQ header
// (ExtEncoder).
func (h *SendMessageRequestHeader) AppendExtBinary(dst []byte) []byte {
	w := NewExtWriter(dst, true)
	h.writeExtV1(&w)
	return w.Bytes()
}

// writeExtV1 writes the long keys in ascending byte order.
func (h *SendMessageRequestHeader) writeExtV1(w *ExtWriter) {
	w.OptBool("batch", h.Batch)
	w.OptString("bname", h.BrokerName)
	w.Int64("bornTimestamp", h.BornTimestamp)
	w.String("defaultTopic", h.DefaultTopic)
	w.Int32("defaultTopicQueueNums", h.DefaultTopicQueueNums)
	w.Int32("flag", h.Flag)
	w.OptInt32("maxReconsumeTimes", h.MaxReconsumeTimes)
	w.String("producerGroup", h.ProducerGroup)
	w.String("properties", h.Properties)
	w.Int32("queueId", h.QueueID)
	w.OptInt32("reconsumeTimes", h.ReconsumeTimes)
	w.Int32("sysFlag", h.SysFlag)
	w.String("topic", h.Topic)
	w.OptBool("unitMode", h.UnitMode)
}

// V2 returns h as the ExtEncoder of the letter form (SEND_MESSAGE_V2,
// SEND_BATCH_MESSAGE). It shares h: no copy, no allocation.
func (h *SendMessageRequestHeader) V2() ExtEncoder { return (*sendHeaderV2)(h) }

// sendHeaderV2 is SendMessageRequestHeader writing its letter keys.
type sendHeaderV2 SendMessageRequestHeader

func (h *sendHeaderV2) AppendExt(m map[string]string) { (*SendMessageRequestHeader)(h).AppendExtV2(m) }

func (h *sendHeaderV2) AppendExtJSON(dst []byte) []byte {
	w := NewExtWriter(dst, false)
	h.writeExt(&w)
	return w.Bytes()
}

func (h *sendHeaderV2) AppendExtBinary(dst []byte) []byte {
	w := NewExtWriter(dst, true)
	h.writeExt(&w)
	return w.Bytes()
}

// writeExt writes the letter keys, a to n: field order is key order.
func (h *sendHeaderV2) writeExt(w *ExtWriter) {
	w.String("a", h.ProducerGroup)
	w.String("b", h.Topic)
	w.String("c", h.DefaultTopic)
	w.Int32("d", h.DefaultTopicQueueNums)
	w.Int32("e", h.QueueID)
	w.Int32("f", h.SysFlag)
	w.Int64("g", h.BornTimestamp)
	w.Int32("h", h.Flag)
	w.String("i", h.Properties)
	w.OptInt32("j", h.ReconsumeTimes)
	w.OptBool("k", h.UnitMode)
	w.OptInt32("l", h.MaxReconsumeTimes)
	w.OptBool("m", h.Batch)
	w.OptString("n", h.BrokerName)
}

// SendMessageResponseHeader answers the send codes. A send response must
// always carry extFields (the Java client dereferences them), also for
// FLUSH_DISK_TIMEOUT, FLUSH_SLAVE_TIMEOUT and SLAVE_NOT_AVAILABLE. It is
// an ExtEncoder; Decode does not allocate.
//
//ext:encoder
type SendMessageResponseHeader struct {
	MsgID         string `ext:"msgId"` // offset message id; comma-joined for a batch
	QueueID       int32  `ext:"queueId"`
	QueueOffset   int64  `ext:"queueOffset"`
	TransactionID string `ext:"transactionId,opt"`
	// RecallHandle (5.3.x) is the handle a single timer message's send
	// answers, for RECALL_MESSAGE.
	RecallHandle string `ext:"recallHandle,opt"`
	// MsgRegion and TraceOn are not header fields in Java but the send
	// processor always adds them; the Java client reads both. Empty
	// MsgRegion / unset TraceOn are not written.
	MsgRegion string         `ext:"MSG_REGION,opt"`
	TraceOn   Optional[bool] `ext:"TRACE_ON"`
}
