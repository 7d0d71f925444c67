package pace

import (
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// Waiter waits with a timerfd read through the network poller. One Waiter
// serves one goroutine at a time; Close releases its file descriptor.
type Waiter struct {
	f   *os.File // the timerfd, non-blocking, registered with the poller
	buf [8]byte  // expiration count read from the timerfd
	// fallback is set when the timerfd could not be made; waits then use
	// time.Sleep.
	fallback bool
}

// NewWaiter returns a Waiter. It falls back to time.Sleep (and says so in
// the error, which callers may log) when no timerfd can be created.
func NewWaiter() (*Waiter, error) {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return &Waiter{fallback: true}, fmt.Errorf("pace: timerfd_create: %w", err)
	}
	// os.NewFile registers a non-blocking descriptor with the poller, so
	// Read parks the goroutine instead of blocking a thread.
	return &Waiter{f: os.NewFile(uintptr(fd), "timerfd")}, nil
}

// wait blocks for d (> 0).
func (w *Waiter) wait(d time.Duration) {
	if w.fallback || w.f == nil {
		time.Sleep(d)
		return
	}
	due := time.Now().Add(d)
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(d.Nanoseconds())}
	if err := w.settime(&spec); err != nil {
		w.fallback = true
		time.Sleep(d)
		return
	}
	if _, err := w.f.Read(w.buf[:]); err != nil {
		// Closed or broken: from now on time.Sleep; never return early.
		w.fallback = true
		if r := time.Until(due); r > 0 {
			time.Sleep(r)
		}
	}
}

// settime arms the timer (relative, one shot).
func (w *Waiter) settime(spec *unix.ItimerSpec) error {
	rc, err := w.f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		serr = unix.TimerfdSettime(int(fd), 0, spec, nil)
	}); err != nil {
		return err
	}
	return serr
}

// Close releases the timerfd.
func (w *Waiter) Close() error {
	if w.f == nil {
		return nil
	}
	return w.f.Close()
}
