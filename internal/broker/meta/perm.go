package meta

import "strings"

// PermName bits of a topic's perm and of brokerPermission
// (rocketmq-spec.md §14.2).
const (
	PermPriority int32 = 1 << 3
	PermRead     int32 = 1 << 2
	PermWrite    int32 = 1 << 1
	// PermInherit marks a template topic (TBW102): a send to an unknown
	// topic may create it from this one.
	PermInherit int32 = 1 << 0
	// PermReadWrite is the perm of an ordinary topic.
	PermReadWrite = PermRead | PermWrite
)

// IsReadable reports the read bit: consumers may pull.
func IsReadable(perm int32) bool { return perm&PermRead != 0 }

// IsWriteable reports the write bit: producers may send.
func IsWriteable(perm int32) bool { return perm&PermWrite != 0 }

// IsInherited reports the inherit bit: the topic may serve as a template.
func IsInherited(perm int32) bool { return perm&PermInherit != 0 }

// PermString is the form tools print: "RWX" positions, '-' where a bit is
// clear (6 -> "RW-").
func PermString(perm int32) string {
	var b strings.Builder
	for _, p := range []struct {
		bit int32
		c   byte
	}{{PermRead, 'R'}, {PermWrite, 'W'}, {PermInherit, 'X'}} {
		if perm&p.bit != 0 {
			b.WriteByte(p.c)
		} else {
			b.WriteByte('-')
		}
	}
	return b.String()
}
