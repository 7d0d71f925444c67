#!/usr/bin/env bash
# Java interop over TLS: builds rocketd and rocketctl, makes a throwaway CA
# with openssl (server key encrypted with a password, PBES2), starts
# `rocketd serve` enforcing TLS with client certificates required and
# verified, and runs TlsCheck (src/) with each client version: TLS
# producer and consumer served, plaintext and an untrusted client
# certificate refused. Also checks that the key password appears nowhere
# in rocketd's log.
#
#   interop/java/tls.sh              both client versions
#   interop/java/tls.sh rmq5         one profile
#
# Needs Go, Java 17, Maven and openssl. KEEP=1 keeps the temporary dir.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
profiles=("$@")
[ ${#profiles[@]} -gt 0 ] || profiles=(rmq4 rmq5)

tmp=$(mktemp -d "${TMPDIR:-/tmp}/rocketd-java-tls.XXXXXX")
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

echo "== making certificates"
c="$tmp/certs"
mkdir -p "$c"
pw="interop-$$-$RANDOM"
ossl() { openssl "$@" >/dev/null 2>&1; }
issue() { # issue NAME CA_NAME
	ossl req -newkey rsa:2048 -nodes -keyout "$c/$1.key" -out "$c/$1.csr" -subj "/CN=$1"
	ossl x509 -req -in "$c/$1.csr" -CA "$c/$2.pem" -CAkey "$c/$2.key" -CAcreateserial -out "$c/$1.pem" -days 2
}
ossl req -x509 -newkey rsa:2048 -nodes -keyout "$c/ca.key" -out "$c/ca.pem" -days 2 -subj "/CN=rocketd interop CA"
ossl req -x509 -newkey rsa:2048 -nodes -keyout "$c/rogue-ca.key" -out "$c/rogue-ca.pem" -days 2 -subj "/CN=rogue CA"
issue server ca
issue client ca
issue rogue rogue-ca
ossl pkcs8 -topk8 -v2 aes-256-cbc -in "$c/server.key" -out "$c/server-enc.key" -passout "pass:$pw"
printf 'tls.client.certPath=%s\ntls.client.keyPath=%s\n' "$c/rogue.pem" "$c/rogue.key" >"$c/rogue.properties"

ns_port=$(free_port)
broker_port=$(free_port)
while [ "$broker_port" = "$ns_port" ]; do broker_port=$(free_port); done
export NAMESRV_ADDR="127.0.0.1:$ns_port"
ctl=("$tmp/bin/rocketctl" --tls-ca "$c/ca.pem" --tls-cert "$c/client.pem" --tls-key "$c/client.key")

cat >"$tmp/broker.conf" <<CONF
tls.server.mode=enforcing
tls.test.mode.enable=false
tls.server.certPath=$c/server.pem
tls.server.keyPath=$c/server-enc.key
tls.server.keyPassword=$pw
tls.server.need.client.auth=require
tls.server.authClient=true
tls.server.trustCertPath=$c/ca.pem
tls.client.certPath=$c/client.pem
tls.client.keyPath=$c/client.key
tls.client.authServer=true
tls.client.trustCertPath=$c/ca.pem
CONF

echo "== starting rocketd serve with TLS enforced (namesrv $ns_port, broker $broker_port)"
"$tmp/bin/rocketd" serve --log-level debug --data "$tmp/data" --namesrv-port "$ns_port" --listen-port "$broker_port" \
	--grpc-port "$(free_port)" -c "$tmp/broker.conf" >"$tmp/rocketd.log" 2>&1 &
rocketd_pid=$!
wait_registered "$rocketd_pid" "$tmp/rocketd.log" "$broker_port" "${ctl[@]}" || exit 1
head -1 "$tmp/rocketd.log"

status=0
for profile in "${profiles[@]}"; do
	echo "== $profile: building the checks"
	if ! (cd "$here" && mvn -B -q -P "$profile" compile dependency:build-classpath \
		-Dmdep.outputFile="$tmp/cp-$profile.txt" -Dmdep.includeScope=runtime) >"$tmp/mvn-$profile.log" 2>&1; then
		cat "$tmp/mvn-$profile.log" >&2
		status=1
		continue
	fi
	topic="TlsCheck_${profile}_$$"
	"${ctl[@]}" topic create -t "$topic" -r 2 -w 2 >/dev/null
	echo "== $profile: TlsCheck on $topic"
	if java -Drocketmq.client.logRoot="$tmp/client-logs-$profile" -Drocketmq.log.root="$tmp/client-logs-$profile" \
		-Drocketmq.client.logLevel=WARN \
		-Dtls.enable=true -Dtls.test.mode.enable=false -Dtls.client.authServer=true \
		-Dtls.client.trustCertPath="$c/ca.pem" -Dtls.client.certPath="$c/client.pem" -Dtls.client.keyPath="$c/client.key" \
		-Dtls.config.file="$tmp/no-such-tls.properties" -Drocketd.tls.rogueConfigFile="$c/rogue.properties" \
		-cp "$here/target/$profile/classes:$(cat "$tmp/cp-$profile.txt")" \
		io.rocketd.interop.TlsCheck "$NAMESRV_ADDR" "$topic" "127.0.0.1:$broker_port"; then
		echo "== $profile: TlsCheck PASS"
	else
		echo "== $profile: TlsCheck FAIL" >&2
		status=1
	fi
done

if grep -q -- "$pw" "$tmp/rocketd.log"; then
	echo "FAIL: the key password is in rocketd's log" >&2
	status=1
fi
if [ "$status" != 0 ]; then
	echo "rocketd log (last 50 lines):" >&2
	tail -50 "$tmp/rocketd.log" >&2
fi
echo "java tls interop: exit $status"
exit "$status"
