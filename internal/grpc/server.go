package grpc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"runtime"
	"strconv"
	"sync"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/keepalive"

	"github.com/rocketd/rocketd/internal/auth"
	"github.com/rocketd/rocketd/internal/broker/meta"
	"github.com/rocketd/rocketd/internal/broker/processor"
	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/lifecycle"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
)

// The server's bounds (Java's ProxyConfig where it has one).
const (
	// MaxInboundMessageSize is grpcMaxInboundMessageSize (130 MiB): a
	// request larger than this is refused by the transport
	// (RESOURCE_EXHAUSTED) before it is decoded.
	MaxInboundMessageSize = 130 << 20
	// MaxConcurrentStreams bounds the RPCs one connection runs at once.
	MaxConcurrentStreams = 1024
	// flowControlWindow is the stream and connection flow-control window
	// (grpc-java's NettyServerBuilder default, 1 MiB).
	flowControlWindow = 1 << 20
	// keepaliveTime and keepaliveTimeout: the server pings an idle
	// connection and drops it when the ping is not answered.
	keepaliveTime    = 30 * time.Second
	keepaliveTimeout = 20 * time.Second
	// keepaliveMinPing is the most often a client may ping (more often:
	// GOAWAY), the SDKs ping every 30 s at most.
	keepaliveMinPing = 5 * time.Second
	// maxDelay is ProxyConfig.maxDelayTimeMills (24 h).
	maxDelay = 24 * time.Hour
	// defaultPollTime is the long polling time of a receive that names
	// none (ProxyConfig.grpcClientConsumerMaxLongPollingTimeoutMillis's
	// default answer, 20 s).
	defaultPollTime = 20 * time.Second
	// pollReserve is kept from the client's deadline so that a receive
	// answers before the client gives up (ProxyConfig.longPollingReserveTimeInMillis).
	pollReserve = 100 * time.Millisecond
)

// idleStreamWorkers is how many of the stream workers may be held by
// long-lived streams while the others still serve RPCs: every SDK client
// keeps a Telemetry stream open for its life, a SimpleConsumer's receive
// is held up to 20 s, and a worker is held for as long as the stream it
// runs.
const idleStreamWorkers = 128

// streamWorkers is the size of grpc-go's pool of goroutines that run the
// RPCs. A stream arriving while every worker is busy runs on a new
// goroutine, whose stack then grows (copied 2-3 times) through the
// transport's and protobuf's frames: with GOMAXPROCS workers, the first
// clients' Telemetry streams held them all and every SendMessage of the
// harness's 32 producers paid that (5% of the server's CPU in
// runtime.copystack). A parked worker's stack shrinks back to a few KiB.
func streamWorkers() uint32 { return uint32(runtime.GOMAXPROCS(0) + idleStreamWorkers) }

// Config is what the server needs of the broker.
type Config struct {
	// ListenAddr is host:port to listen on (bindAddress:grpcServerPort).
	ListenAddr string
	Broker     *config.BrokerConfig // read only
	Processor  *processor.Processor
	Topics     *meta.Topics
	Groups     *meta.Groups
	// BrokerAddr is this broker's remoting address as registered
	// (brokerIP1:listenPort): its entry in a route is this endpoint.
	BrokerAddr string
	// Route reads a topic's route from the NameServers; nil: the route
	// is this broker's own topic config.
	Route func(ctx context.Context, topic string) (protocol.TopicRouteData, bool, error)
	// TLS is the broker's tls.server.mode and certificate: disabled
	// serves plaintext, permissive TLS and plaintext, enforcing TLS only.
	TLS remoting.TLSListener
	// Auth, when set (authenticationEnabled), authenticates every request
	// message and, when it has an Authorizer, authorizes it.
	Auth   *auth.Authenticator
	Logger *slog.Logger
}

// Server is the MessagingService listener. Start and Close own it.
type Server struct {
	v2.UnimplementedMessagingServiceServer

	cfg      Config
	log      *slog.Logger
	ln       net.Listener
	srv      *grpc.Server
	endpoint *v2.Endpoints // this server, as routes advertise it
	clients  *clientTable
	renewals renewals // push consumers' messages (renew.go)
	// life ends when Close starts: held streams and the renewals stop.
	life      context.Context
	endLife   context.CancelFunc
	renewLoop lifecycle.Loop // runRenewals (enableProxyAutoRenew)
	wg        sync.WaitGroup // the Serve goroutine
	closeMu   sync.Once
}

