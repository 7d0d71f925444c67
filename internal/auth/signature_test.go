package auth

import (
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base64"
	"slices"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/rocketd/rocketd/internal/remoting"
)

// javaVectorRequest is the request testdata/SignVector.java signs.
func javaVectorRequest() *remoting.Command {
	return remoting.NewRequest(10, map[string]string{
		"topic":         "TopicTest",
		"queueId":       "3",
		"producerGroup": "PG",
		"properties":    "KEYS\x01k1\x02UNIQ_KEY\x01AB\x02",
		"\ue000z":       "private-use",
		"\U0001F600a":   "emoji",
		"z\u00e9":       "accent",
	}, []byte("hello body"))
}

// TestSignatureMatchesJava checks Credentials.Sign and Authenticate against
// signatures computed by Java's AclClientRPCHook (rocketmq-acl 5.2.0, the
// same class 5.3 clients use): run testdata/SignVector.java with the
// RocketMQ jars on the classpath to print them again. The first request
// has keys that sort differently in UTF-16 (Java) and UTF-8 order.
func TestSignatureMatchesJava(t *testing.T) {
	cases := []struct {
		name  string
		req   *remoting.Command
		creds Credentials
		want  string
	}{
		{"send", javaVectorRequest(), Credentials{AccessKey: "rocketmq2", SecretKey: "12345678"}, "S2wwGTyNayn+FNmZzl4bC2quHUc="},
		{"token", javaVectorRequest(), Credentials{AccessKey: "rocketmq2", SecretKey: "12345678", SecurityToken: "token-1"}, "qlB/thmqIvYuP+fVl/IyJNK0kxA="},
		{"no header", remoting.NewRequest(34, nil, nil), Credentials{AccessKey: "ak", SecretKey: "sk"}, "AL2pakQ4gJnpWeA42COL+SacNKk="},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.creds.Sign(tc.req)
			if got := tc.req.ExtField(FieldSignature); got != tc.want {
				t.Fatalf("Signature = %s, Java's %s", got, tc.want)
			}
			users := memUsers(t, User{Username: tc.creds.AccessKey, Password: tc.creds.SecretKey})
			if remark, ok := NewAuthenticator(users, nil, nil).Authenticate(tc.req); !ok {
				t.Fatalf("Java-signed request refused: %s", remark)
			}
		})
	}
}

// TestSignatureMatchesGoClient checks the content against the official Go
// client's signer (internal/remote/interceptor.go: the values sorted by
// key, the body, HMAC-SHA1, base64), with its own test vector for the MAC.
func TestSignatureMatchesGoClient(t *testing.T) {
	mac := hmac.New(sha1.New, []byte("adiaushdiaushd"))
	mac.Write([]byte("Hello RocketMQ Client ACL Feature"))
	if got := base64.StdEncoding.EncodeToString(mac.Sum(nil)); got != "tAb/54Rwwcq+pbH8Loi7FWX4QSQ=" {
		t.Fatalf("HMAC-SHA1 vector = %s", got)
	}
	req := remoting.NewRequest(11, map[string]string{"consumerGroup": "g", "topic": "T", "queueId": "1"}, []byte{1, 2, 3})
	Credentials{AccessKey: "ak", SecretKey: "sk"}.Sign(req)
	// The Go client's content: values of AccessKey + fields, keys sorted.
	content := "ak" + "g" + "1" + "T" + "\x01\x02\x03"
	mac = hmac.New(sha1.New, []byte("sk"))
	mac.Write([]byte(content))
	if want := base64.StdEncoding.EncodeToString(mac.Sum(nil)); req.ExtField(FieldSignature) != want {
		t.Fatalf("Signature = %s, want %s", req.ExtField(FieldSignature), want)
	}
}

