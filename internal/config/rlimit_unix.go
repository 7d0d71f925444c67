//go:build unix

package config

import "syscall"

// openFileLimit is the process's RLIMIT_NOFILE soft limit.
func openFileLimit() uint64 {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return fallbackOpenFileLimit
	}
	return uint64(rl.Cur)
}
