#!/usr/bin/env bash
# The audit's cost (docs/trust.md, Benchmarks): one sweep (1,000 search requests, validation
# on 8,000) on a real nats-server configured by examples/nats-server.conf with two local
# workers, three times at each --nats-audit of 0, 0.05 and 1; prints the sweep's wall time,
# its own CPU time (the local replays run there) and its last status line.
set -euo pipefail
cd "$(dirname "$0")/.."
source .ci/nats-server.sh
nats_tools
nats_start
for w in a b; do
	ROUTERLAB_NATS_NKEY="$tmp/worker.nk" "$tmp/bin/routerlab" worker --nats "$url" --name "$w" >"$tmp/worker-$w.log" 2>&1 &
	pids+=($!)
done
for rep in 1 2 3; do
	for audit in 0 0.05 1; do
		out="$tmp/sweep-$audit-$rep"
		/usr/bin/time -f "audit $audit, run $rep: wall %e s, sweep CPU user %U s + system %S s" \
			"$tmp/bin/routerlab" sweep --requests 1000 --set validate.requests=8000 --nats "$url" --nats-nkey "$tmp/coordinator.nk" \
			--nats-audit "$audit" --out "$out" >/dev/null 2>"$out.log" || { cat "$out.log"; exit 1; }
		tail -n 1 "$out.log"
		grep "^nats: [0-9]* workers connected" "$out.log" | tail -n 1
	done
done
