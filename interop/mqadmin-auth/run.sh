#!/usr/bin/env bash
# mqadmin auth check (issue 15): builds rocketd, starts `rocketd serve` with
# authenticationEnabled and authorizationEnabled on free ports, writes the
# SUPER user's credentials to $ROCKETMQ_HOME/conf/tools.yml (mqadmin 5.3
# signs every command with them) and runs mqadmin 5.3's user and ACL
# commands (commands.txt) through interop/mqadmin's MQAdminCheck, checking
# each command's output.
#
#   interop/mqadmin-auth/run.sh        (profile rmq5: the commands are 5.3's)
#
# Needs Go, Java 17 and Maven. KEEP=1 keeps the temporary dir.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
check="$root/interop/mqadmin"
profile=${1:-rmq5}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/rocketd-mqadmin-auth.XXXXXX")
report_dir=${REPORT_DIR:-$tmp}
rocketd_pid=""
cleanup() {
	stop_process "$rocketd_pid"
	finish_tmp "$tmp"
}
trap cleanup EXIT
# shellcheck source=../lib.sh
. "$root/interop/lib.sh"

echo "== building rocketd and rocketctl"
build_rocketd "$root" "$tmp"

ns_port=$(free_port)
broker_port=$(free_port)
while [ "$broker_port" = "$ns_port" ]; do broker_port=$(free_port); done
ns="127.0.0.1:$ns_port"
broker="127.0.0.1:$broker_port"
cat >"$tmp/broker.conf" <<CONF
authenticationEnabled=true
authorizationEnabled=true
initAuthenticationUser={"username":"mqadmin","password":"mqadmin-secret"}
innerClientAuthenticationCredentials={"accessKey":"inner","secretKey":"inner-secret"}
CONF
echo "== starting rocketd serve with authentication and authorization (namesrv $ns_port, broker $broker_port)"
"$tmp/bin/rocketd" serve -c "$tmp/broker.conf" --data "$tmp/data" --namesrv-port "$ns_port" --listen-port "$broker_port" >"$tmp/rocketd.log" 2>&1 &
rocketd_pid=$!
export ROCKETCTL_ACCESS_KEY=mqadmin ROCKETCTL_SECRET_KEY=mqadmin-secret
wait_registered "$rocketd_pid" "$tmp/rocketd.log" "$broker_port" "$tmp/bin/rocketctl" -n "$ns" || exit 1

mkdir -p "$tmp/rocketmq-home/conf"
printf '<configuration><root level="WARN"/></configuration>\n' >"$tmp/rocketmq-home/conf/logback_tools.xml"
printf 'accessKey: mqadmin\nsecretKey: mqadmin-secret\n' >"$tmp/rocketmq-home/conf/tools.yml"

echo "== $profile: building the check"
if ! (cd "$check" && mvn -B -q -P "$profile" compile dependency:build-classpath \
	-Dmdep.outputFile="$tmp/cp.txt" -Dmdep.includeScope=runtime) >"$tmp/mvn.log" 2>&1; then
	cat "$tmp/mvn.log" >&2
	echo "== $profile: Maven build failed" >&2
	exit 1
fi
status=0
if (cd "$tmp" && java -Djava.security.manager=allow -Drocketmq.client.logRoot="$tmp/logs" -Drocketmq.log.root="$tmp/logs" \
	-Drocketmq.client.logLevel=WARN -Duser.home="$tmp/home" -Drocketmq.home.dir="$tmp/rocketmq-home" \
	-cp "$check/target/$profile/classes:$(cat "$tmp/cp.txt")" \
	io.rocketd.interop.MQAdminCheck "$ns" "$broker" "$here/commands.txt" "$profile" "$report_dir/mqadmin-auth-$profile.md"); then
	echo "== $profile: PASS"
else
	echo "== $profile: FAIL" >&2
	status=1
	tail -30 "$tmp/rocketd.log" >&2
fi
echo "mqadmin-auth: exit $status; table in $report_dir"
exit "$status"
