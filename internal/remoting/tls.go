package remoting

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"time"
)

// TLSMode is how a server treats TLS, RocketMQ's tls.server.mode.
type TLSMode int

const (
	// TLSDisabled serves plaintext only; a connection that opens with a
	// TLS handshake is closed (Java's "disabled").
	TLSDisabled TLSMode = iota
	// TLSPermissive serves both: the first byte of a connection tells a
	// TLS handshake (0x16) from a plaintext frame (Java's "permissive").
	TLSPermissive
	// TLSEnforcing serves TLS only; a plaintext connection is closed
	// (Java's "enforcing").
	TLSEnforcing
)

// ParseTLSMode parses a tls.server.mode value. Java falls back to
// permissive on an unknown value; we refuse it, since a typo in
// "enforcing" would otherwise leave plaintext open.
func ParseTLSMode(s string) (TLSMode, error) {
	switch s {
	case "disabled":
		return TLSDisabled, nil
	case "permissive":
		return TLSPermissive, nil
	case "enforcing":
		return TLSEnforcing, nil
	}
	return 0, fmt.Errorf("remoting: tls.server.mode %q: want disabled, permissive or enforcing", s)
}

func (m TLSMode) String() string {
	switch m {
	case TLSDisabled:
		return "disabled"
	case TLSPermissive:
		return "permissive"
	case TLSEnforcing:
		return "enforcing"
	}
	return fmt.Sprintf("TLSMode(%d)", int(m))
}

// tlsRecordHandshake is the first byte of a TLS connection: the record
// type of the ClientHello (Java's HANDSHAKE_MAGIC_CODE).
const tlsRecordHandshake = 0x16

// DefaultTLSHandshakeTimeout bounds a TLS handshake once its first byte
// arrived (Netty's SslHandler default, 10 s).
const DefaultTLSHandshakeTimeout = 10 * time.Second

// Errors of AcceptTLS; both end the connection.
var (
	ErrTLSRequired    = errors.New("remoting: plaintext connection refused: TLS is enforced")
	ErrTLSNotAccepted = errors.New("remoting: TLS handshake refused: TLS is disabled")
)

// TLSListener decides, for each accepted connection, between TLS and
// plaintext as its mode says. The zero value is disabled.
type TLSListener struct {
	Mode TLSMode
	// Config serves the handshakes (certificate, client verification);
	// required unless Mode is TLSDisabled.
	Config *tls.Config
	// FirstByteTimeout bounds the wait for the connection's first byte
	// (<= 0: none); HandshakeTimeout the handshake after it (default
	// DefaultTLSHandshakeTimeout).
	FirstByteTimeout time.Duration
	HandshakeTimeout time.Duration
}

// Check reports a listener that cannot work.
func (l *TLSListener) Check() error {
	if l.Mode != TLSDisabled && l.Config == nil {
		return fmt.Errorf("remoting: TLS mode %s without a TLS configuration (certificate)", l.Mode)
	}
	if l.Mode < TLSDisabled || l.Mode > TLSEnforcing {
		return fmt.Errorf("remoting: unknown %v", l.Mode)
	}
	return nil
}

// Accept returns the connection to serve in place of nc: nc itself when
// the mode is disabled or the peer speaks plaintext, a *tls.Conn whose
// handshake has completed when it opened with a TLS record. The first byte
// is peeked, not consumed, so a plaintext connection stays the plain
// socket (and keeps its direct-write path). On error the caller closes nc.
func (l *TLSListener) Accept(ctx context.Context, nc net.Conn) (net.Conn, error) {
	if l.Mode == TLSDisabled {
		// The frame reader rejects a handshake as a bad length (the
		// record 0x16 0x03 0x01 ... reads as a length far above any
		// frame limit) and closes the connection, as Java does.
		return nc, nil
	}
	if l.FirstByteTimeout > 0 {
		_ = nc.SetReadDeadline(time.Now().Add(l.FirstByteTimeout))
	}
	b, nc, err := peekByte(nc)
	if err != nil {
		return nil, fmt.Errorf("remoting: reading the first byte: %w", err)
	}
	if b != tlsRecordHandshake {
		if l.Mode == TLSEnforcing {
			return nil, ErrTLSRequired
		}
		_ = nc.SetReadDeadline(time.Time{})
		return nc, nil
	}
	timeout := l.HandshakeTimeout
	if timeout <= 0 {
		timeout = DefaultTLSHandshakeTimeout
	}
	_ = nc.SetDeadline(time.Now().Add(timeout))
	hctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tc := tls.Server(nc, l.Config)
	if err := tc.HandshakeContext(hctx); err != nil {
		return nil, fmt.Errorf("remoting: TLS handshake: %w", err)
	}
	_ = nc.SetDeadline(time.Time{})
	return tc, nil
}

// DialTLS runs the client side of a handshake over nc within ctx. A config
// that verifies the server but names none gets addr's host as ServerName.
func DialTLS(ctx context.Context, nc net.Conn, addr string, cfg *tls.Config) (net.Conn, error) {
	if cfg.ServerName == "" && !cfg.InsecureSkipVerify {
		cfg = cfg.Clone()
		if host, _, err := net.SplitHostPort(addr); err == nil {
			cfg.ServerName = host
		}
	}
	tc := tls.Client(nc, cfg)
	if err := tc.HandshakeContext(ctx); err != nil {
		return nil, fmt.Errorf("remoting: TLS handshake with %s: %w", addr, err)
	}
	return tc, nil
}
