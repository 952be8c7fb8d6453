#!/usr/bin/env bash
# Distributed sweep end to end: a real nats-server with JetStream, configured by
# examples/nats-server.conf (NKey users, per-role subject permissions), two honest
# `routerlab worker` processes and `routerlab sweep --nats`; its report, evaluations and
# summary must equal the local sweep's (wall times aside), and both workers must have worked.
# Beside them, with the workers' credentials (stolen, for two of them):
#   - a worker built from a copy of the source with one constant changed (step times 5 %
#     longer): the sweep must refuse it by its simulator digest, name it in the status line
#     and finish on the others, and `--resume` with that build must be refused naming the
#     digest;
#   - a forger (a build whose worker reports every mean TTFT 2 % higher, simulator digest
#     unchanged): the audit must catch it, name it, and the sweep must still end
#     byte-identical to the local one;
#   - a failing worker (a build that answers every task with an error): its tasks must be
#     retried on another worker.
# The forger without credentials must not even connect. No NKey seed may be printed.
set -euo pipefail
cd "$(dirname "$0")/.."

source .ci/nats-server.sh
nats_tools
# variant NAME FILE SED CHECK: a build from a copy of the source with one edit.
variant() {
	mkdir "$tmp/$1"
	tar --exclude=./.git --exclude=./runs -cf - . | tar -xf - -C "$tmp/$1"
	sed -i "$3" "$tmp/$1/$2"
	grep -q "$4" "$tmp/$1/$2" || { echo "nats-e2e: the $1 edit no longer applies to $2"; exit 1; }
	(cd "$tmp/$1" && go build -o "$tmp/bin/routerlab-$1" .)
}
# The skewed build: the same source with every step priced 5 % dearer.
variant skew model/worker.go 's/return int64(math.Ceil(us))$/return int64(math.Ceil(us * 1.05))/' 'us \* 1.05'
# The forger: its worker reports each replay's mean TTFT 2 % higher (simulator untouched).
variant forger natsweep/worker.go 's/^\tres.Report = rep$/\trep.Summary.MeanTTFTMS *= 1.02\n\tres.Report = rep/' 'MeanTTFTMS \*= 1.02'
# The failing worker: every task answered with an error.
variant failing natsweep/worker.go 's/^\tres.Report = rep$/\t_ = rep\n\tres.Error = "injected failure"\n\treturn res/' 'injected failure'
good=$("$tmp/bin/routerlab" --version | awk '/^simulator/ {print $2}')
skew=$("$tmp/bin/routerlab-skew" --version | awk '/^simulator/ {print $2}')
echo "simulator digests: this build $good, the skewed build $skew"
[ -n "$good" ] && [ -n "$skew" ] && [ "$good" != "$skew" ] || { echo "nats-e2e: the one-constant change did not change the simulator digest"; exit 1; }

# One NKey per role; the server knows only their public halves.
nats_start

# A stranger on the workers' subject without credentials gets nothing: not even connected.
if timeout 20 "$tmp/bin/routerlab-forger" worker --nats "$url" --name stranger >"$tmp/worker-stranger.log" 2>&1; then
	echo "a worker without credentials ran:"; cat "$tmp/worker-stranger.log"; exit 1
fi
grep -q "Authorization Violation" "$tmp/worker-stranger.log" || { echo "the worker without credentials was not refused by the server:"; cat "$tmp/worker-stranger.log"; exit 1; }

# The honest workers take the key by flag, as README shows; the stolen ones by the variable.
for w in a b; do
	"$tmp/bin/routerlab" worker --nats "$url" --nats-nkey "$tmp/worker.nk" --name "$w" >"$tmp/worker-$w.log" 2>&1 &
	pids+=($!)
done
for w in skew forger failing; do
	ROUTERLAB_NATS_NKEY="$tmp/worker.nk" "$tmp/bin/routerlab-$w" worker --nats "$url" --name "$w" >"$tmp/worker-$w.log" 2>&1 &
	pids+=($!)
done

