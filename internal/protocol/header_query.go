package protocol

// Message lookup headers (rocketmq-spec.md §3.4).

// ViewMessageRequestHeader is VIEW_MESSAGE_BY_ID (33).
type ViewMessageRequestHeader struct {
	Offset int64  // commit-log offset, decoded from the offset message id
	Topic  string // 5.x; optional
}

func (h *ViewMessageRequestHeader) AppendExt(m map[string]string) {
	putInt64(m, "offset", h.Offset)
	putOptStr(m, "topic", h.Topic)
}

func (h *ViewMessageRequestHeader) Decode(ext map[string]string) error {
	r := extReader{header: "ViewMessageRequestHeader", ext: ext}
	h.Offset = r.int64("offset")
	h.Topic = r.str("topic")
	return r.err
}

// QueryMessageRequestHeader is QUERY_MESSAGE (12).
type QueryMessageRequestHeader struct {
	Topic          string
	Key            string
	MaxNum         int32
	BeginTimestamp int64
	EndTimestamp   int64
	// UniqueKeyQuery is the extra key _UNIQUE_KEY_QUERY="true": Key is a
	// UNIQ_KEY and the broker uses its defaultQueryMaxNum.
	UniqueKeyQuery bool
}

func (h *QueryMessageRequestHeader) AppendExt(m map[string]string) {
	putStr(m, "topic", h.Topic)
	putStr(m, "key", h.Key)
	putInt32(m, "maxNum", h.MaxNum)
	putInt64(m, "beginTimestamp", h.BeginTimestamp)
	putInt64(m, "endTimestamp", h.EndTimestamp)
	if h.UniqueKeyQuery {
		putBool(m, "_UNIQUE_KEY_QUERY", true)
	}
}

func (h *QueryMessageRequestHeader) Decode(ext map[string]string) error {
	r := extReader{header: "QueryMessageRequestHeader", ext: ext}
	h.Topic = r.str("topic")
	h.Key = r.str("key")
	h.MaxNum = r.int32("maxNum")
	h.BeginTimestamp = r.int64("beginTimestamp")
	h.EndTimestamp = r.int64("endTimestamp")
	h.UniqueKeyQuery = r.bool("_UNIQUE_KEY_QUERY")
	return r.err
}

// QueryMessageResponseHeader answers QUERY_MESSAGE.
type QueryMessageResponseHeader struct {
	IndexLastUpdateTimestamp int64
	IndexLastUpdatePhyoffset int64
}

func (h *QueryMessageResponseHeader) AppendExt(m map[string]string) {
	putInt64(m, "indexLastUpdateTimestamp", h.IndexLastUpdateTimestamp)
	putInt64(m, "indexLastUpdatePhyoffset", h.IndexLastUpdatePhyoffset)
}

func (h *QueryMessageResponseHeader) Decode(ext map[string]string) error {
	r := extReader{header: "QueryMessageResponseHeader", ext: ext}
	h.IndexLastUpdateTimestamp = r.int64("indexLastUpdateTimestamp")
	h.IndexLastUpdatePhyoffset = r.int64("indexLastUpdatePhyoffset")
	return r.err
}
