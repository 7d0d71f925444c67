package remoting

import "time"

// RequestObserver is told of every request the server answered: its
// request code, the response code and the time from the frame's arrival
// to the response handed to the connection (oneway: to the handler's
// return). Requests the framework refuses (a full family queue, a request
// too long in its queue) count with SYSTEM_BUSY; those whose handler defers
// the reply (held pulls) are not observed. It runs on the goroutine that
// answered, so it must be cheap and never block (rocketmq_rpc_latency).
type RequestObserver interface {
	ObserveRequest(code, responseCode int32, oneway bool, d time.Duration)
}

// received returns the arrival time to stamp on a request: zero without
// an observer, so that a server without metrics reads no clock.
func (s *Server) received() int64 {
	if s.cfg.Observer == nil {
		return 0
	}
	return time.Now().UnixNano()
}

// observe reports a request answered with code (see RequestObserver).
func (s *Server) observe(req *Command, code int32, received int64) {
	if received == 0 {
		return
	}
	s.cfg.Observer.ObserveRequest(req.Code, code, req.IsOneway(), time.Duration(time.Now().UnixNano()-received))
}
