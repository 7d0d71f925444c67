package processor_test

import (
	"strings"
	"testing"

	"github.com/rocketd/rocketd/internal/broker/processor"
	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/protocol"
)

// TestBrokerConfigHidesSecrets: GET_BROKER_CONFIG shows bindAddress but no
// tls.* setting, and never a key password.
func TestBrokerConfigHidesSecrets(t *testing.T) {
	const secret = "s3cret-key-password"
	e := newEnv(t, func(bc *config.BrokerConfig, _ *processor.Deps) {
		bc.BindAddress = "127.0.0.1"
		bc.TLS.ServerKeyPassword = secret
		bc.TLS.ClientKeyPassword = secret
	})
	r := e.call(protocol.GetBrokerConfig, nil, nil)
	if r.Code != protocol.Success {
		t.Fatalf("broker config: %d %s", r.Code, r.Remark)
	}
	body := string(r.Body)
	if strings.Contains(body, secret) || strings.Contains(body, "tls.") || strings.Contains(body, "-=") {
		t.Fatalf("config body shows TLS settings:\n%s", body)
	}
	if !strings.Contains(body, "bindAddress=127.0.0.1\n") {
		t.Fatalf("no bindAddress in:\n%s", body)
	}
}
