#!/usr/bin/env bash
# End-to-end check that stopping `routerlab serve` (ctrl+c, SIGINT) leaves its clients'
# terminals usable: a real `ssh` client in tmux (a private server, -L, never the default one)
# shows the explorer, the server gets SIGINT, and once ssh has exited the client's terminal
# must be out of the alternate screen with the cursor shown. Also checks that serve left the
# existing host-key folder's mode (0755) as it found it.
set -euo pipefail
cd "$(dirname "$0")/.."

source .ci/tmux-ssh.sh routerlab-stop-e2e

# ROUTERLAB_BIN: check another build (e.g. an older one, to see the check fail).
if [[ -n "${ROUTERLAB_BIN:-}" ]]; then
	cp "$ROUTERLAB_BIN" "$work/routerlab"
else
	go build -o "$work/routerlab" .
fi
ssh-keygen -q -t ed25519 -N '' -C operator -f "$work/operator_key"
mkdir -m 0755 "$work/keys"
chmod 0755 "$work/keys"
"$work/routerlab" serve --ssh 127.0.0.1:0 --authorized-keys "$work/operator_key.pub" \
	--host-key "$work/keys/host_key" --runs "$work/runs" >"$work/serve.out" 2>"$work/serve.log" &
server_pid=$!
serve_port serve-stop-e2e
mode=$(stat -c '%a' "$work/keys")
if [[ "$mode" != 755 ]]; then
	echo "serve-stop-e2e: serve changed the host-key folder's mode 755 → $mode" >&2
	exit 1
fi

# After ssh exits its pane lives on in a shell that only waits, so the terminal state ssh
# left can be read (a dead pane's own state is tmux's, not the session's).
tmux -u -L "$sock" new-session -d -x 120 -y 40 -s alice \
	"ssh -tt -p $port -i '$work/operator_key' -o IdentitiesOnly=yes -o BatchMode=yes -o StrictHostKeyChecking=no \
		-o UserKnownHostsFile='$work/known_hosts' alice@127.0.0.1; echo ssh-exited; sleep 600"
pane() { tmux -L "$sock" display-message -p -t alice "$1"; }
capture() { tmux -L "$sock" capture-pane -p -t alice; }
for _ in $(seq 600); do
	capture | grep -qF ' run 1 in ' && break
	sleep 0.1
done
if [[ "$(pane '#{alternate_on} #{cursor_flag}')" != "1 0" ]]; then
	echo "serve-stop-e2e: the explorer is not in the alternate screen with the cursor hidden: $(pane '#{alternate_on} #{cursor_flag}')" >&2
	capture >&2
	exit 1
fi

kill -INT "$server_pid"
wait "$server_pid" 2>/dev/null || true
server_pid=
for _ in $(seq 100); do
	capture | grep -qF ssh-exited && break
	sleep 0.1
done
state=$(pane 'alternate=#{alternate_on} cursor=#{cursor_flag}')
echo "serve-stop-e2e: after the server's ctrl+c the client's terminal: $state"
if ! capture | grep -qF ssh-exited || [[ "$state" != "alternate=0 cursor=1" ]]; then
	echo "serve-stop-e2e: want the ssh client gone with its terminal restored (alternate screen off, cursor shown)" >&2
	capture >&2
	echo "--- serve log" >&2
	cat "$work/serve.log" >&2
	exit 1
fi
echo "serve-stop-e2e: ok"
