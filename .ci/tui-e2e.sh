#!/usr/bin/env bash
# End-to-end test of the explorer in a real terminal: build routerlab, start it in tmux at
# 80×24 on the embedded defaults with 64 workers, wait for the first result, check that the
# help hint shows and the fleet is grouped to fit, press `m`, check from the captured screen
# that the router mode and the prefix-reuse figure changed, step the model knob to a model
# without tables on the seed's GPU and check the explorer moves to its GPU and runs, then
# quit with `q` and check the exit status is 0. Then start it at 120×40 on the defaults,
# press `s` and follow the sweep to its end, moving the table's cursor while it runs,
# checking that its phases showed with their counts and the stop reason and that the winner
# ends named in the title and visible in the table. Then `routerlab watch` on a headless sweep stopped by SIGINT says it was
# interrupted, and on the parent directory lists the runs (that one and the explorer's
# sweep) to pick from. Finally two terminals over a real `ssh`: keys restricted by from= or
# expiry-time= are refused, the operator logs in beside 200 idle TCP connections and starts a
# server sweep, a viewer's session attaches to it from the Sweeps pane and shows its
# progress.
set -euo pipefail
cd "$(dirname "$0")/.."

source .ci/tmux-ssh.sh routerlab-e2e

go build -o "$work/routerlab" .

# start W H ARGS...: a new explorer session of W×H cells. -u: the explorer draws UTF-8
# (heatmap shades, ·, ✓) whatever the CI locale says.
start() {
	local w=$1 h=$2
	shift 2
	rm -f "$work/status"
	tmux -u -L "$sock" new-session -d -x "$w" -y "$h" -s e2e \
		"cd '$work' && ./routerlab $*; echo \$? > '$work/status'"
}

# quit presses q and checks the explorer exits with status 0.
quit() {
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
	tmux -L "$sock" kill-server 2>/dev/null || true
}

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

start 80 24 --set gpu_budget=256 --set "'parallel_configs=[{tp: 4, moe_ep: 4, replicas: 64}]'"
wait_for ' run 1 in '
before=$(capture)
for want in '? help' 'q quit' '64 workers, ' '(row max)'; do
	if ! grep -qF -- "$want" <<<"$before"; then
		echo "tui-e2e: 64 workers at 80×24: the screen lacks '$want'" >&2
		echo "$before" >&2
		exit 1
	fi
done
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

# The model knob (12th row): the next model has no tables on the seed's b200_sxm, so the
# explorer moves to its GPU, says so, and runs there; no error.
for _ in $(seq 11); do tmux -L "$sock" send-keys -t e2e Down; done
tmux -L "$sock" send-keys -t e2e Right
wait_for ' run 3 in '
model=$(capture)
for want in 'Qwen3-235B-A22B-FP8 has no tables on b200_sxm, so hardware_sku h100_sxm' 'Metrics · round_robin · ' 'h100_sxm'; do
	if ! grep -qF -- "$want" <<<"$model"; then
		echo "tui-e2e: model_name → at 80×24: the screen lacks '$want'" >&2
		echo "$model" >&2
		exit 1
	fi
done
if grep -qF 'error:' <<<"$model"; then
	echo "tui-e2e: model_name → gave an error:" >&2
	echo "$model" >&2
	exit 1
fi
echo "tui-e2e: model_name → Qwen3-235B-A22B-FP8 moved to h100_sxm and ran"

quit
echo "tui-e2e: 64 workers at 80×24 ok (q exited with status 0)"

# The sweep, followed to its end: remember each status line it shows, and move the table's
# cursor down three rows once it has rows.
start 120 40
wait_for ' run 1 in '
tmux -L "$sock" send-keys -t e2e s
seen="$work/seen"
: >"$seen"
moved=0
# A deadline, not a count of polls: a capture's cost varies with the machine's load.
sweep_start=$SECONDS
while ((SECONDS - sweep_start < 300)); do
	screen=$(capture)
	if ((!moved)) && grep -qE 'evaluations ([4-9]|[1-9][0-9]+)/' <<<"$screen"; then
		tmux -L "$sock" send-keys -t e2e j j j
		moved=1
	fi
	grep -oE '(search round [0-9]+/[0-9]+ · evaluations [0-9]+/[0-9]+|saturation [0-9]+/[0-9]+|validation [0-9]+/3|done · [0-9]+ evaluations · [a-z0-9 ]+)' <<<"$screen" >>"$seen" || true
	# A capture can catch a line half drawn ("done · 20 evaluations · conv"): stop on a whole one.
	grep -qE 'done · [0-9]+ evaluations · (converged at round [0-9]+ of 6|budget spent|every configuration evaluated)' <<<"$screen" && break
	sleep 0.05
