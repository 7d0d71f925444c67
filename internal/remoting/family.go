package remoting

import "sync"

// Family is a processor family: a bounded queue feeding a fixed number of
// worker goroutines (Java's per-processor executor with a bounded
// BlockingQueue). When the queue is full the request is answered with
// SYSTEM_BUSY at once instead of waiting, so a slow family pushes back on
// its clients without holding up the connection's reader.
type Family struct {
	name    string
	workers int
	tasks   chan task
	s       *Server
	once    sync.Once
}

// task is one request on its way to a handler.
type task struct {
	conn *Conn
	req  *Command
	h    HandlerFunc
}

// NewFamily creates a family with workers goroutines and room for queueLen
// waiting requests (values below 1 become 1). Its workers run from Start
// until Shutdown.
func (s *Server) NewFamily(name string, workers, queueLen int) *Family {
	f := &Family{name: name, workers: max(workers, 1), tasks: make(chan task, max(queueLen, 1)), s: s}
	s.mu.Lock()
	s.mu.families = append(s.mu.families, f)
	started := s.mu.started
	s.mu.Unlock()
	if started {
		f.start()
	}
	return f
}

// Name returns the family's name.
func (f *Family) Name() string { return f.name }

// Queued returns the number of requests waiting for a worker.
func (f *Family) Queued() int { return len(f.tasks) }

// start launches the workers once; the server's WaitGroup owns them.
func (f *Family) start() {
	f.once.Do(func() {
		f.s.workers.Add(f.workers)
		for range f.workers {
			go func() {
				defer f.s.workers.Done()
				f.work()
			}()
		}
	})
}

func (f *Family) work() {
	for {
		select {
		case t := <-f.tasks:
			f.s.run(t.conn, t.req, t.h)
		case <-f.s.quit:
			return
		}
	}
}

// offer queues t without blocking; false means the queue is full.
func (f *Family) offer(t task) bool {
	select {
	case f.tasks <- t:
		return true
	default:
		return false
	}
}
