package metrics

import (
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// rpcBucketsMs are Java's rocketmq_rpc_latency buckets, in milliseconds
// (RemotingMetricsManager.getMetricsView).
var rpcBucketsMs = [...]float64{1, 3, 5, 7, 10, 100, 1000, 2000, 3000}

// rpcCell is the histogram of one (result, request code, response code).
type rpcCell struct {
	buckets [len(rpcBucketsMs)]atomic.Uint64 // not cumulative: bucket i holds le rpcBucketsMs[i] only
	count   atomic.Uint64
	sumNs   atomic.Uint64
}

// RPC records rocketmq_rpc_latency: the remoting server's
// RequestObserver. Each (oneway, request code, response code) has one
// cell, made on its first request and then updated with atomic adds only:
// observing allocates nothing (BenchmarkObserveRequest).
type RPC struct {
	desc *prometheus.Desc
	req  []codeName
	// cells[oneway][req][resp], req and resp indexes into the code tables
	// plus one slot for codes Java does not know.
	cells [2][][]atomic.Pointer[rpcCell]
}

// NewRPC returns an RPC recorder whose series carry base's labels
// (cluster, node_type, node_id).
func NewRPC(base prometheus.Labels) *RPC {
	r := &RPC{req: requestCodes()}
	r.desc = prometheus.NewDesc("rocketmq_rpc_latency", "Rpc latency (milliseconds)",
		[]string{"protocol_type", "is_long_polling", "request_code", "response_code", "result"}, base)
	for o := range r.cells {
		r.cells[o] = make([][]atomic.Pointer[rpcCell], len(r.req)+1)
		for i := range r.cells[o] {
			r.cells[o][i] = make([]atomic.Pointer[rpcCell], len(responseCodes)+1)
		}
	}
	return r
}

// ObserveRequest implements remoting.RequestObserver.
func (r *RPC) ObserveRequest(code, responseCode int32, oneway bool, d time.Duration) {
	o := 0
	if oneway {
		o = 1
	}
	slot := &r.cells[o][codeIndex(r.req, code)][codeIndex(responseCodes, responseCode)]
	c := slot.Load()
	if c == nil {
		c = new(rpcCell)
		if !slot.CompareAndSwap(nil, c) {
			c = slot.Load()
		}
	}
	ms := float64(d) / float64(time.Millisecond)
	for i, le := range rpcBucketsMs {
		if ms <= le {
			c.buckets[i].Add(1)
			break
		}
	}
	c.count.Add(1)
	c.sumNs.Add(uint64(max(d, 0)))
}

// Describe implements prometheus.Collector.
func (r *RPC) Describe(ch chan<- *prometheus.Desc) { ch <- r.desc }

// Collect implements prometheus.Collector.
func (r *RPC) Collect(ch chan<- prometheus.Metric) {
	for o := range r.cells {
		result := "success"
		if o == 1 {
			result = "oneway"
		}
		for i := range r.cells[o] {
			for j := range r.cells[o][i] {
				c := r.cells[o][i][j].Load()
				if c == nil {
					continue
				}
				count := c.count.Load()
				buckets := make(map[float64]uint64, len(rpcBucketsMs))
				var cum uint64
				for k, le := range rpcBucketsMs {
					cum += c.buckets[k].Load()
					buckets[le] = min(cum, count) // a concurrent observe may have bumped a bucket first
				}
				sum := float64(c.sumNs.Load()) / float64(time.Millisecond)
				m, err := prometheus.NewConstHistogram(r.desc, count, sum, buckets,
					"remoting", "false", codeLabel(r.req, i), codeLabel(responseCodes, j), result)
				if err != nil {
					ch <- prometheus.NewInvalidMetric(r.desc, err)
					continue
				}
				ch <- m
			}
		}
	}
}
