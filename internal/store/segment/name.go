package segment

import (
	"fmt"
	"strconv"
)

// nameDigits is the width of a segment file name (RocketMQ: 20 digits).
const nameDigits = 20

// tmpSuffix marks a file the allocator has not finished preparing.
const tmpSuffix = ".tmp"

// Name returns the file name of a segment starting at offset: the offset as a
// 20-digit zero-padded decimal.
func Name(offset int64) string {
	return fmt.Sprintf("%020d", offset)
}

// ParseName returns the start offset encoded in a segment file name.
func ParseName(name string) (int64, error) {
	if len(name) != nameDigits {
		return 0, fmt.Errorf("segment: file name %q: want %d digits", name, nameDigits)
	}
	for i := 0; i < len(name); i++ {
		if name[i] < '0' || name[i] > '9' {
			return 0, fmt.Errorf("segment: file name %q: not a decimal offset", name)
		}
	}
	off, err := strconv.ParseInt(name, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("segment: file name %q: %w", name, err)
	}
	return off, nil
}
