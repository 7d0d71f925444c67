package processor

import "github.com/rocketd/rocketd/internal/config"

// brokerRole is the broker's role now: Deps.Role when set, else
// brokerRole from broker.conf.
func (p *Processor) brokerRole() config.BrokerRole {
	if p.role != nil {
		return p.role()
	}
	return p.cfg.BrokerRole
}

// isMaster reports a master (ASYNC_MASTER or SYNC_MASTER) now.
func (p *Processor) isMaster() bool { return p.brokerRole() != config.Slave }
