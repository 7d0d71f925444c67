package grpc

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"google.golang.org/grpc/metadata"

	"github.com/rocketd/rocketd/internal/broker/client"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
)

// clientChannel is a gRPC client in the broker's client registry (Java's
// GrpcClientChannel): one per client id, registered by Heartbeat, so that
// consumer and producer connection queries list gRPC clients and the
// transaction check-back finds gRPC producers. The registry's idle scan
// closes it when heartbeats stop.
type clientChannel struct {
	s      *Server
	id     string
	remote string
	once   sync.Once
	closed chan struct{}
}

var _ client.Channel = (*clientChannel)(nil)

func (c *clientChannel) RemoteAddr() string { return c.remote }

// Closed is closed once the channel is (isClosed in the registry).
func (c *clientChannel) Closed() <-chan struct{} { return c.closed }

// InvokeOneway delivers what the registry and the check-back send: a
// CHECK_TRANSACTION_STATE goes out on the client's telemetry stream;
// NOTIFY_CONSUMER_IDS_CHANGED needs nothing (the POP service assigns the
// messages, there is no client rebalance to trigger).
func (c *clientChannel) InvokeOneway(req *remoting.Command) error {
	switch req.Code {
	case protocol.NotifyConsumerIdsChanged:
		return nil
	case protocol.CheckTransactionState:
		ts, ok := c.s.clients.streamOf(c.id)
		if !ok {
			return fmt.Errorf("grpc: client %s has no telemetry stream open", c.id)
		}
		return (&TransactionProducer{stream: ts}).InvokeOneway(req)
	}
	return fmt.Errorf("grpc: request %d cannot be sent to gRPC client %s", req.Code, c.id)
}

// Invoke: GET_CONSUMER_RUNNING_INFO and CONSUME_MESSAGE_DIRECTLY have no
// gRPC form the SDKs answer.
func (c *clientChannel) Invoke(context.Context, *remoting.Command) (*remoting.Command, error) {
	return nil, errors.New("grpc: client " + c.id + " is a gRPC client: request/response commands are not supported over gRPC")
}

// Close marks the channel closed and forgets it.
func (c *clientChannel) Close() error {
	c.once.Do(func() { close(c.closed) })
	c.s.clients.dropChannel(c.id, c)
	return nil
}

// languageOf reads the SDK's x-mq-language header.
func languageOf(ctx context.Context) remoting.LanguageCode {
	md, _ := metadata.FromIncomingContext(ctx)
	v := md.Get("x-mq-language")
	if len(v) == 0 {
		return remoting.OTHER
	}
	switch strings.ToUpper(v[0]) {
	case "JAVA":
		return remoting.JAVA
	case "GOLANG", "GO":
		return remoting.GO
	case "CPP":
		return remoting.CPP
	case "DOTNET", "CSHARP":
		return remoting.DOTNET
	case "PYTHON":
		return remoting.PYTHON
	case "NODE_JS", "NODEJS":
		return remoting.NODE_JS
	case "RUST":
		return remoting.RUST
	}
	return remoting.OTHER
}
