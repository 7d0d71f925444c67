#!/usr/bin/env bash
# Controller interop check (issue 17): three `rocketd controller` nodes, a
# rocketd NameServer and two Apache RocketMQ 5.2.0 brokers in controller mode
# (enableControllerMode=true, controllerAddr = the three nodes), checked with
# mqadmin 5.3.1 (rocketmq-tools from Maven Central):
#
#   - the first Java broker registers (GET_NEXT_BROKER_ID, APPLY_BROKER_ID,
#     REGISTER_BROKER, ELECT_MASTER) and becomes SYNC_MASTER; the second
#     becomes SLAVE and the master adds it to the SyncStateSet
#     (ALTER_SYNC_STATE_SET);
#   - mqadmin getControllerMetaData, getSyncStateSet, getBrokerEpoch,
#     getControllerConfig, updateControllerConfig, electMaster (the slave
#     becomes master);
#   - kill -9 of the master: the controller elects the other broker, which
#     takes SYNC_MASTER (the time is printed);
#   - cleanBrokerMetadata of the dead broker's id; refused for a live one;
#   - kill -9 of the controller leader: another node leads with the same
#     state, and the broker follows it.
#
#   interop/controller/run.sh
#
# Needs Go, Java 17, Maven and the RocketMQ 5.2.0 jars in
# ${ROCKETMQ_LIB:-~/.cache/rocketd-bench/rocketmq-5.2.0} (.ci/run fetches
# them). KEEP=1 keeps the temporary dir.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
lib=${ROCKETMQ_LIB:-$HOME/.cache/rocketd-bench/rocketmq-5.2.0}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rocketd-controller.XXXXXX")
pids=()
cleanup() {
	for p in "${pids[@]}"; do stop_process "$p"; done
	finish_tmp "$tmp"
}
trap cleanup EXIT
# shellcheck source=../lib.sh
. "$root/interop/lib.sh"

ls "$lib"/rocketmq-broker-*.jar >/dev/null 2>&1 || { echo "no RocketMQ 5.2.0 jars in $lib" >&2; exit 1; }
t0=$(now_ms)
echo "== building rocketd"
build_rocketd "$root" "$tmp"
echo "== mqadmin 5.3.1 classpath"
if ! (cd "$root/interop/mqadmin" && mvn -B -q -P rmq5 dependency:build-classpath \
	-Dmdep.outputFile="$tmp/cp.txt" -Dmdep.includeScope=runtime) >"$tmp/mvn.log" 2>&1; then
	cat "$tmp/mvn.log" >&2
	exit 1
fi
mqadmin() {
	java -Drocketmq.client.logRoot="$tmp/mqlogs" -Duser.home="$tmp/mqhome" -cp "$(cat "$tmp/cp.txt")" \
		org.apache.rocketmq.tools.command.MQAdminStartup "$@" 2>&1 || true
}

# Ports: three raft transports, three controller ports, the NameServer, two
# brokers (free_port keeps listenPort+1, the HA port, and listenPort-2 free).
declare -a raft ctl
for i in 0 1 2; do raft[$i]=$(free_port); ctl[$i]=$(free_port); done
ns_port=$(free_port)
pa=$(free_port)
pb=$(free_port)
peers="n0-127.0.0.1:${raft[0]};n1-127.0.0.1:${raft[1]};n2-127.0.0.1:${raft[2]}"
ctl_addrs="127.0.0.1:${ctl[0]};127.0.0.1:${ctl[1]};127.0.0.1:${ctl[2]}"
declare -a ctl_pid
for i in 0 1 2; do
	cat >"$tmp/controller$i.conf" <<CONF
controllerDLegerGroup=interop
controllerDLegerPeers=$peers
controllerDLegerSelfId=n$i
controllerStorePath=$tmp/controller
listenPort=${ctl[$i]}
scanNotActiveBrokerInterval=1000
scanInactiveMasterInterval=1000
CONF
	"$tmp/bin/rocketd" controller -c "$tmp/controller$i.conf" >"$tmp/controller$i.log" 2>&1 &
	ctl_pid[$i]=$!
	pids+=("$!")
done
"$tmp/bin/rocketd" namesrv --port "$ns_port" --kv-config "$tmp/kv.json" >"$tmp/namesrv.log" 2>&1 &
pids+=("$!")

