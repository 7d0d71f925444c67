package auth

import (
	"strings"
	"testing"

	"github.com/rocketd/rocketd/internal/remoting"
)

// memACLs returns an in-memory ACL table over users holding acls.
func memACLs(t testing.TB, users *Users, acls ...AclInfo) *ACLs {
	t.Helper()
	a, err := OpenACLs(nil, "", users)
	if err != nil {
		t.Fatal(err)
	}
	for _, info := range acls {
		acl, err := ACLFromInfo(info, "")
		if err != nil {
			t.Fatal(err)
		}
		if err := a.Put(acl); err != nil {
			t.Fatalf("put %s: %v", info.Subject, err)
		}
	}
	return a
}

func entry(res string, actions []string, decision string, ips ...string) PolicyEntryInfo {
	return PolicyEntryInfo{Resource: res, Actions: actions, Decision: decision, SourceIPs: ips}
}

// TestAuthorizeDecisions: the table of Java's AclAuthorizationHandler
// outcomes, with its remarks: the most specific matching entry decides,
// DENY where it is that entry, the DEFAULT policy only when no CUSTOM
// entry matches, source ranges, SUPER users and the whitelist.
func TestAuthorizeDecisions(t *testing.T) {
	users := memUsers(t,
		User{Username: "app", Password: "pw"},
		User{Username: "root", Password: "pw", UserType: Super},
		User{Username: "bare", Password: "pw"},
	)
	acls := memACLs(t, users, AclInfo{Subject: "User:app", Policies: []PolicyInfo{
		{PolicyType: "Custom", Entries: []PolicyEntryInfo{
			entry("Topic:*", []string{"Pub", "Sub"}, "Allow"),
			entry("Topic:secret", []string{"All"}, "Deny"),
			entry("Topic:log*", []string{"Pub"}, "Deny"),
			entry("Topic:logs.audit*", []string{"Pub"}, "Allow"),
			entry("Topic:lan", []string{"Pub"}, "Allow", "10.1.0.0/16", "192.168.7.7"),
			entry("Group:cg", []string{"Sub"}, "Allow"),
			entry("Cluster:DefaultCluster", []string{"Get"}, "Allow"),
		}},
		{PolicyType: "Default", Entries: []PolicyEntryInfo{
			entry("Group:*", []string{"Sub"}, "Allow"),
		}},
	}})
	z := NewAuthorizer(users, acls, "DefaultCluster", []int32{26})
	send := func(user, topic string) *remoting.Command {
		return remoting.NewRequest(310, map[string]string{FieldAccessKey: user, "a": "pg", "b": topic}, nil)
	}
	pull := func(user, topic, group string) *remoting.Command {
		return remoting.NewRequest(11, map[string]string{FieldAccessKey: user, "topic": topic, "consumerGroup": group}, nil)
	}
	for _, tc := range []struct {
		name   string
		req    *remoting.Command
		from   string
		remark string // "" allowed
	}{
		{"allowed topic", send("app", "orders"), "127.0.0.1:5000", ""},
		{"deny overrides the wider allow", send("app", "secret"), "127.0.0.1:5000",
			"User:app has no permission to access Topic:secret from 127.0.0.1, the decision is deny."},
		{"prefix deny", send("app", "logs.app"), "127.0.0.1:5000",
			"User:app has no permission to access Topic:logs.app from 127.0.0.1, the decision is deny."},
		{"longer prefix allow beats shorter deny", send("app", "logs.audit.x"), "127.0.0.1:5000", ""},
		{"inside the range", send("app", "lan"), "10.1.200.3:1", ""},
		{"the single ip", send("app", "lan"), "192.168.7.7:1", ""},
		{"outside the range falls to Topic:*", send("app", "lan"), "10.2.0.1:1", ""},
		{"pull: topic and group", pull("app", "orders", "cg"), "127.0.0.1:1", ""},
		{"group from the DEFAULT policy", pull("app", "orders", "other"), "127.0.0.1:1", ""},
		{"pull of a denied topic", pull("app", "secret", "cg"), "127.0.0.1:1",
			"User:app has no permission to access Topic:secret from 127.0.0.1, the decision is deny."},
		{"no ACL", send("bare", "orders"), "127.0.0.1:1",
			"User:bare has no permission to access Topic:orders from 127.0.0.1, no matched policies."},
		{"super bypasses", send("root", "secret"), "127.0.0.1:1", ""},
		{"whitelisted code", remoting.NewRequest(26, map[string]string{FieldAccessKey: "bare"}, nil), "127.0.0.1:1", ""},
		{"unchecked code", remoting.NewRequest(28, map[string]string{FieldAccessKey: "bare"}, nil), "127.0.0.1:1", ""},
		{"cluster GET", remoting.NewRequest(3005, map[string]string{FieldAccessKey: "app"}, nil), "127.0.0.1:1", ""},
		{"cluster UPDATE", remoting.NewRequest(3001, map[string]string{FieldAccessKey: "app"}, nil), "127.0.0.1:1",
			"User:app has no permission to access Cluster:DefaultCluster from 127.0.0.1, no matched policies."},
		{"unknown user", send("ghost", "orders"), "127.0.0.1:1", "User:ghost not found."},
		{"no user", remoting.NewRequest(310, map[string]string{"b": "orders"}, nil), "127.0.0.1:1", remarkAuthzFailed},
		{"retry topic send needs SUB on the group", remoting.NewRequest(310,
			map[string]string{FieldAccessKey: "app", "a": "cg", "b": "%RETRY%cg"}, nil), "127.0.0.1:1", ""},
		{"bad heartbeat body", remoting.NewRequest(34, map[string]string{FieldAccessKey: "app"}, []byte("{")), "127.0.0.1:1", remarkBadContext},
		{"ipv6 source outside", send("app", "lan"), "[::1]:1", ""}, // Topic:* still allows
	} {
		t.Run(tc.name, func(t *testing.T) {
			remark, ok := z.Authorize(tc.req, tc.from)
			if ok != (tc.remark == "") || remark != tc.remark {
				t.Fatalf("Authorize = %v %q, want %q", ok, remark, tc.remark)
			}
		})
	}
}