// Start listens and serves until Close.
func Start(cfg Config) (*Server, error) {
	if cfg.Broker == nil || cfg.Processor == nil || cfg.Topics == nil || cfg.Groups == nil {
		return nil, errors.New("grpc: Broker, Processor, Topics and Groups are required")
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ln, err := net.Listen("tcp", cfg.ListenAddr)
	if err != nil {
		return nil, fmt.Errorf("grpc: listen on %s: %w", cfg.ListenAddr, err)
	}
	s := &Server{cfg: cfg, log: log, ln: ln, clients: newClientTable()}
	s.life, s.endLife = context.WithCancel(context.Background())
	port := ln.Addr().(*net.TCPAddr).Port
	s.endpoint = endpoints(cfg.Broker.BrokerIP1, port)
	opts := []grpc.ServerOption{
		grpc.MaxRecvMsgSize(MaxInboundMessageSize),
		grpc.MaxConcurrentStreams(MaxConcurrentStreams),
		grpc.KeepaliveParams(keepalive.ServerParameters{Time: keepaliveTime, Timeout: keepaliveTimeout}),
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: keepaliveMinPing, PermitWithoutStream: true}),
		// Fixed flow-control windows, as grpc-java's (the 5.x proxy's)
		// 1 MiB: a window set turns off grpc-go's BDP estimation, which
		// answered nearly every small request (an ack) with a window
		// update and a PING the client then acknowledges, a frame each
		// way per RPC for nothing on a LAN.
		grpc.InitialWindowSize(flowControlWindow),
		grpc.InitialConnWindowSize(flowControlWindow),
		// A pool of goroutines runs the RPCs (a busy pool: a new
		// goroutine, as without it): no goroutine started, and no stack
		// grown again, per RPC. See streamWorkers for its size.
		grpc.NumStreamWorkers(streamWorkers()),
	}
	if cfg.TLS.Mode != remoting.TLSDisabled {
		if err := cfg.TLS.Check(); err != nil {
			_ = ln.Close()
			return nil, fmt.Errorf("grpc: %w", err)
		}
		opts = append(opts, grpc.Creds(newListenerCreds(cfg.TLS)))
	}
	if cfg.Auth != nil {
		opts = append(opts, grpc.UnaryInterceptor(s.authUnary), grpc.StreamInterceptor(s.authStream))
	}
	s.srv = grpc.NewServer(opts...)
	v2.RegisterMessagingServiceServer(s.srv, s)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, grpc.ErrServerStopped) {
			log.Error("grpc: serve stopped", "addr", ln.Addr(), "err", err)
		}
	}()
	if cfg.Broker.EnableProxyAutoRenew {
		s.renewLoop.Start("grpc-renew", s.runRenewals)
	}
	log.Info("grpc: MessagingService listening", "addr", ln.Addr().String(), "endpoint", s.endpointString())
	return s, nil
}

// Addr is the bound address.
func (s *Server) Addr() string { return s.ln.Addr().String() }

func (s *Server) endpointString() string {
	a := s.endpoint.GetAddresses()[0]
	return net.JoinHostPort(a.GetHost(), strconv.Itoa(int(a.GetPort())))
}

// Close stops accepting, ends the open streams (a held receive answers
// at once: its context ends) and waits for the running RPCs, bounded by
// ctx, then closes every connection.
func (s *Server) Close(ctx context.Context) error {
	var err error
	s.closeMu.Do(func() {
		s.endLife()
		s.renewLoop.Cancel()
		stopped := make(chan struct{})
		go func() { s.srv.GracefulStop(); close(stopped) }()
		select {
		case <-stopped:
		case <-ctx.Done():
			s.srv.Stop()
			<-stopped
			err = fmt.Errorf("grpc: close: %w", ctx.Err())
		}
		s.wg.Wait()
		s.renewLoop.Close()
	})
	return err
}

// endpoints is one IPv4/IPv6 address (Java's Address.AddressScheme).
func endpoints(host string, port int) *v2.Endpoints {
	scheme := v2.AddressScheme_IPv4
	if ip := net.ParseIP(host); ip != nil && ip.To4() == nil {
		scheme = v2.AddressScheme_IPv6
	} else if ip == nil {
		scheme = v2.AddressScheme_DOMAIN_NAME
	}
	return &v2.Endpoints{Scheme: scheme, Addresses: []*v2.Address{{Host: host, Port: int32(port)}}}
}