# java_broker NAME PORT starts a RocketMQ 5.2.0 broker of set "jb".
java_broker() {
	local name=$1 port=$2 dir="$tmp/$1"
	mkdir -p "$dir/home"
	cat >"$dir/broker.conf" <<CONF
brokerClusterName=JC
brokerName=jb
brokerIP1=127.0.0.1
namesrvAddr=127.0.0.1:$ns_port
listenPort=$port
haListenPort=$((port + 1))
enableControllerMode=true
controllerAddr=$ctl_addrs
storePathRootDir=$dir/store
storePathCommitLog=$dir/store/commitlog
mappedFileSizeCommitLog=67108864
timerWheelEnable=false
CONF
	java -Xms256m -Xmx512m -XX:MaxDirectMemorySize=512m --add-opens=java.base/java.nio=ALL-UNNAMED \
		--add-opens=java.base/sun.nio.ch=ALL-UNNAMED --add-opens=java.base/java.lang=ALL-UNNAMED \
		--add-opens=java.base/java.util=ALL-UNNAMED --add-exports=java.base/sun.nio.ch=ALL-UNNAMED \
		-Duser.home="$dir/home" -Drocketmq.home.dir="$dir/home" -cp "$lib/*" \
		org.apache.rocketmq.broker.BrokerStartup -c "$dir/broker.conf" >"$dir/stdout.log" 2>&1 &
	last_pid=$!
	pids+=("$last_pid")
}
broker_log() { cat "$tmp/$1/home/logs/rocketmqlogs/broker.log" 2>/dev/null || true; }
# log_count BROKER PATTERN: how many lines of its broker.log match.
log_count() { broker_log "$1" | grep -cE -- "$2" || true; }
# at_least N BROKER PATTERN
at_least() { [ "$(log_count "$2" "$3")" -ge "$1" ]; }
sss() { mqadmin getSyncStateSet -a "127.0.0.1:${ctl[1]}" -b jb; }
sss_has() { sss | grep -q "SyncStateSetNums	$1"; }
leader_of() { mqadmin getControllerMetaData -a "$1" | sed -n 's/^#ControllerLeaderId	n//p'; }

status=0
results=()
pass() { results+=("PASS  $1"); echo "== PASS $1"; }
failed() {
	results+=("FAIL  $1"); echo "== FAIL $1" >&2; status=1
	[ -n "${2:-}" ] && printf '%s\n' "$2" | tail -20 >&2
	return 0
}
# wait_for WHAT SECONDS CMD... polls CMD every 0.5 s.
wait_for() {
	local what=$1 secs=$2
	shift 2
	for _ in $(seq 1 $((secs * 2))); do
		if "$@" >/dev/null 2>&1; then return 0; fi
		sleep 0.5
	done
	echo "timed out after ${secs}s: $what" >&2
	return 1
}
# expect NAME PATTERN OUTPUT
expect() {
	if grep -qE -- "$2" <<<"$3"; then pass "$1"; else failed "$1" "$3"; fi
}

wait_for "a controller leader" 30 grep -q "controller: leader" "$tmp"/controller0.log "$tmp"/controller1.log "$tmp"/controller2.log

echo "== Java broker A"
java_broker a "$pa"
if wait_for "A becomes SYNC_MASTER" 120 at_least 1 a 'Change broker \[id:1\].* to SYNC_MASTER'; then
	pass "Java broker A registers and becomes SYNC_MASTER (id 1)"
else
	failed "Java broker A registers and becomes SYNC_MASTER" "$(broker_log a)"
fi
out=$(mqadmin getControllerMetaData -a "127.0.0.1:${ctl[0]}")
expect "mqadmin getControllerMetaData names the leader and 3 peers" "#ControllerLeaderAddress	127\.0\.0\.1:" "$out"
[ "$(grep -c '#Peer:' <<<"$out")" = 3 ] || failed "getControllerMetaData lists 3 peers" "$out"

echo "== Java broker B"
java_broker b "$pb"
pid_b=$last_pid
if wait_for "B becomes SLAVE" 120 at_least 1 b 'Change broker \[id:2\].* to SLAVE'; then
	pass "Java broker B registers and becomes SLAVE (id 2)"
else
	failed "Java broker B becomes SLAVE" "$(broker_log b)"
