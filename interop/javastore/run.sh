#!/usr/bin/env bash
# Java store check (issue 3, item 8): a data directory written by Apache
# RocketMQ 5.2.0 opens in rocketd.
#
#  1. builds rocketd and rocketctl; finds the RocketMQ 5.2.0 jars (shared
#     cache with bench/compare, fetched through its pom on first use);
#  2. starts the Java NameServer + broker (SYNC_FLUSH, 1 MiB CommitLog
#     files so the data spans many files and their BLANK end records),
#     creates a 4-queue topic, sends ~3000 messages of varied sizes, tags,
#     keys and user properties through rocketctl (no delay-level message:
#     rocketctl send has no flag for it), and commits a consumer group's offsets;
#  3. records what Java answers (topic status, consume, group progress),
#     stops the broker with SIGTERM and waits for it;
#  4. starts `rocketd namesrv` + `rocketd broker -c` on the same store;
#  5. checks topic status, every message (against Java's own answer and
#     against what was sent, by key), the group's offsets
#     (config/consumerOffset.json), queries by key and by message id
#     answered from Java's index files (small ones: maxHashSlotNum=5000,
#     maxIndexNum=4000, so Java fills several), appends and reads new
#     messages (found by key too); then restarts rocketd (SIGTERM) and
#     checks once more.
#
# Exits non-zero on any failure and prints the logs then. Needs Go, Java 17,
# Maven (only when the jars are not cached) and jq
# (installed with apt-get when missing, as .ci/run does for Java). KEEP=1 keeps the temp dir.
set -Eeuo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
lib="${XDG_CACHE_HOME:-$HOME/.cache}/rocketd-bench/rocketmq-5.2.0"
topic=JavaStore
group=JavaStoreGroup
file_size=1048576

if ! command -v jq >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
	echo "javastore: jq not found, installing from Debian's packages"
	apt-get update -qq && apt-get install -y -qq jq >/dev/null
