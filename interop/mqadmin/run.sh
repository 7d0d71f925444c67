#!/usr/bin/env bash
# mqadmin check (issue 14): builds rocketd, starts `rocketd serve` on free
# ports with a temporary data dir, and runs Apache RocketMQ's mqadmin
# (rocketmq-tools 4.9.8 and 5.x, from Maven Central) command by command in
# one JVM per version (MQAdminCheck), checking each command's output against
# commands.txt. Writes the command table of each version to
# $REPORT_DIR/mqadmin-<profile>.md (default: the temp dir, printed at the end).
#
#   interop/mqadmin/run.sh              both tool versions
#   interop/mqadmin/run.sh rmq5         one profile
#
# Needs Go, Java 17 and Maven. KEEP=1 keeps the temporary dir.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
profiles=("$@")
[ ${#profiles[@]} -gt 0 ] || profiles=(rmq4 rmq5)

tmp=$(mktemp -d "${TMPDIR:-/tmp}/rocketd-mqadmin.XXXXXX")
report_dir=${REPORT_DIR:-$tmp}
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
ns="127.0.0.1:$ns_port"
broker="127.0.0.1:$broker_port"
echo "== starting rocketd serve (namesrv $ns_port, broker $broker_port)"
"$tmp/bin/rocketd" serve --data "$tmp/data" --namesrv-port "$ns_port" --listen-port "$broker_port" \
	--grpc-port "$(free_port)" >"$tmp/rocketd.log" 2>&1 &
rocketd_pid=$!
wait_registered "$rocketd_pid" "$tmp/rocketd.log" "$broker_port" "$tmp/bin/rocketctl" -n "$ns" || exit 1

# mqadmin 4.9.x configures its logging from $ROCKETMQ_HOME/conf/logback_tools.xml.
mkdir -p "$tmp/rocketmq-home/conf"
printf '<configuration><root level="WARN"/></configuration>\n' >"$tmp/rocketmq-home/conf/logback_tools.xml"

status=0
for profile in "${profiles[@]}"; do
	t1=$(now_ms)
	echo "== $profile: building the check"
	if ! (cd "$here" && mvn -B -q -P "$profile" compile dependency:build-classpath \
		-Dmdep.outputFile="$tmp/cp-$profile.txt" -Dmdep.includeScope=runtime) >"$tmp/mvn-$profile.log" 2>&1; then
		cat "$tmp/mvn-$profile.log" >&2
		echo "== $profile: Maven build failed" >&2
		status=1
		continue
	fi
	tools=$(tr ':' '\n' <"$tmp/cp-$profile.txt" | grep -o 'rocketmq-tools-[0-9][^/]*\.jar' | head -1)
	echo "== $profile: mqadmin from $tools"
	# consumerStatus writes files into the working directory, updateStaticTopic
	# into java.io.tmpdir: both the temp dir.
	if (cd "$tmp" && java -Djava.security.manager=allow -Drocketmq.client.logRoot="$tmp/logs-$profile" -Drocketmq.log.root="$tmp/logs-$profile" \
		-Drocketmq.client.logLevel=WARN -Djava.io.tmpdir="$tmp" -Duser.home="$tmp/home-$profile" -Drocketmq.home.dir="$tmp/rocketmq-home" \
		-cp "$here/target/$profile/classes:$(cat "$tmp/cp-$profile.txt")" \
		io.rocketd.interop.MQAdminCheck "$ns" "$broker" "$here/commands.txt" "$profile" "$report_dir/mqadmin-$profile.md"); then
		echo "== $profile: PASS in $(( $(now_ms) - t1 )) ms"
	else
		echo "== $profile: FAIL in $(( $(now_ms) - t1 )) ms" >&2
		status=1
	fi
done
if [ "$status" != 0 ]; then
	echo "rocketd log (last 30 lines):" >&2
	tail -30 "$tmp/rocketd.log" >&2
fi
echo "mqadmin: total $(( $(now_ms) - t0 )) ms, exit $status; tables in $report_dir"
exit "$status"
