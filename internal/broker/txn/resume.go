package txn

import (
	"context"
	"errors"
	"fmt"

	"github.com/rocketd/rocketd/internal/broker/meta"
	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/store"
)

// ErrNotHalf refuses to resume a record that is not a half message.
var ErrNotHalf = errors.New("txn: not a half message")

// Resume stores r, a half message read back from the CommitLog (usually
// one discarded to TRANS_CHECK_MAX_TIME_TOPIC after too many checks),
// again in the half queue with TRANSACTION_CHECK_TIMES 0, so the check
// rounds ask its producer about it CheckMax more times
// (RESUME_CHECK_HALF_MESSAGE, Java's AdminBrokerProcessor.resumeCheckHalfMessage).
// Java re-puts whatever record the id names; rocketd takes only records
// of the half or the check-max topic that carry REAL_TOPIC, so an admin
// typo cannot turn an ordinary message into a transaction.
func (s *Service) Resume(r *message.Record) (store.PutResult, error) {
	if r.Topic != meta.TransHalfTopic && r.Topic != meta.TransCheckMaxTopic {
		return store.PutResult{}, fmt.Errorf("%w: it is stored in %s, not in %s or %s", ErrNotHalf, r.Topic, meta.TransHalfTopic, meta.TransCheckMaxTopic)
	}
	if _, ok := message.Property(r.Properties, message.PropertyRealTopic); !ok {
		return store.PutResult{}, fmt.Errorf("%w: it has no %s property", ErrNotHalf, message.PropertyRealTopic)
	}
	props := message.SetProperty(r.Properties, message.PropertyTransactionCheckTimes, "0")
	c := message.Record{
		// The sysFlag stays: half-queue copies are stored as not
		// transactional (so they are dispatched), as Java's are.
		Topic: meta.TransHalfTopic, QueueID: 0, Flag: r.Flag, SysFlag: r.SysFlag,
		BornTimestamp: r.BornTimestamp, BornHost: r.BornHost, ReconsumeTimes: r.ReconsumeTimes,
		Body: r.Body, Properties: props,
	}
	res := s.cfg.Store.PutMessage(context.Background(), &c, store.PutOptions{NoWait: true, NoDelayRewrite: true})
	if res.Status == store.PutOK {
		s.log.Info("txn: half message resumed for checking", "from", r.Topic, "uniqKey", settleKey(r), "halfOffset", res.QueueOffset)
		s.Kick()
	}
	return res, nil
}
