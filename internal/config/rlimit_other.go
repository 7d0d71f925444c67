//go:build !unix

package config

// openFileLimit stands in for RLIMIT_NOFILE where there is none.
func openFileLimit() uint64 { return fallbackOpenFileLimit }
