package processor_test

import (
	"strings"
	"testing"

	"github.com/rocketd/rocketd/internal/broker/processor"
	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/protocol"
)

func TestTimerCheckPoint(t *testing.T) {
	want := protocol.TimerCheckpoint{LastReadTimeMs: 1700000000123, LastTimerQueueOffset: 42,
		MasterTimerQueueOffset: 42, Timestamp: 1700000000000, Counter: 7}
	e := newEnv(t, func(_ *config.BrokerConfig, d *processor.Deps) {
		d.TimerCheckpoint = func() (protocol.TimerCheckpoint, bool) { return want, true }
	})
	r := e.call(protocol.GetTimerCheckPoint, nil, nil)
	if r.Code != protocol.Success || len(r.Body) != protocol.TimerCheckpointLen {
		t.Fatalf("GET_TIMER_CHECK_POINT: %d %q, %d bytes", r.Code, r.Remark, len(r.Body))
	}
	got, err := protocol.DecodeTimerCheckpoint(r.Body)
	must(t, err)
	if got != want {
		t.Fatalf("decoded %+v, want %+v", got, want)
	}
	// Java's field order, big-endian: lastReadTimeMs first, counter last.
	if r.Body[7] != byte(want.LastReadTimeMs) || r.Body[55] != 7 {
		t.Fatalf("layout: % x", r.Body)
	}

	// No timer service (a slave): Java's answer without a checkpoint.
	e = newEnv(t, nil)
	if r := e.call(protocol.GetTimerCheckPoint, nil, nil); r.Code != protocol.SystemError || r.Remark != "The checkpoint is null" {
		t.Fatalf("without a timer: %d %q", r.Code, r.Remark)
	}
	e = newEnv(t, func(_ *config.BrokerConfig, d *processor.Deps) {
		d.TimerCheckpoint = func() (protocol.TimerCheckpoint, bool) { return protocol.TimerCheckpoint{}, false }
	})
	if r := e.call(protocol.GetTimerCheckPoint, nil, nil); r.Code != protocol.SystemError {
		t.Fatalf("timer reporting none: %d %q", r.Code, r.Remark)
	}
}

func TestTimerMetrics(t *testing.T) {
	want := protocol.TimerMetrics{DataVersion: protocol.DataVersion{Timestamp: 5, Counter: 2},
		TimingCount: map[string]protocol.TimerMetric{"T": {Count: 3, TimeStamp: 9}}}
	e := newEnv(t, func(_ *config.BrokerConfig, d *processor.Deps) {
		d.TimerMetrics = func() (protocol.TimerMetrics, bool) { return want, true }
	})
	r := e.call(protocol.GetTimerMetrics, nil, nil)
	if r.Code != protocol.Success {
		t.Fatalf("GET_TIMER_METRICS: %d %s", r.Code, r.Remark)
	}
	if !strings.Contains(string(r.Body), `"timingCount":{"T":{"count":3,"timeStamp":9}}`) {
		t.Fatalf("body %s", r.Body)
	}
	e = newEnv(t, nil)
	if r := e.call(protocol.GetTimerMetrics, nil, nil); r.Code != protocol.SystemError || r.Remark != "The timer message store is null" {
		t.Fatalf("without a timer: %d %q", r.Code, r.Remark)
	}
}
