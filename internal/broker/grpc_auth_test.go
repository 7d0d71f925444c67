package broker_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
	"time"

	rmq "github.com/apache/rocketmq-clients/golang/v5"
	"github.com/apache/rocketmq-clients/golang/v5/credentials"
	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/grpc/metadata"

	"github.com/rocketd/rocketd/internal/auth"
	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/testutil/proc"
)

// startGRPCAuthCluster is startAuthCluster with authorization and the
// gRPC service on; the user app (NORMAL, password app-pw) may publish to
// and subscribe allowed, and subscribe as any group.
func startGRPCAuthCluster(t *testing.T, allowed string) *cluster {
	t.Helper()
	rmq.EnableSsl = false
	c := startAuthCluster(t, "", authorizing, func(bc *config.BrokerConfig) { bc.GrpcServerEnable = true })
	if c.b.GRPCAddr() == "" {
		t.Fatal("gRPC service not started with authenticationEnabled")
	}
	addr := c.b.Addr()
	createUser(t, addr, "app", "app-pw")
	if resp := putACL(t, addr, protocol.AuthCreateACL, auth.AclInfo{Subject: "User:app", Policies: []auth.PolicyInfo{{Entries: []auth.PolicyEntryInfo{
		aclEntry("Topic:"+allowed, []string{"Pub", "Sub"}, "Allow"),
		aclEntry("Group:*", []string{"Sub"}, "Allow"),
	}}}}); resp.Code != protocol.Success {
		t.Fatalf("create ACL: %d %q", resp.Code, resp.Remark)
	}
	return c
}

// signedGRPC adds the headers the v5 SDK signs a call with
// (MQv2-HMAC-SHA1 over x-mq-date-time) to ctx.
func signedGRPC(ctx context.Context, ak, sk string) context.Context {
	now := time.Now().UTC().Format("20060102T150405Z")
	h := hmac.New(sha1.New, []byte(sk))
	h.Write([]byte(now))
	return metadata.AppendToOutgoingContext(ctx, "x-mq-date-time", now, "authorization",
		fmt.Sprintf("MQv2-HMAC-SHA1 Credential=%s//Rocketmq, SignedHeaders=x-mq-date-time, Signature=%s", ak, hex.EncodeToString(h.Sum(nil))))
}

// TestGRPCAuthSDK: with authenticationEnabled and authorizationEnabled
// the v5 SDK, signing as a user with an ACL, sends and receives; a wrong
// secret and an unknown user are refused with UNAUTHORIZED and Java's
// remark, and so is a topic outside the user's ACL.
func TestGRPCAuthSDK(t *testing.T) {
	if raceEnabled {
		// The v5.1.4 SDK races with itself under -race (see
		// TestGRPCProducerAndSimpleConsumer); the server's side runs under
		// -race in TestGRPCAuthRaw.
		proc.RerunWithoutRace(t)
		return
	}
	allowed, forbidden, group := uniq(t, "GrpcAuthOk"), uniq(t, "GrpcAuthNo"), uniq(t, "GrpcAuthGroup")
	c := startGRPCAuthCluster(t, allowed)
	c.createTopic(allowed, 2)
	c.createTopic(forbidden, 2)
	cfg := func(ak, sk, group string) *rmq.Config {
		return &rmq.Config{Endpoint: c.b.GRPCAddr(), ConsumerGroup: group,
			Credentials: &credentials.SessionCredentials{AccessKey: ak, AccessSecret: sk}}
	}
	ctx := context.Background()

	t.Run("right user sends and receives", func(t *testing.T) {
		p, err := rmq.NewProducer(cfg("app", "app-pw", ""), rmq.WithTopics(allowed))
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Start(); err != nil {
			t.Fatalf("producer start: %v", err)
		}
		t.Cleanup(func() { _ = p.GracefulStop() })
		for i := range 3 {
			if _, err := p.Send(ctx, &rmq.Message{Topic: allowed, Body: fmt.Appendf(nil, "auth-%d", i)}); err != nil {
				t.Fatalf("send %d: %v", i, err)
			}
		}
		sc, err := rmq.NewSimpleConsumer(cfg("app", "app-pw", group), rmq.WithSimpleAwaitDuration(5*time.Second),
			rmq.WithSimpleSubscriptionExpressions(map[string]*rmq.FilterExpression{allowed: rmq.SUB_ALL}))
		if err != nil {
			t.Fatal(err)
		}
		if err := sc.Start(); err != nil {
			t.Fatalf("simple consumer start: %v", err)
		}
		t.Cleanup(func() { _ = sc.GracefulStop() })
		for _, mv := range receiveN(t, sc, 3, 20*time.Second, 30*time.Second) {
			if err := sc.Ack(ctx, mv); err != nil {
				t.Fatalf("ack: %v", err)
			}
		}
	})

	for _, tc := range []struct {
		name, ak, sk, topic, want string
	}{
		{"wrong secret", "app", "guess", allowed, "CODE: UNAUTHORIZED, MESSAGE: check signature failed."},
		{"unknown user", "ghost", "app-pw", allowed, "CODE: UNAUTHORIZED, MESSAGE: User:ghost is not found."},
		{"forbidden topic", "app", "app-pw", forbidden,
			"CODE: UNAUTHORIZED, MESSAGE: User:app has no permission to access Topic:" + forbidden + " from 127.0.0.1, no matched policies."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := rmq.NewProducer(cfg(tc.ak, tc.sk, ""), rmq.WithTopics(tc.topic))
			if err != nil {
				t.Fatal(err)
			}
			err = p.Start()
			if err == nil {
				_ = p.GracefulStop()
				t.Fatalf("producer started")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("start: %v; want %q", err, tc.want)
			}
		})
	}
}

