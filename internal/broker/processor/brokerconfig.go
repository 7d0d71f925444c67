package processor

import (
	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
)

// handleBrokerConfig serves GET_BROKER_CONFIG: the configuration as Java
// properties text ("key=value" lines, keys sorted), durations in the unit
// their key names (ms), as mqadmin getBrokerConfig prints them.
func (p *Processor) handleBrokerConfig(_ *remoting.Conn, _ *remoting.Command) *remoting.Command {
	resp := ok(&protocol.GetBrokerConfigResponseHeader{Version: p.configVersion})
	resp.Body = []byte(brokerConfigText(p.cfg))
	return resp
}

// brokerConfigText renders bc as GET_BROKER_CONFIG's body.
func brokerConfigText(bc *config.BrokerConfig) string { return config.PropertiesText(bc) }
