package processor

import (
	"time"

	"github.com/rocketd/rocketd/internal/store"
)

// countPut counts a put to topic that began (the store call) at began that stored its messages (Java's
// handlePutMessageResult on sendOK: TOPIC_PUT_NUMS by the batch's message
// count, TOPIC_PUT_SIZE by the bytes written, BROKER_PUT_NUMS). topic is
// the record's topic after the put (a put the store refused counts in
// putMessageFailedTimes): SCHEDULE_TOPIC_XXXX for a delayed
// message, the half topic for a prepared one, as in Java.
func (s *sendFamily) countPut(topic string, res store.PutResult, began time.Time) {
	s.stats.PutLatency(time.Since(began))
	if res.Status.Stored() {
		s.stats.TopicPut(topic, int(max(res.MsgNum, 1)), int(res.WroteBytes))
	} else {
		s.stats.PutFailed()
	}
}

// countPull counts a pull's result: one that is answered with messages
// counts them for the group (GROUP_GET_NUMS/SIZE/LATENCY, BROKER_GET_NUMS),
// any other the store's miss (getMissTps); either one's time since began
// (the request's arrival) in getMessageEntireTimeMax.
func (pl *pullFamily) countPull(group, topic string, found bool, msgs, bytes int, began time.Time) {
	took := time.Since(began)
	pl.stats.GetLatency(took)
	if found {
		pl.stats.GroupGet(group, topic, msgs, bytes, took)
	} else {
		pl.stats.GetMiss()
	}
}
