package auth

import (
	"strconv"
	"testing"

	"github.com/rocketd/rocketd/internal/remoting"
)

// BenchmarkAuthenticate is the per-request cost of authentication for a
// typical SEND_MESSAGE_V2 header (13 fields once signed) and a 1 KiB body,
// the header as a map; "-lazy" as the broker reads a send, in the compact
// form. The goal: under 2 us, allocation-light.
func BenchmarkAuthenticate(b *testing.B) {
	for _, size := range []int{0, 1 << 10, 4 << 10} {
		for _, lazy := range []bool{false, true} {
			name := strconv.Itoa(size)
			if lazy {
				name += "-lazy"
			}
			benchmarkAuthenticate(b, name, size, lazy)
		}
	}
}

func benchmarkAuthenticate(b *testing.B, name string, size int, lazy bool) {
	b.Run(name, func(b *testing.B) {
		users := memUsers(b, User{Username: "app", Password: "app-secret"})
		a := NewAuthenticator(users, nil, nil)
		req := remoting.NewRequest(310, map[string]string{
			"a": "ProducerGroup", "b": "TopicTest", "c": "TBW102", "d": "4", "e": "1", "f": "0",
			"g": "1733100000000", "h": "0", "i": "KEYS\x01k\x02UNIQ_KEY\x017F000001\x02WAIT\x01true\x02",
			"j": "0", "k": "false", "m": "false",
		}, make([]byte, size))
		Credentials{AccessKey: "app", SecretKey: "app-secret"}.Sign(req)
		req = fromWire(b, req, lazy)
		b.SetBytes(int64(size))
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := a.Authenticate(req); !ok {
				b.Fatal("refused")
			}
		}
	})
}

// BenchmarkGuardAuthorize is authentication plus authorization per
// request, as the Guard runs them: a NORMAL user's SEND_MESSAGE_V2 and
// PULL_MESSAGE against an ACL of ten entries, one of them limited to a
// source range; the send's header as a map and ("send-lazy") in the
// compact form the broker reads sends in, the pull's as a map, as the
// broker reads pulls. The goal: under 2 us, allocation-light.
func BenchmarkGuardAuthorize(b *testing.B) {
	users := memUsers(b, User{Username: "app", Password: "app-secret"})
	var entries []PolicyEntryInfo
	for i := range 8 {
		entries = append(entries, entry("Topic:other"+strconv.Itoa(i), []string{"Pub"}, "Allow"))
	}
	entries = append(entries,
		entry("Topic:Topic*", []string{"Pub", "Sub"}, "Allow", "127.0.0.0/8"),
		entry("Group:*", []string{"Sub"}, "Allow"))
	acls := memACLs(b, users, AclInfo{Subject: "User:app", Policies: []PolicyInfo{{Entries: entries}}})
	a := NewAuthenticator(users, nil, nil)
	a.SetAuthorizer(NewAuthorizer(users, acls, "DefaultCluster", nil))
	send := remoting.NewRequest(310, map[string]string{
		"a": "ProducerGroup", "b": "TopicTest", "c": "TBW102", "d": "4", "e": "1", "f": "0",
		"g": "1733100000000", "h": "0", "i": "KEYS\x01k\x02UNIQ_KEY\x017F000001\x02WAIT\x01true\x02",
		"j": "0", "k": "false", "m": "false",
	}, make([]byte, 1<<10))
	pull := remoting.NewRequest(11, map[string]string{
		"consumerGroup": "cg", "topic": "TopicTest", "queueId": "1", "queueOffset": "100", "maxMsgNums": "32",
		"sysFlag": "2", "commitOffset": "100", "suspendTimeoutMillis": "20000", "subscription": "*", "subVersion": "1",
	}, nil)
	from := parsedSource("127.0.0.1:53000")
	for _, name := range []string{"send", "send-lazy", "pull"} {
		req := send
		if name == "pull" {
			req = pull
		}
		if _, signed := req.ExtFields[FieldSignature]; !signed {
			Credentials{AccessKey: "app", SecretKey: "app-secret"}.Sign(req)
		}
		req = fromWire(b, req, name == "send-lazy")
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				src := from // connSource's copy of the connection's source
				if remark, ok := a.check(req, &src); !ok {
					b.Fatal(remark)
				}
			}
		})
		b.Run(name+"/authorize-only", func(b *testing.B) {
			e := users.lookup("app")
			b.ReportAllocs()
			for b.Loop() {
				src := from // connSource's copy of the connection's source
				if remark, ok := a.authz.authorize(extView{req: req}, e, &src); !ok {
					b.Fatal(remark)
				}
			}
		})
	}
}

// fromWire is req encoded and decoded as the server reads it off a
// connection, so the benchmarks measure the server's path: the header as
// a map, or (lazy) in the compact form the server keeps for the codes
// whose handlers read it lazily (sends).
func fromWire(b *testing.B, req *remoting.Command, lazy bool) *remoting.Command {
	b.Helper()
	frame, err := req.AppendFrame(nil)
	if err != nil {
		b.Fatal(err)
	}
	decode := remoting.DecodeFrame
	if lazy {
		decode = remoting.DecodeFrameLazy
	}
	got, err := decode(frame[4:])
	if err != nil {
		b.Fatal(err)
	}
	return got
}

// BenchmarkAuthenticateGRPC is the check of every gRPC request message:
// the header parse and one HMAC of the date-time.
func BenchmarkAuthenticateGRPC(b *testing.B) {
	users := memUsers(b, User{Username: "app", Password: "app-secret"})
	a := NewAuthenticator(users, nil, nil)
	const dt = "20261202T053000Z"
	authz := grpcAuthorization("app", "app-secret", dt)
	b.ReportAllocs()
	for b.Loop() {
		if _, remark, ok := a.AuthenticateGRPC(authz, dt); !ok {
			b.Fatal(remark)
		}
	}
}
