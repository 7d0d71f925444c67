#!/usr/bin/env bash
# rocketmq-exporter side by side (issue 14): the metric families
# apache/rocketmq-exporter yields against `rocketd serve` next to those it
# yields against Apache RocketMQ 5.2.0, under the same traffic.
#
#  1. builds rocketd; finds the exporter jar: $EXPORTER_JAR, else the cached
#     build of the pinned commit, else builds it with Maven from
#     $EXPORTER_SRC (a checkout of apache/rocketmq-exporter) or from a clone
#     of GitHub (the exporter is not on Maven Central);
#  2. starts rocketd serve and the Java NameServer + broker (jars shared with
#     bench/compare), creates a 4-queue topic on each and runs Traffic.java
#     against each: 200 messages sent and consumed, producer and push
#     consumer left online;
#  3. runs one exporter per server with every collection task every 5 s,
#     scrapes both every 5 s until their family sets have not changed for
#     three scrapes (at most 150 s);
#  4. prints both counts, the families missing on rocketd and those only
#     rocketd yields; exits 1 when a family is missing on rocketd.
#
# Needs Go, Java 17 and Maven (only to build the exporter or fetch the jars).
# KEEP=1 keeps the temporary dir (logs and both scrapes).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cache="${XDG_CACHE_HOME:-$HOME/.cache}/rocketd-bench"
lib="$cache/rocketmq-5.2.0"
exporter_commit=e1ab2dd569d431c88c9eb599a9284aedc7abeb7c # master, 2023-06
topic=ExporterTopic
producer_group=ExporterProducer
consumer_group=ExporterConsumer
count=200

