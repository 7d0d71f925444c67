package processor

import (
	"strings"

	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
)

// Store cleanups an admin triggers (mqadmin cleanExpiredCQ,
// deleteExpiredCommitLog, cleanUnusedTopic). None has a header.

// lmqPrefix starts the names of light message queues (Java's
// MixAll.LMQ_PREFIX), which have no topic config and are never unused.
const lmqPrefix = "%LMQ%"

// handleCleanExpiredConsumeQueue serves CLEAN_EXPIRED_CONSUMEQUEUE (306):
// the ConsumeQueues whose records all lie below the CommitLog's min offset
// are destroyed, system topics' excepted (Java's cleanExpiredConsumerQueue).
func (p *Processor) handleCleanExpiredConsumeQueue(_ *remoting.Conn, _ *remoting.Command) *remoting.Command {
	n, err := p.store.CleanExpiredConsumeQueues(p.topics.IsSystemTopic)
	if err != nil {
		return remoting.NewResponse(protocol.SystemError, err.Error())
	}
	p.log.Info("processor: cleaned expired consume queues", "count", n)
	return ok(nil)
}

// handleDeleteExpiredCommitLog serves DELETE_EXPIRED_COMMITLOG (329): the
// next cleanup rounds delete expired CommitLog segments whatever
// deleteWhen says (Java's executeDeleteFilesManually).
func (p *Processor) handleDeleteExpiredCommitLog(_ *remoting.Conn, _ *remoting.Command) *remoting.Command {
	p.store.DeleteExpiredManually()
	return ok(nil)
}

// handleCleanUnusedTopic serves CLEAN_UNUSED_TOPIC (316): the ConsumeQueues
// of topics the topic config does not hold are deleted, except system
// topics and light message queues (Java's cleanUnusedTopic).
func (p *Processor) handleCleanUnusedTopic(_ *remoting.Conn, _ *remoting.Command) *remoting.Command {
	keep := func(topic string) bool {
		if _, found := p.topics.Get(topic); found {
			return true
		}
		return p.topics.IsSystemTopic(topic) || strings.HasPrefix(topic, lmqPrefix)
	}
	n, err := p.store.CleanUnusedTopics(keep)
	if err != nil {
		return remoting.NewResponse(protocol.SystemError, err.Error())
	}
	p.log.Info("processor: cleaned unused topics", "count", n)
	return ok(nil)
}