done
echo "tui-e2e: sweep statuses seen ($((SECONDS - sweep_start)) s):"
uniq "$seen" | sed 's/^/  /'
fail=0
for want in 'search round 1/6 · evaluations' 'validation [0-3]/3' 'done · [0-9]+ evaluations · (converged at round [0-9]+ of 6|budget spent|every configuration evaluated)'; do
	if ! grep -qE -- "$want" "$seen"; then
		echo "tui-e2e: the sweep never showed /$want/" >&2
		fail=1
	fi
done
# The phases come in order: search before validation before done.
order=$(grep -oE '^(search|saturation|validation|done)' "$seen" | uniq | tr '\n' ' ')
if ! grep -qE '^search (saturation )?validation done $' <<<"$order"; then
	echo "tui-e2e: phases in the order '$order', want search, saturation (if seen), validation, done" >&2
	fail=1
fi
# The winner is named in the pane's title and its row is on screen, although the cursor was
# moved down while the rows re-sorted.
final=$(capture)
winner=$(grep -oE 'Sweep · winner [a-z_]+( credit [0-9.]+ scale [0-9.]+ T [0-9.]+)? · [0-9.]+ e2e ms' <<<"$final" | head -1)
value=$(grep -oE '[0-9.]+ e2e ms' <<<"$winner" | awk '{print $1}')
if ((!moved)) || [[ -z "$winner" ]] || ! grep -qE "^(▸| ) +[a-z_]+ .* $value +[0-9]+ " <<<"$final"; then
	echo "tui-e2e: after the sweep (cursor moved: $moved) the winner is not named ('$winner') or its row ($value) is not on screen" >&2
	fail=1
fi
if ((fail)); then
	capture >&2
	exit 1
fi
echo "tui-e2e: $winner, its row on screen"
quit
echo "tui-e2e: ok (sweep ran to done; q exited with status 0)"

# watch on a headless sweep stopped by SIGINT, then on the directory of runs.
"$work/routerlab" sweep --requests 800 --algorithm grid --parallel 1 --set 'router_temperature=[0.0]' \
	--set 'overlap_score_credit=[0.0, 0.5, 1.0]' --set 'prefill_load_scale=[0.0, 1.0, 8.0]' \
	--set validate.requests=1500 --out "$work/runs/seed" 2>"$work/sweep.err" &
sweep_pid=$!
for _ in $(seq 600); do
	[[ -f "$work/runs/seed/ledger.jsonl" && $(wc -l <"$work/runs/seed/ledger.jsonl") -ge 3 ]] && break
	sleep 0.1
done
kill -INT "$sweep_pid"
wait "$sweep_pid" || true
start 120 40 watch runs/seed
wait_for 'interrupted · interrupt signal received'
echo "tui-e2e: watch on the interrupted sweep: $(capture | grep -oE 'interrupted · [a-z ]+' | head -1)"
quit
start 160 30 watch runs
wait_for 'runs to pick from'
wait_for 'runs/seed'
wait_for 'runs/explorer-'
echo "tui-e2e: watch runs lists:"
capture | grep -E 'runs/(seed|explorer-)' | sed 's/^/  /'
tmux -L "$sock" send-keys -t e2e Enter
wait_for 'read-only'
quit
echo "tui-e2e: ok (watch says the sweep was interrupted; watch on runs/ lists its runs)"

# Two terminals on one server sweep, over a real ssh client.
ssh-keygen -q -t ed25519 -N '' -C operator -f "$work/operator_key"
ssh-keygen -q -t ed25519 -N '' -C viewer -f "$work/viewer_key"
# Keys whose authorized_keys options must keep them out: another address, an expired date.
ssh-keygen -q -t ed25519 -N '' -C far -f "$work/far_key"
ssh-keygen -q -t ed25519 -N '' -C expired -f "$work/expired_key"
{
	cat "$work/operator_key.pub"
	echo "from=\"10.9.9.9\" $(cat "$work/far_key.pub")"
	echo "expiry-time=\"20200101\" $(cat "$work/expired_key.pub")"
} >"$work/authorized_keys"
"$work/routerlab" serve --ssh 127.0.0.1:0 --authorized-keys "$work/authorized_keys" \
	--viewer-keys "$work/viewer_key.pub" --host-key "$work/host_key" --runs "$work/runs" \
	>"$work/serve.out" 2>"$work/serve.log" &
server_pid=$!
serve_port tui-e2e

