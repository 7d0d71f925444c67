package role

import (
	"bytes"
	"context"
	"fmt"

	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
	"github.com/rocketd/rocketd/internal/vfs"
)

// syncTimerCheckpoint copies the master's timer progress
// (GET_TIMER_CHECK_POINT, Java's 56-byte TimerCheckpoint, as Java's
// SlaveSynchronize.syncTimerCheckPoint does) to Tables.TimerCheckpointPath:
// a promoted slave's timer goes on from it (delivers what the old master
// held and had not delivered, and nothing it had). A master without a
// timer answers SYSTEM_ERROR "The checkpoint is null": nothing is copied.
// The answer carries no version and does not change the polling pace.
func (s *slaveSync) syncTimerCheckpoint(addr string) error {
	name := s.r.tables.TimerCheckpointPath
	if name == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(s.ctx, slaveSyncRequestTimeout)
	defer cancel()
	resp, err := s.r.cfg.NS.Invoke(ctx, addr, remoting.NewRequest(protocol.GetTimerCheckPoint, nil, nil))
	switch {
	case err != nil:
		return &unreachableError{fmt.Errorf("request %d: %w", protocol.GetTimerCheckPoint, err)}
	case resp.Code == protocol.SystemError:
		return nil // no timer on the master
	case resp.Code != protocol.Success:
		return fmt.Errorf("request %d: code %d: %s", protocol.GetTimerCheckPoint, resp.Code, resp.Remark)
	}
	if _, err := protocol.DecodeTimerCheckpoint(resp.Body); err != nil {
		return fmt.Errorf("request %d: %w", protocol.GetTimerCheckPoint, err)
	}
	if cur, err := vfs.ReadFile(s.r.cfg.FS, name); err == nil && bytes.Equal(cur, resp.Body) {
		return nil
	}
	return vfs.WriteFileAtomic(s.r.cfg.FS, name, resp.Body)
}
