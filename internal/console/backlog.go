package console

import (
	"context"
	"net/http"
	"strings"

	"github.com/rocketd/rocketd/internal/admin"
	"github.com/rocketd/rocketd/internal/protocol"
)

// System topics and the group whose offsets record the transaction
// check's progress (broker/txn doc.go; Java TransactionalMessageUtil).
const (
	halfTopic   = "RMQ_SYS_TRANS_HALF_TOPIC"
	opHalfTopic = "RMQ_SYS_TRANS_OP_HALF_TOPIC"
	txnGroup    = "CID_RMQ_SYS_TRANS"
	timerTopic  = "rmq_sys_wheel_timer"
	// scheduleTopic holds delay-level messages, queue level-1.
	scheduleTopic = "SCHEDULE_TOPIC_XXXX"
)

// backlogView is one broker's transaction and timer backlog.
type backlogView struct {
	Broker string `json:"broker"`
	// HalfMax is the half queue's end; HalfChecked the check's progress on
	// it; HalfBacklog the half messages not yet walked by the check
	// (HalfMax - max(HalfChecked, half min)).
	HalfMax     int64 `json:"halfMax"`
	HalfChecked int64 `json:"halfChecked"`
	HalfBacklog int64 `json:"halfBacklog"`
	OpMax       int64 `json:"opMax"`
	// TimerEnqueued is the timer topic's end (messages ever held); Timer
	// holds the broker's timer* runtime keys when it reports them
	// (timerOffsetBehind, timerCongestNum, ...).
	TimerEnqueued int64             `json:"timerEnqueued"`
	Timer         map[string]string `json:"timer"`
	// DelayBacklog counts delay-level messages not yet delivered: per
	// level, SCHEDULE_TOPIC_XXXX queue level-1's end minus the delivery
	// progress (GET_ALL_DELAY_OFFSET); DelayLevels lists the levels that
	// have some.
	DelayBacklog int64           `json:"delayBacklog"`
	DelayLevels  map[int32]int64 `json:"delayLevels"`
	Error        string          `json:"error,omitempty"`
}

func (s *Server) getBacklog(w http.ResponseWriter, r *http.Request) {
	masters, err := s.admin.Masters(r.Context(), "")
	if err != nil {
		writeAdminError(w, err)
		return
	}
	out := []backlogView{}
	for _, b := range masters {
		if b.Addr == "" {
			continue
		}
		v := backlogView{Broker: b.Name, Timer: map[string]string{}}
		fail := func(err error) { v.Error = err.Error() }
		halfMin, halfMax, err := s.admin.QueueOffsets(r.Context(), b.Addr, halfTopic, 0)
		if err != nil {
			fail(err)
		}
		v.HalfMax = halfMax
		checked, found, err := s.admin.ConsumerOffset(r.Context(), b.Addr, txnGroup, halfTopic, 0)
		if err != nil {
			fail(err)
		}
		if !found {
			checked = halfMin
		}
		v.HalfChecked = checked
		v.HalfBacklog = max(halfMax-max(checked, halfMin), 0)
		if _, v.OpMax, err = s.admin.QueueOffsets(r.Context(), b.Addr, opHalfTopic, 0); err != nil {
			fail(err)
		}
		if _, v.TimerEnqueued, err = s.admin.QueueOffsets(r.Context(), b.Addr, timerTopic, 0); err != nil {
			fail(err)
		}
		v.DelayLevels = map[int32]int64{}
		if err := s.delayBacklog(r.Context(), b.Addr, &v); err != nil {
			fail(err)
		}
		info, err := s.admin.BrokerRuntimeInfo(r.Context(), b.Addr)
		if err != nil {
			fail(err)
		}
		for k, val := range info {
			if strings.HasPrefix(k, "timer") {
				v.Timer[k] = val
			}
		}
		out = append(out, v)
	}
	writeJSON(w, map[string]any{"brokers": out})
}

// delayBacklog fills v's delay-level backlog.
func (s *Server) delayBacklog(ctx context.Context, addr string, v *backlogView) error {
	delivered, err := s.admin.DelayOffsets(ctx, addr)
	if err != nil {
		return err
	}
	queues, err := s.admin.BrokerTopicStats(ctx, addr, scheduleTopic)
	if admin.IsCode(err, protocol.TopicNotExist) {
		return nil // no delayed message yet
	}
	if err != nil {
		return err
	}
	for _, q := range queues {
		level := q.QueueID + 1
		from, ok := delivered[level]
		if !ok {
			from = q.MinOffset
		}
		if n := q.MaxOffset - max(from, q.MinOffset); n > 0 {
			v.DelayLevels[level] = n
			v.DelayBacklog += n
		}
	}
	return nil
}
