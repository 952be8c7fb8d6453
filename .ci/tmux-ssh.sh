# Sourced by the end-to-end scripts that drive routerlab in tmux over ssh: installs tmux and
# the OpenSSH client when missing, makes $work (a temporary folder) and a private tmux server
# name $sock from $1, and on exit kills that tmux server, the routerlab server whose PID is in
# $server_pid (if any) and $work; defines serve_port.
if ! command -v tmux >/dev/null; then
	apt-get install -y tmux >/dev/null 2>&1 || { apt-get update >/dev/null && apt-get install -y tmux >/dev/null; }
fi
if ! command -v ssh >/dev/null || ! command -v ssh-keygen >/dev/null; then
	apt-get install -y openssh-client >/dev/null 2>&1 || { apt-get update >/dev/null && apt-get install -y openssh-client >/dev/null; }
fi

work=$(mktemp -d)
sock="$1-$$"
server_pid=
cleanup() {
	tmux -L "$sock" kill-server 2>/dev/null || true
	[[ -n "$server_pid" ]] && kill "$server_pid" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT

# serve_port NAME: waits for the `routerlab serve` writing $work/serve.out (and serve.log) to
# print its address and sets $port, or fails saying so under NAME.
serve_port() {
	for _ in $(seq 300); do
		grep -q 'ssh://' "$work/serve.out" 2>/dev/null && break
		sleep 0.1
	done
	port=$(grep -oE 'ssh://127\.0\.0\.1:[0-9]+' "$work/serve.out" | grep -oE '[0-9]+$' || true)
	if [[ -z "$port" ]]; then
		echo "$1: serve did not start" >&2
		cat "$work/serve.out" "$work/serve.log" >&2
		exit 1
	fi
}
