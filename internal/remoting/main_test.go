package remoting

import (
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// Started by an init function of the official Go client (used by
		// the interop test) for its process-wide cache; it never stops.
		goleak.IgnoreTopFunction("github.com/patrickmn/go-cache.(*janitor).Run"))
}
