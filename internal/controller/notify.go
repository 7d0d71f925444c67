package controller

import (
	"context"
	"log/slog"
	"time"

	"github.com/rocketd/rocketd/internal/lograte"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
)

// NotifyBrokerRoleChanged is Java's NOTIFY_BROKER_ROLE_CHANGED (1008),
// which the controller sends to brokers; brokers serve it.
const NotifyBrokerRoleChanged protocol.RequestCode = 1008

// notifyQueueLen bounds the notifications waiting to be sent; a broker
// that misses one learns the master on its next poll.
const notifyQueueLen = 256

type notification struct {
	addr string
	req  *remoting.Command
}

// notifier sends NOTIFY_BROKER_ROLE_CHANGED oneway from a loop of its
// own, so that a slow or dead broker address never holds up an election.
type notifier struct {
	rc    *remoting.Client
	log   *slog.Logger
	queue chan notification
	warn  lograte.Limiter
}

func newNotifier(log *slog.Logger) *notifier {
	return &notifier{rc: remoting.NewClient(remoting.ClientConfig{DialTimeout: 3 * time.Second}), log: log,
		queue: make(chan notification, notifyQueueLen)}
}

func (n *notifier) run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case job := <-n.queue:
			if err := n.rc.InvokeOneway(job.addr, job.req); err != nil {
				n.warn.Log(n.log, slog.LevelWarn, "controller: notify broker role changed failed", "broker", job.addr, "err", err)
			}
		}
	}
}

func (n *notifier) enqueue(job notification) {
	select {
	case n.queue <- job:
	default:
		n.warn.Log(n.log, slog.LevelWarn, "controller: notification queue full, broker learns its role on its next poll", "broker", job.addr)
	}
}

// notifyRoleChanged tells the live brokers of brokerName who the master
// is now (Java's ControllerManager.notifyBrokerRoleChanged), when
// notifyBrokerRoleChanged is on.
func (c *Controller) notifyRoleChanged(brokerName string) {
	if !c.rt.Load().NotifyBrokerRoleChanged {
		return
	}
	var (
		b  *brokerSet
		ok bool
	)
	c.fsm.read(func(s *state) {
		if set := s.Sets[brokerName]; set != nil {
			b, ok = set.clone(), true
		}
	})
	if !ok {
		return
	}
	m, has := b.masterID()
	if !has {
		return
	}
	ext := protocol.Ext(&protocol.MasterInfoHeader{MasterBrokerID: protocol.Some(m), MasterAddress: b.addr(m),
		MasterEpoch: protocol.Some(b.MasterEpoch), SyncStateSetEpoch: protocol.Some(b.SyncStateSetEpoch)})
	body, err := protocol.MarshalFastJSON(b.syncStateSetBody())
	if err != nil {
		return
	}
	for _, id := range b.memberIDs() {
		if !c.live.alive(brokerKey{b.ClusterName, b.BrokerName, id}) {
			continue
		}
		c.notify.enqueue(notification{addr: b.addr(id), req: remoting.NewRequest(NotifyBrokerRoleChanged, ext, body)})
	}
}
