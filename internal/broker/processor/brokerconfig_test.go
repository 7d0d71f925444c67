package processor_test

import (
	"os"
	"path/filepath"
	"sort"
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

// TestBrokerConfigShowsUseTLS: GET_BROKER_CONFIG has useTLS, whether the
// broker dials with TLS, as Java's (NettyClientConfig) does; mqadmin 4.9.x
// exportConfigs needs the key.
func TestBrokerConfigShowsUseTLS(t *testing.T) {
	for _, tc := range []struct {
		name, useTLS, mode, want string
	}{
		{"default", "", "", "useTLS=false"},
		{"useTLS", "true", "", "useTLS=true"},
		{"enforcing", "", "enforcing", "useTLS=true"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, func(bc *config.BrokerConfig, _ *processor.Deps) {
				bc.TLS.UseTLS = tc.useTLS
				if tc.mode != "" {
					bc.TLS.ServerMode = tc.mode
				}
			})
			r := e.call(protocol.GetBrokerConfig, nil, nil)
			if r.Code != protocol.Success {
				t.Fatalf("broker config: %d %s", r.Code, r.Remark)
			}
			body := string(r.Body)
			if n := strings.Count(body, "\nuseTLS="); n != 1 || !strings.Contains(body, "\n"+tc.want+"\n") {
				t.Fatalf("want one %q line in:\n%s", tc.want, body)
			}
			// still sorted like the rest (mqadmin prints them in order)
			lines := strings.Split(strings.TrimSuffix(body, "\n"), "\n")
			if !sort.StringsAreSorted(lines) {
				t.Fatalf("lines not sorted:\n%s", body)
			}
		})
	}
}

// TestUpdateBrokerConfig: a live key changes what the send path checks,
// GET_BROKER_CONFIG shows it with a newer version, and the file gets it;
// refused keys answer Java's codes and change nothing.
func TestUpdateBrokerConfig(t *testing.T) {
	path := filepath.Join(t.TempDir(), "broker.conf")
	must(t, os.WriteFile(path, []byte("# kept\nmaxMessageSize=4194304\n"), 0o644))
	e := newEnv(t, func(bc *config.BrokerConfig, d *processor.Deps) {
		d.Live = config.NewBrokerRuntime(bc, path)
	})
	e.createTopic("T", 1)
	body := strings.Repeat("x", 200)
	if r := e.send(sendHeader("T", 0, ""), body); r.Code != protocol.Success {
		t.Fatalf("send before: %d %s", r.Code, r.Remark)
	}
	v1 := e.call(protocol.GetBrokerConfig, nil, nil).ExtFields["version"]

	r := e.call(protocol.UpdateBrokerConfig, nil, []byte("maxMessageSize=100\n"))
	if r.Code != protocol.Success {
		t.Fatalf("update: %d %s", r.Code, r.Remark)
	}
	if r := e.send(sendHeader("T", 0, ""), body); r.Code != protocol.MessageIllegal || !strings.Contains(r.Remark, "maxMessageSize 100") {
		t.Fatalf("send after lowering maxMessageSize: %d %s", r.Code, r.Remark)
	}
	g := e.call(protocol.GetBrokerConfig, nil, nil)
	if !strings.Contains(string(g.Body), "\nmaxMessageSize=100\n") || g.ExtFields["version"] == v1 {
		t.Fatalf("GET_BROKER_CONFIG after update: version %s (was %s)", g.ExtFields["version"], v1)
	}
	raw, err := os.ReadFile(path)
	must(t, err)
	if string(raw) != "# kept\nmaxMessageSize=100\n" {
		t.Fatalf("file: %q", raw)
	}

	for _, c := range []struct {
		body   string
		code   int32
		remark string
	}{
		{"brokerConfigPath=/tmp/x", protocol.NoPermission, "Can not update config in black list. key: brokerConfigPath"},
		{"listenPort=1", protocol.NoPermission, "listenPort: read only at start"},
		{"flushIntervalCommitLog=10", protocol.NoPermission, "flushIntervalCommitLog: read only at start"},
		{"noSuchKey=1", protocol.NoPermission, "noSuchKey: unknown configuration key"},
		{"maxMessageSize=abc", protocol.InvalidParameter, "maxMessageSize"},
		{"maxMessageSize=0", protocol.InvalidParameter, "maxMessageSize 0 must be positive"},
		{"maxMessageSize=99999999", protocol.InvalidParameter, "raising it needs a restart"},
		{"timerMaxDelaySec=-5", protocol.InvalidParameter, "timerMaxDelaySec"},
		{"k=\\u00zz", protocol.SystemError, "string2Properties error"},
	} {
		r := e.call(protocol.UpdateBrokerConfig, nil, []byte(c.body))
		if r.Code != c.code || !strings.Contains(r.Remark, c.remark) {
			t.Errorf("%q: %d %q, want %d %q", c.body, r.Code, r.Remark, c.code, c.remark)
		}
	}
	// No body: nothing to change (Java answers SUCCESS too).
	if r := e.call(protocol.UpdateBrokerConfig, nil, nil); r.Code != protocol.Success {
		t.Fatalf("empty update: %d %s", r.Code, r.Remark)
	}
	raw, err = os.ReadFile(path)
	must(t, err)
	if string(raw) != "# kept\nmaxMessageSize=100\n" {
		t.Fatalf("refused updates changed the file: %q", raw)
	}
}

// TestBrokerConfigShowsHonouredKeys: keys rocketd accepts but has no use
// for are not listed.
func TestBrokerConfigShowsHonouredKeys(t *testing.T) {
	e := newEnv(t, nil)
	body := string(e.call(protocol.GetBrokerConfig, nil, nil).Body)
	for _, k := range []string{"timerPrecisionMs=", "transferMsgByHeap=", "storePathCommitLog="} {
		if strings.Contains(body, "\n"+k) {
			t.Errorf("%s shown", k)
		}
	}
	if !strings.Contains(body, "\nconfigBlackList=configBlackList;brokerConfigPath\n") {
		t.Errorf("configBlackList not shown")
	}
}
