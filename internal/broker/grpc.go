package broker

import (
	"context"
	"fmt"
	"net"
	"strconv"

	"github.com/rocketd/rocketd/internal/broker/processor"
	"github.com/rocketd/rocketd/internal/grpc"
)

// startGRPC serves the gRPC MessagingService (grpcServerEnable) on
// bindAddress:grpcServerPort, with the tls.server.mode of the remoting
// ports (permissive: TLS and plaintext on the one port).
// With authenticationEnabled it checks every request with the broker's
// Authenticator (and its Authorizer), as the remoting port does.
func (b *Broker) startGRPC(cfg *Config, proc *processor.Processor) error {
	bc := &b.cfg
	if !bc.GrpcServerEnable {
		return nil
	}
	listen := cfg.GRPCListenAddr
	if listen == "" {
		listen = net.JoinHostPort(bc.BindAddress, strconv.Itoa(bc.GrpcServerPort))
	}
	gc := grpc.Config{
		ListenAddr: listen, Broker: bc, Processor: proc, Topics: b.topics, Groups: b.groups,
		BrokerAddr: b.addr, TLS: b.tlsListener, Auth: b.authn, Logger: b.log,
	}
	if len(bc.NamesrvAddrs()) > 0 {
		gc.Route = b.topicRoute
	}
	srv, err := grpc.Start(gc)
	if err != nil {
		return fmt.Errorf("broker: %w", err)
	}
	b.grpc = srv
	b.grpcLive.Store(srv)
	return nil
}

// closeGRPC stops the gRPC service (nil-safe).
func (b *Broker) closeGRPC(ctx context.Context) error {
	if b.grpc == nil {
		return nil
	}
	return b.grpc.Close(ctx)
}

// GRPCAddr is the gRPC service's bound address; "" when it is off.
func (b *Broker) GRPCAddr() string {
	if b.grpc == nil {
		return ""
	}
	return b.grpc.Addr()
}