// TestAuthorizeSourceOnly: an entry limited to a range refuses other
// addresses when nothing else matches.
func TestAuthorizeSourceOnly(t *testing.T) {
	users := memUsers(t, User{Username: "app", Password: "pw"})
	acls := memACLs(t, users, AclInfo{Subject: "User:app", Policies: []PolicyInfo{{Entries: []PolicyEntryInfo{
		entry("Topic:t", []string{"Pub"}, "Allow", "10.0.0.0/8", "fd00::/8"),
	}}}})
	z := NewAuthorizer(users, acls, "c", nil)
	req := remoting.NewRequest(10, map[string]string{FieldAccessKey: "app", "topic": "t"}, nil)
	for from, want := range map[string]bool{
		"10.9.9.9:1": true, "[::ffff:10.0.0.1]:1": true, "[fd00::5]:1": true,
		"11.0.0.1:1": false, "[fe80::1]:1": false, "garbage": false,
	} {
		remark, ok := z.Authorize(req, from)
		if ok != want {
			t.Errorf("from %s: %v %q", from, ok, remark)
		}
		if !ok && !strings.HasSuffix(remark, "no matched policies.") {
			t.Errorf("from %s: remark %q", from, remark)
		}
	}
}

// TestCompareEntriesOrder: Java's precedence, most specific first.
func TestCompareEntriesOrder(t *testing.T) {
	mk := func(key string, d Decision) *Entry {
		r, ok := ParseResource(key)
		if !ok {
			t.Fatalf("resource %q", key)
		}
		return &Entry{Resource: r, Decision: d}
	}
	order := []*Entry{
		mk("Topic:abcd", Deny), mk("Topic:abcd", Allow), mk("Topic:abc*", Allow), mk("Topic:a*", Deny),
		mk("Topic:*", Allow), mk("*", Allow),
	}
	for i := range order {
		for j := range order {
			got := compareEntries(order[i], order[j])
			switch {
			case i < j && got >= 0, i > j && got <= 0, i == j && got != 0:
				t.Errorf("compare(%s %v, %s %v) = %d", order[i].Resource.Key(), order[i].Decision,
					order[j].Resource.Key(), order[j].Decision, got)
			}
		}
	}
}

func send310(user, topic string) *remoting.Command {
	return remoting.NewRequest(310, map[string]string{FieldAccessKey: user, "a": "pg", "b": topic}, nil)
}
