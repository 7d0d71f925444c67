package grpc

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"slices"

	"google.golang.org/grpc/credentials"

	"github.com/rocketd/rocketd/internal/remoting"
)

// listenerCreds serves the tls.server.mode of the broker's other
// listeners on the gRPC port (Java's proxy: a permissive server accepts
// TLS and plaintext on one port): the first byte tells a TLS handshake
// from an HTTP/2 preface (remoting.TLSListener.Accept); enforcing refuses
// plaintext. The TLS side offers ALPN h2, which gRPC clients require.
type listenerCreds struct {
	l remoting.TLSListener
}

func newListenerCreds(l remoting.TLSListener) credentials.TransportCredentials {
	if l.Config != nil && !slices.Contains(l.Config.NextProtos, "h2") {
		l.Config = l.Config.Clone()
		l.Config.NextProtos = append([]string{"h2"}, l.Config.NextProtos...)
	}
	return &listenerCreds{l: l}
}

// plainInfo is the AuthInfo of a plaintext connection.
type plainInfo struct{ credentials.CommonAuthInfo }

func (plainInfo) AuthType() string { return "insecure" }

func (c *listenerCreds) ServerHandshake(raw net.Conn) (net.Conn, credentials.AuthInfo, error) {
	conn, err := c.l.Accept(context.Background(), raw)
	if err != nil {
		return nil, nil, err
	}
	if tc, ok := conn.(*tls.Conn); ok {
		return tc, credentials.TLSInfo{State: tc.ConnectionState(),
			CommonAuthInfo: credentials.CommonAuthInfo{SecurityLevel: credentials.PrivacyAndIntegrity}}, nil
	}
	return conn, plainInfo{credentials.CommonAuthInfo{SecurityLevel: credentials.NoSecurity}}, nil
}

func (c *listenerCreds) ClientHandshake(context.Context, string, net.Conn) (net.Conn, credentials.AuthInfo, error) {
	return nil, nil, errors.New("grpc: server credentials used to dial")
}

func (c *listenerCreds) Info() credentials.ProtocolInfo {
	return credentials.ProtocolInfo{SecurityProtocol: "tls"}
}

func (c *listenerCreds) Clone() credentials.TransportCredentials {
	cp := *c
	return &cp
}

func (c *listenerCreds) OverrideServerName(string) error { return nil }
