package console

import (
	"context"
	"crypto/tls"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/rocketd/rocketd/internal/admin"
	"github.com/rocketd/rocketd/internal/remoting"
)

//go:embed static
var staticFiles embed.FS

// Limits of the HTTP server: a slow or hostile client gets a 4xx or a
// closed connection, never a goroutine or buffer it can hold forever.
const (
	readHeaderTimeout = 5 * time.Second
	readTimeout       = 10 * time.Second
	writeTimeout      = 60 * time.Second // a message lookup may visit several brokers
	idleTimeout       = 60 * time.Second
	maxHeaderBytes    = 16 << 10
	maxBodyBytes      = 64 << 10
	// DefaultSampleInterval is how often each broker's runtime info is
	// sampled for the throughput charts.
	DefaultSampleInterval = 5 * time.Second
	// samplesKept bounds the chart history per broker (10 min at 5 s).
	samplesKept = 120
)

// Config configures a Server.
type Config struct {
	// ListenAddr is host:port to listen on (port 0: ephemeral).
	ListenAddr string
	// Namesrv lists the NameServers the console asks for the cluster.
	Namesrv []string
	// TLS, when set, serves HTTPS with it.
	TLS *tls.Config
	// ClientTLS, when set, makes the admin calls over TLS.
	ClientTLS *tls.Config
	// Sign, when set, signs every admin call (authenticationEnabled).
	Sign func(*remoting.Command)
	// SampleInterval is the runtime-info sampling period
	// (DefaultSampleInterval).
	SampleInterval time.Duration
	Logger         *slog.Logger
}

// Server is the web console: an HTTP server of static pages and a JSON API
// (doc.go), an admin client, and a sampler of broker throughput. Start
// starts both goroutines; Close stops them.
type Server struct {
	cfg     Config
	log     *slog.Logger
	admin   *admin.Client
	ln      net.Listener
	http    *http.Server
	sampler *sampler

	closed   atomic.Bool
	served   chan struct{} // closed when Serve returned
	serveErr error
}

// Start listens on cfg.ListenAddr and serves until Close.
func Start(cfg Config) (*Server, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.SampleInterval <= 0 {
		cfg.SampleInterval = DefaultSampleInterval
	}
	ln, err := net.Listen("tcp", cfg.ListenAddr)
	if err != nil {
		return nil, fmt.Errorf("console: listen %s: %w", cfg.ListenAddr, err)
	}
	if cfg.TLS != nil {
		tc := cfg.TLS.Clone()
		tc.NextProtos = []string{"http/1.1"}
		ln = tls.NewListener(ln, tc)
	}
	s := &Server{
		cfg:    cfg,
		log:    cfg.Logger.With("component", "console"),
		admin:  admin.New(admin.Config{Namesrv: cfg.Namesrv, TLS: cfg.ClientTLS, Sign: cfg.Sign, Logger: cfg.Logger}),
		ln:     ln,
		served: make(chan struct{}),
	}
	s.sampler = newSampler(s.admin, cfg.SampleInterval, s.log)
	static, err := fs.Sub(staticFiles, "static")
	if err != nil {
		return nil, errors.Join(err, ln.Close())
	}
	s.http = &http.Server{
		Handler:           s.routes(static),
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		// net/http's own complaints (TLS handshakes, bad requests) are
		// the clients' problem: debug level only.
		ErrorLog: slog.NewLogLogger(s.log.Handler(), slog.LevelDebug),
	}
	s.sampler.start()
	go func() {
		defer close(s.served)
		if err := s.http.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.serveErr = err
			s.log.Error("console: serve stopped", "err", err)
		}
	}()
	s.log.Info("console: listening", "addr", s.Addr(), "tls", cfg.TLS != nil)
	return s, nil
}

// Addr is the address the console listens on.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Close stops accepting, lets requests in flight finish until ctx ends,
// then stops the sampler and closes the admin connections. It is
// idempotent.
func (s *Server) Close(ctx context.Context) error {
	if s.closed.Swap(true) {
		return nil
	}
	err := s.http.Shutdown(ctx)
	if err != nil {
		err = errors.Join(err, s.http.Close())
	}
	<-s.served
	s.sampler.close()
	return errors.Join(err, s.serveErr, s.admin.Close())
}
