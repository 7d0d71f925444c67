# Shell helpers shared by the interop scripts (sourced, not run).

now_ms() { date +%s%3N; }

# free_port prints a TCP port nobody listens on, nor on its neighbours
# (brokers use listenPort+1 for HA, listenPort-2 as VIP). Ports come from
# below the kernel's ephemeral range (32768+), which outgoing connections use.
free_port() {
	local p
	for _ in $(seq 1 100); do
		p=$((20000 + RANDOM % 12000))
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null &&
			! (exec 3<>"/dev/tcp/127.0.0.1/$((p + 1))") 2>/dev/null &&
			! (exec 3<>"/dev/tcp/127.0.0.1/$((p - 2))") 2>/dev/null; then
			echo "$p"
			return 0
		fi
	done
	echo "no free port found" >&2
	return 1
}

# build_rocketd ROOT DIR builds rocketd and rocketctl from ROOT into DIR/bin.
build_rocketd() {
	(cd "$1" && go build -o "$2/bin/rocketd" ./cmd/rocketd && go build -o "$2/bin/rocketctl" ./cmd/rocketctl)
}

# stop_process PID stops a process with SIGTERM, waits up to 10 s for it,
# then SIGKILLs it; nothing happens for an empty or finished PID.
stop_process() {
	local pid=$1
	if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
		kill -TERM "$pid" 2>/dev/null || true
		for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$pid" 2>/dev/null || true
	fi
}

# finish_tmp DIR removes a script's temporary dir, or keeps it with KEEP=1.
finish_tmp() {
	if [ "${KEEP:-}" = 1 ]; then echo "kept $1"; else rm -rf "$1"; fi
}

# wait_registered PID LOG PORT CTL... waits until rocketd (process PID)
# has registered the broker listening on PORT with its NameServer, as
# `CTL... cluster list` shows; if it exits or 30 s pass, it prints LOG's
# tail and returns 1.
wait_registered() {
	local pid=$1 log=$2 port=$3
	shift 3
	for _ in $(seq 1 300); do
		kill -0 "$pid" 2>/dev/null || break
		if "$@" --timeout 1s cluster list 2>/dev/null | grep -q ":$port"; then return 0; fi
		sleep 0.1
	done
	echo "rocketd did not come up; its log:" >&2
	tail -50 "$log" >&2
	return 1
}
