package client

import (
	"strconv"
	"sync"
	"testing"
)

// TestConcurrentUse runs every kind of call at once; -race checks the
// locking, and the end state is checked against what must remain.
func TestConcurrentUse(t *testing.T) {
	r := newRegistry(t, Config{ScanInterval: 1}) // the scan runs constantly too
	const workers, rounds = 8, 200
	keep := make([]*fakeChan, workers)
	var wg sync.WaitGroup
	for w := range workers {
		keep[w] = newFakeChan()
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := "c" + strconv.Itoa(w)
			for i := range rounds {
				tmp := newFakeChan()
				topic := "T" + strconv.Itoa(i%3)
				r.RegisterConsumer(keep[w], info(id), consumerData("cg", sub(topic, "*", 1)), true)
				r.RegisterConsumer(tmp, info(id+"-tmp"), consumerData("cg", sub(topic, "*", 1)), true)
				r.RegisterProducer("pg", tmp, info(id))
				r.FindSubscription("cg", topic)
				r.ConsumerIDs("cg")
				r.GroupsSubscribing(topic)
				r.PickProducerChannel("pg")
				r.Locks().TryLockBatch("cg", id, mqs(int32(i%4)))
				if i%2 == 0 {
					r.RemoveChannel(tmp)
				} else {
					r.UnregisterConsumer("cg", tmp, true)
					r.UnregisterProducer("pg", tmp)
				}
			}
		}()
	}
	wg.Wait()
	ids := r.ConsumerIDs("cg")
	if len(ids) != workers {
		t.Fatalf("ids = %v, want the %d kept channels", ids, workers)
	}
	if got := r.ProducerGroups(); len(got) != 0 {
		t.Fatalf("producer groups left: %v", got)
	}
	for _, mq := range mqs(0, 1, 2, 3) {
		if _, ok := r.Locks().Owner("cg", mq); !ok {
			t.Fatalf("queue %v has no owner", mq)
		}
	}
}

func BenchmarkFindSubscription(b *testing.B) {
	r, _ := New(Config{})
	for i := range 100 {
		g := "cg" + strconv.Itoa(i)
		r.RegisterConsumer(newFakeChan(), info("c"), consumerData(g, sub("T", "*", 1), sub("%RETRY%"+g, "*", 1)), false)
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, ok := r.FindSubscription("cg42", "T"); !ok {
				b.Fatal("not found")
			}
		}
	})
}

// BenchmarkHeartbeat is a steady-state consumer heartbeat: known channel,
// unchanged subscriptions.
func BenchmarkHeartbeat(b *testing.B) {
	r, _ := New(Config{})
	ch := newFakeChan()
	d := consumerData("cg", sub("T", "*", 1), sub("%RETRY%cg", "*", 1))
	r.RegisterConsumer(ch, info("c1"), d, true)
	b.ReportAllocs()
	for b.Loop() {
		r.RegisterConsumer(ch, info("c1"), d, true)
	}
}

func BenchmarkTryLockBatch(b *testing.B) {
	r, _ := New(Config{})
	q := mqs(0, 1, 2, 3, 4, 5, 6, 7)
	b.ReportAllocs()
	for b.Loop() {
		r.Locks().TryLockBatch("cg", "c1", q)
	}
}
