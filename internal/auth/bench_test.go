package auth

import (
	"strconv"
	"testing"

	"github.com/rocketd/rocketd/internal/remoting"
)

// BenchmarkAuthenticate is the per-request cost of authentication for a
// typical SEND_MESSAGE_V2 header (13 fields once signed) and a 1 KiB body.
// The goal: under 2 us, allocation-light.
func BenchmarkAuthenticate(b *testing.B) {
	for _, size := range []int{0, 1 << 10, 4 << 10} {
		b.Run(strconv.Itoa(size), func(b *testing.B) {
			users := memUsers(b, User{Username: "app", Password: "app-secret"})
			a := NewAuthenticator(users, nil, nil)
			req := remoting.NewRequest(310, map[string]string{
				"a": "ProducerGroup", "b": "TopicTest", "c": "TBW102", "d": "4", "e": "1", "f": "0",
				"g": "1733100000000", "h": "0", "i": "KEYS\x01k\x02UNIQ_KEY\x017F000001\x02WAIT\x01true\x02",
				"j": "0", "k": "false", "m": "false",
			}, make([]byte, size))
			Credentials{AccessKey: "app", SecretKey: "app-secret"}.Sign(req)
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				if _, ok := a.Authenticate(req); !ok {
					b.Fatal("refused")
				}
			}
		})
	}
}
