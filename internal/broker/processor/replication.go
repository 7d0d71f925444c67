package processor

import (
	"errors"
	"io/fs"
	"path/filepath"

	"github.com/rocketd/rocketd/internal/broker/meta"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
	"github.com/rocketd/rocketd/internal/vfs"
)

// The master's side of the slave's metadata copy (rocketmq-spec.md §12.1):
// a slave asks every 10 s for GET_ALL_TOPIC_CONFIG, GET_ALL_CONSUMER_OFFSET,
// GET_ALL_SUBSCRIPTIONGROUP_CONFIG (served in topic.go and admin.go) and
// GET_ALL_DELAY_OFFSET (here).

// handleAllDelayOffset serves GET_ALL_DELAY_OFFSET. Like Java's
// AdminBrokerProcessor it answers the text of config/delayOffset.json as
// persisted (the schedule service owns the table and writes the file);
// SYSTEM_ERROR when there is none.
func (p *Processor) handleAllDelayOffset(_ *remoting.Conn, _ *remoting.Command) *remoting.Command {
	name := filepath.Join(meta.ConfigDir(p.cfg.StorePathRootDir), meta.DelayOffsetFile)
	data, err := vfs.ReadFile(vfs.Default, name)
	switch {
	case errors.Is(err, fs.ErrNotExist) || err == nil && len(data) == 0:
		return remoting.NewResponse(protocol.SystemError, "No delay offset in this broker")
	case err != nil:
		return remoting.ErrorResponse(err)
	}
	resp := remoting.NewResponse(protocol.Success, "")
	resp.Body = data
	return resp
}

// masterOnly refuses h's request on a slave: its topics and subscription
// groups are copies of the master's, overwritten by the next copy
// (rocketmq-spec.md §12.1).
func (p *Processor) masterOnly(h remoting.HandlerFunc) remoting.HandlerFunc {
	return func(conn *remoting.Conn, req *remoting.Command) *remoting.Command {
		if !p.cfg.IsMaster() {
			return remoting.NewResponse(protocol.SystemError,
				"Can't modify topic or subscription group from slave broker, please execute it from master broker.")
		}
		return h(conn, req)
	}
}
