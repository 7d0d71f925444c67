//go:build linux

package config

import "syscall"

// PhysicalMemoryBytes is the machine's RAM (Java's
// StoreUtil.TOTAL_PHYSICAL_MEMORY_SIZE); 0 when it cannot be read.
func PhysicalMemoryBytes() uint64 {
	var si syscall.Sysinfo_t
	if err := syscall.Sysinfo(&si); err != nil {
		return 0
	}
	return uint64(si.Totalram) * uint64(si.Unit)
}
