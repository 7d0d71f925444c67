package main

import (
	"strings"
	"testing"

	"github.com/rocketd/rocketd/internal/message"
)

// BenchmarkSendRequest is the bench client's cost to build one send (1 KiB,
// batch 1), which the broker's measured latency includes.
//
//	go test -run '^$' -bench SendRequest -benchmem ./cmd/rocketctl/
func BenchmarkSendRequest(b *testing.B) {
	r := &producerRun{o: benchOptions{group: "g", batch: 1}, body: make([]byte, 1024)}
	r.propsPrefix = string(message.AppendProperty(nil, message.PropertyUniqClientMessageIDKeyIdx, "x"))
	r.propsPrefix = r.propsPrefix[:len(r.propsPrefix)-1]
	ids := message.NewUniqIDGenerator(localIP(), 1, 1)
	q := queue{topic: "T", broker: "b", id: 3}
	var sc sendScratch
	var frame []byte // the transport's write buffer
	b.ReportAllocs()
	for b.Loop() {
		req := r.request(q, ids, 1, &sc)
		var err error
		if frame, err = req.AppendFrame(frame[:0]); err != nil {
			b.Fatal(err)
		}
	}
}

// TestSendRequestReuse: a worker's next request is built afresh in the
// same memory: no opaque or flag of the previous send's call, its own
// unique key and queue.
func TestSendRequestReuse(t *testing.T) {
	r := &producerRun{o: benchOptions{group: "g", batch: 1}, body: []byte("body")}
	r.propsPrefix = string(message.AppendProperty(nil, message.PropertyUniqClientMessageIDKeyIdx, "x"))
	r.propsPrefix = r.propsPrefix[:len(r.propsPrefix)-1]
	ids := message.NewUniqIDGenerator(localIP(), 1, 1)
	var sc sendScratch
	first := r.request(queue{topic: "T", broker: "b", id: 1}, ids, 1, &sc)
	frame1, err := first.AppendFrame(nil)
	if err != nil {
		t.Fatal(err)
	}
	first.Opaque, first.Flag = 42, 3 // what a send call sets
	second := r.request(queue{topic: "T", broker: "b", id: 2}, ids, 1, &sc)
	if second.Opaque != 0 || second.Flag != 0 {
		t.Errorf("reused request keeps opaque %d, flag %d", second.Opaque, second.Flag)
	}
	frame2, err := second.AppendFrame(nil)
	if err != nil {
		t.Fatal(err)
	}
	if string(frame1) == string(frame2) {
		t.Fatal("two sends encoded the same frame")
	}
	for _, want := range []string{`"e":"2"`, "body"} {
		if !strings.Contains(string(frame2), want) {
			t.Errorf("second frame lacks %s: %q", want, frame2)
		}
	}
}
