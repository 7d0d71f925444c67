package auth

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/rocketd/rocketd/internal/remoting"
)

// FuzzAuthenticateFrame decodes arbitrary frames and authenticates them:
// never a panic, and a frame claiming a known user passes only with the
// signature that user's secret gives its content.
func FuzzAuthenticateFrame(f *testing.F) {
	users := memUsers(f, User{Username: "u", Password: "secret"})
	a := NewAuthenticator(users, nil, nil)
	for _, st := range []remoting.SerializeType{remoting.JSON, remoting.RocketMQ} {
		req := remoting.NewRequest(10, map[string]string{"topic": "T", "k": "v"}, []byte("body"))
		req.SerializeType = st
		Credentials{AccessKey: "u", SecretKey: "secret"}.Sign(req)
		frame, err := req.AppendFrame(nil)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(frame[4:])
	}
	f.Fuzz(func(t *testing.T, frame []byte) {
		req, err := remoting.DecodeFrame(frame)
		if err != nil {
			return
		}
		_, ok := a.Authenticate(req)
		// The compact form a lazy handler's request keeps (its own walk
		// over the fields) gets the same verdict.
		if lazy, err := remoting.DecodeFrameLazy(frame); err != nil {
			t.Fatalf("decodes as a map but not lazily: %v", err)
		} else if _, lazyOK := a.Authenticate(lazy); lazyOK != ok {
			t.Fatalf("accepted=%v as a map, %v in the compact form", ok, lazyOK)
		}
		if req.ExtField(FieldAccessKey) != "u" {
			if ok {
				t.Fatalf("accepted without user u: %v", req.ExtFields)
			}
			return
		}
		sig := req.ExtField(FieldSignature)
		resigned := *req
		resigned.ExtFields = map[string]string{}
		for k, v := range req.ExtFields {
			resigned.ExtFields[k] = v
		}
		Credentials{AccessKey: "u", SecretKey: "secret"}.Sign(&resigned)
		if want := resigned.ExtField(FieldSignature); ok != (sig == want) {
			t.Fatalf("accepted=%v with signature %q, the right one %q", ok, sig, want)
		}
	})
}

// FuzzSignRoundTrip: whatever the fields and body, a request signed with
// Credentials passes, and any change to its body fails.
func FuzzSignRoundTrip(f *testing.F) {
	f.Add("topic", "T", "queueId", "1", []byte("body"), uint8(0))
	f.Add("\ue000", "x", "\U0001F600", "y", []byte{}, uint8(3))
	users := memUsers(f, User{Username: "u", Password: "secret"})
	a := NewAuthenticator(users, nil, nil)
	f.Fuzz(func(t *testing.T, k1, v1, k2, v2 string, body []byte, flip uint8) {
		req := remoting.NewRequest(10, map[string]string{k1: v1, k2: v2}, body)
		Credentials{AccessKey: "u", SecretKey: "secret"}.Sign(req)
		if remark, ok := a.Authenticate(req); !ok {
			t.Fatalf("own signature refused: %s (%q)", remark, req.ExtFields)
		}
		if len(body) == 0 {
			return
		}
		changed := append([]byte(nil), body...)
		changed[int(flip)%len(changed)] ^= 0x01
		req.Body = changed
		if _, ok := a.Authenticate(req); ok {
			t.Fatal("a changed body passed")
		}
	})
}

