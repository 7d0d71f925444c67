package message

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"sync"
	"time"
)

// Client unique ids (UNIQ_KEY, spec §5.8): uppercase hex of
//
//	client IP (4 or 16 bytes) | pid (int16) | class-loader hash (int32) |
//	ms since the start of the current month, local time (int32) | counter (int16)
//
// 32 hex characters with an IPv4 address, 56 with IPv6. The broker treats
// them as opaque keys; the time field lets a query by id narrow its search
// window (UniqIDTime), and tools that produce messages (rocketctl bench)
// generate them like the Java client does (UniqIDGenerator).
const (
	UniqIDLenV4 = 32
	UniqIDLenV6 = 56
)

// UniqIDGenerator makes client unique ids for one process. Safe for
// concurrent use.
type UniqIDGenerator struct {
	mu        sync.Mutex
	prefix    []byte // ip | pid | loader hash
	counter   uint16
	monthFrom time.Time // start of the current month
	monthTo   time.Time // start of the next one
	now       func() time.Time
}

// NewUniqIDGenerator returns a generator for a process at ip with this pid;
// loaderHash stands in for Java's class-loader hash (any per-process value).
// An IPv4-mapped address counts as IPv4; an invalid one as 0.0.0.0.
func NewUniqIDGenerator(ip netip.Addr, pid int, loaderHash int32) *UniqIDGenerator {
	var p []byte
	switch {
	case ip.Is4() || ip.Is4In6():
		a := ip.Unmap().As4()
		p = append(p, a[:]...)
	case ip.IsValid():
		a := ip.As16()
		p = append(p, a[:]...)
	default:
		p = append(p, 0, 0, 0, 0)
	}
	p = binary.BigEndian.AppendUint16(p, uint16(pid))
	p = binary.BigEndian.AppendUint32(p, uint32(loaderHash))
	return &UniqIDGenerator{prefix: p, now: time.Now}
}

func monthStart(t time.Time) time.Time {
	return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, t.Location())
}

// Next returns a new id.
func (g *UniqIDGenerator) Next() string {
	var buf [UniqIDLenV6]byte
	return string(g.AppendNext(buf[:0]))
}

// AppendNext appends a new id to dst: Next without allocating, for a
// producer that writes the id straight into its request (rocketctl bench).
func (g *UniqIDGenerator) AppendNext(dst []byte) []byte {
	return g.AppendNextAt(dst, g.now())
}

// AppendNextAt is AppendNext with the id's time given: a producer that
// read the clock for the request (its born timestamp) stamps every id of a
// batch with that reading instead of reading the clock again per message.
func (g *UniqIDGenerator) AppendNextAt(dst []byte, now time.Time) []byte {
	g.mu.Lock()
	if !now.Before(g.monthTo) || now.Before(g.monthFrom) {
		g.monthFrom = monthStart(now)
		g.monthTo = g.monthFrom.AddDate(0, 1, 0)
	}
	diff := int32(now.Sub(g.monthFrom).Milliseconds())
	n := g.counter
	g.counter++
	g.mu.Unlock()

	var tail [6]byte
	binary.BigEndian.PutUint32(tail[:], uint32(diff))
	binary.BigEndian.PutUint16(tail[4:], n)
	for _, c := range g.prefix {
		dst = append(dst, hexUpper[c>>4], hexUpper[c&0xF])
	}
	for _, c := range tail {
		dst = append(dst, hexUpper[c>>4], hexUpper[c&0xF])
	}
	return dst
}

// UniqIDTime returns about when the id was made, as the Java broker computes
// it (MessageClientIDSetter.getNearlyTimeFromID): the id's offset from the
// start of now's month (local time), or of the previous month if that would
// not be in the past.
func UniqIDTime(id string, now time.Time) (time.Time, error) {
	raw, err := decodeUniqID(id)
	if err != nil {
		return time.Time{}, err
	}
	ipLen := len(raw) - 12
	span := time.Duration(binary.BigEndian.Uint32(raw[ipLen+6:])) * time.Millisecond
	start := monthStart(now)
	if !start.Add(span).Before(now) {
		start = start.AddDate(0, -1, 0)
	}
	return start.Add(span), nil
}

// UniqIDAddr returns the client address encoded in the id.
func UniqIDAddr(id string) (netip.Addr, error) {
	raw, err := decodeUniqID(id)
	if err != nil {
		return netip.Addr{}, err
	}
	if len(raw) == UniqIDLenV4/2 {
		return netip.AddrFrom4([4]byte(raw[:4])), nil
	}
	return netip.AddrFrom16([16]byte(raw[:16])), nil
}

func decodeUniqID(id string) ([]byte, error) {
	if len(id) != UniqIDLenV4 && len(id) != UniqIDLenV6 {
		return nil, fmt.Errorf("%w: unique id of length %d", ErrBadMsgID, len(id))
	}
	raw := make([]byte, len(id)/2)
	for i := range raw {
		hi, ok1 := unhex(id[2*i])
		lo, ok2 := unhex(id[2*i+1])
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("%w: %q is not hex", ErrBadMsgID, id)
		}
		raw[i] = hi<<4 | lo
	}
	return raw, nil
}