# Each worker computes its build's simulator digest before it connects (seconds for a new
# build, five at once on two cores): the sweep starts once all are on the server.
for w in a b skew forger failing; do
	for _ in $(seq 600); do
		grep -q "waiting for a sweep\|serving" "$tmp/worker-$w.log" && break
		sleep 0.2
	done
	grep -q "waiting for a sweep\|serving" "$tmp/worker-$w.log" || { echo "worker $w never connected:"; cat "$tmp/worker-$w.log"; exit 1; }
done
args=(--requests 1000 --set validate.requests=8000)
"$tmp/bin/routerlab" sweep "${args[@]}" --nats "$url" --nats-nkey "$tmp/coordinator.nk" --out "$tmp/nats" >/dev/null 2>"$tmp/sweep-nats.log"
"$tmp/bin/routerlab" sweep "${args[@]}" --out "$tmp/local" >/dev/null 2>"$tmp/sweep-local.log"

for f in report.md evaluations.csv; do
	cmp "$tmp/local/$f" "$tmp/nats/$f"
done
wall='s/"wall_time_ms": [0-9.e+-]+/"wall_time_ms": 0/g'
cmp <(sed -E "$wall" "$tmp/local/summary.json") <(sed -E "$wall" "$tmp/nats/summary.json")
grep -q "4 workers connected" "$tmp/sweep-nats.log" || { echo "the sweep never saw the 4 workers of its simulator:"; cat "$tmp/sweep-nats.log"; exit 1; }
for w in a b forger; do
	grep -q " done in " "$tmp/worker-$w.log" || { echo "worker $w ran no task:"; cat "$tmp/worker-$w.log"; exit 1; }
done
grep -q "refused 1 built from other code: skew ($skew); this sweep's simulator is $good" "$tmp/sweep-nats.log" ||
	{ echo "the sweep's status never named the skewed worker as refused:"; cat "$tmp/sweep-nats.log"; exit 1; }
if grep -q " done in " "$tmp/worker-skew.log"; then
	echo "the skewed worker ran a task:"; cat "$tmp/worker-skew.log"; exit 1
fi
# The forger is caught at its first result and named; the files above equal the local ones.
grep -q "nats: worker forger refused: its result for task [0-9a-f]* differs from the local replay (mean_ttft_ms " "$tmp/sweep-nats.log" &&
	grep -q "refused 1 whose result differed from the local replay: forger" "$tmp/sweep-nats.log" ||
	{ echo "the audit never refused the forger:"; cat "$tmp/sweep-nats.log"; exit 1; }
# The failing worker's tasks went to others.
grep -q "task [0-9a-f]* failed: injected failure" "$tmp/worker-failing.log" || { echo "the failing worker failed no task:"; cat "$tmp/worker-failing.log"; exit 1; }
grep -q "nats: worker failing failed task [0-9a-f]* (injected failure); publishing it for another worker" "$tmp/sweep-nats.log" ||
	{ echo "the sweep never retried the failing worker's task:"; cat "$tmp/sweep-nats.log"; exit 1; }

# --resume with the skewed build is refused, naming both digests.
if "$tmp/bin/routerlab-skew" sweep "${args[@]}" --out "$tmp/nats" --resume >/dev/null 2>"$tmp/resume-skew.log"; then
	echo "the skewed build resumed the sweep:"; cat "$tmp/resume-skew.log"; exit 1
fi
grep -q "simulator: $good → $skew" "$tmp/resume-skew.log" || { echo "the refused resume does not name the digests:"; cat "$tmp/resume-skew.log"; exit 1; }

for role in coordinator worker; do
	seed=$(cat "$tmp/$role.nk")
	if grep -l "$seed" "$tmp"/sweep-*.log "$tmp"/worker-*.log "$tmp/resume-skew.log" "$tmp/nats.log"; then
		echo "the $role's NKey seed was printed (files above)"; exit 1
	fi
done
echo "distributed sweep on an NKey-authenticated server: a client without credentials refused; 2 honest workers,"
echo "1 skewed (refused by its simulator digest), 1 forger (caught by the audit), 1 failing (its tasks retried);"
echo "outputs equal the local sweep's; the skewed build's --resume refused; no seed printed. The sweep said:"
grep -m 1 "worker forger refused" "$tmp/sweep-nats.log"
grep "^nats: [0-9]* workers connected" "$tmp/sweep-nats.log" | tail -n 1
