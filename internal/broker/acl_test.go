package broker_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"

	"github.com/rocketd/rocketd/internal/auth"
	"github.com/rocketd/rocketd/internal/broker"
	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
	"github.com/rocketd/rocketd/internal/testutil/wait"
)

// authorizing turns authorization on in an authenticated test broker.
func authorizing(bc *config.BrokerConfig) { bc.Auth.AuthorizationEnabled = true }

// aclReq is an AUTH_*_ACL request as mqadmin 5.3 sends it.
func aclReq(t *testing.T, code int32, ext map[string]string, body any) *remoting.Command {
	t.Helper()
	var raw []byte
	if body != nil {
		var err error
		if raw, err = json.Marshal(body); err != nil {
			t.Fatal(err)
		}
	}
	return remoting.NewRequest(code, ext, raw)
}

func createUser(t *testing.T, addr, name, pw string) {
	t.Helper()
	resp := rawInvoke(t, &authAdmin, addr, aclReq(t, protocol.AuthCreateUser, map[string]string{"username": name},
		map[string]string{"password": pw, "userType": "Normal"}))
	if resp.Code != protocol.Success {
		t.Fatalf("create user %s: %d %q", name, resp.Code, resp.Remark)
	}
}

func putACL(t *testing.T, addr string, code int32, info auth.AclInfo) *remoting.Command {
	t.Helper()
	return rawInvoke(t, &authAdmin, addr, aclReq(t, code, map[string]string{"subject": info.Subject}, info))
}

func aclEntry(res string, actions []string, decision string, ips ...string) auth.PolicyEntryInfo {
	return auth.PolicyEntryInfo{Resource: res, Actions: actions, Decision: decision, SourceIPs: ips}
}

