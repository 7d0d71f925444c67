package protocol

// Message lookup headers (rocketmq-spec.md §3.4).

// ViewMessageRequestHeader is VIEW_MESSAGE_BY_ID (33).
type ViewMessageRequestHeader struct {
	Offset int64  `ext:"offset"`    // commit-log offset, decoded from the offset message id
	Topic  string `ext:"topic,opt"` // 5.x
}

// QueryMessageRequestHeader is QUERY_MESSAGE (12).
type QueryMessageRequestHeader struct {
	Topic          string `ext:"topic"`
	Key            string `ext:"key"`
	MaxNum         int32  `ext:"maxNum"`
	BeginTimestamp int64  `ext:"beginTimestamp"`
	EndTimestamp   int64  `ext:"endTimestamp"`
	// UniqueKeyQuery is the extra key _UNIQUE_KEY_QUERY="true": Key is a
	// UNIQ_KEY and the broker uses its defaultQueryMaxNum.
	UniqueKeyQuery bool `ext:"_UNIQUE_KEY_QUERY,opt"`
}

// QueryMessageResponseHeader answers QUERY_MESSAGE.
type QueryMessageResponseHeader struct {
	IndexLastUpdateTimestamp int64 `ext:"indexLastUpdateTimestamp"`
	IndexLastUpdatePhyoffset int64 `ext:"indexLastUpdatePhyoffset"`
}
