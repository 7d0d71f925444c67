package auth

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/vfs"
)

// TestMigrateV1: a 4.9 plain_acl.yml becomes users and ACLs as Java's
// AuthMigrator makes them; existing users are left alone, and a second
// run changes nothing.
func TestMigrateV1(t *testing.T) {
	users := memUsers(t, User{Username: "existing", Password: "kept", UserType: Normal})
	acls := memACLs(t, users)
	files := []string{filepath.Join("testdata", "plain_acl.yml")}
	res, err := MigrateV1(vfs.Default, files, users, acls, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := (MigrateResult{Users: 2, ACLs: 1, Skipped: 1, Failed: 1}); res != want {
		t.Fatalf("result = %+v, want %+v", res, want)
	}
	if u, _ := users.Get("RocketMQ"); u.Password != "12345678" || u.UserType != Normal {
		t.Fatalf("RocketMQ = %+v", u)
	}
	if u, _ := users.Get("rocketmq2"); u.UserType != Super {
		t.Fatalf("rocketmq2 = %+v", u)
	}
	if u, _ := users.Get("existing"); u.Password != "kept" || u.UserType != Normal {
		t.Fatalf("existing user overwritten: %+v", u)
	}
	if _, found := users.Get("nopass"); found {
		t.Fatal("account without secretKey imported")
	}
	got, found, err := acls.Get("User:RocketMQ")
	if err != nil || !found {
		t.Fatalf("ACL: %v %v", found, err)
	}
	want := AclInfo{Subject: "User:RocketMQ", Policies: []PolicyInfo{
		{PolicyType: "Custom", Entries: []PolicyEntryInfo{
			entry("Topic:topicA", []string{"All"}, "Deny"),
			entry("Topic:topicB", []string{"Pub", "Sub"}, "Allow"),
			entry("Topic:topicC", []string{"Sub"}, "Allow"),
			entry("Group:groupA", []string{"All"}, "Deny"),
			entry("Group:groupB", []string{"Pub", "Sub"}, "Allow"),
			entry("Group:groupC", []string{"Sub"}, "Allow"),
			entry("Group:groupD", []string{"Sub"}, "Allow"),
		}},
		{PolicyType: "Default", Entries: []PolicyEntryInfo{
			entry("Topic:*", []string{"All"}, "Deny"),
			entry("Group:*", []string{"Sub"}, "Allow"),
		}},
	}}
	if !reflect.DeepEqual(got.Info(), want) {
		t.Fatalf("ACL = %+v\nwant %+v", got.Info(), want)
	}
	if _, found, _ := acls.Get("User:rocketmq2"); found {
		t.Fatal("admin without permissions got an ACL")
	}
	// Enforced: topicB publishable, topicA and unlisted topics not.
	z := NewAuthorizer(users, acls, "c", nil)
	for topic, allowed := range map[string]bool{"topicB": true, "topicA": false, "other": false} {
		req := send310("RocketMQ", topic)
		if _, ok := z.Authorize(req, "127.0.0.1:1"); ok != allowed {
			t.Errorf("send to %s: allowed %v", topic, ok)
		}
	}
	again, err := MigrateV1(vfs.Default, files, users, acls, nil)
	if err != nil || again.Users != 0 || again.Skipped != 3 {
		t.Fatalf("second run = %+v, %v", again, err)
	}
}

// TestPlainACLFiles: Java's places under ROCKETMQ_HOME.
func TestPlainACLFiles(t *testing.T) {
	home := t.TempDir()
	for _, p := range []string{"conf/plain_acl.yml", "conf/acl/a.yml", "conf/acl/sub/b.yaml", "conf/acl/readme.txt"} {
		full := filepath.Join(home, p)
		if err := vfs.MkdirAllSync(vfs.Default, filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := vfs.WriteFileAtomic(vfs.Default, full, []byte("accounts: []\n")); err != nil {
			t.Fatal(err)
		}
	}
	got := PlainACLFiles(vfs.Default, home)
	want := []string{filepath.Join(home, "conf/acl/a.yml"), filepath.Join(home, "conf/acl/sub/b.yaml"), filepath.Join(home, "conf/plain_acl.yml")}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("files = %v", got)
	}
}

// TestSetupMigrates: Setup imports from ROCKETMQ_HOME's plain_acl.yml, and
// refuses to start when it has nowhere to read from.
func TestSetupMigrates(t *testing.T) {
	cfg := config.AuthConfig{AuthenticationEnabled: true, AuthorizationEnabled: true, MigrateAuthFromV1Enabled: true}
	t.Setenv("ROCKETMQ_HOME", "")
	if _, _, err := Setup(cfg, nil, filepath.Join(t.TempDir(), UsersFile), nil); err == nil ||
		!strings.Contains(err.Error(), "ROCKETMQ_HOME") {
		t.Fatalf("Setup without a file: %v", err)
	}
	home := t.TempDir()
	data, err := os.ReadFile(filepath.Join("testdata", "plain_acl.yml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(home, "conf"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "conf", "plain_acl.yml"), data, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("ROCKETMQ_HOME", home)
	a, _, err := Setup(cfg, nil, filepath.Join(t.TempDir(), UsersFile), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := a.Users().Get("RocketMQ"); !ok || a.Authorizer() == nil {
		t.Fatalf("users %v, authorizer %v", a.Users().List(""), a.Authorizer())
	}
	if _, found, _ := a.ACLs().Get("User:RocketMQ"); !found {
		t.Fatal("ACL not imported")
	}
}