// TestACLAdminRequests drives AUTH_CREATE_ACL .. AUTH_LIST_ACL with
// Java's headers and AclInfo bodies: create, merge by update, get, list
// with filters, delete an entry and the whole ACL, Java's refusals, and
// the table across a restart.
func TestACLAdminRequests(t *testing.T) {
	c := startAuthCluster(t, "", authorizing)
	addr := c.b.Addr()
	createUser(t, addr, "app", "app-pw")
	expect := func(what string, resp *remoting.Command, code int32, remark string) {
		t.Helper()
		if resp.Code != code || remark != "" && resp.Remark != remark {
			t.Fatalf("%s: %d %q, want %d %q", what, resp.Code, resp.Remark, code, remark)
		}
	}
	// mqadmin's createAcl body: one policy without a type.
	expect("create", putACL(t, addr, protocol.AuthCreateACL, auth.AclInfo{Subject: "User:app", Policies: []auth.PolicyInfo{
		{Entries: []auth.PolicyEntryInfo{aclEntry("Topic:t1", []string{"PUB"}, "ALLOW")}}}}), protocol.Success, "")
	expect("update", putACL(t, addr, protocol.AuthUpdateACL, auth.AclInfo{Subject: "User:app", Policies: []auth.PolicyInfo{
		{PolicyType: "Custom", Entries: []auth.PolicyEntryInfo{aclEntry("Topic:t2*", []string{"Sub", "Get"}, "Deny", "10.0.0.0/8")}}}}),
		protocol.Success, "")
	expect("for an unknown user", putACL(t, addr, protocol.AuthCreateACL, auth.AclInfo{Subject: "User:ghost", Policies: []auth.PolicyInfo{
		{Entries: []auth.PolicyEntryInfo{aclEntry("Topic:t1", []string{"Pub"}, "Allow")}}}}),
		protocol.NoPermission, "The subject of User:ghost is not exist.")
	expect("ACL 1.0 address form", putACL(t, addr, protocol.AuthCreateACL, auth.AclInfo{Subject: "User:app", Policies: []auth.PolicyInfo{
		{Entries: []auth.PolicyEntryInfo{aclEntry("Topic:t1", []string{"Pub"}, "Allow", "192.168.0.*")}}}}),
		protocol.NoPermission, "The source ip is invalid.")
	expect("no body", rawInvoke(t, &authAdmin, addr, aclReq(t, protocol.AuthCreateACL, map[string]string{"subject": "User:app"}, nil)),
		protocol.SystemError, "The body of acl is null")

	want := auth.AclInfo{Subject: "User:app", Policies: []auth.PolicyInfo{{PolicyType: "Custom", Entries: []auth.PolicyEntryInfo{
		aclEntry("Topic:t1", []string{"Pub"}, "Allow"),
		aclEntry("Topic:t2*", []string{"Sub", "Get"}, "Deny", "10.0.0.0/8"),
	}}}}
	get := func(addr string) (auth.AclInfo, *remoting.Command) {
		resp := rawInvoke(t, &authAdmin, addr, aclReq(t, protocol.AuthGetACL, map[string]string{"subject": "User:app"}, nil))
		var got auth.AclInfo
		if resp.Code == protocol.Success && len(resp.Body) > 0 {
			if err := json.Unmarshal(resp.Body, &got); err != nil {
				t.Fatal(err)
			}
		}
		return got, resp
	}
	if got, resp := get(addr); resp.Code != protocol.Success || !reflect.DeepEqual(got, want) {
		t.Fatalf("get: %d %q %s", resp.Code, resp.Remark, resp.Body)
	}
	list := func(subject, resource string) []auth.AclInfo {
		resp := rawInvoke(t, &authAdmin, addr, aclReq(t, protocol.AuthListACL,
			map[string]string{"subjectFilter": subject, "resourceFilter": resource}, nil))
		var out []auth.AclInfo
		if resp.Code != protocol.Success || len(resp.Body) > 0 && json.Unmarshal(resp.Body, &out) != nil {
			t.Fatalf("list: %d %q %s", resp.Code, resp.Remark, resp.Body)
		}
		return out
	}
	if l := list("app", "t2"); len(l) != 1 || len(l[0].Policies[0].Entries) != 1 || l[0].Policies[0].Entries[0].Resource != "Topic:t2*" {
		t.Fatalf("list(app, t2) = %+v", l)
	}
	if l := list("nobody", ""); len(l) != 0 {
		t.Fatalf("list(nobody) = %+v", l)
	}
	// A NORMAL user is refused (by the Cluster check, before the handler).
	app := auth.Credentials{AccessKey: "app", SecretKey: "app-pw"}
	resp := rawInvoke(t, &app, addr, aclReq(t, protocol.AuthGetACL, map[string]string{"subject": "User:app"}, nil))
	if resp.Code != protocol.NoPermission || !strings.Contains(resp.Remark, "User:app has no permission to access Cluster:") {
		t.Fatalf("NORMAL get: %d %q", resp.Code, resp.Remark)
	}

	c.stopBroker()
	c.startBroker()
	addr = c.b.Addr()
	if got, resp := get(addr); resp.Code != protocol.Success || !reflect.DeepEqual(got, want) {
		t.Fatalf("get after restart: %d %q %s", resp.Code, resp.Remark, resp.Body)
	}
	expect("delete an entry", rawInvoke(t, &authAdmin, addr, aclReq(t, protocol.AuthDeleteACL,
		map[string]string{"subject": "User:app", "resource": "Topic:t1"}, nil)), protocol.Success, "")
	if got, _ := get(addr); len(got.Policies) != 1 || len(got.Policies[0].Entries) != 1 {
		t.Fatalf("after deleting Topic:t1: %+v", got)
	}
	expect("delete all", rawInvoke(t, &authAdmin, addr, aclReq(t, protocol.AuthDeleteACL,
		map[string]string{"subject": "User:app"}, nil)), protocol.Success, "")
	if _, resp := get(addr); resp.Code != protocol.Success || len(resp.Body) != 0 {
		t.Fatalf("get after delete: %d %s", resp.Code, resp.Body)
	}
	expect("delete again", rawInvoke(t, &authAdmin, addr, aclReq(t, protocol.AuthDeleteACL,
		map[string]string{"subject": "User:app"}, nil)), protocol.NoPermission, "The acl is not exist.")
}

