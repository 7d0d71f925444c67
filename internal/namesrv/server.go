package namesrv

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/rocketd/rocketd/internal/auth"
	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/lifecycle"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
	"github.com/rocketd/rocketd/internal/vfs"
)

// Config configures a Server.
type Config struct {
	// Namesrv holds the NameServer settings; zero fields take their defaults.
	Namesrv config.NamesrvConfig
	// Addr, when set, is the listen address and overrides
	// Namesrv.BindAddress/ListenPort ("127.0.0.1:0" in tests).
	Addr string
	// Logger receives structured logs; default: discard.
	Logger *slog.Logger
	// Now is the clock used for broker liveness; default time.Now.
	Now func() time.Time
	// FS holds the KV configuration file; default vfs.Default.
	FS vfs.FS
	// Authenticator, when set, checks every request instead of one built
	// from Namesrv.Auth (users in Namesrv.UsersPath): rocketd serve
	// shares the broker's.
	Authenticator *auth.Authenticator
}

// Worker pools. Client route lookups get their own family so that a burst of
// broker registrations cannot delay them (RocketMQ 5.x splits them the same way).
const (
	defaultWorkers  = 8
	defaultQueueLen = 10000
	routeWorkers    = 8
	routeQueueLen   = 50000
	shutdownTimeout = 5 * time.Second
)

// Server is a NameServer: the route table, the KV configuration, the
// remoting processors that serve them and the broker expiry scan.
type Server struct {
	cfg   Config
	rt    *config.Runtime[config.NamesrvConfig] // the keys UPDATE_NAMESRV_CONFIG changes
	log   *slog.Logger
	now   func() time.Time
	table *Table
	kv    *KVStore
	rs    *remoting.Server

	started atomic.Bool
	stopped atomic.Bool
	scan    lifecycle.Loop // the broker expiry scan
}

