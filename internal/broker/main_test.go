package broker_test

import (
	"testing"

	"go.uber.org/goleak"
)

// The official Go client (interop tests) leaves goroutines behind by
// design; each is named here, everything else must stop.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// go-cache's janitor, started by a package-level cache of the client.
		goleak.IgnoreAnyFunction("github.com/patrickmn/go-cache.(*janitor).Run"),
		// The client's timers (heartbeat, route refresh, rebalance, offset
		// persistence, stats) all run under primitive.WithRecover and are
		// not stopped by Shutdown.
		goleak.IgnoreAnyFunction("github.com/apache/rocketmq-client-go/v2/primitive.WithRecover"),
		// Push-consumer pull loops still waiting for a held pull when the
		// consumer shut down: they end at the client's 30 s RPC timeout.
		goleak.IgnoreAnyFunction("github.com/apache/rocketmq-client-go/v2/consumer.(*pushConsumer).Start.func1.1.1"),
		// The same for the pull consumer (the controller-mode tests read
		// back with it): its Shutdown does not wait for a pull in flight.
		goleak.IgnoreAnyFunction("github.com/apache/rocketmq-client-go/v2/consumer.(*defaultPullConsumer).Start.func1.1.1"),
		// The v5 SDK (gRPC interop tests): GracefulStop leaves its client
		// manager's tickers and sleeps, its gRPC connections (their
		// callback serializers), its log file rotation and OpenCensus's
		// stats worker running.
		goleak.IgnoreAnyFunction("github.com/apache/rocketmq-clients/golang/v5/pkg/ticker.Tick.func1"),
		goleak.IgnoreAnyFunction("github.com/apache/rocketmq-clients/golang/v5.(*defaultClientManager).startUp.func3"),
		goleak.IgnoreAnyFunction("github.com/apache/rocketmq-clients/golang/v5.(*defaultClientManager).startUp.func2"),
		goleak.IgnoreAnyFunction("github.com/apache/rocketmq-clients/golang/v5.(*defaultClientManager).startUp.func1"),
		// Its settings sync, still in its 1 s start delay when a client
		// whose start was refused (TestGRPCAuthSDK) is dropped.
		goleak.IgnoreAnyFunction("github.com/apache/rocketmq-clients/golang/v5.(*defaultClientManager).startUp.func4"),
		goleak.IgnoreAnyFunction("google.golang.org/grpc/internal/grpcsync.(*CallbackSerializer).run"),
		// A stream of the SDK's (telemetry) whose context ends after
		// GracefulStop returns: its watcher goroutine outlives the test
		// briefly.
		goleak.IgnoreAnyFunction("google.golang.org/grpc.newClientStreamWithParams.func4"),
		goleak.IgnoreAnyFunction("github.com/natefinch/lumberjack.(*Logger).millRun"),
		goleak.IgnoreAnyFunction("go.opencensus.io/stats/view.(*worker).start"),
	)
}