// TestAuthorizationGoClient: the official Go client signing as NORMAL
// users. Allowed producers and consumers work; a topic outside the ACL,
// a DENY overriding a wider ALLOW and an address outside the entry's
// range are refused with NO_PERMISSION and Java's remark; a 4.9
// plain_acl.yml account, migrated at start, is enforced the same way.
func TestAuthorizationGoClient(t *testing.T) {
	prefix := uniq(t, "acl")
	allowed, secret := prefix+"_ok", prefix+"_secret"
	other, lan := uniq(t, "aclother"), uniq(t, "acllan")
	plain := filepath.Join(t.TempDir(), "plain_acl.yml")
	yml := fmt.Sprintf(`globalWhiteRemoteAddresses:
  - 10.10.103.*
accounts:
  - accessKey: v1user
    secretKey: v1-secret-pw
    whiteRemoteAddress: 192.168.0.*
    admin: false
    defaultTopicPerm: DENY
    defaultGroupPerm: SUB
    topicPerms:
      - %s=PUB|SUB
`, allowed)
	if err := os.WriteFile(plain, []byte(yml), 0o600); err != nil {
		t.Fatal(err)
	}
	// The NameServer has its own users file, without app and v1user: it
	// lets route queries through unsigned.
	c := startAuthCluster(t, "105", authorizing, func(bc *config.BrokerConfig) {
		bc.Auth.MigrateAuthFromV1Enabled = true
		bc.Auth.PlainAclFile = plain
	})
	addr := c.b.Addr()
	for _, topic := range []string{allowed, secret, other, lan} {
		c.createTopic(topic, 2)
	}
	createUser(t, addr, "app", "app-pw")
	if resp := putACL(t, addr, protocol.AuthCreateACL, auth.AclInfo{Subject: "User:app", Policies: []auth.PolicyInfo{{Entries: []auth.PolicyEntryInfo{
		aclEntry("Topic:"+prefix+"*", []string{"Pub", "Sub", "Get"}, "Allow"),
		aclEntry("Topic:"+secret, []string{"All"}, "Deny"),
		aclEntry("Topic:"+lan, []string{"Pub"}, "Allow", "10.0.0.0/8"),
		aclEntry("Group:*", []string{"Sub"}, "Allow"),
	}}}}); resp.Code != protocol.Success {
		t.Fatalf("create ACL: %d %q", resp.Code, resp.Remark)
	}

	appCreds := primitive.Credentials{AccessKey: "app", SecretKey: "app-pw"}
	v1Creds := primitive.Credentials{AccessKey: "v1user", SecretKey: "v1-secret-pw"}
	for _, tc := range []struct {
		name   string
		creds  primitive.Credentials
		topic  string
		remark string // "" allowed
	}{
		{"allowed", appCreds, allowed, ""},
		{"outside the ACL", appCreds, other, "no matched policies."},
		{"DENY overrides the prefix ALLOW", appCreds, secret, "the decision is deny."},
		{"outside the source range", appCreds, lan, "no matched policies."},
		{"migrated account, allowed", v1Creds, allowed, ""},
		{"migrated account, defaultTopicPerm DENY", v1Creds, other, "the decision is deny."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := c.newProducer(producer.WithCredentials(tc.creds), producer.WithRetry(0), producer.WithSendMsgTimeout(3*time.Second))
			res, err := p.SendSync(context.Background(), primitive.NewMessage(tc.topic, []byte(tc.name)))
			if tc.remark == "" {
				if err != nil || res.Status != primitive.SendOK {
					t.Fatalf("send to %s: %v %v", tc.topic, res, err)
				}
				return
			}
			want := fmt.Sprintf("CODE: %d, DESC: User:%s has no permission to access Topic:%s from 127.0.0.1, %s",
				protocol.NoPermission, tc.creds.AccessKey, tc.topic, tc.remark)
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("send to %s: %v %v; want %q", tc.topic, res, err, want)
			}
		})
	}
	// An allowed consumer receives what the allowed producer sent.
	rec := newReceived()
	c.newPushConsumer(uniq(t, "acl_cg"), allowed, "*", rec, consumer.WithCredentials(appCreds),
		consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset))
	wait.For(t, 30*time.Second, "authorized consumer to receive", func() bool { return rec.len() >= 2 })
}

