//go:build unix

package remoting

import (
	"syscall"
	"time"
)

// processCPU returns the CPU time (user + system) the test process has used,
// a measure that, unlike wall time, does not depend on other processes
// competing for the machine.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
