package grpc

import (
	"context"
	"errors"
	"io"
	"net"
	"net/netip"
	"sync"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/rocketd/rocketd/internal/broker/client"
	"github.com/rocketd/rocketd/internal/broker/processor"
	"github.com/rocketd/rocketd/internal/protocol"
)

// clientIDKey is the metadata key every SDK request carries its client id
// in (Java's GrpcConstants.CLIENT_ID).
const clientIDKey = "x-mq-client-id"

// Producer backoff issued in the settings (GrpcClientSettingsManager's
// defaults): exponential from 10 ms to 1 s, doubling.
var producerBackoff = &v2.ExponentialBackoff{
	Initial: durationpb.New(10 * time.Millisecond), Max: durationpb.New(time.Second), Multiplier: 2,
}

// clientTable holds each client's last settings and its open telemetry
// stream (the way to the client for the transaction check-back).
type clientTable struct {
	mu      sync.Mutex
	clients map[string]*clientState
}

type clientState struct {
	settings *v2.Settings
	stream   *telemetryStream // nil: none open
	channel  *clientChannel   // nil: no heartbeat yet
}

// telemetryStream serializes the sends on one client's telemetry stream:
// the settings answers and the server's commands.
type telemetryStream struct {
	mu     sync.Mutex
	send   func(*v2.TelemetryCommand) error
	remote string
}

func (t *telemetryStream) Send(cmd *v2.TelemetryCommand) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.send(cmd)
}

func newClientTable() *clientTable { return &clientTable{clients: make(map[string]*clientState)} }

func (t *clientTable) state(id string) *clientState {
	c := t.clients[id]
	if c == nil {
		c = &clientState{}
		t.clients[id] = c
	}
	return c
}

func (t *clientTable) putSettings(id string, s *v2.Settings) {
	t.mu.Lock()
	t.state(id).settings = s
	t.mu.Unlock()
}

func (t *clientTable) openStream(id string, ts *telemetryStream) {
	t.mu.Lock()
	t.state(id).stream = ts
	t.mu.Unlock()
}

// closeStream forgets ts if it is still the client's stream.
func (t *clientTable) closeStream(id string, ts *telemetryStream) {
	t.mu.Lock()
	if c := t.clients[id]; c != nil && c.stream == ts {
		c.stream = nil
	}
	t.mu.Unlock()
}

// streamOf is the client's open telemetry stream.
func (t *clientTable) streamOf(id string) (*telemetryStream, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if c := t.clients[id]; c != nil && c.stream != nil {
		return c.stream, true
	}
	return nil, false
}

// channel returns the client's registry channel, a new one when it has
// none (or it was closed), and its last settings.
func (t *clientTable) channel(s *Server, id, remote string) (*clientChannel, *v2.Settings) {
	t.mu.Lock()
	defer t.mu.Unlock()
	c := t.state(id)
	if c.channel == nil {
		c.channel = &clientChannel{s: s, id: id, remote: remote, closed: make(chan struct{})}
	}
	return c.channel, c.settings
}

// alive reports a client with an open registry channel (heartbeating,
// not terminated): Java's consumerManager.findChannel.
func (t *clientTable) alive(id string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	c := t.clients[id]
	if c == nil || c.channel == nil {
		return false
	}
	select {
	case <-c.channel.closed:
		return false
	default:
		return true
	}
}

// dropChannel forgets ch if it is still the client's channel.
func (t *clientTable) dropChannel(id string, ch *clientChannel) {
	t.mu.Lock()
	if c := t.clients[id]; c != nil && c.channel == ch {
		c.channel = nil
	}
	t.mu.Unlock()
}

// take removes the client and returns what it had.
func (t *clientTable) take(id string) *clientState {
	t.mu.Lock()
	defer t.mu.Unlock()
	c := t.clients[id]
	delete(t.clients, id)
	return c
}

// producerStream is the telemetry stream of a producer that publishes to
// topic (the producer group of its transactions), if one is open.
func (t *clientTable) producerStream(topic string) (*telemetryStream, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, c := range t.clients {
		if c.stream == nil {
			continue
		}
		for _, r := range c.settings.GetPublishing().GetTopics() {
			if r.GetName() == topic {
				return c.stream, true
			}
		}
	}
	return nil, false
}

