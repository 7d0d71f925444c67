package processor

import (
	"bytes"
	"errors"
	"sort"
	"strconv"
	"strings"

	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
)

// handleBrokerConfig serves GET_BROKER_CONFIG: the configuration as Java
// properties text ("key=value" lines, keys sorted), durations in the unit
// their key names (ms), as mqadmin getBrokerConfig prints them; the live
// keys with their current values.
func (p *Processor) handleBrokerConfig(_ *remoting.Conn, _ *remoting.Command) *remoting.Command {
	resp := ok(&protocol.GetBrokerConfigResponseHeader{Version: p.rt.Version()})
	resp.Body = []byte(brokerConfigText(p.live()))
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
func (p *Processor) handleUpdateBrokerConfig(conn *remoting.Conn, req *remoting.Command) *remoting.Command {
	return updateConfig(p.rt, req.Body, func(props config.Properties) {
		p.log.Info("processor: broker config updated", "keys", props, "caller", conn.RemoteAddr())
	})
}

// updateConfig applies an UPDATE_*_CONFIG body to rt and answers as Java:
// SUCCESS (also for an empty body), NO_PERMISSION for a black-listed key
// ("Can not update config in black list."), and rocketd's refusals, which
// Java does not make (it ignores unknown keys and cannot change
// start-only ones): NO_PERMISSION for a start-only or unknown key,
// INVALID_PARAMETER for a value that does not parse or cannot work; each
// remark names the key. A body that is not properties text is
// SYSTEM_ERROR ("string2Properties error"), a failed write of the config
// file SYSTEM_ERROR too.
func updateConfig[T any](rt *config.Runtime[T], body []byte, logged func(config.Properties)) *remoting.Command {
	props, err := config.ParseProperties(bytes.NewReader(body))
	if err != nil {
		return remoting.NewResponse(protocol.SystemError, "string2Properties error: "+err.Error())
	}
	if err := rt.Update(props); err != nil {
		var ref *config.UpdateRefusal
		if !errors.As(err, &ref) {
			return remoting.NewResponse(protocol.SystemError, "persist config: "+err.Error())
		}
		if ref.Kind == config.RefusedValue {
			return remoting.NewResponse(protocol.InvalidParameter, ref.Remark())
		}
		return remoting.NewResponse(protocol.NoPermission, ref.Remark())
	}
	if len(props) > 0 {
		logged(props)
	}
	return remoting.NewResponse(protocol.Success, "")
}