// TestSlaveCopiesUsersAndACLs: a slave makes its users and ACLs its
// master's (Java does not; see slavesync_auth.go): a user and an ACL
// created on the master before and after the slave starts reach it, and
// so does a deletion; the slave then authorizes with them.
func TestSlaveCopiesUsersAndACLs(t *testing.T) {
	c := startAuthCluster(t, "", authorizing, func(bc *config.BrokerConfig) { bc.BrokerRole = config.SyncMaster })
	addr := c.b.Addr()
	createUser(t, addr, "app", "app-pw")
	info := auth.AclInfo{Subject: "User:app", Policies: []auth.PolicyInfo{{Entries: []auth.PolicyEntryInfo{
		aclEntry("Topic:t1", []string{"Pub"}, "Allow")}}}}
	if resp := putACL(t, addr, protocol.AuthCreateACL, info); resp.Code != protocol.Success {
		t.Fatalf("create ACL: %d %q", resp.Code, resp.Remark)
	}
	bc := c.brokerConfig()
	bc.BrokerID, bc.BrokerRole = 1, config.Slave
	bc.StorePathRootDir = filepath.Join(c.dir, "slave-store")
	s, err := broker.Start(broker.Config{Broker: bc, ListenAddr: "127.0.0.1:0",
		SlaveSyncInterval: 100 * time.Millisecond, SlaveFullSyncInterval: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			t.Errorf("slave shutdown: %v", err)
		}
	})
	app := auth.Credentials{AccessKey: "app", SecretKey: "app-pw"}
	sendAs := func(topic string) *remoting.Command {
		return rawInvoke(t, &app, s.Addr(), remoting.NewRequest(int32(protocol.SendMessageV2),
			map[string]string{"a": "pg", "b": topic, "c": "TBW102", "d": "4", "e": "0", "f": "0", "g": "0", "h": "0", "j": "0"}, []byte("m")))
	}
	// A slave refuses sends anyway; what matters is whose refusal it is.
	refusedBy := func(resp *remoting.Command) string {
		if resp.Code == protocol.NoPermission && strings.Contains(resp.Remark, "has no permission") {
			return "acl"
		}
		if resp.Code == protocol.NoPermission && strings.Contains(resp.Remark, "is not found") {
			return "no user"
		}
		return "broker"
	}
	wait.For(t, 10*time.Second, "the slave to know app and its ACL", func() bool {
		return refusedBy(sendAs("t1")) == "broker" && refusedBy(sendAs("t2")) == "acl"
	})
	info.Policies[0].Entries = []auth.PolicyEntryInfo{aclEntry("Topic:t2", []string{"Pub"}, "Allow")}
	if resp := putACL(t, addr, protocol.AuthUpdateACL, info); resp.Code != protocol.Success {
		t.Fatalf("update ACL: %d %q", resp.Code, resp.Remark)
	}
	wait.For(t, 10*time.Second, "the slave to copy the new entry", func() bool { return refusedBy(sendAs("t2")) == "broker" })
	if resp := rawInvoke(t, &authAdmin, addr, aclReq(t, protocol.AuthDeleteUser, map[string]string{"username": "app"}, nil)); resp.Code != protocol.Success {
		t.Fatalf("delete user: %d %q", resp.Code, resp.Remark)
	}
	wait.For(t, 10*time.Second, "the slave to drop app", func() bool { return refusedBy(sendAs("t2")) == "no user" })
}

// TestAuthorizationJavaClient runs testdata/AuthzClientCheck.java: the
// Java client (AclClientRPCHook) as a NORMAL user produces and consumes
// on a topic its ACL allows, every request the Java client makes on the
// way passing authorization, and a send to a denied topic gets
// NO_PERMISSION with Java's remark.
func TestAuthorizationJavaClient(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a JVM")
	}
	jars := javaJars(t)
	c := startAuthCluster(t, "105", authorizing)
	addr := c.b.Addr()
	allowed, denied, group := uniq(t, "authz_java"), uniq(t, "authz_java_denied"), uniq(t, "authz_cg")
	c.createTopic(allowed, 2)
	c.createTopic(denied, 2)
	createUser(t, addr, "japp", "japp-pw")
	if resp := putACL(t, addr, protocol.AuthCreateACL, auth.AclInfo{Subject: "User:japp", Policies: []auth.PolicyInfo{{Entries: []auth.PolicyEntryInfo{
		aclEntry("Topic:"+allowed, []string{"Pub", "Sub", "Get"}, "Allow"),
		aclEntry("Topic:"+denied, []string{"All"}, "Deny"),
		aclEntry("Group:"+group, []string{"Sub", "Get", "Update"}, "Allow"),
	}}}}); resp.Code != protocol.Success {
		t.Fatalf("create ACL: %d %q", resp.Code, resp.Remark)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	home := t.TempDir()
	cmd := exec.CommandContext(ctx, "java", "-Xmx256m", "-Duser.home="+home, "-Drocketmq.client.logRoot="+home,
		"-cp", filepath.Join(jars, "*"), filepath.Join("testdata", "AuthzClientCheck.java"),
		c.nsAddr, allowed, denied, group, "japp", "japp-pw")
	out, err := cmd.CombinedOutput()
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if err != nil || lines[len(lines)-1] != "PASS" {
		t.Fatalf("AuthzClientCheck: %v\n%s", err, out)
	}
	for _, l := range lines {
		if strings.HasPrefix(l, "allowed ") || strings.HasPrefix(l, "denied ") {
			t.Log(l)
		}
	}
}