func clientID(ctx context.Context) string {
	// ValueFromIncomingContext copies the one key's values, not the
	// whole metadata (an ack RPC carries a dozen headers).
	if v := metadata.ValueFromIncomingContext(ctx, clientIDKey); len(v) > 0 {
		return v[0]
	}
	return ""
}

// remoteAddr is the client's address (the BORNHOST of what it sends).
func remoteAddr(ctx context.Context) netip.AddrPort {
	if p, ok := peer.FromContext(ctx); ok && p.Addr != nil {
		if ta, ok := p.Addr.(*net.TCPAddr); ok { // without a string made and parsed
			ap := ta.AddrPort()
			if !ap.Addr().IsValid() {
				return netip.AddrPort{}
			}
			return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
		}
		if ap, err := netip.ParseAddrPort(p.Addr.String()); err == nil {
			return ap
		}
	}
	return netip.AddrPort{}
}

func remoteString(ctx context.Context) string {
	if p, ok := peer.FromContext(ctx); ok && p.Addr != nil {
		return p.Addr.String()
	}
	return ""
}

var errClientIDRequired = status(v2.Code_CLIENT_ID_REQUIRED, "clientId is required: send it in the "+clientIDKey+" header")

// Heartbeat follows ClientActivity.heartbeat: a client id is required, a
// consumer's group must be a legal name; the client is registered in the
// broker's client registry, a consumer of its group with the
// subscriptions of its settings, a producer of each topic its settings
// publish to (the producer group of its messages).
func (s *Server) Heartbeat(ctx context.Context, req *v2.HeartbeatRequest) (*v2.HeartbeatResponse, error) {
	id := clientID(ctx)
	if id == "" {
		return &v2.HeartbeatResponse{Status: errClientIDRequired}, nil
	}
	group := ""
	switch req.GetClientType() {
	case v2.ClientType_PUSH_CONSUMER, v2.ClientType_SIMPLE_CONSUMER, v2.ClientType_LITE_PUSH_CONSUMER:
		group = req.GetGroup().GetName()
		if st := checkGroupName(group); st != nil {
			return &v2.HeartbeatResponse{Status: st}, nil
		}
	case v2.ClientType_PRODUCER:
	default:
		return &v2.HeartbeatResponse{Status: status(v2.Code_UNRECOGNIZED_CLIENT_TYPE, "unrecognized client type: "+req.GetClientType().String())}, nil
	}
	ch, settings := s.clients.channel(s, id, remoteString(ctx))
	subs, producers := registration(settings)
	if group == "" {
		subs = nil
	} else {
		producers = nil
	}
	s.cfg.Processor.LocalHeartbeat(ch, client.ClientInfo{ClientID: id, Language: languageOf(ctx)}, group, subs, producers)
	return &v2.HeartbeatResponse{Status: okStatus()}, nil
}

// registration is what a client's settings register: its subscriptions
// and the topics it publishes to.
func registration(settings *v2.Settings) (subs []processor.LocalSubscription, producerGroups []string) {
	for _, e := range settings.GetSubscription().GetSubscriptions() {
		typ := protocol.ExpressionTag
		if e.GetExpression().GetType() == v2.FilterType_SQL {
			typ = protocol.ExpressionSQL92
		}
		subs = append(subs, processor.LocalSubscription{Topic: e.GetTopic().GetName(), Expression: e.GetExpression().GetExpression(), ExpressionType: typ})
	}
	for _, r := range settings.GetPublishing().GetTopics() {
		producerGroups = append(producerGroups, r.GetName())
	}
	return subs, producerGroups
}

// NotifyClientTermination unregisters the client and forgets it
// (ClientActivity.notifyClientTermination).
func (s *Server) NotifyClientTermination(ctx context.Context, req *v2.NotifyClientTerminationRequest) (*v2.NotifyClientTerminationResponse, error) {
	id := clientID(ctx)
	if id == "" {
		return &v2.NotifyClientTerminationResponse{Status: errClientIDRequired}, nil
	}
	if c := s.clients.take(id); c != nil && c.channel != nil {
		_, producers := registration(c.settings)
		s.cfg.Processor.LocalUnregister(c.channel, req.GetGroup().GetName(), producers)
		c.channel.once.Do(func() { close(c.channel.closed) })
	}
	return &v2.NotifyClientTerminationResponse{Status: okStatus()}, nil
}

