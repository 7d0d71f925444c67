package broker_test

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
)

// BenchmarkBrokerPipelined is a producer that pipelines: one connection
// with window SEND_MESSAGE_V2 requests of 1 KiB in flight (rocketctl bench
// produce --mode async --window N), against a whole in-process ASYNC_FLUSH
// broker; with batch > 1 each request is a SEND_BATCH_MESSAGE of that many
// messages. b.N counts messages. Besides ns/op it reports the process's
// CPU time and its read and write system calls (socket reads and writes of
// both ends, CommitLog pwrites) per message, which other load on the
// machine does not change.
func BenchmarkBrokerPipelined(b *testing.B) {
	for _, sh := range []struct{ window, batch int }{{4000, 1}, {256, 1}, {125, 32}} {
		b.Run(fmt.Sprintf("window=%d/batch=%d", sh.window, sh.batch), func(b *testing.B) {
			// The figures are per message; a loaded machine must not turn
			// them into SYSTEM_BUSY answers (waitTimeMillsInSendQueue).
			c := startCluster(b, func(bc *config.BrokerConfig) { bc.BrokerFastFailureEnable = false })
			c.createTopic("Bench", 8)
			req := pipelinedRequest(sh.batch)
			addr := c.b.Addr()
			b.SetBytes(1024)
			b.ReportAllocs()
			sends := (b.N + sh.batch - 1) / sh.batch
			cpu0, r0, w0 := processCounters(b)
			b.ResetTimer()
			tokens := make(chan struct{}, sh.window)
			var wg sync.WaitGroup
			var failMu sync.Mutex
			var fail error
			for range sends {
				tokens <- struct{}{}
				wg.Add(1)
				err := c.rc.InvokeAsync(addr, req, 10*time.Second, func(r *remoting.Command, err error) {
					defer wg.Done()
					<-tokens
					if err == nil && r.Code != protocol.Success {
						err = fmt.Errorf("code %d: %s", r.Code, r.Remark)
					}
					if err != nil {
						failMu.Lock()
						fail = err
						failMu.Unlock()
					}
				})
				if err != nil {
					b.Fatal(err)
				}
			}
			wg.Wait()
			b.StopTimer()
			if fail != nil {
				b.Fatal(fail)
			}
			cpu1, r1, w1 := processCounters(b)
			msgs := float64(sends * sh.batch)
			b.ReportMetric(float64((cpu1-cpu0).Nanoseconds())/msgs, "cpu-ns/msg")
			b.ReportMetric(float64(r1-r0)/msgs, "reads/msg")
			b.ReportMetric(float64(w1-w0)/msgs, "writes/msg")
		})
	}
}

// pipelinedRequest is the send of the pipelined benchmark: SEND_MESSAGE_V2
// of 1 KiB, or SEND_BATCH_MESSAGE of batch such messages.
func pipelinedRequest(batch int) *remoting.Command {
	body := bytes.Repeat([]byte("x"), 1024)
	h := protocol.SendMessageRequestHeader{ProducerGroup: "pg", Topic: "Bench", DefaultTopic: "TBW102",
		DefaultTopicQueueNums: 4, QueueID: 1, BornTimestamp: time.Now().UnixMilli(), Properties: "TAGS\x01a\x02"}
	if batch == 1 {
		return remoting.NewRequestHeader(protocol.SendMessageV2, h.V2(), body)
	}
	h.Batch = protocol.Some(true)
	ext := map[string]string{}
	h.AppendExtV2(ext)
	var items []byte
	for range batch {
		items = message.AppendBatchItem(items, 0, body, "TAGS\x01a")
	}
	return remoting.NewRequest(protocol.SendBatchMessage, ext, items)
}

// processCounters returns the process's CPU time and its read and write
// system calls so far (/proc/self/io syscr, syscw).
func processCounters(b *testing.B) (time.Duration, int64, int64) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	io, err := os.ReadFile("/proc/self/io")
	if err != nil {
		b.Fatal(err)
	}
	field := func(name string) int64 {
		i := bytes.Index(io, []byte(name+": "))
		if i < 0 {
			b.Fatalf("/proc/self/io lacks %s", name)
		}
		rest := io[i+len(name)+2:]
		if j := bytes.IndexByte(rest, '\n'); j >= 0 {
			rest = rest[:j]
		}
		n, err := strconv.ParseInt(string(rest), 10, 64)
		if err != nil {
			b.Fatal(err)
		}
		return n
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), field("syscr"), field("syscw")
}
