package broker_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"
	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/testutil/certs"
	"github.com/rocketd/rocketd/internal/testutil/wait"
)

// The official Go client's TLS option (producer.WithTls / consumer.WithTls,
// remote.ClientConfig.UseTls) dials with InsecureSkipVerify and presents no
// certificate: it cannot trust a custom CA or authenticate itself. These
// tests use it as it is; server verification and client certificates are
// covered by the remoting, ha and rocketctl tests.
//
// WithTls also sets a process-wide default (the option writes through
// the pointer to remote.DefaultRemotingClientConfig that every client
// shares), so a Go process cannot run TLS and plaintext clients at once:
// the tests pass WithTls(false) explicitly and restore it when they end.

// withTLS makes the Go client use TLS until the test ends.
func withTLS(t *testing.T) []producer.Option {
	t.Cleanup(func() {
		// Only option functions reach the shared default: apply one.
		if _, err := producer.NewDefaultProducer(producer.WithTls(false), producer.WithNameServer([]string{"127.0.0.1:9"}),
			producer.WithInstanceName(uniq(t, "reset"))); err != nil {
			t.Errorf("resetting the Go client's TLS default: %v", err)
		}
	})
	return []producer.Option{producer.WithTls(true)}
}

// enforcingTLS returns tls.* settings enforcing TLS with a CA-signed
// server certificate (test mode off).
func enforcingTLS(t *testing.T, needClientAuth string) config.TLSConfig {
	dir := t.TempDir()
	ca := certs.NewCA(t, "interop CA")
	caPath := ca.WriteCA(t, dir, "ca")
	cert, key := ca.Issue(t, "broker").Write(t, dir, "broker")
	clientCert, clientKey := ca.Issue(t, "broker-client").Write(t, dir, "broker-client")
	return config.TLSConfig{ServerMode: "enforcing", TestModeEnable: "false", ServerCertPath: cert, ServerKeyPath: key,
		ServerNeedClientAuth: needClientAuth, ServerAuthClient: true, ServerTrustCertPath: caPath,
		ClientCertPath: clientCert, ClientKeyPath: clientKey, ClientAuthServer: true, ClientTrustCertPath: caPath}
}

// sendAndConsume sends n messages with a producer made with popts and
// waits until a push consumer made with copts received them all.
func sendAndConsume(t *testing.T, c *cluster, topic, prefix string, n int, popts []producer.Option, copts []consumer.Option) {
	t.Helper()
	p := c.newProducer(popts...)
	for i := range n {
		body := fmt.Sprintf("%s-%d", prefix, i)
		if res, err := p.SendSync(context.Background(), primitive.NewMessage(topic, []byte(body))); err != nil || res.Status != primitive.SendOK {
			t.Fatalf("send %s: %v %v", body, res, err)
		}
	}
	rec := newReceived()
	c.newPushConsumer(uniq(t, "cg"), topic, "*", rec, copts...)
	wait.For(t, 20*time.Second, "the consumer to receive "+prefix, func() bool {
		for i := range n {
			if _, ok := rec.get(fmt.Sprintf("%s-%d", prefix, i)); !ok {
				return false
			}
		}
		return true
	})
}

// refusedSend returns the error of a send by a plaintext producer, or one
// made with opts.
func refusedSend(t *testing.T, c *cluster, topic string, opts ...producer.Option) error {
	t.Helper()
	p := c.newProducer(append([]producer.Option{producer.WithTls(false), producer.WithRetry(0), producer.WithSendMsgTimeout(2 * time.Second)}, opts...)...)
	_, err := p.SendSync(context.Background(), primitive.NewMessage(topic, []byte("must not arrive")))
	return err
}

func TestGoClientTLSEnforcing(t *testing.T) {
	tlsCfg := enforcingTLS(t, "none")
	c := startCluster(t, func(bc *config.BrokerConfig) { bc.TLS = tlsCfg })
	const topic = "TLSEnforced"
	c.createTopic(topic, 2)
	sendAndConsume(t, c, topic, "tls", 5, withTLS(t), []consumer.Option{consumer.WithTls(true)})
	if err := refusedSend(t, c, topic); err == nil {
		t.Fatal("a plaintext producer sent in enforcing mode")
	}
}

// TestGoClientTLSPermissive: rocketd's default (Java's): permissive with a
// self-signed certificate serves TLS and plaintext clients side by side.
func TestGoClientTLSPermissive(t *testing.T) {
	c := startCluster(t, nil)
	if bc := c.brokerConfig(); bc.TLS.Mode() != "permissive" {
		t.Fatalf("default tls.server.mode %s", bc.TLS.Mode())
	}
	const topic = "TLSPermissive"
	c.createTopic(topic, 2)
	sendAndConsume(t, c, topic, "tls", 3, withTLS(t), []consumer.Option{consumer.WithTls(true)})
	// The clients take turns: see withTLS.
	sendAndConsume(t, c, topic, "plain", 3, []producer.Option{producer.WithTls(false)}, []consumer.Option{consumer.WithTls(false)})
}

// TestGoClientTLSClientCertRequired: the Go client, which has no client
// certificate, is refused when one is required.
func TestGoClientTLSClientCertRequired(t *testing.T) {
	tlsCfg := enforcingTLS(t, "require")
	c := startCluster(t, func(bc *config.BrokerConfig) { bc.TLS = tlsCfg })
	const topic = "TLSMutual"
	c.createTopic(topic, 1)
	if err := refusedSend(t, c, topic, withTLS(t)...); err == nil {
		t.Fatal("a client without a certificate sent although one is required")
	}
}
