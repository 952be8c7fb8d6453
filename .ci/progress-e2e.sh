#!/usr/bin/env bash
# End-to-end test of a long replay's progress in a real terminal: a ×10 replay of the
# toolagent-like trace (236,080 requests, several seconds) started in tmux (a private server,
# -L) shows the progress bar with its request counts on screen while it runs, and ends with
# the summary and the bar cleared; the same replay piped keeps standard output the JSON alone
# and puts plain progress lines on standard error.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v tmux >/dev/null; then
	apt-get install -y tmux >/dev/null 2>&1 || { apt-get update >/dev/null && apt-get install -y tmux >/dev/null; }
fi

work=$(mktemp -d)
sock="routerlab-progress-$$"
cleanup() {
	tmux -L "$sock" kill-server 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT

go build -o "$work/routerlab" .

tmux -u -L "$sock" new-session -d -x 120 -y 30 -s e2e \
	"cd '$work' && ./routerlab replay --trace builtin:toolagent:x10; echo \$? > '$work/status'; sleep 600"
capture() { tmux -L "$sock" capture-pane -p -t e2e 2>/dev/null || true; }

seen=
for _ in $(seq 1200); do
	screen=$(capture)
	if grep -qE 'replay .*░.* [0-9]+% [0-9]+ of 236080 requests' <<<"$screen"; then
		seen=yes
		break
	fi
	[[ -s "$work/status" ]] && break
	sleep 0.1
done
if [[ -z "$seen" ]]; then
	echo "progress-e2e: no progress bar on the terminal during a ×10 replay" >&2
	capture >&2
	exit 1
fi
for _ in $(seq 1800); do
	[[ -s "$work/status" ]] && break
	sleep 0.1
done
status=$(cat "$work/status" 2>/dev/null || echo none)
screen=$(capture)
if [[ "$status" != 0 ]] || ! grep -q 'e2e latency' <<<"$screen" || grep -qE 'of 236080 requests' <<<"$screen"; then
	echo "progress-e2e: exit status $status; want 0, the summary, and the bar cleared:" >&2
	echo "$screen" >&2
	exit 1
fi

"$work/routerlab" replay --trace builtin:toolagent:x10 --format json >"$work/out.json" 2>"$work/err.txt"
if ! python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$work/out.json" 2>/dev/null &&
	! jq . "$work/out.json" >/dev/null 2>&1; then
	echo "progress-e2e: piped standard output is not JSON alone" >&2
	head -c 400 "$work/out.json" >&2
	exit 1
fi
if ! grep -qx 'replay: 100 % (236080 of 236080 requests)' "$work/err.txt" || grep -q $'\r' "$work/err.txt"; then
	echo "progress-e2e: piped standard error lacks plain progress lines:" >&2
	cat "$work/err.txt" >&2
	exit 1
fi
echo "progress-e2e: ok ($(grep -c '^replay: ' "$work/err.txt") progress lines piped)"