// Telemetry is the settings exchange of ClientActivity.telemetry: each
// Settings command the client sends is answered with the settings the
// server imposes (publishing: message type check and body size limit;
// subscription: FIFO per the group's consumeMessageOrderly, the group's
// retry policy). The stream ends when the client ends it or the server
// closes.
func (s *Server) Telemetry(stream grpc.BidiStreamingServer[v2.TelemetryCommand, v2.TelemetryCommand]) error {
	id := clientID(stream.Context())
	ctx, cancel := s.untilClosed(stream.Context())
	defer cancel()
	ts := &telemetryStream{send: stream.Send, remote: remoteString(stream.Context())}
	if id != "" {
		s.clients.openStream(id, ts)
		defer s.clients.closeStream(id, ts)
	}
	cmds := make(chan *v2.TelemetryCommand)
	errc := make(chan error, 1)
	go func() { // ends with the stream: Recv fails once ctx is done
		for {
			cmd, err := stream.Recv()
			if err != nil {
				errc <- err
				return
			}
			select {
			case cmds <- cmd:
			case <-ctx.Done():
				return
			}
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return nil
		case err := <-errc:
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		case cmd := <-cmds:
			if id == "" {
				if err := ts.Send(&v2.TelemetryCommand{Status: errClientIDRequired}); err != nil {
					return err
				}
				continue
			}
			settings := cmd.GetSettings()
			if settings == nil {
				continue // thread stack traces, message verification results: nothing asked them
			}
			out, st := s.applySettings(settings)
			if st == nil {
				s.clients.putSettings(id, out)
				st = okStatus()
			}
			if err := ts.Send(&v2.TelemetryCommand{Status: st, Command: &v2.TelemetryCommand_Settings{Settings: out}}); err != nil {
				return err
			}
		}
	}
}

// applySettings is GrpcClientSettingsManager's merge: the client's
// settings with the server's part filled in.
func (s *Server) applySettings(in *v2.Settings) (*v2.Settings, *v2.Status) {
	out := &v2.Settings{
		ClientType: in.ClientType, AccessPoint: in.AccessPoint, RequestTimeout: in.RequestTimeout,
		UserAgent: in.UserAgent, Metric: in.Metric, BackoffPolicy: in.BackoffPolicy,
	}
	switch ps := in.GetPubSub().(type) {
	case *v2.Settings_Publishing:
		attempts := in.GetBackoffPolicy().GetMaxAttempts()
		if attempts <= 0 {
			attempts = 3
		}
		out.BackoffPolicy = &v2.RetryPolicy{MaxAttempts: attempts, Strategy: &v2.RetryPolicy_ExponentialBackoff{ExponentialBackoff: producerBackoff}}
		out.PubSub = &v2.Settings_Publishing{Publishing: &v2.Publishing{
			Topics: ps.Publishing.GetTopics(), ValidateMessageType: true,
			MaxBodySize: int32(s.cfg.Broker.MaxMessageSize),
		}}
	case *v2.Settings_Subscription:
		sub := &v2.Subscription{
			Group: ps.Subscription.GetGroup(), Subscriptions: ps.Subscription.GetSubscriptions(),
			ReceiveBatchSize: ps.Subscription.ReceiveBatchSize, LongPollingTimeout: durationpb.New(defaultPollTime),
		}
		group := ps.Subscription.GetGroup().GetName()
		gc, ok := s.cfg.Groups.Get(group)
		if !ok {
			gc = protocol.NewSubscriptionGroupConfig(group)
		}
		fifo := gc.ConsumeMessageOrderly
		sub.Fifo = &fifo
		out.BackoffPolicy = consumerBackoff(gc)
		out.PubSub = &v2.Settings_Subscription{Subscription: sub}
	default:
		return out, status(v2.Code_UNRECOGNIZED_CLIENT_TYPE, "settings carry neither publishing nor subscription")
	}
	return out, nil
}
