package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func newTestBrokerRuntime(t *testing.T, conf string) (*Runtime[BrokerConfig], string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "broker.conf")
	if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	bc, _, err := LoadBrokerFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return NewBrokerRuntime(&bc, path), path
}

func TestBrokerRuntimeUpdateAppliesAndPersists(t *testing.T) {
	conf := "# operator's comment\nbrokerName=b1\nsomeJavaOnlyKey = kept\nmaxMessageSize=1000\n"
	r, path := newTestBrokerRuntime(t, conf)
	v1 := r.Version()
	if err := r.Update(Properties{"maxMessageSize": " 500 ", "rejectTransactionMessage": "true"}); err != nil {
		t.Fatal(err)
	}
	if got := r.Load(); got.MaxMessageSize != 500 || !got.RejectTransactionMessage {
		t.Fatalf("snapshot: maxMessageSize %d rejectTransactionMessage %v", got.MaxMessageSize, got.RejectTransactionMessage)
	}
	if r.Version() == v1 || !strings.Contains(r.Version(), `"counter":2`) {
		t.Fatalf("version %s after %s", r.Version(), v1)
	}
	if !strings.Contains(PropertiesText(r.Load()), "\nmaxMessageSize=500\n") {
		t.Fatal("rendered config does not show the new value")
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := "# operator's comment\nbrokerName=b1\nsomeJavaOnlyKey = kept\nmaxMessageSize=500\nrejectTransactionMessage=true\n"
	if string(raw) != want {
		t.Fatalf("file:\n%s\nwant:\n%s", raw, want)
	}
	// The next start reads the persisted values.
	bc, _, err := LoadBrokerFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if bc.MaxMessageSize != 500 || !bc.RejectTransactionMessage || bc.BrokerName != "b1" {
		t.Fatalf("reloaded: %d %v %s", bc.MaxMessageSize, bc.RejectTransactionMessage, bc.BrokerName)
	}
}

func TestBrokerRuntimeRefusals(t *testing.T) {
	r, path := newTestBrokerRuntime(t, "configBlackList=configBlackList;brokerConfigPath;timerWheelEnable\nmaxMessageSize=1000\n")
	before, _ := os.ReadFile(path)
	cases := []struct {
		props Properties
		kind  RefusalKind
		key   string
	}{
		{Properties{"brokerConfigPath": "/x"}, RefusedBlackList, "brokerConfigPath"},
		{Properties{"configBlackList": ""}, RefusedBlackList, "configBlackList"},
		{Properties{"rocketmqHome": "/x"}, RefusedBlackList, "rocketmqHome"},
		{Properties{"timerWheelEnable": "false"}, RefusedBlackList, "timerWheelEnable"},
		{Properties{"listenPort": "1"}, RefusedRestart, "listenPort"},
		{Properties{"flushIntervalCommitLog": "100"}, RefusedRestart, "flushIntervalCommitLog"},
		{Properties{"tls.server.mode": "disabled"}, RefusedRestart, "tls.server.mode"},
		{Properties{"authenticationEnabled": "true"}, RefusedRestart, "authenticationEnabled"},
		{Properties{"timerPrecisionMs": "10"}, RefusedRestart, "timerPrecisionMs"},
		{Properties{"noSuchKey": "1"}, RefusedUnknown, "noSuchKey"},
		{Properties{"MaxMessageSize": "1"}, RefusedUnknown, "MaxMessageSize"}, // Java's keys are case-sensitive
		{Properties{"maxMessageSize": "abc"}, RefusedValue, "maxMessageSize"},
		{Properties{"maxMessageSize": "-1"}, RefusedValue, "maxMessageSize"},
		{Properties{"maxMessageSize": "1001"}, RefusedValue, "maxMessageSize"},
		{Properties{"defaultMessageRequestMode": "PUSH"}, RefusedValue, "defaultMessageRequestMode"},
		{Properties{"timerMaxDelaySec": "0"}, RefusedValue, "timerMaxDelaySec"},
		// One bad key refuses the whole update.
		{Properties{"maxMessageSize": "10", "listenPort": "1"}, RefusedRestart, "listenPort"},
	}
	for _, c := range cases {
		err := r.Update(c.props)
		var ref *UpdateRefusal
		if !errors.As(err, &ref) || ref.Kind != c.kind || ref.Key != c.key {
			t.Errorf("Update(%v) = %v, want kind %d on %s", c.props, err, c.kind, c.key)
		}
	}
	if got := r.Load().MaxMessageSize; got != 1000 {
		t.Fatalf("maxMessageSize %d after refused updates", got)
	}
	after, _ := os.ReadFile(path)
	if string(after) != string(before) {
		t.Fatalf("refused updates changed the file:\n%s", after)
	}
}

func TestNamesrvRuntimeUpdate(t *testing.T) {
	dir := t.TempDir()
	c := NamesrvConfig{KVConfigPath: filepath.Join(dir, "kv.json"), ConfigStorePath: filepath.Join(dir, "sub", "namesrv.properties")}
	c.EnsureDefaults()
	r := NewNamesrvRuntime(&c, c.ConfigStorePath)
	if err := r.Update(Properties{"orderMessageEnable": "true", "brokerChannelExpiredTime": "30000"}); err != nil {
		t.Fatal(err)
	}
	if got := r.Load(); !got.OrderMessageEnable || got.BrokerChannelExpiredTime.Seconds() != 30 {
		t.Fatalf("snapshot %+v", got)
	}
	for _, k := range []string{"kvConfigPath", "configStorePath", "configBlackList", "rocketmqHome"} {
		var ref *UpdateRefusal
		if err := r.Update(Properties{k: "x"}); !errors.As(err, &ref) || ref.Kind != RefusedBlackList {
			t.Errorf("Update(%s) = %v, want black-listed", k, err)
		}
	}
	var ref *UpdateRefusal
	if err := r.Update(Properties{"listenPort": "1"}); !errors.As(err, &ref) || ref.Kind != RefusedRestart {
		t.Errorf("listenPort: %v", err)
	}
	if err := r.Update(Properties{"brokerChannelExpiredTime": "0"}); !errors.As(err, &ref) || ref.Kind != RefusedValue {
		t.Errorf("brokerChannelExpiredTime=0: %v", err)
	}
	got, _, err := LoadNamesrvFile(c.ConfigStorePath)
	if err != nil {
		t.Fatal(err)
	}
	if !got.OrderMessageEnable || got.BrokerChannelExpiredTime.Seconds() != 30 {
		t.Fatalf("reloaded %+v", got)
	}
}

// TestRuntimeConcurrentReaders runs readers against updates: under -race
// a reader seeing a half-written snapshot would be reported.
func TestRuntimeConcurrentReaders(t *testing.T) {
	r, _ := newTestBrokerRuntime(t, "maxMessageSize=1000\n")
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if c := r.Load(); c.MaxMessageSize != 1000 && c.MaxMessageSize != 900 {
					t.Errorf("maxMessageSize %d", c.MaxMessageSize)
					return
				}
			}
		}()
	}
	for i := range 20 {
		v := "1000"
		if i%2 == 0 {
			v = "900"
		}
		if err := r.Update(Properties{"maxMessageSize": v}); err != nil {
			t.Error(err)
		}
	}
	close(stop)
	wg.Wait()
}

func TestRewriteProperties(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"empty", "", "a=1\n"},
		{"no final newline", "x=2", "x=2\na=1\n"},
		{"replace with continuation", "a=old,\\\n  more\nb=2\n", "a=1\nb=2\n"},
		{"duplicates dropped", "a=0\nb=2\na=3\n", "a=1\nb=2\n"},
		{"colon and blank separators", "  a : 0\n", "a=1\n"},
		{"comment mentioning key kept", "# a=0\n", "# a=0\na=1\n"},
		{"crlf kept", "b=2\r\na=0\r\n", "b=2\r\na=1\n"},
	}
	for _, c := range cases {
		if got := rewriteProperties(c.in, Properties{"a": "1"}); got != c.want {
			t.Errorf("%s: got %q want %q", c.name, got, c.want)
		}
	}
	// Values that need escaping read back as written.
	odd := Properties{"k": " lead\\back=eq:colon#hash\ttab\nnl", "key with space": "v"}
	got, err := ParseProperties(strings.NewReader(rewriteProperties("", odd)))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range odd {
		if got[k] != v {
			t.Errorf("%q read back as %q, want %q", k, got[k], v)
		}
	}
}
