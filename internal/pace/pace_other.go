//go:build !linux

package pace

import "time"

// Waiter falls back to time.Sleep where there is no timerfd.
type Waiter struct{}

// NewWaiter returns a Waiter.
func NewWaiter() (*Waiter, error) { return &Waiter{}, nil }

func (w *Waiter) wait(d time.Duration) { time.Sleep(d) }

// Close does nothing here.
func (w *Waiter) Close() error { return nil }
