package message

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
)

// Offset message ids (spec §5.8): uppercase hex of the store host address
// (4 or 16 bytes), its port (int32) and the commit-log offset (int64):
// 32 characters for IPv4, 56 for IPv6.
const (
	OffsetMsgIDLenV4 = 32
	OffsetMsgIDLenV6 = 56
)

// ErrBadMsgID is returned (wrapped) by ParseOffsetMsgID.
var ErrBadMsgID = errors.New("message: malformed offset message id")

const hexUpper = "0123456789ABCDEF"

// AppendOffsetMsgID appends the offset message id of the record stored at
// offset by store to dst. An IPv4-mapped address counts as IPv4; an invalid
// (zero) address is written as 0.0.0.0.
func AppendOffsetMsgID(dst []byte, store netip.AddrPort, offset int64) []byte {
	var raw [28]byte
	n := 0
	a := store.Addr()
	switch {
	case a.Is4() || a.Is4In6():
		b := a.Unmap().As4()
		n = copy(raw[:], b[:])
	case a.IsValid():
		b := a.As16()
		n = copy(raw[:], b[:])
	default:
		n = 4
	}
	binary.BigEndian.PutUint32(raw[n:], uint32(store.Port()))
	binary.BigEndian.PutUint64(raw[n+4:], uint64(offset))
	for _, c := range raw[:n+12] {
		dst = append(dst, hexUpper[c>>4], hexUpper[c&0xF])
	}
	return dst
}

// OffsetMsgID returns the offset message id of the record stored at offset
// by store, e.g. 127.0.0.1:10911 at 0 -> "7F00000100002A9F0000000000000000".
func OffsetMsgID(store netip.AddrPort, offset int64) string {
	var buf [OffsetMsgIDLenV6]byte
	return string(AppendOffsetMsgID(buf[:0], store, offset))
}

// ParseOffsetMsgID decodes an offset message id (either hex case): 32
// characters is IPv4, 56 is IPv6, anything else is ErrBadMsgID.
func ParseOffsetMsgID(id string) (netip.AddrPort, int64, error) {
	if len(id) != OffsetMsgIDLenV4 && len(id) != OffsetMsgIDLenV6 {
		return netip.AddrPort{}, 0, fmt.Errorf("%w: length %d", ErrBadMsgID, len(id))
	}
	var raw [28]byte
	n := len(id) / 2
	for i := range n {
		hi, ok1 := unhex(id[2*i])
		lo, ok2 := unhex(id[2*i+1])
		if !ok1 || !ok2 {
			return netip.AddrPort{}, 0, fmt.Errorf("%w: %q is not hex", ErrBadMsgID, id)
		}
		raw[i] = hi<<4 | lo
	}
	addrLen := n - 12
	var a netip.Addr
	if addrLen == 4 {
		a = netip.AddrFrom4([4]byte(raw[:4]))
	} else {
		a = netip.AddrFrom16([16]byte(raw[:16]))
	}
	port := binary.BigEndian.Uint32(raw[addrLen:])
	if port > 0xFFFF {
		return netip.AddrPort{}, 0, fmt.Errorf("%w: port %d", ErrBadMsgID, port)
	}
	offset := int64(binary.BigEndian.Uint64(raw[addrLen+4:]))
	return netip.AddrPortFrom(a, uint16(port)), offset, nil
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	}
	return 0, false
}
