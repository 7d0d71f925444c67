package processor

import (
	"cmp"
	"slices"
	"strings"

	"github.com/rocketd/rocketd/internal/protocol"
)

// allocateFunc is one of Java's AllocateMessageQueueStrategy.allocate:
// the queues of mqAll that client cid gets among cidAll (both sorted and
// not empty); empty, not nil, when cid is not in cidAll.
type allocateFunc func(cid string, mqAll []protocol.MessageQueue, cidAll []string) []protocol.MessageQueue

// allocateStrategies are the strategies a 5.x broker's
// QueryAssignmentProcessor registers, by AllocateMessageQueueStrategy.getName().
var allocateStrategies = map[string]allocateFunc{
	protocol.StrategyAveragely:         allocateAveragely,
	protocol.StrategyAveragelyByCircle: allocateAveragelyByCircle,
}

// allocateAveragely gives each client a contiguous run of queues, the
// first mqAll%cidAll clients one more (AllocateMessageQueueAveragely).
func allocateAveragely(cid string, mqAll []protocol.MessageQueue, cidAll []string) []protocol.MessageQueue {
	index := slices.Index(cidAll, cid)
	if index < 0 {
		return []protocol.MessageQueue{}
	}
	n, c := len(mqAll), len(cidAll)
	mod := n % c
	size := n / c
	if n <= c {
		size = 1
	} else if mod > 0 && index < mod {
		size++
	}
	start := index*size + mod
	if mod > 0 && index < mod {
		start = index * size
	}
	count := min(size, n-start)
	if count <= 0 {
		return []protocol.MessageQueue{}
	}
	return slices.Clone(mqAll[start : start+count])
}

// allocateAveragelyByCircle deals the queues out in turn
// (AllocateMessageQueueAveragelyByCircle).
func allocateAveragelyByCircle(cid string, mqAll []protocol.MessageQueue, cidAll []string) []protocol.MessageQueue {
	index := slices.Index(cidAll, cid)
	if index < 0 {
		return []protocol.MessageQueue{}
	}
	out := []protocol.MessageQueue{}
	for i := index; i < len(mqAll); i += len(cidAll) {
		out = append(out, mqAll[i])
	}
	return out
}

// allocateForPop is QueryAssignmentProcessor.allocate4Pop: a POP client
// gets its own share plus the shares of the popShareQueueNum clients after
// it; with popShareQueueNum <= 0, or at least every other client, each
// client gets every queue (queue id -1: any queue of that broker). With
// more clients than queues each client gets one queue, in turn.
func allocateForPop(strategy allocateFunc, cid string, mqAll []protocol.MessageQueue, cidAll []string, popShareQueueNum int) []protocol.MessageQueue {
	if popShareQueueNum <= 0 || popShareQueueNum >= len(cidAll)-1 {
		out := make([]protocol.MessageQueue, len(mqAll))
		for i, q := range mqAll {
			out[i] = protocol.MessageQueue{Topic: q.Topic, BrokerName: q.BrokerName, QueueID: -1}
		}
		return out
	}
	index := slices.Index(cidAll, cid)
	if len(cidAll) > len(mqAll) {
		if index < 0 {
			return []protocol.MessageQueue{}
		}
		return []protocol.MessageQueue{mqAll[index%len(mqAll)]}
	}
	out := strategy(cid, mqAll, cidAll)
	if index >= 0 {
		for i := 1; i <= popShareQueueNum; i++ {
			out = append(out, strategy(cidAll[(index+i)%len(cidAll)], mqAll, cidAll)...)
		}
	}
	return out
}

// compareQueues is MessageQueue.compareTo: topic, broker name, queue id.
func compareQueues(a, b protocol.MessageQueue) int {
	if c := strings.Compare(a.Topic, b.Topic); c != 0 {
		return c
	}
	if c := strings.Compare(a.BrokerName, b.BrokerName); c != 0 {
		return c
	}
	return cmp.Compare(a.QueueID, b.QueueID)
}
