package broker_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/rocketd/rocketd/internal/config"
)

// BenchmarkGRPCSend is the producer's work per message over the gRPC
// endpoint of a whole in-process broker: one SendMessage RPC per 1 KiB
// message, shaped as the Go v5 SDK sends it (the seven x-mq-* headers with
// a fresh request id, a 10 s deadline, message id, born host and
// timestamp, IDENTITY encoding, NORMAL type), raw gRPC clients and the
// server in this process. producers=1 is one sender on one connection;
// producers=32 is 32 senders, each on its own connection as each SDK
// producer has, the harness's g1kN. Each connection also holds a
// Telemetry stream open, as an SDK client does. ns and allocs per message
// are the client's and the server's together.
func BenchmarkGRPCSend(b *testing.B) {
	c := startCluster(b, func(bc *config.BrokerConfig) { bc.GrpcServerEnable = true })
	topic := uniq(b, "GrpcSendBench")
	c.createTopic(topic, 8)
	for _, producers := range []int{1, 32} {
		b.Run(fmt.Sprintf("producers=%d", producers), func(b *testing.B) {
			clis := make([]v2.MessagingServiceClient, producers)
			for i := range clis {
				conn, err := grpc.NewClient(c.b.GRPCAddr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
				if err != nil {
					b.Fatal(err)
				}
				defer conn.Close()
				clis[i] = v2.NewMessagingServiceClient(conn)
				// Each SDK client keeps a Telemetry stream open while it
				// lives (its settings, the server's commands).
				tctx, tcancel := context.WithCancel(metadata.AppendToOutgoingContext(context.Background(),
					"x-mq-client-id", fmt.Sprintf("bench@%d", i)))
				defer tcancel()
				tel, err := clis[i].Telemetry(tctx)
				if err != nil {
					b.Fatal(err)
				}
				if err := tel.Send(&v2.TelemetryCommand{Command: &v2.TelemetryCommand_Settings{Settings: &v2.Settings{
					ClientType: v2.ClientType_PRODUCER.Enum(),
					PubSub:     &v2.Settings_Publishing{Publishing: &v2.Publishing{Topics: []*v2.Resource{{Name: topic}}}},
				}}}); err != nil {
					b.Fatal(err)
				}
				if _, err := tel.Recv(); err != nil { // the server's settings
					b.Fatal(err)
				}
			}
			body := make([]byte, 1024)
			var seq atomic.Int64
			send := func(cli v2.MessagingServiceClient, clientID string) error {
				n := seq.Add(1)
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				ctx = metadata.AppendToOutgoingContext(ctx,
					"x-mq-language", "GOLANG", "x-mq-protocol", "v2",
					"x-mq-request-id", fmt.Sprintf("6ba7b810-9dad-11d1-80b4-%012d", n),
					"x-mq-client-version", "5.1.4", "x-mq-client-id", clientID,
					"x-mq-namespace", "", "x-mq-date-time", time.Now().Format("20060102T150405Z"))
				r, err := cli.SendMessage(ctx, &v2.SendMessageRequest{Messages: []*v2.Message{{
					Topic: &v2.Resource{Name: topic}, Body: body,
					SystemProperties: &v2.SystemProperties{
						MessageId: fmt.Sprintf("0100155D000001%018d", n), BornTimestamp: timestamppb.Now(),
						BornHost: "bench-host", BodyEncoding: v2.Encoding_IDENTITY, MessageType: v2.MessageType_NORMAL,
					},
				}}})
				if err != nil {
					return err
				}
				if r.GetStatus().GetCode() != v2.Code_OK {
					return fmt.Errorf("send: %v", r.GetStatus())
				}
				return nil
			}
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := processCPU(b)
			var (
				next atomic.Int64
				wg   sync.WaitGroup
				errs = make(chan error, len(clis))
			)
			for i, cli := range clis {
				wg.Add(1)
				go func() {
					defer wg.Done()
					id := fmt.Sprintf("bench@%d", i)
					for next.Add(1) <= int64(b.N) {
						if err := send(cli, id); err != nil {
							errs <- err
							return
						}
					}
				}()
			}
			wg.Wait()
			b.StopTimer()
			// On a shared machine the CPU this process used per message
			// says more than the wall time.
			b.ReportMetric(float64(processCPU(b)-cpu0)/float64(b.N), "cpu-ns/op")
			close(errs)
			if err := <-errs; err != nil {
				b.Fatal(err)
			}
		})
	}
}

// processCPU is the user and system CPU time this process has used.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
