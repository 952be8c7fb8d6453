#!/usr/bin/env bash
# Distributed sweep end to end: a real nats-server with JetStream on a loopback port, two
# `routerlab worker` processes and `routerlab sweep --nats`; its report, evaluations and
# summary must equal the local sweep's (wall times aside), and both workers must have worked.
# A third worker is built from a copy of the source with one constant changed (step times
# 5 % longer): the sweep must refuse it by its simulator digest, name it in the status line
# and finish on the other two, and `--resume` with that build must be refused naming the
# digest. The NATS URL carries a password that must never be printed.
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
# The skewed build: the same source with every step priced 5 % dearer.
mkdir "$tmp/skew"
tar --exclude=./.git --exclude=./runs -cf - . | tar -xf - -C "$tmp/skew"
sed -i 's/return int64(math.Ceil(us))$/return int64(math.Ceil(us * 1.05))/' "$tmp/skew/model/worker.go"
grep -q 'us \* 1.05' "$tmp/skew/model/worker.go" || { echo "nats-e2e: the skew edit no longer applies to model/worker.go"; exit 1; }
(cd "$tmp/skew" && go build -o "$tmp/bin/routerlab-skew" .)
good=$("$tmp/bin/routerlab" --version | awk '/^simulator/ {print $2}')
skew=$("$tmp/bin/routerlab-skew" --version | awk '/^simulator/ {print $2}')
echo "simulator digests: this build $good, the skewed build $skew"
[ -n "$good" ] && [ -n "$skew" ] && [ "$good" != "$skew" ] || { echo "nats-e2e: the one-constant change did not change the simulator digest"; exit 1; }

# -p -1: a free port, written to the ports file. A user with a password: it must not leak.
secret=s3cretPW
"$tmp/bin/nats-server" -js -a 127.0.0.1 -p -1 -sd "$tmp/js" --ports_file_dir "$tmp" --user alice --pass "$secret" >"$tmp/nats.log" 2>&1 &
pids+=($!)
url=""
for _ in $(seq 100); do
	url=$(grep -ho 'nats://[^"]*' "$tmp"/*.ports 2>/dev/null | head -n 1 || true)
	[ -n "$url" ] && break
	sleep 0.1
done
[ -n "$url" ] || { echo "nats-server did not start:"; cat "$tmp/nats.log"; exit 1; }
url="nats://alice:$secret@${url#nats://}"

for w in a b; do
	"$tmp/bin/routerlab" worker --nats "$url" --name "$w" >"$tmp/worker-$w.log" 2>&1 &
	pids+=($!)
done
"$tmp/bin/routerlab-skew" worker --nats "$url" --name skewed >"$tmp/worker-skewed.log" 2>&1 &
pids+=($!)

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
grep -q "refused 1 built from other code: skewed ($skew); this sweep's simulator is $good" "$tmp/sweep-nats.log" ||
	{ echo "the sweep's status never named the skewed worker as refused:"; cat "$tmp/sweep-nats.log"; exit 1; }
if grep -q " done in " "$tmp/worker-skewed.log"; then
	echo "the skewed worker ran a task:"; cat "$tmp/worker-skewed.log"; exit 1
fi

# --resume with the skewed build is refused, naming both digests.
if "$tmp/bin/routerlab-skew" sweep "${args[@]}" --out "$tmp/nats" --resume >/dev/null 2>"$tmp/resume-skew.log"; then
	echo "the skewed build resumed the sweep:"; cat "$tmp/resume-skew.log"; exit 1
fi
grep -q "simulator: $good → $skew" "$tmp/resume-skew.log" || { echo "the refused resume does not name the digests:"; cat "$tmp/resume-skew.log"; exit 1; }

if grep -l "$secret" "$tmp"/sweep-*.log "$tmp"/worker-*.log "$tmp/resume-skew.log"; then
	echo "the NATS password was printed (files above)"; exit 1
fi
echo "distributed sweep with 2 workers and 1 skewed worker (refused by its simulator digest): outputs equal the local sweep's; the skewed build's --resume refused; no password printed"
