package namesrv

import (
	"bytes"
	"errors"

	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/protocol"
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
	props, err := config.ParseProperties(bytes.NewReader(req.Body))
	if err != nil {
		return remoting.NewResponse(protocol.SystemError, "string2Properties error: "+err.Error())
	}
	if err := s.rt.Update(props); err != nil {
		var ref *config.UpdateRefusal
		switch {
		case !errors.As(err, &ref):
			return remoting.NewResponse(protocol.SystemError, "persist config: "+err.Error())
		case ref.Kind == config.RefusedValue:
			return remoting.NewResponse(protocol.InvalidParameter, ref.Remark())
		default:
			return remoting.NewResponse(protocol.NoPermission, ref.Remark())
		}
	}
	if len(props) > 0 {
		s.log.Info("namesrv: config updated", "keys", props, "caller", conn.RemoteAddr())
	}
	return remoting.NewResponse(protocol.Success, "")
}
