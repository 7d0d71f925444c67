package processor

import (
	"sort"
	"strconv"
	"strings"

	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/configcmd"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
)

// handleBrokerConfig serves GET_BROKER_CONFIG: the configuration as Java
// properties text ("key=value" lines, keys sorted), durations in the unit
// their key names (ms), as mqadmin getBrokerConfig prints them; the live
// keys with their current values.
func (ba *brokerAdmin) handleBrokerConfig(_ *remoting.Conn, _ *remoting.Command) *remoting.Command {
	resp := ok(&protocol.GetBrokerConfigResponseHeader{Version: ba.rt.Version()})
	resp.Body = []byte(brokerConfigText(ba.live()))
	return resp
}

// brokerConfigText renders bc as GET_BROKER_CONFIG's body. Of the TLS
// settings it shows useTLS alone, whether outgoing connections use TLS:
// Java's answer has it (NettyClientConfig.useTLS), and mqadmin 4.9.x
// exportConfigs fails without it; the tls.* keys stay hidden.
func brokerConfigText(bc *config.BrokerConfig) string {
	lines := strings.Split(strings.TrimSuffix(config.PropertiesText(bc), "\n"), "\n")
	lines = append(lines, "useTLS="+strconv.FormatBool(bc.TLS.ClientEnabled()))
	sort.Strings(lines)
	return strings.Join(lines, "\n") + "\n"
}

// handleUpdateBrokerConfig serves UPDATE_BROKER_CONFIG (25, mqadmin
// updateBrokerConfig): the body is properties text; see config.Runtime for
// which keys change.
func (ba *brokerAdmin) handleUpdateBrokerConfig(conn *remoting.Conn, req *remoting.Command) *remoting.Command {
	return configcmd.Update(ba.rt, req.Body, func(props config.Properties) {
		ba.log.Info("processor: broker config updated", "keys", props, "caller", conn.RemoteAddr())
	})
}
