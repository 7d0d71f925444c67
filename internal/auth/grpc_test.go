package auth

import (
	"crypto/hmac"
	"crypto/sha1"
	"encoding/hex"
	"testing"
)

// grpcAuthorization is the header the v5 SDK sends (client.go Sign).
func grpcAuthorization(ak, sk, dateTime string) string {
	h := hmac.New(sha1.New, []byte(sk))
	h.Write([]byte(dateTime))
	return "MQv2-HMAC-SHA1 Credential=" + ak + "//Rocketmq, SignedHeaders=x-mq-date-time, Signature=" + hex.EncodeToString(h.Sum(nil))
}

// TestAuthenticateGRPC: the SDK's header passes; every malformed header,
// wrong secret, unknown or disabled user is refused with Java's remark.
func TestAuthenticateGRPC(t *testing.T) {
	users := memUsers(t, User{Username: "app", Password: "pw"}, User{Username: "off", Password: "pw", UserStatus: Disabled})
	a := NewAuthenticator(users, nil, nil)
	const dt = "20261202T053000Z"
	for _, tc := range []struct {
		name, authz, dt, remark string
	}{
		{"signed", grpcAuthorization("app", "pw", dt), dt, ""},
		{"no header", "", dt, "username cannot be null."},
		{"no date-time", grpcAuthorization("app", "pw", dt), "", "datetime is null."},
		{"other date-time", grpcAuthorization("app", "pw", dt), "20261202T053001Z", "check signature failed."},
		{"wrong secret", grpcAuthorization("app", "pw2", dt), dt, "check signature failed."},
		{"unknown user", grpcAuthorization("ghost", "pw", dt), dt, "User:ghost is not found."},
		{"disabled user", grpcAuthorization("off", "pw", dt), dt, "User:off is disabled."},
		{"no scheme", "Credential=app", dt, "authentication header is incorrect."},
		{"item without =", "MQv2-HMAC-SHA1 Credential", dt, "authentication keyValues length is incorrect, actual length=1."},
		{"signature not hex", "MQv2-HMAC-SHA1 Credential=app, Signature=zz", dt, "create authentication context error."},
		{"no signature", "MQv2-HMAC-SHA1 Credential=app", dt, "check signature failed."},
		{"nothing after the scheme", "MQv2-HMAC-SHA1 ", dt, "authentication keyValues length is incorrect, actual length=1."},
		{"empty item", "MQv2-HMAC-SHA1 Credential=app,,Signature=00", dt, "authentication keyValues length is incorrect, actual length=1."},
		{"odd hex", "MQv2-HMAC-SHA1 Credential=app, Signature=abc", dt, "create authentication context error."},
		{"signature too long", grpcAuthorization("app", "pw", dt) + "00", dt, "check signature failed."},
		{"no credential", "MQv2-HMAC-SHA1 Signature=00", dt, "username cannot be null."},
	} {
		s, remark, ok := a.AuthenticateGRPC(tc.authz, tc.dt)
		if ok != (tc.remark == "") || remark != tc.remark {
			t.Errorf("%s: ok=%v %q, want %q", tc.name, ok, remark, tc.remark)
		}
		if ok && s.Username() != "app" {
			t.Errorf("%s: subject %q", tc.name, s.Username())
		}
	}
}

// TestAuthorizeGRPC: the checks of a gRPC request are decided by the same
// ACLs as remoting ones; a retry topic named as a group is its group.
func TestAuthorizeGRPC(t *testing.T) {
	users := memUsers(t, User{Username: "app", Password: "pw"}, User{Username: "root", Password: "pw", UserType: Super})
	acls := memACLs(t, users, AclInfo{Subject: "User:app", Policies: []PolicyInfo{{Entries: []PolicyEntryInfo{
		entry("Topic:orders", []string{"Pub"}, "Allow"),
		entry("Group:cg", []string{"Sub"}, "Allow"),
	}}}})
	a := NewAuthenticator(users, nil, nil)
	z := NewAuthorizer(users, acls, "DefaultCluster", nil)
	const dt = "20261202T053000Z"
	app, _, _ := a.AuthenticateGRPC(grpcAuthorization("app", "pw", dt), dt)
	root, _, _ := a.AuthenticateGRPC(grpcAuthorization("root", "pw", dt), dt)
	for _, tc := range []struct {
		name   string
		s      Subject
		checks []GRPCCheck
		remark string
	}{
		{"pub allowed", app, []GRPCCheck{TopicCheck("orders", ActionPub)}, ""},
		{"pub or sub: one suffices", app, []GRPCCheck{TopicCheck("orders", ActionPub, ActionSub)}, ""},
		{"sub refused", app, []GRPCCheck{TopicCheck("orders", ActionSub)},
			"User:app has no permission to access Topic:orders from 10.0.0.1, no matched policies."},
		{"retry group", app, []GRPCCheck{GroupCheck("%RETRY%cg", ActionSub)}, ""},
		{"second check refused", app, []GRPCCheck{GroupCheck("cg", ActionSub), TopicCheck("other", ActionSub)},
			"User:app has no permission to access Topic:other from 10.0.0.1, no matched policies."},
		{"super", root, []GRPCCheck{TopicCheck("other", ActionSub)}, ""},
		{"nothing to check", app, nil, ""},
		{"no subject", Subject{}, []GRPCCheck{TopicCheck("orders", ActionPub)}, remarkAuthzFailed},
	} {
		remark, ok := z.AuthorizeGRPC(tc.s, tc.checks, "10.0.0.1:4000")
		if ok != (tc.remark == "") || remark != tc.remark {
			t.Errorf("%s: ok=%v %q, want %q", tc.name, ok, remark, tc.remark)
		}
	}
}
