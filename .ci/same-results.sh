#!/usr/bin/env bash
# Before/after check for a speed change: replays a matrix of settings with two builds and
# says which outputs differ (report JSON and per-request lines; wall_time_ms aside).
#   .ci/same-results.sh OLD_BINARY NEW_BINARY
# The matrix covers what the engine's and router's fast paths touch: the seed point, the
# default, 64 and 1,024 workers, round-robin, temperature 0.5, the conversation trace, async
# scheduling, the dynosim reference, caches small enough to evict and to preempt, a ×3 trace
# and 16-token blocks. Exit status 1 when anything differs. The "simulator" field is the build's
# identity (docs/trust.md, "Build identity"), not a result: it changes whenever the simulator's
# code does, so it is masked like the wall time.
set -euo pipefail
old=$1 new=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cases=(
	"seed|--set overlap_score_credit=1 --set prefill_load_scale=1"
	"default|"
	"w64|--set replicas=64"
	"w1024|--set replicas=1024 --requests 4000"
	"rr|--set router_mode=round_robin"
	"t05|--set router_temperature=0.5"
	"conv|--trace builtin:conversation"
	"async|--set async_scheduling=true"
	"dynosim|--set timing_reference=dynosim"
	"evict|--set num_gpu_blocks=3000"
	"preempt|--set num_gpu_blocks=1500 --trace builtin:conversation"
	"x3|--trace builtin:toolagent:x3 --set prefill_load_scale=32"
	"block16|--set block_size=16 --requests 3000"
)
status=0
for c in "${cases[@]}"; do
	name=${c%%|*} args=${c#*|}
	for b in old new; do
		bin=$old
		[ $b = new ] && bin=$new
		# shellcheck disable=SC2086
		"$bin" replay --format json --per-request "$dir/$name.$b.jsonl" $args |
			sed -e 's/"wall_time_ms": *[0-9.e+-]*/"wall_time_ms": 0/' -e 's/"simulator": *"sim-[0-9a-f]*"/"simulator": "sim-…"/' >"$dir/$name.$b.json"
	done
	if cmp -s "$dir/$name.old.json" "$dir/$name.new.json" && cmp -s "$dir/$name.old.jsonl" "$dir/$name.new.jsonl"; then
		echo "same     $name"
	else
		echo "DIFFERS  $name"
		status=1
	fi
done
exit $status
