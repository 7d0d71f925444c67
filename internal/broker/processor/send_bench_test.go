//go:build unix

package processor_test

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
)

// processCPU is the CPU time (user + system) the process has used: unlike
// wall time, other load on the machine does not inflate it.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkSendV2Load is the load of issue 8 in one process: 64
// connections, each sending 1 KiB SEND_MESSAGE_V2 requests synchronously
// (WAIT=true, tag, unique key, as rocketctl bench produce does) to the
// send processor on an async-flush store. client=map builds each request
// header as a map and decodes each response into one (what the bench
// client did); client=typed sends a typed header and keeps responses
// compact. The server side is the same in both. Metrics: cpu-ns/op is the
// process CPU per message, broker and clients together; allocs/op both
// sides too.
func BenchmarkSendV2Load(b *testing.B) {
	for _, mode := range []string{"map", "typed"} {
		b.Run("client="+mode, func(b *testing.B) { benchSendV2Load(b, mode == "typed") })
	}
}

func benchSendV2Load(b *testing.B, typed bool) {
	const conns = 64
	e := newEnv(b, nil)
	e.createTopic("T", 4)
	body := make([]byte, 1024)
	var props []byte
	props = message.AppendProperty(props, message.PropertyWaitStoreMsgOK, "true")
	props = message.AppendProperty(props, message.PropertyTags, "TagA")
	props = message.AppendProperty(props, message.PropertyUniqClientMessageIDKeyIdx, "7F0000010F2418B4AAC2654C6A270000")
	clients := make([]*remoting.Client, conns)
	for i := range clients {
		clients[i] = remoting.NewClient(remoting.ClientConfig{LazyResponseExt: typed})
	}
	defer func() {
		for _, c := range clients {
			_ = c.Close()
		}
	}()
	request := func(q int32) *remoting.Command {
		h := protocol.SendMessageRequestHeader{ProducerGroup: "pg", Topic: "T", DefaultTopic: "TBW102",
			DefaultTopicQueueNums: 4, QueueID: q, BornTimestamp: time.Now().UnixMilli(), Properties: string(props),
			ReconsumeTimes: protocol.Some[int32](0), UnitMode: protocol.Some(false), Batch: protocol.Some(false),
			BrokerName: "broker-a"}
		if typed {
			return remoting.NewRequestHeader(protocol.SendMessageV2, h.V2(), body)
		}
		ext := make(map[string]string, 16)
		h.AppendExtV2(ext)
		return remoting.NewRequest(protocol.SendMessageV2, ext, body)
	}
	ctx := context.Background()
	send := func(c *remoting.Client, q int32) bool {
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		r, err := c.Invoke(cctx, e.addr, request(q))
		cancel()
		if err != nil || r.Code != protocol.Success {
			b.Errorf("send: %v %v", err, r)
			return false
		}
		return true
	}
	for i, c := range clients { // dial outside the timing
		send(c, int32(i%4))
	}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	runtime.GC()
	var left atomic.Int64
	left.Store(int64(b.N))
	var wg sync.WaitGroup
	cpu0 := processCPU()
	b.ResetTimer()
	for i, c := range clients {
		wg.Go(func() {
			for left.Add(-1) >= 0 && send(c, int32(i%4)) {
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	b.ReportMetric(float64((processCPU()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
}
