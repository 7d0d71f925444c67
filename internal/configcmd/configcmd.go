// Package configcmd answers the UPDATE_*_CONFIG requests (UPDATE_BROKER_CONFIG,
// UPDATE_NAMESRV_CONFIG, UPDATE_CONTROLLER_CONFIG) the same way for the
// broker, the NameServer and the controller: the body is Java properties
// text applied to a config.Runtime, which persists it.
package configcmd

import (
	"bytes"
	"errors"

	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
)

// Update applies an UPDATE_*_CONFIG body to rt and answers as Java:
// SUCCESS (also for an empty body), NO_PERMISSION for a black-listed key
// ("Can not update config in black list."), and rocketd's refusals, which
// Java does not make (it ignores unknown keys and cannot change start-only
// ones): NO_PERMISSION for a start-only or unknown key, INVALID_PARAMETER for
// a value that does not parse or cannot work; each remark names the key. A
// body that is not properties text is SYSTEM_ERROR ("string2Properties
// error"), a failed write of the config file SYSTEM_ERROR too. logged gets
// the applied keys (not called for an empty body).
func Update[T any](rt *config.Runtime[T], body []byte, logged func(config.Properties)) *remoting.Command {
	props, err := config.ParseProperties(bytes.NewReader(body))
	if err != nil {
		return remoting.NewResponse(protocol.SystemError, "string2Properties error: "+err.Error())
	}
	if err := rt.Update(props); err != nil {
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
		logged(props)
	}
	return remoting.NewResponse(protocol.Success, "")
}
