#!/usr/bin/env bash
# The audit's cost (docs/trust.md, Benchmarks): one sweep (1,000 search requests, validation
# on 8,000) on a real nats-server configured by examples/nats-server.conf with two local
# workers, three times at each --nats-audit of 0, 0.05 and 1; prints the sweep's wall time,
# its own CPU time (the local replays run there) and its last status line.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT
go build -o "$tmp/nats-server" github.com/nats-io/nats-server/v2
go build -o "$tmp/nk" github.com/nats-io/nkeys/nk
go build -o "$tmp/routerlab" .
for role in coordinator worker; do "$tmp/nk" -gen user >"$tmp/$role.nk"; done
export ROUTERLAB_COORDINATOR_NKEY ROUTERLAB_WORKER_NKEY
ROUTERLAB_COORDINATOR_NKEY=$("$tmp/nk" -inkey "$tmp/coordinator.nk" -pubout)
ROUTERLAB_WORKER_NKEY=$("$tmp/nk" -inkey "$tmp/worker.nk" -pubout)
"$tmp/nats-server" -c examples/nats-server.conf -a 127.0.0.1 -p -1 -sd "$tmp/js" --ports_file_dir "$tmp" >"$tmp/nats.log" 2>&1 &
pids+=($!)
url=""
for _ in $(seq 100); do
	url=$(grep -ho 'nats://[^"]*' "$tmp"/*.ports 2>/dev/null | head -n 1 || true)
	[ -n "$url" ] && break
	sleep 0.1
done
[ -n "$url" ] || { echo "nats-server did not start:"; cat "$tmp/nats.log"; exit 1; }
for w in a b; do
	ROUTERLAB_NATS_NKEY="$tmp/worker.nk" "$tmp/routerlab" worker --nats "$url" --name "$w" >"$tmp/worker-$w.log" 2>&1 &
	pids+=($!)
done
for rep in 1 2 3; do
	for audit in 0 0.05 1; do
		out="$tmp/sweep-$audit-$rep"
		/usr/bin/time -f "audit $audit, run $rep: wall %e s, sweep CPU user %U s + system %S s" \
			"$tmp/routerlab" sweep --requests 1000 --set validate.requests=8000 --nats "$url" --nats-nkey "$tmp/coordinator.nk" \
			--nats-audit "$audit" --out "$out" >/dev/null 2>"$out.log" || { cat "$out.log"; exit 1; }
		tail -n 1 "$out.log"
		grep "^nats: [0-9]* workers connected" "$out.log" | tail -n 1
	done
done
