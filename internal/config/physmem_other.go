//go:build !linux && !darwin

package config

// PhysicalMemoryBytes is 0 where rocketd cannot read the RAM size: every
// message then counts as in memory (the broker warns at start).
func PhysicalMemoryBytes() uint64 { return 0 }
