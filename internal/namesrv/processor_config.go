package namesrv

import (
	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/configcmd"
	"github.com/rocketd/rocketd/internal/remoting"
)

// updateConfig serves UPDATE_NAMESRV_CONFIG (318, mqadmin
// updateNamesrvConfig): the body is properties text; the live keys
// (config.NamesrvLiveKeys) are applied and written to configStorePath.
// Answers as the broker's UPDATE_BROKER_CONFIG: SUCCESS (an empty body
// too), NO_PERMISSION for a black-listed key (Java's remark), a start-only
// or an unknown key, INVALID_PARAMETER for a bad value, SYSTEM_ERROR for
// a body that is not properties text or a failed write.
func (s *Server) updateConfig(conn *remoting.Conn, req *remoting.Command) *remoting.Command {
	return configcmd.Update(s.rt, req.Body, func(props config.Properties) {
		s.log.Info("namesrv: config updated", "keys", props, "caller", conn.RemoteAddr())
	})
}
