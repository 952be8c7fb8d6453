#!/usr/bin/env bash
# Distributed sweep end to end: a real nats-server with JetStream on a loopback port, two
# `routerlab worker` processes and `routerlab sweep --nats`; its report, evaluations and
# summary must equal the local sweep's (wall times aside), and both workers must have worked.
set -euo pipefail
cd "$(dirname "$0")/.."
NATS_SERVER_VERSION=v2.15.3 # the version go.mod pins for the tests' embedded server

tmp=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT

GOBIN="$tmp/bin" go install "github.com/nats-io/nats-server/v2@$NATS_SERVER_VERSION"
go build -o "$tmp/bin/routerlab" .

# -p -1: a free port, written to the ports file.
"$tmp/bin/nats-server" -js -a 127.0.0.1 -p -1 -sd "$tmp/js" --ports_file_dir "$tmp" >"$tmp/nats.log" 2>&1 &
pids+=($!)
url=""
for _ in $(seq 100); do
	url=$(grep -ho 'nats://[^"]*' "$tmp"/*.ports 2>/dev/null | head -n 1 || true)
	[ -n "$url" ] && break
	sleep 0.1
done
[ -n "$url" ] || { echo "nats-server did not start:"; cat "$tmp/nats.log"; exit 1; }

for w in a b; do
	"$tmp/bin/routerlab" worker --nats "$url" --name "$w" >"$tmp/worker-$w.log" 2>&1 &
	pids+=($!)
done

args=(--requests 1000 --set validate.requests=8000)
"$tmp/bin/routerlab" sweep "${args[@]}" --nats "$url" --out "$tmp/nats" >/dev/null 2>"$tmp/sweep-nats.log"
"$tmp/bin/routerlab" sweep "${args[@]}" --out "$tmp/local" >/dev/null 2>"$tmp/sweep-local.log"

for f in report.md evaluations.csv; do
	cmp "$tmp/local/$f" "$tmp/nats/$f"
done
wall='s/"wall_time_ms": [0-9.e+-]+/"wall_time_ms": 0/g'
cmp <(sed -E "$wall" "$tmp/local/summary.json") <(sed -E "$wall" "$tmp/nats/summary.json")
grep -q "2 workers connected" "$tmp/sweep-nats.log" || { echo "the sweep never saw both workers:"; cat "$tmp/sweep-nats.log"; exit 1; }
for w in a b; do
	grep -q " done in " "$tmp/worker-$w.log" || { echo "worker $w ran no task:"; cat "$tmp/worker-$w.log"; exit 1; }
done
echo "distributed sweep on $url with 2 workers: outputs equal the local sweep's"
