//go:build darwin

package config

import "golang.org/x/sys/unix"

// PhysicalMemoryBytes is the machine's RAM (Java's
// StoreUtil.TOTAL_PHYSICAL_MEMORY_SIZE); 0 when it cannot be read.
func PhysicalMemoryBytes() uint64 {
	n, err := unix.SysctlUint64("hw.memsize")
	if err != nil {
		return 0
	}
	return n
}