// TestJavaCompareIsUTF16Order compares javaCompare with an explicit
// UTF-16 code-unit comparison over awkward strings.
func TestJavaCompareIsUTF16Order(t *testing.T) {
	words := []string{"", "a", "b", "ab", "A", "\u00e9", "\ue000", "\uffff", "\U00010000", "\U0001F600", "\U0001F601",
		"\U0010FFFF", "a\ue000", "a\U0001F600", "\u07ff", "\u0800", "Signature", "SecurityToken", "AccessKey",
		"\U0001F600a", "\U0001F600\U0001F601"}
	utf16Cmp := func(a, b string) int {
		return slices.Compare(utf16.Encode([]rune(a)), utf16.Encode([]rune(b)))
	}
	sign := func(n int) int { return min(max(n, -1), 1) }
	for _, a := range words {
		for _, b := range words {
			if got, want := sign(javaCompare(a, b)), utf16Cmp(a, b); got != want {
				t.Errorf("javaCompare(%q, %q) = %d, UTF-16 order %d", a, b, got, want)
			}
		}
	}
}

// TestJavaCompareTotalOnInvalidUTF8: keys that are not UTF-8 (equal once
// decoded as Java does) still get one order, whatever the input order:
// the fuzzer found keys whose order, and so the signature, followed the
// map's iteration order.
func TestJavaCompareTotalOnInvalidUTF8(t *testing.T) {
	keys := []string{"\xee2", "\xf0", "\xef\xbf\xbd", "\xff", "\xff\xff", "a\xe2\x82", "a\xe2\x82\xac", "a\ufffd\ufffd", "z"}
	for _, a := range keys {
		if javaCompare(a, a) != 0 {
			t.Errorf("javaCompare(%q, itself) != 0", a)
		}
		for _, b := range keys {
			ab, ba := javaCompare(a, b), javaCompare(b, a)
			if a != b && (ab == 0 || (ab < 0) == (ba < 0)) {
				t.Errorf("javaCompare(%q, %q) = %d, reversed %d", a, b, ab, ba)
			}
			for _, c := range keys {
				if ab < 0 && javaCompare(b, c) < 0 && javaCompare(a, c) >= 0 {
					t.Errorf("not transitive: %q < %q < %q", a, b, c)
				}
			}
		}
	}
}

// TestUniqueKeyQueryLeftOutForOldClients: Java leaves _UNIQUE_KEY_QUERY out
// of the content for clients up to V4_9_3 only.
func TestUniqueKeyQueryLeftOutForOldClients(t *testing.T) {
	users := memUsers(t, User{Username: "ak", Password: "sk"})
	a := NewAuthenticator(users, nil, nil)
	for _, tc := range []struct {
		version int32
		signed  bool // whether the field is in the signed content
	}{{versionV4_9_3, false}, {versionV4_9_3 + 1, true}} {
		req := remoting.NewRequest(12, map[string]string{"topic": "T", uniqueKeyQuery: "true"}, nil)
		req.Version = tc.version
		// Sign without the field, then add it: accepted only when the
		// server leaves it out.
		delete(req.ExtFields, uniqueKeyQuery)
		Credentials{AccessKey: "ak", SecretKey: "sk"}.Sign(req)
		req.ExtFields[uniqueKeyQuery] = "true"
		if _, ok := a.Authenticate(req); ok == tc.signed {
			t.Errorf("version %d: accepted=%v", tc.version, ok)
		}
	}
}

