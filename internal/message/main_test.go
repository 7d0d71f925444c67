package message

import (
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// The official Go client (imported by interop_test.go) starts a
		// cache janitor in a package init; it is not ours to stop.
		goleak.IgnoreTopFunction("github.com/patrickmn/go-cache.(*janitor).Run"))
}
