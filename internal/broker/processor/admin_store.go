package processor

import (
	"github.com/rocketd/rocketd/internal/broker/meta"
	"github.com/rocketd/rocketd/internal/store"
	"log/slog"
	"strings"

	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
)

// Store cleanups an admin triggers (mqadmin cleanExpiredCQ,
// deleteExpiredCommitLog, cleanUnusedTopic). None has a header.

// lmqPrefix starts the names of light message queues (Java's
// MixAll.LMQ_PREFIX), which have no topic config and are never unused.
const lmqPrefix = "%LMQ%"

// storeAdmin serves the store maintenance codes: clean expired consume
// queues, delete expired CommitLog files, clean unused topics.
type storeAdmin struct {
	log    *slog.Logger
	store  *store.Store
	topics *meta.Topics
}

func (sa *storeAdmin) register(srv *remoting.Server, pools Families) {
	srv.Handle(protocol.CleanExpiredConsumequeue, pools.Admin, sa.handleCleanExpiredConsumeQueue)
	srv.Handle(protocol.DeleteExpiredCommitlog, pools.Admin, sa.handleDeleteExpiredCommitLog)
	srv.Handle(protocol.CleanUnusedTopic, pools.Admin, sa.handleCleanUnusedTopic)
}

// handleCleanExpiredConsumeQueue serves CLEAN_EXPIRED_CONSUMEQUEUE (306):
// the ConsumeQueues whose records all lie below the CommitLog's min offset
// are destroyed, system topics' excepted (Java's cleanExpiredConsumerQueue).
func (sa *storeAdmin) handleCleanExpiredConsumeQueue(_ *remoting.Conn, _ *remoting.Command) *remoting.Command {
	n, err := sa.store.CleanExpiredConsumeQueues(sa.topics.IsSystemTopic)
	if err != nil {
		return remoting.NewResponse(protocol.SystemError, err.Error())
	}
	sa.log.Info("processor: cleaned expired consume queues", "count", n)
	return ok(nil)
}

// handleDeleteExpiredCommitLog serves DELETE_EXPIRED_COMMITLOG (329): the
// next cleanup rounds delete expired CommitLog segments whatever
// deleteWhen says (Java's executeDeleteFilesManually).
func (sa *storeAdmin) handleDeleteExpiredCommitLog(_ *remoting.Conn, _ *remoting.Command) *remoting.Command {
	sa.store.DeleteExpiredManually()
	return ok(nil)
}

// handleCleanUnusedTopic serves CLEAN_UNUSED_TOPIC (316): the ConsumeQueues
// of topics the topic config does not hold are deleted, except system
// topics and light message queues (Java's cleanUnusedTopic).
func (sa *storeAdmin) handleCleanUnusedTopic(_ *remoting.Conn, _ *remoting.Command) *remoting.Command {
	keep := func(topic string) bool {
		if _, found := sa.topics.Get(topic); found {
			return true
		}
		return sa.topics.IsSystemTopic(topic) || strings.HasPrefix(topic, lmqPrefix)
	}
	n, err := sa.store.CleanUnusedTopics(keep)
	if err != nil {
		return remoting.NewResponse(protocol.SystemError, err.Error())
	}
	sa.log.Info("processor: cleaned unused topics", "count", n)
	return ok(nil)
}
