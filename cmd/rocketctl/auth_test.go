package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/namesrv"
)

// TestAccessKeySigns: against a NameServer with authenticationEnabled,
// rocketctl is refused without credentials and served with --access-key
// and the secret from the environment; a missing secret is an error
// before anything is sent.
func TestAccessKeySigns(t *testing.T) {
	cfg := namesrv.Config{Addr: "127.0.0.1:0"}
	cfg.Namesrv.KVConfigPath = filepath.Join(t.TempDir(), "kvConfig.json")
	cfg.Namesrv.Auth = config.AuthConfig{AuthenticationEnabled: true,
		InitAuthenticationUser: `{"username":"ops","password":"ops-secret"}`}
	srv, err := namesrv.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	ns := srv.Addr()

	t.Setenv(accessKeyEnv, "")
	t.Setenv(secretKeyEnv, "")
	if out, err := rocketctl(t, "-n", ns, "kv", "put", "--namespace", "NS", "--key", "k", "--value", "v"); err == nil || !strings.Contains(err.Error()+out, "username cannot be null.") {
		t.Fatalf("unsigned kv put: %v\n%s", err, out)
	}
	if out, err := rocketctl(t, "-n", ns, "--access-key", "ops", "kv", "put", "--namespace", "NS", "--key", "k", "--value", "v"); err == nil || !strings.Contains(err.Error(), secretKeyEnv) {
		t.Fatalf("no secret: %v\n%s", err, out)
	}
	t.Setenv(secretKeyEnv, "wrong")
	if out, err := rocketctl(t, "-n", ns, "--access-key", "ops", "kv", "put", "--namespace", "NS", "--key", "k", "--value", "v"); err == nil || !strings.Contains(err.Error()+out, "check signature failed.") {
		t.Fatalf("wrong secret: %v\n%s", err, out)
	}
	t.Setenv(secretKeyEnv, "ops-secret")
	mustRun(t, "-n", ns, "--access-key", "ops", "kv", "put", "--namespace", "NS", "--key", "k", "--value", "signed-value")
	t.Setenv(accessKeyEnv, "ops")
	if out := mustRun(t, "-n", ns, "kv", "get", "--namespace", "NS", "--key", "k"); !strings.Contains(out, "signed-value") {
		t.Fatalf("kv get: %s", out)
	}
}
