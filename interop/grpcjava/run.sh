#!/usr/bin/env bash
# gRPC interop check (issue 16): builds rocketd and rocketctl, starts
# `rocketd serve` on free ports (NameServer, broker, --grpc-port) with a
# temporary data dir, and runs GrpcCheck (src/), the RocketMQ 5 Java SDK
# (rocketmq-client-java, gRPC over plaintext) as Producer, SimpleConsumer and
# PushConsumer against rocketd's MessagingService. Exits non-zero when the
# check fails or rocketd does not come up.
#
# Needs Go, Java 17 and Maven (dependencies from Maven Central, cached in
# ~/.m2 after the first run). KEEP=1 keeps the temporary dir for inspection.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)

tmp=$(mktemp -d "${TMPDIR:-/tmp}/rocketd-grpcjava-interop.XXXXXX")
rocketd_pid=""
cleanup() {
	stop_process "$rocketd_pid"
	finish_tmp "$tmp"
}
trap cleanup EXIT
# shellcheck source=../lib.sh
. "$root/interop/lib.sh"

for tool in java mvn; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "grpcjava interop: $tool not found" >&2
		exit 1
	fi
done

t0=$(now_ms)
echo "== building rocketd and rocketctl"
build_rocketd "$root" "$tmp"

ns_port=$(free_port)
broker_port=$(free_port)
while [ "$broker_port" = "$ns_port" ]; do broker_port=$(free_port); done
grpc_port=$(free_port)
while [ "$grpc_port" = "$ns_port" ] || [ "$grpc_port" = "$broker_port" ]; do grpc_port=$(free_port); done
export NAMESRV_ADDR="127.0.0.1:$ns_port"
ctl="$tmp/bin/rocketctl"

echo "== starting rocketd serve (namesrv $ns_port, broker $broker_port, grpc $grpc_port, data $tmp/data)"
# Short transaction timings: the check waits for the check-back of an open transaction.
printf 'transactionTimeOut=2000\ntransactionCheckInterval=1000\n' >"$tmp/broker.conf"
"$tmp/bin/rocketd" serve --data "$tmp/data" --namesrv-port "$ns_port" --listen-port "$broker_port" \
	--grpc-port "$grpc_port" -c "$tmp/broker.conf" >"$tmp/rocketd.log" 2>&1 &
rocketd_pid=$!
wait_registered "$rocketd_pid" "$tmp/rocketd.log" "$broker_port" "$ctl" || exit 1
echo "rocketd up after $(( $(now_ms) - t0 )) ms (including the Go build)"

echo "== building the check"
if ! (cd "$here" && mvn -B -q compile dependency:build-classpath \
	-Dmdep.outputFile="$tmp/cp.txt" -Dmdep.includeScope=runtime) >"$tmp/mvn.log" 2>&1; then
	cat "$tmp/mvn.log" >&2
	echo "grpcjava interop: Maven build failed" >&2
	exit 1
fi

t1=$(now_ms)
status=0
echo "== GrpcCheck (rocketmq-client-java) on GrpcCheck_$$_*"
# Client logs go to the temp dir: rocketmq.log.root is the SDK's key, rocketmq.client.logRoot the admin's.
if java -Drocketmq.log.root="$tmp/client-logs" -Drocketmq.client.logRoot="$tmp/client-logs" \
	-cp "$here/target/classes:$(cat "$tmp/cp.txt")" \
	io.rocketd.interop.GrpcCheck "$NAMESRV_ADDR" "GrpcCheck_$$" "127.0.0.1:$broker_port" "127.0.0.1:$grpc_port"; then
	echo "== GrpcCheck PASS in $(( $(now_ms) - t1 )) ms"
else
	echo "== GrpcCheck FAIL in $(( $(now_ms) - t1 )) ms" >&2
	status=1
fi

if [ "$status" != 0 ]; then
	echo "rocketd log (last 50 lines):" >&2
	tail -50 "$tmp/rocketd.log" >&2
	ls "$tmp/client-logs" >&2 2>/dev/null || true
fi
echo "grpcjava interop: total $(( $(now_ms) - t0 )) ms, exit $status"
exit "$status"
