# Sourced by nats-e2e.sh and nats-audit-bench.sh (from the repository's root): $tmp, a
# directory removed at exit with the processes listed in pids; nats_tools builds
# nats-server and nk (the versions go.mod pins) and routerlab into $tmp/bin; nats_start
# makes one NKey per role ($tmp/coordinator.nk, $tmp/worker.nk) and starts nats-server with
# examples/nats-server.conf on a free loopback port, setting $url.
tmp=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT

nats_tools() {
	go build -o "$tmp/bin/nats-server" github.com/nats-io/nats-server/v2
	go build -o "$tmp/bin/nk" github.com/nats-io/nkeys/nk
	go build -o "$tmp/bin/routerlab" .
}

nats_start() {
	for role in coordinator worker; do
		"$tmp/bin/nk" -gen user >"$tmp/$role.nk"
		chmod 600 "$tmp/$role.nk"
	done
	export ROUTERLAB_COORDINATOR_NKEY ROUTERLAB_WORKER_NKEY
	ROUTERLAB_COORDINATOR_NKEY=$("$tmp/bin/nk" -inkey "$tmp/coordinator.nk" -pubout)
	ROUTERLAB_WORKER_NKEY=$("$tmp/bin/nk" -inkey "$tmp/worker.nk" -pubout)
	# -p -1: a free port, written to the ports file.
	"$tmp/bin/nats-server" -c examples/nats-server.conf -a 127.0.0.1 -p -1 -sd "$tmp/js" --ports_file_dir "$tmp" >"$tmp/nats.log" 2>&1 &
	pids+=($!)
	url=""
	for _ in $(seq 100); do
		url=$(grep -ho 'nats://[^"]*' "$tmp"/*.ports 2>/dev/null | head -n 1 || true)
		[ -n "$url" ] && break
		sleep 0.1
	done
	[ -n "$url" ] || { echo "nats-server did not start:"; cat "$tmp/nats.log"; exit 1; }
}
