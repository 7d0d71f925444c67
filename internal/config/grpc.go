package config

import "fmt"

// DefaultGrpcServerPort is the port of the gRPC MessagingService (Java's
// ProxyConfig.grpcServerPort).
const DefaultGrpcServerPort = 8081

// validateGrpc checks the gRPC keys (after EnsureDefaults).
func (c *BrokerConfig) validateGrpc() error {
	if p := c.GrpcServerPort; p <= 0 || p > 65535 {
		return fmt.Errorf("config: grpcServerPort %d out of range 1..65535", p)
	}
	if c.GrpcServerEnable && c.GrpcServerPort == c.ListenPort {
		return fmt.Errorf("config: grpcServerPort %d is listenPort too", c.GrpcServerPort)
	}
	return nil
}
