package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/rocketd/rocketd/internal/config"
)

// TestUserAndACLCommands: rocketctl user and acl against a rocketd broker
// with authentication and authorization, signed as its SUPER user: create,
// update, get and list users and ACLs, the JSON forms, delete, and a
// client-side refusal of an ACL the broker would refuse.
func TestUserAndACLCommands(t *testing.T) {
	ns := startRocketdWith(t, func(bc *config.BrokerConfig) {
		bc.Auth = config.AuthConfig{AuthenticationEnabled: true, AuthorizationEnabled: true,
			InitAuthenticationUser: `{"username":"ops","password":"ops-secret"}`}
	})
	t.Setenv(accessKeyEnv, "ops")
	t.Setenv(secretKeyEnv, "ops-secret")

	t.Setenv(userPasswordEnv, "")
	if out, err := rocketctl(t, "-n", ns, "user", "create", "-u", "app"); err == nil || !strings.Contains(err.Error(), userPasswordEnv) {
		t.Fatalf("create without password: %v\n%s", err, out)
	}
	t.Setenv(userPasswordEnv, "app-pw")
	mustRun(t, "-n", ns, "user", "create", "-u", "app")
	mustRun(t, "-n", ns, "user", "update", "-u", "app", "-s", "disable")
	out := mustRun(t, "-n", ns, "user", "get", "-u", "app")
	if !strings.Contains(out, "app") || !strings.Contains(out, "disable") || strings.Contains(out, "app-pw") {
		t.Fatalf("user get: %s", out)
	}
	var users map[string][]map[string]string
	if err := json.Unmarshal([]byte(mustRun(t, "-n", ns, "--json", "user", "list")), &users); err != nil || len(users) != 1 {
		t.Fatalf("user list --json: %v %v", users, err)
	}
	for _, us := range users {
		if len(us) != 2 {
			t.Fatalf("users: %v", us)
		}
	}

	mustRun(t, "-n", ns, "acl", "create", "-s", "User:app", "-r", "Topic:orders,Topic:logs*", "-a", "Pub,Sub", "-d", "Allow", "-i", "10.0.0.0/8")
	mustRun(t, "-n", ns, "acl", "update", "-s", "User:app", "-r", "Topic:orders", "-a", "Sub", "-d", "Deny")
	out = mustRun(t, "-n", ns, "acl", "get", "-s", "User:app")
	for _, want := range []string{"Topic:orders", "Deny", "Topic:logs*", "Pub,Sub from 10.0.0.0/8"} {
		if !strings.Contains(out, want) {
			t.Fatalf("acl get lacks %q:\n%s", want, out)
		}
	}
	var acls map[string][]map[string]any
	if err := json.Unmarshal([]byte(mustRun(t, "-n", ns, "--json", "acl", "list", "-r", "logs")), &acls); err != nil {
		t.Fatal(err)
	}
	for _, l := range acls {
		b, _ := json.Marshal(l)
		if len(l) != 1 || !strings.Contains(string(b), "Topic:logs*") || strings.Contains(string(b), "Topic:orders") {
			t.Fatalf("acl list -r logs: %s", b)
		}
	}
	if out, err := rocketctl(t, "-n", ns, "acl", "create", "-s", "User:app", "-r", "Topic:x", "-a", "Pub", "-d", "Allow", "-i", "10.0.0.*"); err == nil ||
		!strings.Contains(err.Error(), "The source ip is invalid.") {
		t.Fatalf("ACL 1.0 address form: %v\n%s", err, out)
	}
	if out, err := rocketctl(t, "-n", ns, "acl", "create", "-s", "User:ghost", "-r", "Topic:x", "-a", "Pub", "-d", "Allow"); err == nil ||
		!strings.Contains(err.Error(), "The subject of User:ghost is not exist.") {
		t.Fatalf("ACL of an unknown user: %v\n%s", err, out)
	}
	mustRun(t, "-n", ns, "acl", "delete", "-s", "User:app", "-r", "Topic:orders")
	if out := mustRun(t, "-n", ns, "acl", "get", "-s", "User:app"); strings.Contains(out, "Topic:orders") {
		t.Fatalf("entry not deleted:\n%s", out)
	}
	mustRun(t, "-n", ns, "user", "delete", "-u", "app")
	if out := mustRun(t, "-n", ns, "acl", "list"); !strings.Contains(out, "(none)") {
		t.Fatalf("the user's ACL outlived it:\n%s", out)
	}
}
