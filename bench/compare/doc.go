// Command compare is the side-by-side benchmark harness: in one run it starts
// each target on loopback with a fresh data directory, drives it with the
// same workloads, stops it, and prints one table with ratios to rocketd.
//
//	go run ./bench/compare                 full run (about 12 minutes), results to bench/results/<date>.md
//	go run ./bench/compare --quick         a fast check (about 3 minutes), nothing written unless --out
//	go run ./bench/compare --targets rocketd-async,nats-default --duration 5s
//	go run ./bench/compare --profile /tmp/prof --targets rocketd-async
//	go run ./bench/compare --targets rocketd-grpc,rocketmq-proxy --rounds 2 --duration 10s --grpc-backlog 30000
//	go run ./bench/compare --targets rocketd-async,nats-default --workloads pipe1,pipe16,batch32 --duration 5s
//
//	go run ./bench/compare scale           the scale curves (about 30 minutes), results to bench/results/<date>-scale.md
//	go run ./bench/compare scale --quick   the same at small sizes (a few minutes)
//
// The scale curves (scale.go) show how rocketd's cost grows with the work
// that is not messages per second, each point on a fresh rocketd: throughput
// and RSS with 1 to 10k queues (one topic, and topics of 8 queues; a first
// message to every queue, timed apart, creates their files before), RSS with
// 10k idle connections, the read rate of 1 and 10 GiB backlogs (each read
// --backlog-reads times from the start, 3 by default; the table gives the
// median and each read), and the time from a restart after kill -9 to the
// first acknowledged send with 1, 5 and 20 GiB stores, for rocketd and
// Apache RocketMQ (--java=false skips it).
//
// Targets (--targets, comma separated; default all):
//
//	rocketd-async   rocketd serve, flushDiskType=ASYNC_FLUSH
//	rocketd-sync    rocketd serve, flushDiskType=SYNC_FLUSH
//	rocketmq-async  Apache RocketMQ 5.x NameServer + broker, ASYNC_FLUSH
//	rocketmq-sync   Apache RocketMQ 5.x NameServer + broker, SYNC_FLUSH
//	nats-default    NATS JetStream, file storage, default durability (fsync every 2 min)
//	nats-always     NATS JetStream, file storage, sync_interval: always
//
// and, only when named (they have workloads of their own, see below):
//
//	rocketd-grpc    rocketd serve --grpc-port, ASYNC_FLUSH: the gRPC MessagingService
//	rocketmq-proxy  Apache RocketMQ 5.x NameServer + proxy in Local mode (ProxyStartup -pm local:
//	                the broker runs inside the proxy's JVM), ASYNC_FLUSH, gRPC on a free port
//
// --rounds N runs the target list N times, the targets alternating, and the
// table shows each figure's median (and each round's table below it).
//
// With both rocketd targets and the p1k64 workload, the results carry the
// SYNC_FLUSH bound of issue 18 (bound.go): 64 / (async round trip + one
// fdatasync), the round trip being 64 / the ASYNC_FLUSH rate of p1k64 and the
// fdatasync the median of a probe loop in the SYNC_FLUSH target's store
// directory, with the SYNC_FLUSH rate as a share of it (medians over rounds).
//
// With rocketd-async and the pipe1 or batch32 shape, they also carry batch32
// against pipe1 and the page cache (pagecache.go): the broker's CPU per
// message of both shapes (its threads' schedstat run time), what this
// machine's kernel spends per GiB of new page cache and per GiB overwritten
// (a 256 MiB probe file on the store's file system, broker idle), and from
// those the share of batch32's broker CPU that growing the page cache by the
// bodies alone takes, and the cores it takes at issue 18's goal of 3 x pipe1.
//
// rocketd and RocketMQ are driven by the same client, `rocketctl bench`, run
// as a separate process (so the ratio between them is the brokers'). NATS is
// embedded: this binary re-executes itself as the server process
// (`compare nats-server`) and drives it with nats.go's JetStream API, with
// the same shape of workload (one connection per producer, synchronous
// publishes that wait for the stream's ack, a paced publisher for the fixed
// rate, a pull consumer for the backlog). NATS is imported here only, never
// by rocketd's own binaries.
//
// The RocketMQ jars come from Maven Central: on first use the harness runs
// `mvn dependency:copy-dependencies` on rocketmq/pom.xml into a cache
// directory (--rocketmq-lib, default $XDG_CACHE_HOME/rocketd-bench/rocketmq-<version>).
//
// Workloads, each after a short unmeasured warm-up (the JVM needs it):
//
//	produce 1 KiB x1    one producer, synchronous sends
//	produce 1 KiB x64   64 producers, synchronous sends
//	produce 128 B x64   64 producers, synchronous sends
//	consume backlog     a 1 M-message backlog of 1 KiB (filled unmeasured, in batches), read from the start
//	fixed 20k/s p99     16 paced producers at 20 000 msgs/s in total; p99 latency from the due time
//	pipelined shapes    1 connection with 4,000 sends of 1 KiB in flight; 16 connections x 256 in flight;
//	                    batches of 32 x 1 KiB on 1 connection, 4,000 messages in flight (rocketctl bench
//	                    produce --mode async --window N [--batch 32]; NATS: PublishAsync with that many
//	                    pending, in groups of 32 for the batch shape: NATS has no batch publish)
//	first sends         rocketd, RocketMQ: 16 producers of 1 KiB right after the topics exist on the fresh
//	                    store, before the warm-up; the max send latency shows a first CommitLog segment
//	                    prepared only when the first send needs it (a 1 GiB zero-fill under SYNC_FLUSH)
//
// The fixed rate measures what it always did: each send's latency from the
// moment it was due (its place in an even schedule: every worker sends one
// message each 16/20 000 s, the workers staggered, waits timed by package
// pace) to its answer, so a send that could not leave on time because its
// worker's previous send was still waiting counts that wait (no coordinated
// omission). rocketctl splits that latency in three (--json latencyParts):
// behind an earlier send (due, but the worker's previous send unanswered),
// late to send (the client's timer and encoding) and the round trip; the log
// shows those parts for the sends at or above the p99, and how long the
// broker's threads waited for a CPU during the workload (schedstat): on the
// shared 2-core machine the tail is mostly a stalled round trip followed by
// the sends queued behind it.
//
// The gRPC workloads (workloads_grpc.go; results in
// bench/results/2026-12-02-grpc.md) drive rocketd-grpc and rocketmq-proxy
// with the official Go SDK, rocketmq-clients/golang v5.1.4, in this process
// (plaintext), topics of 8 queues:
//
//	gRPC produce 1 KiB x1    one SDK producer, synchronous sends
//	gRPC produce 1 KiB xN    --grpc-producers (32) SDK producers, synchronous sends; and their send p99
//	SimpleConsumer           a --grpc-backlog (200 000) backlog of 1 KiB, filled unmeasured; 16 SimpleConsumers
//	                         of a new group Receive 32 at a time and Ack each message, until all are acked
//
// For each, the results' notes give the CPU time the server's and the
// client's threads ran and waited for a CPU (/proc/PID/task/*/schedstat),
// per message: on a shared machine the share of the cores a process gets
// bounds its throughput, and the CPU per message is the figure that does
// not depend on it. With --profile the harness also saves a CPU profile of
// itself (the SDK clients) next to rocketd's.
//
// The SDK is the load generator on the servers' cores, so its weight is
// kept down the same way for every target: its info line per unary RPC
// (v5.1.4 writes one for each SendMessage and AckMessage into
// /tmp/rocketmq-logger.log, whatever its log level) is off unless
// --sdk-call-log, and the harness runs at GOGC 400 while the SDK drives a
// target unless GOGC is set (bench/results/2026-12-03-sdklog.md).
//
// Per target it also records the time from process start to the broker's
// port accepting connections, to the topics' creation through the
// NameServer (rocketd, RocketMQ: the broker has registered), RSS once idle after start, and the peak RSS
// (VmHWM) at the end, summed over the target's processes.
//
// With --profile DIR the rocketd targets run in-process in a child of this
// binary (`compare rocketd-pprof`, the same NameServer and broker packages
// that `rocketd serve` runs) with net/http/pprof on loopback, and the
// harness saves a CPU profile and an allocation profile of the produce
// (1 KiB x64) and consume workloads under DIR.
package main
