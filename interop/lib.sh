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
