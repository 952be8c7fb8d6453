# Sourced by the end-to-end scripts that drive routerlab in tmux over ssh: installs tmux and
# the OpenSSH client when missing, makes $work (a temporary folder) and a private tmux server
# name $sock from $1, and on exit kills that tmux server, the routerlab server whose PID is in
# $server_pid (if any) and $work.
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