// TestGRPCAuthRaw checks each kind of RPC with a raw client under -race:
// unary refusals carry UNAUTHORIZED in the response's status, a refused
// ReceiveMessage answers one status message and ends, a refused
// Telemetry command is answered and the stream goes on; SendMessage is
// authorized by its message's topic.
func TestGRPCAuthRaw(t *testing.T) {
	allowed, forbidden, group := uniq(t, "GrpcAuthOk"), uniq(t, "GrpcAuthNo"), uniq(t, "GrpcAuthGroup")
	c := startGRPCAuthCluster(t, allowed)
	c.createTopic(allowed, 2)
	c.createTopic(forbidden, 2)
	cli, base := rawGRPC(t, c)
	app := signedGRPC(base, "app", "app-pw")
	route := func(ctx context.Context, topic string) *v2.Status {
		t.Helper()
		r, err := cli.QueryRoute(ctx, &v2.QueryRouteRequest{Topic: &v2.Resource{Name: topic}})
		if err != nil {
			t.Fatalf("route %s: %v", topic, err)
		}
		return r.GetStatus()
	}
	expect := func(what string, st *v2.Status, code v2.Code, msg string) {
		t.Helper()
		if st.GetCode() != code || (msg != "" && st.GetMessage() != msg) {
			t.Fatalf("%s: %v, want %v %q", what, st, code, msg)
		}
	}
	noPerm := func(topic string) string {
		return "User:app has no permission to access Topic:" + topic + " from 127.0.0.1, no matched policies."
	}

	expect("route, signed", route(app, allowed), v2.Code_OK, "")
	expect("route, unsigned", route(base, allowed), v2.Code_UNAUTHORIZED, "username cannot be null.")
	expect("route, wrong secret", route(signedGRPC(base, "app", "nope"), allowed), v2.Code_UNAUTHORIZED, "check signature failed.")
	expect("route, unknown user", route(signedGRPC(base, "ghost", "x"), allowed), v2.Code_UNAUTHORIZED, "User:ghost is not found.")
	expect("route, no date", route(metadata.AppendToOutgoingContext(base, "authorization", "MQv2-HMAC-SHA1 Credential=app"), allowed),
		v2.Code_UNAUTHORIZED, "datetime is null.")
	expect("route, forbidden topic", route(app, forbidden), v2.Code_UNAUTHORIZED, noPerm(forbidden))
	expect("route, SUPER user", route(signedGRPC(base, authAdmin.AccessKey, authAdmin.SecretKey), forbidden), v2.Code_OK, "")

	send := func(topic string) *v2.Status {
		t.Helper()
		r, err := cli.SendMessage(app, &v2.SendMessageRequest{Messages: []*v2.Message{{Topic: &v2.Resource{Name: topic}, Body: []byte("x"),
			SystemProperties: &v2.SystemProperties{MessageId: "AUTHID" + topic, MessageType: v2.MessageType_NORMAL}}}})
		if err != nil {
			t.Fatalf("send to %s: %v", topic, err)
		}
		return r.GetStatus()
	}
	expect("send, forbidden topic", send(forbidden), v2.Code_UNAUTHORIZED, noPerm(forbidden))
	expect("send, allowed topic", send(allowed), v2.Code_OK, "")
	if n := c.b.Store().MaxOffset(forbidden, 0) + c.b.Store().MaxOffset(forbidden, 1); n != 0 {
		t.Fatalf("refused send stored %d messages", n)
	}

	if code, msgs := rawReceive(t, app, cli, group, forbidden, 1); code != v2.Code_UNAUTHORIZED || len(msgs) != 0 {
		t.Fatalf("receive from forbidden topic: %v, %d messages", code, len(msgs))
	}
	if code, msgs := rawReceive(t, base, cli, group, allowed, 1); code != v2.Code_UNAUTHORIZED || len(msgs) != 0 {
		t.Fatalf("unsigned receive: %v, %d messages", code, len(msgs))
	}
	if code, msgs := rawReceive(t, app, cli, group, allowed, 1); code != v2.Code_OK || len(msgs) != 1 {
		t.Fatalf("receive: %v, %d messages", code, len(msgs))
	}

	tel, err := cli.Telemetry(app)
	if err != nil {
		t.Fatal(err)
	}
	settings := func(topic string) *v2.TelemetryCommand {
		t.Helper()
		if err := tel.Send(&v2.TelemetryCommand{Command: &v2.TelemetryCommand_Settings{Settings: &v2.Settings{
			ClientType: v2.ClientType_PRODUCER.Enum(),
			PubSub:     &v2.Settings_Publishing{Publishing: &v2.Publishing{Topics: []*v2.Resource{{Name: topic}}}},
		}}}); err != nil {
			t.Fatal(err)
		}
		got, err := tel.Recv()
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	if got := settings(forbidden); got.GetStatus().GetCode() != v2.Code_UNAUTHORIZED || got.GetStatus().GetMessage() != noPerm(forbidden) {
		t.Fatalf("settings for a forbidden topic: %v", got)
	}
	if got := settings(allowed); got.GetStatus().GetCode() != v2.Code_OK || got.GetSettings().GetPublishing() == nil {
		t.Fatalf("settings after a refusal: %v", got)
	}
	_ = tel.CloseSend()
}
