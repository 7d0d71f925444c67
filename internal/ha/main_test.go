package ha

import (
	"testing"

	"go.uber.org/goleak"
)

// The official Go client (multi-process test) leaves goroutines behind by
// design; each is named here, everything else must stop.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		goleak.IgnoreAnyFunction("github.com/patrickmn/go-cache.(*janitor).Run"),
		goleak.IgnoreAnyFunction("github.com/apache/rocketmq-client-go/v2/primitive.WithRecover"),
	)
}
