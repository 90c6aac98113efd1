#!/usr/bin/env bash
# The main job, end to end on this machine, on both roads. The SSH road: a private sshd on
# loopback, this device's key authorized there, a host saved, and a live tmux-backed session
# reached through it, with the host-key trust prompt first. Then the relay road
# (scripts/demo-relay.sh): a loopback herdr-relay, herdr-host, pairing, and the session through
# the relay. Last the phone (scripts/demo-phone.sh): the web client in a headless chromium, paired
# by the address herdr-host pair --web shows, its board and the computer's terminal, saved as PNGs. Interactive with a terminal; without one (CI) it types into the
# session and prints the screen it got back. Everything it starts is stopped on exit.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
client="${HERDR_REMOTE:-$root/.build/debug/herdr-remote}"
[ -x "$client" ] || { echo "error: $client is missing; run make build" >&2; exit 1; }

work=$(mktemp -d /tmp/herdr-demo.XXXXXX)
chmod 755 "$work"
sshd_pid=""
cleanup() {
  [ -n "$sshd_pid" ] && kill "$sshd_pid" 2>/dev/null && wait "$sshd_pid" 2>/dev/null || true
  tmux -S "$work/remote-tmux.sock" kill-server 2>/dev/null || true
  tmux -S "$work/local-tmux.sock" kill-server 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT INT TERM HUP
source "$root/scripts/demo-lib.sh"

user=$(id -un)
port=$(free_port)

step "Starting a private sshd on 127.0.0.1:$port (own config and host key in $work)"
mkdir -p "$work/home/bin" "$work/config"
ssh-keygen -q -t ed25519 -N '' -f "$work/ssh_host_ed25519_key"
: > "$work/authorized_keys"
write_herdr_stand_in "$work/home/bin" "$work/remote-tmux.sock"
printf 'PATH="%s:$PATH"\nexport PATH\n' "$work/home/bin" > "$work/home/.profile"
cat > "$work/sshd_config" <<CONF
Port $port
ListenAddress 127.0.0.1
HostKey $work/ssh_host_ed25519_key
AuthorizedKeysFile $work/authorized_keys
PidFile none
StrictModes no
UsePAM no
PasswordAuthentication no
KbdInteractiveAuthentication no
AllowUsers $user
PermitRootLogin prohibit-password
SetEnv HOME=$work/home
PrintMotd no
PrintLastLog no
CONF
[ "$(id -u)" -eq 0 ] && mkdir -p /run/sshd
/usr/sbin/sshd -D -f "$work/sshd_config" -E "$work/sshd.log" &
sshd_pid=$!
for _ in $(seq 50); do grep -q "Server listening" "$work/sshd.log" 2>/dev/null && break; sleep 0.1; done
grep -q "Server listening" "$work/sshd.log" || { echo "error: sshd did not start:" >&2; cat "$work/sshd.log" >&2; exit 1; }

export XDG_CONFIG_HOME="$work/config"   # the demo's own hosts, pins and device key
step "Authorizing this device's key on the host (herdr-remote key)"
"$client" key | tee -a "$work/authorized_keys"

step "Saving the host (herdr-remote add demo ...)"
"$client" add demo --host 127.0.0.1 --port "$port" --user "$user" --session demo

if [ -t 0 ] && [ -t 1 ]; then
  step "Connecting: confirm the host key, then you are in the live session (leave with ctrl+b d, or ~.)"
  "$client" connect demo || echo "herdr-remote exited with $?"
  step "Now the relay road"
  bash "$root/scripts/demo-relay.sh"
  step "Now the phone's road (a headless phone browser)"
  bash "$root/scripts/demo-phone.sh"
  exit 0
fi

step "No terminal here: driving herdr-remote inside a headless local tmux"
start_local_terminal "XDG_CONFIG_HOME='$work/config' '$client' connect demo"
wait_for "Trust this host key"
screen | sed -n '/authenticity/,/Trust this/p'
step "Answering y at the trust prompt"
"${local_tmux[@]}" send-keys -t local y Enter
wait_for '\[demo\]'
step "Typing a command into the remote session"
type_and_show 'echo "hello from $(hostname), session $(tmux display -p "#S")"; stty size' "hello from"
step "Pinned host key (ssh-keygen -F '[127.0.0.1]:$port' reads our known_hosts):"
ssh-keygen -F "[127.0.0.1]:$port" -f "$work/config/herdr-remote/known_hosts" | tail -1

step "Now the relay road"
bash "$root/scripts/demo-relay.sh"

step "Now the phone's road (a headless phone browser)"
bash "$root/scripts/demo-phone.sh"
