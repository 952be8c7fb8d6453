#!/usr/bin/env bash
# End-to-end test of the explorer in a real terminal: build routerlab, start it in tmux on the
# embedded defaults, wait for the first result, press `m`, check from the captured screen
# that the router mode and the prefix-reuse figure changed, then quit with `q` and check the
# exit status is 0.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v tmux >/dev/null; then
	apt-get install -y tmux >/dev/null 2>&1 || { apt-get update >/dev/null && apt-get install -y tmux >/dev/null; }
fi

work=$(mktemp -d)
sock="routerlab-e2e-$$"
cleanup() {
	tmux -L "$sock" kill-server 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT

go build -o "$work/routerlab" .

# -u: the explorer draws UTF-8 (heatmap shades, ·, ✓) whatever the CI locale says.
tmux -u -L "$sock" new-session -d -x 100 -y 30 -s e2e \
	"'$work/routerlab'; echo \$? > '$work/status'"

capture() { tmux -L "$sock" capture-pane -p -t e2e 2>/dev/null || true; }

# wait_for TEXT: poll the screen until TEXT shows up (60 s at most).
wait_for() {
	for _ in $(seq 600); do
		if capture | grep -qF -- "$1"; then
			return 0
		fi
		sleep 0.1
	done
	echo "tui-e2e: timed out waiting for: $1" >&2
	capture >&2
	exit 1
}

modes='kv_router|round_robin|random|least_loaded'
mode_of() { grep -oE "Metrics .{1,3} ($modes)" <<<"$1" | head -1 | grep -oE "$modes"; }
reuse_of() { grep -o 'prefix reuse *[0-9.]*%' <<<"$1" | head -1 | awk '{print $3}'; }

wait_for ' run 1 in '
before=$(capture)
mode1=$(mode_of "$before")
reuse1=$(reuse_of "$before")

tmux -L "$sock" send-keys -t e2e m
wait_for ' run 2 in '
after=$(capture)
mode2=$(mode_of "$after")
reuse2=$(reuse_of "$after")

echo "tui-e2e: router_mode $mode1 → $mode2, prefix reuse $reuse1 → $reuse2"
fail=0
if [[ "$mode1" != kv_router || "$mode2" != round_robin ]]; then
	echo "tui-e2e: want router_mode kv_router → round_robin" >&2
	fail=1
fi
if [[ -z "$reuse1" || -z "$reuse2" || "$reuse1" == "$reuse2" ]]; then
	echo "tui-e2e: the prefix-reuse figure did not change" >&2
	fail=1
fi
if ((fail)); then
	echo "--- before" >&2
	echo "$before" >&2
	echo "--- after" >&2
	echo "$after" >&2
	exit 1
fi

tmux -L "$sock" send-keys -t e2e q
for _ in $(seq 100); do
	[[ -s "$work/status" ]] && break
	sleep 0.1
done
status=$(cat "$work/status" 2>/dev/null || echo "none")
if [[ "$status" != 0 ]]; then
	echo "tui-e2e: explorer exit status $status after q, want 0" >&2
	exit 1
fi
echo "tui-e2e: ok (q exited with status 0)"