// New builds a Server from cfg: it validates the settings and loads the KV
// configuration file, but does not listen yet.
func New(cfg Config) (*Server, error) {
	cfg.Namesrv.EnsureDefaults()
	if err := cfg.Namesrv.Validate(); err != nil {
		return nil, err
	}
	if cfg.Addr == "" {
		cfg.Addr = net.JoinHostPort(cfg.Namesrv.BindAddress, strconv.Itoa(cfg.Namesrv.ListenPort))
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.FS == nil {
		cfg.FS = vfs.Default
	}
	kv, err := OpenKVStore(cfg.FS, cfg.Namesrv.KVConfigPath)
	if err != nil {
		return nil, err
	}
	s := &Server{
		cfg:   cfg,
		rt:    config.NewNamesrvRuntime(&cfg.Namesrv, cfg.Namesrv.ConfigStorePath),
		log:   cfg.Logger,
		now:   cfg.Now,
		table: NewTable(),
		kv:    kv,
	}
	mode, err := remoting.ParseTLSMode(cfg.Namesrv.TLS.Mode())
	if err != nil {
		return nil, err
	}
	tlsCfg, err := cfg.Namesrv.TLS.ServerTLS()
	if err != nil {
		return nil, err
	}
	s.rs = remoting.NewServer(remoting.ServerConfig{Addr: cfg.Addr, Logger: cfg.Logger,
		TLS: remoting.TLSListener{Mode: mode, Config: tlsCfg}})
	authn := cfg.Authenticator
	if authn == nil {
		// Every request is checked, REGISTER_BROKER included: a broker
		// signs with its innerClientAuthenticationCredentials.
		if authn, _, err = auth.Setup(cfg.Namesrv.Auth, cfg.FS, cfg.Namesrv.UsersPath(), cfg.Logger); err != nil {
			return nil, fmt.Errorf("namesrv: %w", err)
		}
	}
	if authn != nil {
		s.rs.SetGuard(authn.Guard)
	}
	s.registerProcessors()
	s.rs.OnConnClose(s.connClosed)
	return s, nil
}

func (s *Server) registerProcessors() {
	def := s.rs.NewFamily("namesrv", defaultWorkers, defaultQueueLen)
	route := s.rs.NewFamily("namesrv-route", routeWorkers, routeQueueLen)

	s.rs.Handle(protocol.GetRouteinfoByTopic, route, s.getRouteInfo)

	s.rs.Handle(protocol.RegisterBroker, def, s.registerBroker)
	s.rs.Handle(protocol.UnregisterBroker, def, s.unregisterBroker)
	s.rs.Handle(protocol.QueryDataVersion, def, s.queryDataVersion)
	s.rs.Handle(protocol.WipeWritePermOfBroker, def, s.wipeWritePerm)
	s.rs.Handle(protocol.AddWritePermOfBroker, def, s.addWritePerm)
	s.rs.Handle(protocol.GetBrokerClusterInfo, def, s.getBrokerClusterInfo)
	s.rs.Handle(protocol.GetAllTopicListFromNameserver, def, s.getAllTopicList)
	s.rs.Handle(protocol.GetTopicsByCluster, def, s.getTopicsByCluster)
	s.rs.Handle(protocol.DeleteTopicInNamesrv, def, s.deleteTopic)
	s.rs.Handle(protocol.PutKVConfig, def, s.putKVConfig)
	s.rs.Handle(protocol.GetKVConfig, def, s.getKVConfig)
	s.rs.Handle(protocol.DeleteKVConfig, def, s.deleteKVConfig)
	s.rs.Handle(protocol.GetKVListByNamespace, def, s.getKVListByNamespace)
	s.rs.Handle(protocol.RegisterTopicInNamesrv, def, s.registerTopic)
	s.rs.Handle(protocol.GetSystemTopicListFromNS, def, s.getSystemTopicList)
	s.rs.Handle(protocol.GetUnitTopicList, def, s.getUnitTopicList)
	s.rs.Handle(protocol.GetHasUnitSubTopicList, def, s.getHasUnitSubTopicList)
	s.rs.Handle(protocol.GetHasUnitSubUnunitTopicList, def, s.getHasUnitSubUnUnitTopicList)
	s.rs.Handle(protocol.GetNamesrvConfig, def, s.getConfig)
	s.rs.Handle(protocol.UpdateNamesrvConfig, def, s.updateConfig)
	// Every other code is answered REQUEST_CODE_NOT_SUPPORTED by the
	// remoting server itself (as RocketMQ 5.x does; 4.9.8 stays silent).
}

// Start listens and starts the broker expiry scan.
func (s *Server) Start() error {
	if s.started.Swap(true) {
		return errors.New("namesrv: server already started")
	}
	if err := s.rs.Start(); err != nil {
		s.started.Store(false) // nothing to stop: Shutdown returns at once
		return fmt.Errorf("namesrv: start: %w", err)
	}
	s.scan.Start("namesrv-scan", s.scanLoop)
	s.log.Info("namesrv: started", "addr", s.Addr(), "kvConfigPath", s.kv.Path(),
		"orderMessageEnable", s.cfg.Namesrv.OrderMessageEnable,
		"brokerExpiry", s.cfg.Namesrv.BrokerChannelExpiredTime)
	return nil
}

// Addr returns the address the server listens on ("" before Start).
func (s *Server) Addr() string {
	a := s.rs.Addr()
	if a == nil {
		return ""
	}
	return a.String()
}

// Remoting returns the server's remoting server, for a component that
// answers more codes on the NameServer's port (the embedded controller,
// enableControllerInNamesrv); add handlers before Start.
func (s *Server) Remoting() *remoting.Server { return s.rs }

// Table returns the route table (read access for embedding and tests).
func (s *Server) Table() *Table { return s.table }

// KV returns the KV configuration store.
func (s *Server) KV() *KVStore { return s.kv }

// Shutdown stops the expiry scan, then the remoting server: new requests are
// refused, requests in flight are answered until ctx is done, connections
// are closed. The route table needs no saving (brokers re-register), the KV
// store is written on every change.
func (s *Server) Shutdown(ctx context.Context) error {
	if s.stopped.Swap(true) {
		return nil
	}
	s.scan.Close()
	if !s.started.Load() {
		return nil
	}
	err := s.rs.Shutdown(ctx)
	s.log.Info("namesrv: stopped", "err", err)
	return err
}

// Close is Shutdown with a 5 s drain limit.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	return s.Shutdown(ctx)
}

// scanLoop removes brokers that stopped registering: the first scan after
// ScanNotActiveBrokerDelay, then every ScanNotActiveBrokerInterval.
func (s *Server) scanLoop(ctx context.Context) {
	timer := time.NewTimer(s.cfg.Namesrv.ScanNotActiveBrokerDelay)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		s.scanNotActiveBrokers()
		timer.Reset(s.rt.Load().ScanNotActiveBrokerInterval)
	}
}

func (s *Server) scanNotActiveBrokers() {
	ttl := s.rt.Load().BrokerChannelExpiredTime
	for _, e := range s.table.Expire(s.now(), ttl) {
		s.log.Warn("namesrv: broker expired", "addr", e.Addr, "expiredAfter", ttl)
		// Java closes the expired broker's channel too; the broker
		// reconnects and registers again if it is alive after all.
		if c, ok := e.Conn.(*remoting.Conn); ok && c != nil {
			_ = c.Close()
		}
	}
}

// connClosed drops the routes of brokers whose registration came on c.
func (s *Server) connClosed(c *remoting.Conn) {
	for _, addr := range s.table.RemoveConn(c) {
		s.log.Info("namesrv: broker connection closed, routes removed", "addr", addr, "remote", c.RemoteAddr())
	}
}