fi
for tool in java jq; do
	command -v "$tool" >/dev/null 2>&1 || { echo "javastore: $tool not found" >&2; exit 1; }
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/rocketd-javastore.XXXXXX")
pids=()
failed=1
stop_pid() { # pid: SIGTERM, wait up to 30 s, then SIGKILL
	local pid=$1
	kill -0 "$pid" 2>/dev/null || return 0
	kill -TERM "$pid" 2>/dev/null || true
	for _ in $(seq 1 300); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
	echo "javastore: pid $pid did not stop in 30 s, killing it" >&2
	kill -KILL "$pid" 2>/dev/null || true
	return 1
}
cleanup() {
	for pid in "${pids[@]}"; do stop_pid "$pid" || true; done
	if [ "$failed" = 1 ]; then
		for log in "$tmp"/*.log "$tmp"/home/logs/rocketmqlogs/broker.log; do
			[ -f "$log" ] || continue
			echo "---- $log (last 40 lines)" >&2
			tail -40 "$log" >&2
		done
	fi
	if [ "${KEEP:-}" = 1 ]; then echo "kept $tmp"; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
# shellcheck source=../lib.sh
. "$root/interop/lib.sh"
fail() { echo "javastore: FAIL: $*" >&2; exit 1; }
trap 'echo "javastore: FAIL: line $LINENO: $BASH_COMMAND exited $?" >&2' ERR

t0=$(now_ms)


echo "== building rocketd and rocketctl"
(cd "$root" && go build -o "$tmp/bin/rocketd" ./cmd/rocketd && go build -o "$tmp/bin/rocketctl" ./cmd/rocketctl)
ctl() { "$tmp/bin/rocketctl" --timeout 10s "$@"; }

if ! compgen -G "$lib/rocketmq-broker-*.jar" >/dev/null; then
	echo "== fetching Apache RocketMQ 5.2.0 jars into $lib"
	mvn -q -f "$root/bench/compare/rocketmq/pom.xml" dependency:copy-dependencies -DoutputDirectory="$lib"
fi

ns_port=$(free_port)
broker_port=$(free_port)
while [ "$broker_port" = "$ns_port" ]; do broker_port=$(free_port); done
export NAMESRV_ADDR="127.0.0.1:$ns_port"
store="$tmp/store"
home="$tmp/home"
mkdir -p "$home"

common_conf() {
	cat <<EOF
brokerClusterName=DefaultCluster
brokerName=broker-a
brokerId=0
listenPort=$broker_port
namesrvAddr=127.0.0.1:$ns_port
brokerIP1=127.0.0.1
storePathRootDir=$store
storePathCommitLog=$store/commitlog
mappedFileSizeCommitLog=$file_size
flushDiskType=SYNC_FLUSH
autoCreateTopicEnable=true
maxHashSlotNum=5000
maxIndexNum=4000
EOF
}
common_conf >"$tmp/broker.conf"
echo "listenPort=$ns_port" >"$tmp/namesrv.conf"

# wait_broker waits until the NameServer lists the broker (it registered).
wait_broker() { # pid what
	for _ in $(seq 1 600); do
		kill -0 "$1" 2>/dev/null || fail "$2 exited during startup"
		if ctl --timeout 1s cluster list 2>/dev/null | grep -q ":$broker_port"; then return 0; fi
		sleep 0.2
	done
	fail "$2 did not register within 120 s"
}

java_opens=(--add-opens=java.base/java.nio=ALL-UNNAMED --add-opens=java.base/sun.nio.ch=ALL-UNNAMED
	--add-opens=java.base/java.lang=ALL-UNNAMED --add-opens=java.base/java.util=ALL-UNNAMED
	--add-exports=java.base/sun.nio.ch=ALL-UNNAMED)
run_java() { # class conf log
	ROCKETMQ_HOME="$home" java -Xms256m -Xmx512m -XX:+UseG1GC -XX:MaxDirectMemorySize=512m "${java_opens[@]}" \
		-Duser.home="$home" -cp "$lib/*" "$1" -c "$2" >"$3" 2>&1 &
}

echo "== starting Apache RocketMQ 5.2.0 (namesrv $ns_port, broker $broker_port, store $store)"
run_java org.apache.rocketmq.namesrv.NamesrvStartup "$tmp/namesrv.conf" "$tmp/java-namesrv.log"
java_ns=$!
pids+=("$java_ns")
run_java org.apache.rocketmq.broker.BrokerStartup "$tmp/broker.conf" "$tmp/java-broker.log"
java_broker=$!
pids+=("$java_broker")
wait_broker "$java_broker" "the Java broker"
echo "Java broker up after $(($(now_ms) - t0)) ms"

ctl topic create -t "$topic" -c DefaultCluster -r 4 -w 4 >/dev/null
# The route reaches the NameServer with the broker's next registration;
# rocketctl send needs it (else it goes through TBW102 with 4 default queues,
# which is fine too, but wait for the real one).
for _ in $(seq 1 100); do
	ctl topic route -t "$topic" >/dev/null 2>&1 && break
	sleep 0.2
done

# The messages: variant v is (body size, count, tag, key, user property).
# Sizes from 40 B to 300 KB: 300 KB records in 1 MiB files force BLANK
# records at most file ends. Each variant's key is unique; its count is
# checked after the switch.
echo "== sending to the Java broker"
: >"$tmp/sent.tsv" # key <TAB> count <TAB> tag <TAB> body sha256 <TAB> prop
send_variant() { # v size count
	local v=$1 size=$2 count=$3 key="key-$1" tag="Tag$(($1 % 3))"
	awk -v n="$size" -v s="v$v-rocketd-javastore-" 'BEGIN { b = s; while (length(b) < n) b = b b; printf "%s", substr(b, 1, n) }' >"$tmp/body-$v"
	ctl send -t "$topic" --body-file "$tmp/body-$v" --tags "$tag" --keys "$key other-$v" \
		-p "variant=$v" -p "k$((v % 4))=value $v é" --count "$count" >/dev/null
	printf '%s\t%s\t%s\t%s\t%s\n' "$key" "$count" "$tag" "$(sha256sum <"$tmp/body-$v" | cut -c1-64)" "$v" >>"$tmp/sent.tsv"
}
sizes=(40 700 5000)
v=0
for _ in $(seq 1 24); do send_variant $v "${sizes[$((v % 3))]}" 120; v=$((v + 1)); done # 2880 small
for _ in $(seq 1 6); do send_variant $v 60000 20; v=$((v + 1)); done                       # 120 x 60 KB
for _ in $(seq 1 4); do send_variant $v 300000 3; v=$((v + 1)); done                       # 12 x 300 KB
total_sent=$(awk -F'\t' '{n += $2} END {print n}' "$tmp/sent.tsv")

n=$(ctl --json topic status -t "$topic" | jq -s '[flatten[] | .maxOffset - .minOffset] | add')
[ "$n" = "$total_sent" ] || fail "Java broker holds $n messages in $topic, sent $total_sent"

# The group commits offsets on queues 0 and 1 only (some of each).
ctl consume -t "$topic" -q 0 -g "$group" -c 500 >/dev/null
ctl consume -t "$topic" -q 1 -g "$group" -c 123 >/dev/null

# What Java answers, normalised for comparison.
status_of() { ctl --json topic status -t "$topic" | jq -c -s 'flatten | sort_by(.queueId) | map({queueId, minOffset, maxOffset})'; }
progress_of() { ctl --json group progress -g "$group" -t "$topic" | jq -c -s 'flatten | sort_by(.queueId) | map({queueId, brokerOffset, consumerOffset})'; }
# Every message with everything a client sees, sorted by queue and offset.
# Body is replaced by its length + hash in jq to keep the files small.
messages_of() {
	ctl --json consume -t "$topic" --from-beginning --batch 32 |
		jq -c '{queueId, queueOffset, msgId, offsetMsgId, tags, keys, properties, bornTimestamp, storeTimestamp, bodyLen: (.body | length), body: (.body | @base64)}' |
		sort -t, -k1,1 -k2,2 >"$1"
}
# Queries by key (QUERY_MESSAGE to the broker, from its index files): the
# message ids found, sorted. key-5 has 120 messages: the broker caps the
# answer at maxMsgsNumBatch (64), and which 64 is the index's order.
query_of() { # key [--unique]
	ctl --json message query -t "$topic" -k "$@" | jq -r '.msgId' | sort
}
queries_of() { # out
	: >"$1"
	for key in key-5 key-25 other-31 "$uniq_key --unique"; do
		# shellcheck disable=SC2086
		printf '%s %s\n' "${key// /}" "$(query_of $key | tr '\n' ' ')" >>"$1"
	done
}
status_of >"$tmp/java-status.json"
progress_of >"$tmp/java-progress.json"
messages_of "$tmp/java-messages.json"
uniq_key=$(head -1 "$tmp/java-messages.json" | jq -r '.msgId')
queries_of "$tmp/java-queries.txt"
awk '{print $1 " " NF - 1}' "$tmp/java-queries.txt" | tr '\n' ' ' | grep -q "key-5 64 key-25 20 other-31 3 $uniq_key--unique 1" ||
	fail "Java's query answers: $(awk '{print $1 " " NF - 1}' "$tmp/java-queries.txt" | tr '\n' ' ')"
[ "$(wc -l <"$tmp/java-messages.json")" = "$total_sent" ] || fail "Java consume returned $(wc -l <"$tmp/java-messages.json") messages, sent $total_sent"
grep -q '"consumerOffset":500' "$tmp/java-progress.json" || fail "Java group progress lacks offset 500: $(cat "$tmp/java-progress.json")"
echo "Java: $total_sent messages, status $(cat "$tmp/java-status.json")"

echo "== stopping the Java broker (SIGTERM) and NameServer"
stop_pid "$java_broker" || fail "Java broker did not stop"
stop_pid "$java_ns" || fail "Java NameServer did not stop"
pids=()
ls "$store/commitlog" >"$tmp/commitlog-files.txt"
[ -f "$store/config/consumerOffset.json" ] || fail "Java wrote no config/consumerOffset.json"
echo "Java store: $(wc -l <"$tmp/commitlog-files.txt") CommitLog files, $(ls "$store/index" | wc -l) index files, $(du -sh "$store" | cut -f1)"
[ "$(ls "$store/index" | wc -l)" -ge 2 ] || fail "Java wrote fewer than 2 index files: $(ls "$store/index")"

# check_rocketd compares what rocketd answers with what Java answered.
check_rocketd() { # round
	local round=$1
	status_of >"$tmp/rocketd-status-$round.json"
	if ! cmp -s "$tmp/java-status.json" "$tmp/rocketd-status-$round.json"; then
		fail "topic status differs: Java $(cat "$tmp/java-status.json") rocketd $(cat "$tmp/rocketd-status-$round.json")"
	fi
	progress_of >"$tmp/rocketd-progress-$round.json"
	if ! cmp -s "$tmp/java-progress.json" "$tmp/rocketd-progress-$round.json"; then
		fail "group progress differs: Java $(cat "$tmp/java-progress.json") rocketd $(cat "$tmp/rocketd-progress-$round.json")"
	fi
	messages_of "$tmp/rocketd-messages-$round.json"
	if ! cmp -s "$tmp/java-messages.json" "$tmp/rocketd-messages-$round.json"; then
		diff "$tmp/java-messages.json" "$tmp/rocketd-messages-$round.json" | head -c 3000 >&2 || true
		fail "messages differ between Java and rocketd ($round)"
	fi
	# Against what was sent, by key: count, tag, body hash, user property.
	jq -r '[(.keys | split(" ") | .[0]), .tags, .properties.variant // ""] | @tsv' "$tmp/rocketd-messages-$round.json" |
		sort | uniq -c | awk '{print $2 "\t" $1 "\t" $3 "\t" $4}' | sort >"$tmp/got-$round.tsv"
	cut -f1,2,3,5 "$tmp/sent.tsv" | sort >"$tmp/want.tsv"
	if ! cmp -s "$tmp/want.tsv" "$tmp/got-$round.tsv"; then
		diff "$tmp/want.tsv" "$tmp/got-$round.tsv" >&2 || true
		fail "messages by key differ from what was sent ($round)"
	fi
	local bad
	bad=$(jq -r '(.keys | split(" ") | .[0]) + "\t" + .body' "$tmp/rocketd-messages-$round.json" | sort -u |
		while IFS=$'\t' read -r key b64; do
			want=$(awk -F'\t' -v k="$key" '$1 == k {print $4}' "$tmp/sent.tsv")
			got=$(printf '%s' "$b64" | base64 -d | sha256sum | cut -c1-64)
			[ "$want" = "$got" ] || echo "$key"
		done)
	[ -z "$bad" ] || fail "bodies differ from what was sent for keys: $bad"
	# Queries answered from Java's index files: the same messages as Java.
	queries_of "$tmp/rocketd-queries-$round.txt"
	if ! cmp -s "$tmp/java-queries.txt" "$tmp/rocketd-queries-$round.txt"; then
		diff "$tmp/java-queries.txt" "$tmp/rocketd-queries-$round.txt" | head -c 3000 >&2 || true
		fail "query answers differ between Java and rocketd ($round)"
	fi
}

start_rocketd() { # round
	HOME="$home" "$tmp/bin/rocketd" namesrv --port "$ns_port" >"$tmp/rocketd-namesrv-$1.log" 2>&1 &
	rd_ns=$!
	pids+=("$rd_ns")
	"$tmp/bin/rocketd" broker -c "$tmp/broker.conf" >"$tmp/rocketd-broker-$1.log" 2>&1 &
	rd_broker=$!
	pids+=("$rd_broker")
	wait_broker "$rd_broker" "rocketd broker ($1)"
}
stop_rocketd() {
	stop_pid "$rd_broker" || fail "rocketd broker did not stop"
	stop_pid "$rd_ns" || fail "rocketd namesrv did not stop"
	pids=()
}

echo "== starting rocketd on the Java store"
t1=$(now_ms)
start_rocketd first
echo "rocketd up after $(($(now_ms) - t1)) ms"
check_rocketd first
echo "rocketd reads the Java store: status, $total_sent messages, group offsets and key queries identical"

# Append after Java's tail, then read the new messages back.
printf 'appended by rocketd' >"$tmp/body-append"
ctl send -t "$topic" --body-file "$tmp/body-append" --tags TagAppend --keys key-append -p origin=rocketd --count 40 >/dev/null
appended=$(ctl --json consume -t "$topic" -s TagAppend | jq -s 'map(select(.keys == "key-append" and .properties.origin == "rocketd" and (.body | @base64d) == "appended by rocketd")) | length' 2>/dev/null ||
	ctl --json consume -t "$topic" -s TagAppend | jq -s 'map(select(.keys == "key-append" and .properties.origin == "rocketd")) | length')
[ "$appended" = 40 ] || fail "read back $appended of 40 messages appended by rocketd"
# The Java messages are still there, and each queue grew by what was appended.
ctl --json topic status -t "$topic" | jq -c -s 'flatten | sort_by(.queueId) | map({queueId, minOffset, maxOffset})' >"$tmp/after-append.json"
grown=$(jq -s '(.[1] | map(.maxOffset) | add) - (.[0] | map(.maxOffset) | add)' "$tmp/java-status.json" "$tmp/after-append.json")
[ "$grown" = 40 ] || fail "queues grew by $grown after appending 40"
# rocketd indexes after Java's index files.
n=$(query_of key-append | wc -l)
[ "$n" = 40 ] || fail "query key-append found $n of 40"
echo "rocketd appended 40 messages after Java's tail and read them back"

echo "== restarting rocketd (SIGTERM, then start on the same store)"
stop_rocketd
start_rocketd second
# Java's part is unchanged; the appended messages survive the restart.
status_of >"$tmp/rocketd-status-second.json"
cmp -s "$tmp/after-append.json" "$tmp/rocketd-status-second.json" ||
	fail "status after restart $(cat "$tmp/rocketd-status-second.json"), before $(cat "$tmp/after-append.json")"
ctl --json consume -t "$topic" --from-beginning | jq -c 'select(.tags != "TagAppend") | {queueId, queueOffset, msgId, offsetMsgId, tags, keys, properties, bornTimestamp, storeTimestamp, bodyLen: (.body | length), body: (.body | @base64)}' |
	sort -t, -k1,1 -k2,2 >"$tmp/rocketd-messages-second.json"
cmp -s "$tmp/java-messages.json" "$tmp/rocketd-messages-second.json" || fail "Java's messages differ after the restart"
n=$(ctl --json consume -t "$topic" -s TagAppend | jq -s 'length')
[ "$n" = 40 ] || fail "$n of 40 appended messages after the restart"
queries_of "$tmp/rocketd-queries-second.txt"
cmp -s "$tmp/java-queries.txt" "$tmp/rocketd-queries-second.txt" || fail "query answers differ after the restart"
n=$(query_of key-append | wc -l)
[ "$n" = 40 ] || fail "query key-append found $n of 40 after the restart"
progress_of >"$tmp/rocketd-progress-second.json"
# brokerOffset grew by the appended messages; the committed offsets did not move.
jq -c 'map({queueId, consumerOffset})' "$tmp/java-progress.json" >"$tmp/a.json"
jq -c 'map({queueId, consumerOffset})' "$tmp/rocketd-progress-second.json" >"$tmp/b.json"
cmp -s "$tmp/a.json" "$tmp/b.json" || fail "group offsets after restart $(cat "$tmp/b.json"), Java $(cat "$tmp/a.json")"
stop_rocketd

failed=0
echo "javastore: PASS: $total_sent messages in $(wc -l <"$tmp/commitlog-files.txt") Java-written 1 MiB CommitLog files read by rocketd (status, bodies, tags, keys, properties, group offsets, key queries), 40 appended, restart ok; total $(($(now_ms) - t0)) ms"
