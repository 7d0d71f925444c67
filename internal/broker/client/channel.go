package client

import (
	"context"
	"time"

	"github.com/rocketd/rocketd/internal/remoting"
)

// Channel is the connection a client's heartbeat came on. The registry keys
// clients by it (as Java keys them by the Netty channel): one client id may
// have several channels (one per broker address it dials), and a channel
// belongs to at most one client id. *remoting.Conn is the implementation;
// tests use fakes.
//
// Values must be comparable (pointers): they are map keys.
type Channel interface {
	// RemoteAddr is the peer's "ip:port" (Connection.clientAddr).
	RemoteAddr() string
	// InvokeOneway sends a request the client does not answer
	// (NOTIFY_CONSUMER_IDS_CHANGED, CHECK_TRANSACTION_STATE). It may block
	// while the peer is not reading; the registry calls it only from its
	// own notifier goroutines.
	InvokeOneway(req *remoting.Command) error
	// Invoke sends a request and waits for the answer
	// (GET_CONSUMER_RUNNING_INFO, CONSUME_MESSAGE_DIRECTLY). Not used by
	// the registry itself; here so callers of FindConsumerChannel need no
	// type assertion.
	Invoke(ctx context.Context, req *remoting.Command) (*remoting.Command, error)
	// Close closes the connection (idle expiry).
	Close() error
}

var _ Channel = (*remoting.Conn)(nil)

// ClientInfo is what a heartbeat says about the client behind a channel:
// the body's clientID and the request header's language and version.
type ClientInfo struct {
	ClientID string
	Language remoting.LanguageCode
	Version  int32
}

// ChannelInfo is a snapshot of one registered channel.
type ChannelInfo struct {
	Channel Channel
	ClientInfo
	// LastUpdate is the time of the last heartbeat on this channel.
	LastUpdate time.Time
}