fi
if wait_for "SyncStateSet [1, 2]" 60 sss_has 2; then
	pass "the master adds B to the SyncStateSet (ALTER_SYNC_STATE_SET)"
else
	failed "SyncStateSet grows to 2" "$(sss)"
fi
out=$(sss)
expect "mqadmin getSyncStateSet: master 1, both in sync and alive" "MasterBrokerId	1" "$out"
out=$(mqadmin getBrokerEpoch -n "127.0.0.1:$ns_port" -b jb)
expect "mqadmin getBrokerEpoch" "EpochEntry\{epoch=1" "$out"
out=$(mqadmin getControllerConfig -a "127.0.0.1:${ctl[2]}")
expect "mqadmin getControllerConfig" "controllerDLegerSelfId +=  n2" "$out"

out=$(mqadmin updateControllerConfig -a "${ctl_addrs}" -k notifyBrokerRoleChanged -v true)
expect "mqadmin updateControllerConfig (every node)" "update controller config success" "$out"
out=$(mqadmin getControllerConfig -a "127.0.0.1:${ctl[0]}")
expect "the update is visible" "notifyBrokerRoleChanged +=  true" "$out"

out=$(mqadmin electMaster -a "127.0.0.1:${ctl[0]}" -b 2 -bn jb -c JC)
expect "mqadmin electMaster -b 2" "#BrokerMasterAddr	127\.0\.0\.1:$pb" "$out"
if wait_for "B becomes SYNC_MASTER" 60 at_least 1 b 'Change broker \[id:2\].* to SYNC_MASTER'; then
	pass "B takes SYNC_MASTER after electMaster"
else
	failed "B takes SYNC_MASTER after electMaster" "$(broker_log b)"
fi
wait_for "A back in the SyncStateSet" 60 sss_has 2 || true

echo "== kill -9 of the master (B)"
kill -9 "$pid_b"
t_kill=$(now_ms)
if wait_for "A becomes SYNC_MASTER again" 60 at_least 2 a 'Change broker \[id:1\].* to SYNC_MASTER'; then
	pass "A elected and SYNC_MASTER $(($(now_ms) - t_kill)) ms after kill -9 of B"
else
	failed "A elected after kill -9 of B" "$(cat "$tmp"/controller*.log | grep -v raft)"
fi

out=$(mqadmin cleanBrokerMetadata -a "127.0.0.1:${ctl[0]}" -bn jb -c JC -b 2)
expect "mqadmin cleanBrokerMetadata of the dead id 2" "success" "$out"
out=$(mqadmin cleanBrokerMetadata -a "127.0.0.1:${ctl[0]}" -bn jb -c JC -b 1)
expect "cleanBrokerMetadata of the live id 1 is refused" "still alive|CODE: 2009" "$out"

echo "== kill -9 of the controller leader"
followed=$(log_count a 'Update controller leader address to')
leader=$(leader_of "127.0.0.1:${ctl[0]}")
kill -9 "${ctl_pid[$leader]}"
other=$(((leader + 1) % 3))
new_leader() { local l; l=$(leader_of "127.0.0.1:${ctl[$other]}"); [ -n "$l" ] && [ "$l" != "$leader" ]; }
if wait_for "a new controller leader" 30 new_leader; then
	pass "another controller leads after kill -9 of leader n$leader"
else
	failed "new controller leader" "$(mqadmin getControllerMetaData -a "127.0.0.1:${ctl[$other]}")"
fi
out=$(mqadmin getSyncStateSet -a "127.0.0.1:${ctl[$other]}" -b jb)
expect "the new leader keeps the state (master 1, epoch 3)" "MasterEpoch	3" "$out"
if wait_for "A follows the new leader" 60 at_least $((followed + 1)) a 'Update controller leader address to'; then
	pass "Java broker A follows the new controller leader"
else
	failed "A follows the new controller leader" "$(broker_log a | grep -i controller | tail -5)"
fi

echo
printf '%s\n' "${results[@]}"
if [ "$status" != 0 ]; then
	for i in 0 1 2; do echo "--- controller$i (last 15 lines)" >&2; grep -v 'raft:' "$tmp/controller$i.log" | tail -15 >&2; done
fi
echo "controller interop: total $(($(now_ms) - t0)) ms, exit $status"
exit "$status"