# terminal NAME KEY USER: an ssh session with a terminal, in its own tmux session NAME.
terminal() {
	tmux -u -L "$sock" new-session -d -x 120 -y 40 -s "$1" \
		"ssh -tt -p $port -i '$work/$2' -o IdentitiesOnly=yes -o BatchMode=yes -o StrictHostKeyChecking=no \
			-o UserKnownHostsFile='$work/known_hosts' $3@127.0.0.1"
}
capture_in() { tmux -L "$sock" capture-pane -p -t "$1" 2>/dev/null || true; }
# wait_in NAME TEXT: poll terminal NAME's screen until TEXT shows up (60 s at most).
wait_in() {
	for _ in $(seq 600); do
		if capture_in "$1" | grep -qE -- "$2"; then
			return 0
		fi
		sleep 0.1
	done
	echo "tui-e2e: terminal $1 timed out waiting for: $2" >&2
	capture_in "$1" >&2
	echo "--- serve log" >&2
	cat "$work/serve.log" >&2
	exit 1
}

# log_has PATTERN...: the serve log holds every extended regexp, else the test fails showing it.
log_has() {
	for want in "$@"; do
		if ! grep -qE -- "$want" "$work/serve.log"; then
			echo "tui-e2e: the serve log lacks /$want/" >&2
			cat "$work/serve.log" >&2
			exit 1
		fi
	done
}

# A real ssh client with each restricted key is refused (BatchMode: no password prompt).
for k in far expired; do
	if ssh -p "$port" -i "$work/${k}_key" -o IdentitiesOnly=yes -o BatchMode=yes -o StrictHostKeyChecking=no \
		-o UserKnownHostsFile="$work/known_hosts" "$k@127.0.0.1" true </dev/null >/dev/null 2>&1; then
		echo "tui-e2e: the $k key logged in" >&2
		exit 1
	fi
done
log_has 'auth refused: from="10.9.9.9" does not allow 127.0.0.1 user=far' 'auth refused: key expired at 2020-01-01.* user=expired'
echo "tui-e2e: from=\"10.9.9.9\" and an expired key were refused over a real ssh"

# 200 idle TCP connections (never a byte sent), then the operator logs in over a real ssh.
idle=()
for _ in $(seq 200); do
	exec {fd}<>"/dev/tcp/127.0.0.1/$port"
	idle+=("$fd")
done
terminal alice operator_key alice
wait_in alice ' run 1 in '
echo "tui-e2e: logged in over ssh beside 200 idle connections ($(grep -c 'connection dropped' "$work/serve.log") dropped to make room)"
for fd in "${idle[@]}"; do exec {fd}>&-; done
tmux -L "$sock" send-keys -t alice s
wait_in alice 'server sweep #1'

terminal bob viewer_key bob
wait_in bob ' run 1 in '
for _ in 1 2 3 4; do tmux -L "$sock" send-keys -t bob Tab; done
wait_in bob 'Sweeps on this server'
wait_in bob 'alice SHA256:'
tmux -L "$sock" send-keys -t bob Enter
wait_in bob 'server sweep #1 · (running|done) · started by alice'
wait_in bob '(search round [0-9]+/[0-9]+ · evaluations [1-9][0-9]*/|saturation [0-9]|validation [0-9]/3|done · [0-9]+ evaluations)'
echo "tui-e2e: the viewer's terminal shows the operator's sweep:"
capture_in bob | grep -E 'server sweep #1|search round|saturation|validation|done ·' | head -3 | sed 's/^/  /'
log_has 'auth accepted.*user=alice.*role=operator' 'auth accepted.*user=bob.*role=viewer'
tmux -L "$sock" send-keys -t bob q
# ctrl+c of the server with alice's session still open: a clean shutdown, logged in one
# format, with the start-up line naming the host key and the keys loaded.
kill -INT "$server_pid"
wait "$server_pid" 2>/dev/null || true
server_pid=
for want in 'host key SHA256:' '[0-9]+ operator keys?, [0-9]+ viewer keys?'; do
	if ! grep -qE -- "$want" "$work/serve.out"; then
		echo "tui-e2e: the start-up line lacks '$want':" >&2
		cat "$work/serve.out" >&2
		exit 1
	fi
done
# "stopped" is INFO with no sweep running, WARN naming the sweep it cancelled otherwise.
if grep -q 'ERROR' "$work/serve.log" || ! grep -qE '(INFO|WARN) +serve: stopped' "$work/serve.log"; then
	echo "tui-e2e: serve did not stop cleanly:" >&2
	cat "$work/serve.log" >&2
	exit 1
fi
echo "tui-e2e: serve stopped cleanly: $(grep -o 'serve: stopped.*' "$work/serve.log" | cut -c1-120)"
echo "tui-e2e: ok (two ssh terminals on one server sweep)"
