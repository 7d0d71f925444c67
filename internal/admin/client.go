package admin

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
)

// DefaultTimeout bounds one call when the caller's context has no deadline.
const DefaultTimeout = 5 * time.Second

// Config configures a Client.
type Config struct {
	// Namesrv lists NameServer addresses (host:port), tried in order.
	Namesrv []string
	// Timeout bounds one remote call (DefaultTimeout).
	Timeout time.Duration
	// TLS, when set, makes every connection a TLS one.
	TLS *tls.Config
	// Sign, when set, signs every request (auth.Credentials.Sign) for
	// servers with authenticationEnabled.
	Sign   func(*remoting.Command)
	Logger *slog.Logger
}

// Client makes admin calls. It is safe for concurrent use; Close releases
// its connections.
type Client struct {
	rc      *remoting.Client
	namesrv []string
	timeout time.Duration
}

// New returns a client; it dials nothing until the first call.
func New(cfg Config) *Client {
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	var ns []string
	for _, a := range cfg.Namesrv {
		if a = strings.TrimSpace(a); a != "" {
			ns = append(ns, a)
		}
	}
	return &Client{
		rc:      remoting.NewClient(remoting.ClientConfig{TLS: cfg.TLS, BeforeRequest: cfg.Sign, Logger: cfg.Logger}),
		namesrv: ns,
		timeout: cfg.Timeout,
	}
}

// Close closes every connection.
func (c *Client) Close() error { return c.rc.Close() }

// StatusError is a response other than SUCCESS.
type StatusError struct {
	Op     string // what was asked, e.g. "GET_CONSUME_STATS"
	Addr   string
	Code   int32
	Remark string
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("admin: %s at %s: code %d: %s", e.Op, e.Addr, e.Code, e.Remark)
}

// IsCode reports whether err is a StatusError with code.
func IsCode(err error, code int32) bool {
	var se *StatusError
	return errors.As(err, &se) && se.Code == code
}

// invoke sends one request to addr and returns the response whatever its
// code.
func (c *Client) invoke(ctx context.Context, addr string, code int32, ext map[string]string, body []byte) (*remoting.Command, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	resp, err := c.rc.Invoke(ctx, addr, remoting.NewRequest(code, ext, body))
	if err != nil {
		return nil, fmt.Errorf("admin: %s: %w", addr, err)
	}
	return resp, nil
}

// invokeOK is invoke that turns a non-SUCCESS answer into a *StatusError.
func (c *Client) invokeOK(ctx context.Context, op, addr string, code int32, ext map[string]string, body []byte) (*remoting.Command, error) {
	resp, err := c.invoke(ctx, addr, code, ext, body)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	if resp.Code != protocol.Success {
		return nil, &StatusError{Op: op, Addr: addr, Code: resp.Code, Remark: resp.Remark}
	}
	return resp, nil
}

// invokeJSON is invokeOK decoding the body (fastjson) into v.
func (c *Client) invokeJSON(ctx context.Context, op, addr string, code int32, ext map[string]string, v any) error {
	resp, err := c.invokeOK(ctx, op, addr, code, ext, nil)
	if err != nil {
		return err
	}
	if err := protocol.UnmarshalFastJSON(resp.Body, v); err != nil {
		return fmt.Errorf("admin: %s at %s: bad body: %w", op, addr, err)
	}
	return nil
}

// namesrvJSON asks the NameServers in order until one answers SUCCESS
// (or a definite status: a missing topic is not another server's
// business), decoding the body into v.
func (c *Client) namesrvJSON(ctx context.Context, op string, code int32, ext map[string]string, v any) error {
	if len(c.namesrv) == 0 {
		return errors.New("admin: no NameServer address configured")
	}
	var errs []error
	for _, addr := range c.namesrv {
		err := c.invokeJSON(ctx, op, addr, code, ext, v)
		if err == nil {
			return nil
		}
		var se *StatusError
		if errors.As(err, &se) {
			return err
		}
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}