func memUsers(t testing.TB, users ...User) *Users {
	t.Helper()
	u, err := OpenUsers(nil, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, usr := range users {
		if err := u.Create(usr); err != nil {
			t.Fatal(err)
		}
	}
	return u
}

// TestAuthenticateRefusals: each way a request can fail, with Java's
// remark, and no secret in any remark.
func TestAuthenticateRefusals(t *testing.T) {
	users := memUsers(t,
		User{Username: "alice", Password: "alice-secret"},
		User{Username: "bob", Password: "bob-secret", UserStatus: Disabled},
	)
	a := NewAuthenticator(users, []int32{34}, nil)
	signed := func(creds Credentials) *remoting.Command {
		req := remoting.NewRequest(10, map[string]string{"topic": "T", "queueId": "0"}, []byte("body"))
		creds.Sign(req)
		return req
	}
	alice := Credentials{AccessKey: "alice", SecretKey: "alice-secret"}
	cases := []struct {
		name   string
		req    *remoting.Command
		remark string // "" = accepted
	}{
		{"right secret", signed(alice), ""},
		{"wrong secret", signed(Credentials{AccessKey: "alice", SecretKey: "nope"}), "check signature failed."},
		{"unknown user", signed(Credentials{AccessKey: "mallory", SecretKey: "x"}), "User:mallory is not found."},
		{"disabled user", signed(Credentials{AccessKey: "bob", SecretKey: "bob-secret"}), "User:bob is disabled."},
		{"no signature at all", remoting.NewRequest(10, map[string]string{"topic": "T"}, nil), "username cannot be null."},
		{"no ext fields", remoting.NewRequest(10, nil, nil), "username cannot be null."},
		{"AccessKey without Signature", func() *remoting.Command {
			r := signed(alice)
			delete(r.ExtFields, FieldSignature)
			return r
		}(), "check signature failed."},
		{"replayed with another body", func() *remoting.Command {
			r := signed(alice)
			r.Body = []byte("BODY")
			return r
		}(), "check signature failed."},
		{"replayed with another field", func() *remoting.Command {
			r := signed(alice)
			r.ExtFields["queueId"] = "1"
			return r
		}(), "check signature failed."},
		{"replayed with an added field", func() *remoting.Command {
			r := signed(alice)
			r.ExtFields["extra"] = ""
			r.ExtFields["extra2"] = "x"
			return r
		}(), "check signature failed."},
		{"signature of another length", func() *remoting.Command {
			r := signed(alice)
			r.ExtFields[FieldSignature] += "="
			return r
		}(), "check signature failed."},
		{"whitelisted code unsigned", remoting.NewRequest(34, nil, nil), ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			remark, ok := a.Authenticate(tc.req)
			if ok != (tc.remark == "") || remark != tc.remark {
				t.Fatalf("Authenticate = %q, %v; want %q", remark, ok, tc.remark)
			}
			for _, secret := range []string{"alice-secret", "bob-secret"} {
				if strings.Contains(remark, secret) {
					t.Fatalf("remark %q leaks a secret", remark)
				}
			}
		})
	}
}

// TestAuthenticateFollowsUserChanges: a password change or a disabled
// status takes effect for the next request.
func TestAuthenticateFollowsUserChanges(t *testing.T) {
	users := memUsers(t, User{Username: "u", Password: "p1"})
	a := NewAuthenticator(users, nil, nil)
	req := remoting.NewRequest(10, map[string]string{"topic": "T"}, nil)
	Credentials{AccessKey: "u", SecretKey: "p1"}.Sign(req)
	if _, ok := a.Authenticate(req); !ok {
		t.Fatal("refused before the change")
	}
	if err := users.Update(User{Username: "u", Password: "p2"}); err != nil {
		t.Fatal(err)
	}
	if remark, ok := a.Authenticate(req); ok || remark != remarkBadSignature {
		t.Fatalf("old password after the change: %q %v", remark, ok)
	}
	Credentials{AccessKey: "u", SecretKey: "p2"}.Sign(req)
	if _, ok := a.Authenticate(req); !ok {
		t.Fatal("new password refused")
	}
	if err := users.Update(User{Username: "u", UserStatus: Disabled}); err != nil {
		t.Fatal(err)
	}
	if remark, _ := a.Authenticate(req); remark != "User:u is disabled." {
		t.Fatalf("disabled: %q", remark)
	}
	if err := users.Delete("u"); err != nil {
		t.Fatal(err)
	}
	if remark, _ := a.Authenticate(req); remark != "User:u is not found." {
		t.Fatalf("deleted: %q", remark)
	}
}
