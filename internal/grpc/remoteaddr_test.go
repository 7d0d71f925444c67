package grpc

import (
	"context"
	"net"
	"net/netip"
	"testing"

	"google.golang.org/grpc/peer"
)

// TestRemoteAddr: read from a TCP address directly, the client's address
// is the one its text form parses to.
func TestRemoteAddr(t *testing.T) {
	for _, a := range []net.Addr{
		&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 40000}, // 16-byte form
		&net.TCPAddr{IP: net.IP{10, 1, 2, 3}, Port: 1},
		&net.TCPAddr{IP: net.ParseIP("2001:db8::1"), Port: 8081},
		&net.TCPAddr{IP: net.ParseIP("fe80::1"), Port: 8081, Zone: "eth0"},
		&net.TCPAddr{Port: 5},
		&net.UnixAddr{Name: "/tmp/s", Net: "unix"},
	} {
		want, err := netip.ParseAddrPort(a.String())
		if err != nil {
			want = netip.AddrPort{}
		}
		if got := remoteAddr(peer.NewContext(context.Background(), &peer.Peer{Addr: a})); got != want {
			t.Errorf("%s: %v, want %v", a, got, want)
		}
	}
	if got := remoteAddr(context.Background()); got.IsValid() {
		t.Errorf("no peer: %v", got)
	}
}
