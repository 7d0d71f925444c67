package metrics

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Limits of the HTTP listener: a scraper's request is a short GET, so
// anything bigger or slower is refused before it costs the broker.
const (
	readHeaderTimeout = 5 * time.Second
	readTimeout       = 10 * time.Second
	// writeTimeout leaves room for /debug/pprof/profile's default 30 s.
	writeTimeout   = 65 * time.Second
	idleTimeout    = 60 * time.Second
	maxHeaderBytes = 8 << 10 // larger headers: 431
	maxBodyBytes   = 1 << 10 // a larger body: 413
	// maxScrapes bounds concurrent scrapes (more: 503); scrapeTimeout
	// bounds one (then 503).
	maxScrapes    = 4
	scrapeTimeout = 20 * time.Second
)

// ServerConfig configures a Server.
type ServerConfig struct {
	Addr string // host:port; port 0 in tests
	// Gatherer is what /metrics serves.
	Gatherer prometheus.Gatherer
	// Pprof adds net/http/pprof's handlers under /debug/pprof/ (on this
	// server's own mux, never http.DefaultServeMux).
	Pprof bool
	// TLS, when set, serves HTTPS only.
	TLS    *tls.Config
	Logger *slog.Logger // default: discard
}

// Server is the metrics HTTP listener. It owns its serving goroutine:
// Start starts it, Close stops it.
type Server struct {
	cfg  ServerConfig
	log  *slog.Logger
	http *http.Server
	ln   net.Listener
	done chan struct{} // closed when Serve returned

	closeOnce sync.Once
	closeErr  error
}

// NewServer returns a server that is not listening yet.
func NewServer(cfg ServerConfig) *Server {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Server{cfg: cfg, log: cfg.Logger, done: make(chan struct{})}
	s.http = &http.Server{
		Handler:           limitRequests(s.mux()),
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(cfg.Logger.Handler(), slog.LevelDebug),
	}
	return s
}

func (s *Server) mux() *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(s.cfg.Gatherer, promhttp.HandlerOpts{
		ErrorLog:            slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
		ErrorHandling:       promhttp.ContinueOnError,
		MaxRequestsInFlight: maxScrapes,
		Timeout:             scrapeTimeout,
	}))
	if s.cfg.Pprof {
		mux.HandleFunc("GET /debug/pprof/", pprof.Index)
		mux.HandleFunc("GET /debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
	}
	return mux
}

// limitRequests refuses a request with a body over maxBodyBytes (413)
// before h runs; http.Server itself answers malformed requests 400 and
// oversized headers 431, and the mux unknown paths 404 and other methods
// 405.
func limitRequests(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > maxBodyBytes {
			http.Error(w, "request body too large", http.StatusRequestEntityTooLarge)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxBodyBytes)
		h.ServeHTTP(w, r)
	})
}

// Start listens on cfg.Addr and serves in the background.
func (s *Server) Start() error {
	ln, err := net.Listen("tcp", s.cfg.Addr)
	if err != nil {
		return fmt.Errorf("metrics: listen %s: %w", s.cfg.Addr, err)
	}
	if s.cfg.TLS != nil {
		ln = tls.NewListener(ln, s.cfg.TLS)
	}
	s.ln = ln
	go func() {
		defer close(s.done)
		if err := s.http.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("metrics: server stopped", "err", err)
		}
	}()
	s.log.Info("metrics: listening", "addr", ln.Addr().String(), "tls", s.cfg.TLS != nil, "pprof", s.cfg.Pprof)
	return nil
}

// Addr is the bound address (nil before Start).
func (s *Server) Addr() net.Addr {
	if s.ln == nil {
		return nil
	}
	return s.ln.Addr()
}

// Close stops accepting, lets running requests finish until ctx is done,
// then closes every connection and waits for the serving goroutine.
// Idempotent.
func (s *Server) Close(ctx context.Context) error {
	s.closeOnce.Do(func() {
		if s.ln == nil {
			return
		}
		if err := s.http.Shutdown(ctx); err != nil {
			s.closeErr = fmt.Errorf("metrics: shutdown: %w", err)
			_ = s.http.Close()
		}
		<-s.done
	})
	return s.closeErr
}