// FuzzParseACL feeds arbitrary AclInfo JSON to the policy parser: never a
// panic; an ACL that validates writes back (Info) to one that parses and
// validates to the same ACL, and its entries' resources keep their keys.
func FuzzParseACL(f *testing.F) {
	for _, s := range []string{
		`{"subject":"User:app","policies":[{"policyType":"Custom","entries":[{"resource":"Topic:abc*","actions":["Pub","Sub"],"sourceIps":["10.0.0.0/8","::1"],"decision":"Allow"}]}]}`,
		`{"subject":"user:x","policies":[{"policyType":"default","entries":[{"resource":"*","actions":["all"],"decision":"deny"}]}]}`,
		`{"policies":[{"entries":[{"resource":"Group:*","actions":["Get","Any"],"sourceIps":["192.168.1.*"],"decision":"Allow"}]}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var info AclInfo
		if json.Unmarshal(data, &info) != nil {
			return
		}
		acl, err := ACLFromInfo(info, "User:fallback")
		if err != nil {
			return
		}
		if acl.validate() != nil {
			return
		}
		back, err := ACLFromInfo(acl.Info(), "")
		if err != nil {
			t.Fatalf("Info does not parse back: %v (%+v)", err, acl.Info())
		}
		if err := back.validate(); err != nil {
			t.Fatalf("Info does not validate back: %v (%+v)", err, acl.Info())
		}
		if !reflect.DeepEqual(back.Info(), acl.Info()) {
			t.Fatalf("round trip changed the ACL:\n%+v\n%+v", acl.Info(), back.Info())
		}
		for _, p := range acl.Policies {
			for _, e := range p.Entries {
				if r, ok := ParseResource(e.Resource.Key()); !ok || r.Key() != e.Resource.Key() {
					t.Fatalf("resource %+v: key %q parses to %+v", e.Resource, e.Resource.Key(), r)
				}
			}
		}
	})
}

// FuzzAuthorizeFrame authorizes arbitrary frames for a NORMAL user with an
// ACL: never a panic, and a refusal always names the user or is one of
// the fixed remarks.
func FuzzAuthorizeFrame(f *testing.F) {
	users := memUsers(f, User{Username: "u", Password: "secret"})
	acls := memACLs(f, users, AclInfo{Subject: "User:u", Policies: []PolicyInfo{{Entries: []PolicyEntryInfo{
		entry("Topic:T*", []string{"Pub", "Sub"}, "Allow", "127.0.0.0/8"),
		entry("Group:*", []string{"Sub"}, "Allow"),
	}}}})
	z := NewAuthorizer(users, acls, "C", nil)
	for _, req := range []*remoting.Command{
		remoting.NewRequest(310, map[string]string{FieldAccessKey: "u", "b": "T1", "a": "pg"}, nil),
		remoting.NewRequest(11, map[string]string{FieldAccessKey: "u", "topic": "%RETRY%g", "consumerGroup": "g"}, nil),
		remoting.NewRequest(34, map[string]string{FieldAccessKey: "u"}, []byte(`{"consumerDataSet":[{"groupName":"g","subscriptionDataSet":[{"topic":"T"}]}]}`)),
		remoting.NewRequest(41, map[string]string{FieldAccessKey: "u"}, []byte(`{"consumerGroup":"g","mqSet":[{"topic":"X","brokerName":"b","queueId":1}]}`)),
		remoting.NewRequest(308, map[string]string{FieldAccessKey: "u", "filterGroups": "a,,b", "topic": "T"}, nil),
	} {
		frame, err := req.AppendFrame(nil)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(frame[4:], "127.0.0.1:1")
	}
	f.Fuzz(func(t *testing.T, frame []byte, from string) {
		req, err := remoting.DecodeFrame(frame)
		if err != nil {
			return
		}
		remark, ok := z.Authorize(req, from)
		// The Guard's path reads the fields it collected for
		// authentication, from the compact form for lazy handlers: the
		// same verdict and remark.
		lazy, err := remoting.DecodeFrameLazy(frame)
		if err != nil {
			t.Fatalf("decodes as a map but not lazily: %v", err)
		}
		for _, r := range []*remoting.Command{req, lazy} {
			src := sourceOf(from)
			if r2, ok2 := z.authorize(extView{r, r.AppendExt(nil)}, nil, &src); r2 != remark || ok2 != ok {
				t.Fatalf("from the collected fields: %q %v, from the request: %q %v", r2, ok2, remark, ok)
			}
		}
		if ok || remark == remarkAuthzFailed || remark == remarkBadContext || strings.HasSuffix(remark, " not found.") {
			return
		}
		if !strings.HasPrefix(remark, "User:u has no permission to access ") {
			t.Fatalf("remark %q", remark)
		}
	})
}
