package txn

import (
	"context"
	"strconv"
	"strings"

	"github.com/rocketd/rocketd/internal/broker/meta"
	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/store"
)

// IsHalf reports whether a send's properties mark a half message
// (TRAN_MSG=true; Java's Boolean.parseBoolean ignores case).
func IsHalf(props string) bool {
	v, _ := message.Property(props, message.PropertyTransactionPrepared)
	return strings.EqualFold(v, "true")
}

// ToHalf rewrites r, a prepared send to r.Topic/r.QueueID, into the half
// message Java stores (TransactionalMessageBridge.parseHalfMessageInner):
// REAL_TOPIC and REAL_QID kept, transaction bits reset to NOT_TYPE, half
// topic queue 0.
func ToHalf(r *message.Record) {
	props := message.SetProperty(r.Properties, message.PropertyRealTopic, r.Topic)
	r.Properties = message.SetProperty(props, message.PropertyRealQueueID, strconv.FormatInt(int64(r.QueueID), 10))
	r.SysFlag = message.WithTransactionType(r.SysFlag, message.TransactionNotType)
	r.Topic = meta.TransHalfTopic
	r.QueueID = 0
}

// PutHalf stores r as a half message (ToHalf, then the put). The result's
// MsgID and QueueOffset are the half record's: what the producer echoes in
// END_TRANSACTION.
func (s *Service) PutHalf(ctx context.Context, r *message.Record, opts store.PutOptions) store.PutResult {
	ToHalf(r)
	// A DELAY property must not park a half message in the schedule topic:
	// it would leave the half queue and never be checked.
	opts.NoDelayRewrite = true
	res := s.cfg.Store.PutMessage(ctx, r, opts)
	if s.cfg.Observer != nil && res.Status == store.PutOK {
		topic, _ := message.Property(r.Properties, message.PropertyRealTopic)
		s.cfg.Observer.HalfPut(topic)
	}
	return res
}