tmp=$(mktemp -d "${TMPDIR:-/tmp}/rocketd-exporter.XXXXXX")
pids=()
failed=1
cleanup() {
	for pid in "${pids[@]}"; do stop_process "$pid"; done
	if [ "$failed" = 1 ]; then
		for log in "$tmp"/*.log; do
			[ -f "$log" ] || continue
			echo "---- $log (last 20 lines)" >&2
			tail -20 "$log" >&2
		done
	fi
	finish_tmp "$tmp"
}
trap cleanup EXIT
# shellcheck source=../lib.sh
. "$root/interop/lib.sh"
fail() { echo "exporter: FAIL: $*" >&2; exit 1; }

t0=$(now_ms)
echo "== building rocketd and rocketctl"
build_rocketd "$root" "$tmp"
ctl() { "$tmp/bin/rocketctl" --timeout 10s "$@"; }

# --- the exporter jar
jar=${EXPORTER_JAR:-$cache/rocketmq-exporter-${exporter_commit:0:7}.jar}
if [ ! -f "$jar" ]; then
	src=${EXPORTER_SRC:-}
	if [ -z "$src" ]; then
		src="$tmp/rocketmq-exporter"
		echo "== cloning apache/rocketmq-exporter"
		git clone -q https://github.com/apache/rocketmq-exporter "$src" || fail "cannot clone apache/rocketmq-exporter; set EXPORTER_SRC to a checkout or EXPORTER_JAR to a built jar"
		git -C "$src" checkout -q "$exporter_commit"
	fi
	echo "== building the exporter from $src with Maven"
	build="$tmp/exporter-src"
	cp -r "$src" "$build"
	(cd "$build" && mvn -B -q -DskipTests -Drat.skip=true -Dcheckstyle.skip=true package) >"$tmp/mvn.log" 2>&1 ||
		{ tail -40 "$tmp/mvn.log" >&2; fail "Maven could not build the exporter (log above)"; }
	mkdir -p "$(dirname "$jar")"
	cp "$build"/target/rocketmq-exporter-*-exec.jar "$jar"
fi
echo "exporter: $jar"

if ! compgen -G "$lib/rocketmq-broker-*.jar" >/dev/null; then
	echo "== fetching Apache RocketMQ 5.2.0 jars into $lib"
	mvn -q -f "$root/bench/compare/rocketmq/pom.xml" dependency:copy-dependencies -DoutputDirectory="$lib"
fi

# ports: two servers (namesrv + broker each), two exporters (http + grpc each)
ports=()
while [ ${#ports[@]} -lt 8 ]; do
	p=$(free_port)
	case " ${ports[*]} " in *" $p "* | *" $((p + 1)) "* | *" $((p - 1)) "*) continue ;; esac
	ports+=("$p")
done
rd_ns="127.0.0.1:${ports[0]}" rd_broker_port=${ports[1]}
j_ns="127.0.0.1:${ports[2]}" j_broker_port=${ports[3]}

echo "== starting rocketd serve (namesrv ${ports[0]}, broker $rd_broker_port)"
"$tmp/bin/rocketd" serve --data "$tmp/rocketd-data" --namesrv-port "${ports[0]}" --listen-port "$rd_broker_port" \
	--grpc-port "$(free_port)" >"$tmp/rocketd.log" 2>&1 &
pids+=($!)
wait_registered "$!" "$tmp/rocketd.log" "$rd_broker_port" "$tmp/bin/rocketctl" -n "$rd_ns" || fail "rocketd did not start"

echo "== starting Apache RocketMQ 5.2.0 (namesrv ${ports[2]}, broker $j_broker_port)"
home="$tmp/java-home"
mkdir -p "$home"
echo "listenPort=${ports[2]}" >"$tmp/namesrv.conf"
cat >"$tmp/broker.conf" <<CONF
brokerClusterName=DefaultCluster
brokerName=broker-a
brokerId=0
listenPort=$j_broker_port
namesrvAddr=$j_ns
brokerIP1=127.0.0.1
storePathRootDir=$tmp/java-store
storePathCommitLog=$tmp/java-store/commitlog
autoCreateTopicEnable=true
CONF
java_opens=(--add-opens=java.base/java.nio=ALL-UNNAMED --add-opens=java.base/sun.nio.ch=ALL-UNNAMED
	--add-opens=java.base/java.lang=ALL-UNNAMED --add-opens=java.base/java.util=ALL-UNNAMED
	--add-exports=java.base/sun.nio.ch=ALL-UNNAMED)
run_java() { # class conf log
	ROCKETMQ_HOME="$home" java -Xms256m -Xmx512m -XX:+UseG1GC -XX:MaxDirectMemorySize=512m "${java_opens[@]}" \
		-Duser.home="$home" -cp "$lib/*" "$1" -c "$2" >"$3" 2>&1 &
	pids+=($!)
}
run_java org.apache.rocketmq.namesrv.NamesrvStartup "$tmp/namesrv.conf" "$tmp/java-namesrv.log"
run_java org.apache.rocketmq.broker.BrokerStartup "$tmp/broker.conf" "$tmp/java-broker.log"
wait_registered "${pids[-1]}" "$tmp/java-broker.log" "$j_broker_port" "$tmp/bin/rocketctl" -n "$j_ns" || fail "the Java broker did not start"

# --- traffic against both
for side in rocketd java; do
	if [ "$side" = rocketd ]; then ns=$rd_ns; else ns=$j_ns; fi
	ctl -n "$ns" topic create -t "$topic" -c DefaultCluster -r 4 -w 4 >/dev/null
	for _ in $(seq 1 100); do
		ctl -n "$ns" topic route -t "$topic" >/dev/null 2>&1 && break
		sleep 0.2
	done
	java -Xmx256m -Duser.home="$tmp/traffic-home-$side" -Drocketmq.client.logRoot="$tmp/traffic-logs-$side" \
		-Drocketmq.client.logLevel=WARN -cp "$lib/*" "$here/Traffic.java" \
		"$ns" "$topic" "$producer_group" "$consumer_group" "$count" >"$tmp/traffic-$side.log" 2>&1 &
	pids+=($!)
	for _ in $(seq 1 1500); do
		grep -q '^READY' "$tmp/traffic-$side.log" && break
		kill -0 "${pids[-1]}" 2>/dev/null || fail "traffic against $side exited"
		sleep 0.1
	done
	grep '^READY' "$tmp/traffic-$side.log" | sed "s/^/$side: /" || fail "traffic against $side not done in 150 s"
done

# --- one exporter per server, every collection task every 5 s
every5='0/5 * * * * ?'
# start_exporter side ns http_port grpc_port: starts an exporter and waits
# until Spring reports it started. Its first NameServer call has a 3 s
# budget that a JVM starting on a loaded machine can miss (the exporter then
# exits): up to three attempts.
start_exporter() {
	local attempt pid
	for attempt in 1 2 3; do
		java -Xmx384m -Duser.home="$tmp/exporter-home-$1" -jar "$jar" \
			--server.port="$3" --grpc.server.port="$4" --rocketmq.config.namesrvAddr="$2" \
			--rocketmq.config.rocketmqVersion=V5_2_0 \
			--task.collectTopicOffset.cron="$every5" --task.collectProducer.cron="$every5" \
			--task.collectConsumerOffset.cron="$every5" --task.collectBrokerStatsTopic.cron="$every5" \
			--task.collectBrokerStats.cron="$every5" --task.collectBrokerRuntimeStats.cron="$every5" \
			>"$tmp/exporter-$1.log" 2>&1 &
		pid=$!
		pids+=("$pid")
		for _ in $(seq 1 1200); do
			grep -q 'Started RocketMQExporterApplication' "$tmp/exporter-$1.log" && return 0
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		stop_process "$pid"
		cp "$tmp/exporter-$1.log" "$tmp/exporter-$1-attempt$attempt.log"
		echo "exporter for $1: attempt $attempt did not start (log kept)" >&2
	done
	fail "the exporter for $1 did not start"
}
echo "== starting the exporters"
start_exporter rocketd "$rd_ns" "${ports[4]}" "${ports[5]}"
start_exporter java "$j_ns" "${ports[6]}" "${ports[7]}"

families() { # file: metric names that have samples
	grep -v '^#' "$1" | sed -E 's/[{ ].*//' | grep . | sort -u
}
scrape() { # side port
	curl -fsS --max-time 10 "http://127.0.0.1:$2/metrics" >"$tmp/scrape-$1.new" 2>/dev/null || return 0
	mv "$tmp/scrape-$1.new" "$tmp/scrape-$1.txt"
}
stable=0 prev=""
deadline=$(($(now_ms) + 150000))
while [ "$(now_ms)" -lt "$deadline" ]; do
	sleep 5
	scrape rocketd "${ports[4]}"
	scrape java "${ports[6]}"
	[ -f "$tmp/scrape-rocketd.txt" ] && [ -f "$tmp/scrape-java.txt" ] || continue
	cur="$(families "$tmp/scrape-rocketd.txt" | tr '\n' ' ')|$(families "$tmp/scrape-java.txt" | tr '\n' ' ')"
	if [ "$cur" = "$prev" ] && [ "$cur" != "|" ]; then stable=$((stable + 1)); else stable=0; fi
	prev=$cur
	[ "$stable" -ge 3 ] && break
