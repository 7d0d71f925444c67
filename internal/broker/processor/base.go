package processor

import (
	"log/slog"

	"github.com/rocketd/rocketd/internal/broker/meta"
	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
)

// base is what every family reads: the configuration (at start and live),
// the broker's role and the logger. Families embed it by value; it never
// changes after New.
type base struct {
	cfg  *config.BrokerConfig                 // read only: the configuration at start
	rt   *config.Runtime[config.BrokerConfig] // the keys UPDATE_BROKER_CONFIG changes
	role func() config.BrokerRole             // nil: cfg.BrokerRole for good
	log  *slog.Logger
}

// brokerReadable and brokerWriteable apply brokerPermission.
func (b base) brokerReadable() bool  { return meta.IsReadable(b.cfg.BrokerPermission) }
func (b base) brokerWriteable() bool { return meta.IsWriteable(b.cfg.BrokerPermission) }

// live is the configuration's current snapshot: read the keys
// UPDATE_BROKER_CONFIG may change (config.BrokerLiveKeys) through it.
func (b base) live() *config.BrokerConfig { return b.rt.Load() }

// brokerRole is the broker's role now: Deps.Role when set, else
// brokerRole from broker.conf.
func (b base) brokerRole() config.BrokerRole {
	if b.role != nil {
		return b.role()
	}
	return b.cfg.BrokerRole
}

// isMaster reports a master (ASYNC_MASTER or SYNC_MASTER) now.
func (b base) isMaster() bool { return b.brokerRole() != config.Slave }

// masterOnly refuses h's request on a slave: its topics and subscription
// groups are copies of the master's, overwritten by the next copy
// (rocketmq-spec.md §12.1).
func (b base) masterOnly(h remoting.HandlerFunc) remoting.HandlerFunc {
	return func(conn *remoting.Conn, req *remoting.Command) *remoting.Command {
		if !b.isMaster() {
			return remoting.NewResponse(protocol.SystemError,
				"Can't modify topic or subscription group from slave broker, please execute it from master broker.")
		}
		return h(conn, req)
	}
}
