package processor

import (
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
)

// handleTimerCheckPoint serves GET_TIMER_CHECK_POINT (60): the timer's
// saved progress in Java's 56-byte TimerCheckpoint form (see
// protocol.TimerCheckpoint and Deps.TimerCheckpoint for how rocketd's
// timer maps onto it). A broker without a timer service (a slave) answers
// SYSTEM_ERROR "The checkpoint is null", as Java's does without one.
func (ba *brokerAdmin) handleTimerCheckPoint(_ *remoting.Conn, _ *remoting.Command) *remoting.Command {
	if ba.timerCheckpoint == nil {
		return remoting.NewResponse(protocol.SystemError, "The checkpoint is null")
	}
	cp, ok := ba.timerCheckpoint()
	if !ok {
		return remoting.NewResponse(protocol.SystemError, "The checkpoint is null")
	}
	resp := remoting.NewResponse(protocol.Success, "")
	resp.Body = cp.Encode()
	return resp
}

// handleTimerMetrics serves GET_TIMER_METRICS (61): the timer messages
// held per real topic (TimerMetrics JSON). Without a timer service (a
// slave): SYSTEM_ERROR "The timer message store is null", as Java's.
func (ba *brokerAdmin) handleTimerMetrics(_ *remoting.Conn, _ *remoting.Command) *remoting.Command {
	if ba.timerMetrics == nil {
		return remoting.NewResponse(protocol.SystemError, "The timer message store is null")
	}
	m, ok := ba.timerMetrics()
	if !ok {
		return remoting.NewResponse(protocol.SystemError, "The timer message store is null")
	}
	return bodyResponse(&m)
}