done
[ -f "$tmp/scrape-rocketd.txt" ] || fail "no scrape of the rocketd exporter"
[ -f "$tmp/scrape-java.txt" ] || fail "no scrape of the Java exporter"
[ "$stable" -ge 3 ] || echo "exporter: family sets still changing after 150 s; comparing the last scrapes" >&2

families "$tmp/scrape-rocketd.txt" >"$tmp/families-rocketd.txt"
families "$tmp/scrape-java.txt" >"$tmp/families-java.txt"
echo
echo "metric families with samples: rocketd $(wc -l <"$tmp/families-rocketd.txt"), Apache RocketMQ 5.2.0 $(wc -l <"$tmp/families-java.txt")"
missing=$(comm -13 "$tmp/families-rocketd.txt" "$tmp/families-java.txt")
extra=$(comm -23 "$tmp/families-rocketd.txt" "$tmp/families-java.txt")
echo "missing on rocketd: $(echo "$missing" | grep -c . || true)"
[ -z "$missing" ] || echo "$missing" | sed 's/^/  /'
echo "only on rocketd: $(echo "$extra" | grep -c . || true)"
[ -z "$extra" ] || echo "$extra" | sed 's/^/  /'
echo "exporter: total $(($(now_ms) - t0)) ms"
if [ -n "$missing" ]; then
	KEEP=${KEEP:-}
	exit 1
fi
failed=0
