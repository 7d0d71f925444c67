package processor

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
)

// loKeys looks the lo key up in a send's header.
var loKeys = [...]string{"lo"}

// logicQueue is a request's queue on a static topic (Java's
// TopicQueueMappingContext): the queue id of such a request is a logic
// ("global") id, served by the last item of its chain, the leader.
type logicQueue struct {
	detail   *protocol.TopicQueueMappingDetail // nil: not a static topic here
	globalID int32
	leader   protocol.LogicQueueMappingItem
}

// sendLogicQueue resolves the queue of a send to a static topic as
// TopicQueueMappingManager.buildTopicQueueMappingContext (with
// selectOneWhenMiss: a negative id takes the lowest hosted one) and
// rewriteRequestForStaticTopic do: the leader must be on this broker,
// else NOT_LEADER_FOR_QUEUE with Java's remark. A topic without a mapping
// gives a zero logicQueue and SUCCESS, without a lock or an allocation.
//
// A request with lo=false (loFalse) names a physical queue and is not
// rewritten.
func (s *sendFamily) sendLogicQueue(req *remoting.Command, topic string, queueID int32) (logicQueue, int32, string) {
	d := s.mappings.Lookup(topic)
	if d == nil {
		return logicQueue{}, protocol.Success, ""
	}
	if req != nil {
		if v := req.LookupExt(loKeys[:]); v.Has(0) && !strings.EqualFold(v.Vals[0], "true") {
			return logicQueue{}, protocol.Success, ""
		}
	}
	lq := logicQueue{detail: d, globalID: queueID}
	if queueID < 0 {
		for id := range d.HostedQueues {
			if lq.globalID < 0 || id < lq.globalID {
				lq.globalID = id
			}
		}
	}
	leader, ok := d.Leader(lq.globalID)
	if !ok || leader.Bname != d.Bname {
		return lq, protocol.NotLeaderForQueue,
			fmt.Sprintf("%s-%d does not exit in request process of current broker %s", topic, lq.globalID, d.Bname)
	}
	lq.leader = leader
	return lq, protocol.Success, ""
}

// rewriteSendResponse names the logic queue and the logic offset in a
// stored message's answer (SendMessageProcessor.rewriteResponseForStaticTopic:
// computeStaticQueueOffsetLoosely, -1 while the leader's logic offset is
// undecided).
func (lq *logicQueue) rewriteSendResponse(resp *remoting.Command) {
	if lq.detail == nil {
		return
	}
	if e, ok := resp.Header.(*sendResponseExt); ok && e.stored {
		e.h.QueueID = lq.globalID
		e.h.QueueOffset = lq.leader.StaticOffsetLoosely(e.h.QueueOffset)
		return
	}
	if off, ok := resp.ExtFields["queueOffset"]; ok {
		if n, err := strconv.ParseInt(off, 10, 64); err == nil {
			resp.ExtFields["queueId"] = strconv.Itoa(int(lq.globalID))
			resp.ExtFields["queueOffset"] = strconv.FormatInt(lq.leader.StaticOffsetLoosely(n), 10)
		}
	}
}
