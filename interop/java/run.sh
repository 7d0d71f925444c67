#!/usr/bin/env bash
# Java interop check: builds rocketd and rocketctl, starts `rocketd serve` on
# free ports with a temporary data dir, and runs every check listed in
# checks.txt (a Java class in src/, official Java client) once per client
# version it names (Maven profiles rmq4 = 4.9.x, rmq5 = 5.x). Each check runs
# as `CLASS NAMESRV_ADDR TOPIC BROKER_ADDR` on a topic of its own and exits 0
# when it passes. Exits non-zero when a check fails or rocketd does not come up.
#
#   interop/java/run.sh              both client versions
#   interop/java/run.sh rmq4         one profile
#
# Needs Go, Java 17 and Maven (dependencies from Maven Central, cached in
# ~/.m2 after the first run). KEEP=1 keeps the temporary dir for inspection.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
profiles=("$@")
[ ${#profiles[@]} -gt 0 ] || profiles=(rmq4 rmq5)

tmp=$(mktemp -d "${TMPDIR:-/tmp}/rocketd-java-interop.XXXXXX")
rocketd_pid=""
cleanup() {
	stop_process "$rocketd_pid"
	finish_tmp "$tmp"
}
trap cleanup EXIT
# shellcheck source=../lib.sh
. "$root/interop/lib.sh"

t0=$(now_ms)


echo "== building rocketd and rocketctl"
build_rocketd "$root" "$tmp"

ns_port=$(free_port)
broker_port=$(free_port)
while [ "$broker_port" = "$ns_port" ]; do broker_port=$(free_port); done
export NAMESRV_ADDR="127.0.0.1:$ns_port"
ctl="$tmp/bin/rocketctl"

echo "== starting rocketd serve (namesrv $ns_port, broker $broker_port, data $tmp/data)"
# Short transaction timings: TxnCheck waits for check-backs.
printf 'transactionTimeOut=2000\ntransactionCheckInterval=1000\n' >"$tmp/broker.conf"
# SqlFilterCheck subscribes with SQL92.
echo 'enablePropertyFilter=true' >>"$tmp/broker.conf"
# QueryCheck finds traces in RMQ_SYS_TRACE_TOPIC, created at startup as Java's traceTopicEnable does.
echo 'traceTopicEnable=true' >>"$tmp/broker.conf"
"$tmp/bin/rocketd" serve --data "$tmp/data" --namesrv-port "$ns_port" --listen-port "$broker_port" \
	--grpc-port "$(free_port)" -c "$tmp/broker.conf" >"$tmp/rocketd.log" 2>&1 &
rocketd_pid=$!

# Up means: the broker has registered with the NameServer.
wait_registered "$rocketd_pid" "$tmp/rocketd.log" "$broker_port" "$ctl" || exit 1
echo "rocketd up after $(( $(now_ms) - t0 )) ms (including the Go build)"

status=0
for profile in "${profiles[@]}"; do
	t1=$(now_ms)
	echo "== $profile: building the checks"
	if ! (cd "$here" && mvn -B -q -P "$profile" compile dependency:build-classpath \
		-Dmdep.outputFile="$tmp/cp-$profile.txt" -Dmdep.includeScope=runtime) >"$tmp/mvn-$profile.log" 2>&1; then
		cat "$tmp/mvn-$profile.log" >&2
		echo "== $profile: Maven build failed" >&2
		status=1
		continue
	fi
	client=$(tr ':' '\n' <"$tmp/cp-$profile.txt" | grep -o 'rocketmq-client-[0-9][^/]*\.jar' | head -1)
	# checks.txt: one check a line, "CLASS QUEUES PROFILES" (PROFILES: a
	# comma-separated list, or "all"); each gets a topic of its own.
	while read -r class queues wanted; do
		case "$class" in '' | '#'*) continue ;; esac
		case ",$wanted," in *",$profile,"* | *",all,"*) ;; *) continue ;; esac
		t2=$(now_ms)
		topic="${class}_${profile}_$$"
		"$ctl" topic create -t "$topic" -r "$queues" -w "$queues" >/dev/null
		echo "== $profile: $class with $client on $topic"
		# Client logs go to the temp dir: logRoot is 4.9.x's key, rocketmq.log.root 5.x's.
		if java -Drocketmq.client.logRoot="$tmp/client-logs-$profile" -Drocketmq.log.root="$tmp/client-logs-$profile" \
			-Drocketmq.client.logLevel=WARN \
			-cp "$here/target/$profile/classes:$(cat "$tmp/cp-$profile.txt")" \
			"io.rocketd.interop.$class" "$NAMESRV_ADDR" "$topic" "127.0.0.1:$broker_port"; then
			echo "== $profile: $class PASS in $(( $(now_ms) - t2 )) ms"
		else
			echo "== $profile: $class FAIL in $(( $(now_ms) - t2 )) ms" >&2
			status=1
		fi
	done <"$here/checks.txt"
	echo "== $profile: done in $(( $(now_ms) - t1 )) ms"
done

if [ "$status" != 0 ]; then
	echo "rocketd log (last 50 lines):" >&2
	tail -50 "$tmp/rocketd.log" >&2
fi
echo "java interop: total $(( $(now_ms) - t0 )) ms, exit $status"
exit "$status"
