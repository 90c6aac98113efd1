#!/usr/bin/env bash
# The relay road, end to end on this machine: a loopback herdr-relay, herdr-host (the computer's
# agent) with a throwaway tmux-backed herdr, the pairing with its typed code, and herdr-remote
# connecting through the relay. Interactive with a terminal (you type the code the device shows);
# without one (CI) it types the code itself, then types into the session and prints the screen.
# Everything it starts is stopped on exit.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
bin="${HERDR_BIN:-$root/.build/debug}"
for program in herdr-relay herdr-host herdr-remote; do
  [ -x "$bin/$program" ] || { echo "error: $bin/$program is missing; run make build" >&2; exit 1; }
done

work=$(mktemp -d /tmp/herdr-relay-demo.XXXXXX)
chmod 755 "$work"
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  tmux -S "$work/computer-tmux.sock" kill-server 2>/dev/null || true
  tmux -S "$work/local-tmux.sock" kill-server 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT INT TERM HUP
source "$root/scripts/demo-lib.sh"
wait_file() {  # wait_file FILE PATTERN: until FILE holds PATTERN (10 s at most)
  for _ in $(seq 100); do grep -q -- "$2" "$1" 2>/dev/null && return 0; sleep 0.1; done
  echo "error: timed out waiting for '$2' in $1:" >&2; cat "$1" >&2; exit 1
}

port=$(free_port)
origin="http://127.0.0.1:$port"

step "Starting herdr-relay on $origin (its rooms in $work/relay.sqlite)"
ATTEST_REQUIRED=false "$bin/herdr-relay" serve --listen "127.0.0.1:$port" --origin "$origin" \
  --db "$work/relay.sqlite" --log > "$work/relay.log" 2>&1 &
pids+=($!)
wait_file "$work/relay.log" "listening"

# The computer: its own herdr-host state, and a home whose herdr is a tmux stand-in.
write_herdr_stand_in "$work/computer/home/bin" "$work/computer-tmux.sock"
printf 'PATH="%s:$PATH"\nexport PATH\n' "$work/computer/home/bin" > "$work/computer/home/.profile"
computer_env=(env XDG_CONFIG_HOME="$work/computer/config" HOME="$work/computer/home" SHELL=/bin/sh)
device_env=(env XDG_CONFIG_HOME="$work/device")

# This demo shows the relay road: the computer's home door stays shut (herdr-host listens on the
# home network by default, and a device on the same machine would take that road).
"${computer_env[@]}" "$bin/herdr-host" config home-listen off > /dev/null

step "Pairing: herdr-host pair shows a code; herdr-remote pair takes it"
mkfifo "$work/pair-input"
"${computer_env[@]}" "$bin/herdr-host" pair --relay "$origin" --name demo-computer --session demo \
  < "$work/pair-input" > "$work/pair.out" 2>&1 &
pids+=($!)
pair_pid=$!
exec 3> "$work/pair-input"   # herdr-host's stdin, kept open for the code
wait_file "$work/pair.out" "herdr://companion"
code=$(grep -o 'herdr://companion?[^[:space:]]*' "$work/pair.out" | head -1)
sed -n '/herdr:\/\/companion/p' "$work/pair.out"
"${device_env[@]}" "$bin/herdr-remote" pair "$code" --yes --no-connect --name demo-phone \
  > "$work/device-pair.out" 2>&1 &
pids+=($!)
device_pid=$!
wait_file "$work/device-pair.out" "Type this code on"
shown=$(grep -o 'Type this code on [^:]*: [0-9]\{3\} [0-9]\{3\}' "$work/device-pair.out" | grep -o '[0-9]\{3\} [0-9]\{3\}$')
wait_file "$work/pair.out" "Type the code it shows"
if [ -t 0 ] && [ -t 1 ]; then
  echo "The device shows: $shown"
  read -r -p "Type it here, as you would on the computer: " typed
else
  echo "The device shows $shown; no terminal here, so the demo types it on the computer."
  typed=$shown
fi
echo "$typed" >&3
wait "$pair_pid" || { echo "error: herdr-host pair failed:" >&2; cat "$work/pair.out" >&2; exit 1; }
wait "$device_pid" || { echo "error: herdr-remote pair failed:" >&2; cat "$work/device-pair.out" >&2; exit 1; }
exec 3>&-
tail -n 3 "$work/device-pair.out"

step "Starting herdr-host run (it parks in the device's room on the relay)"
"${computer_env[@]}" "$bin/herdr-host" run 2> "$work/agent.log" &
pids+=($!)
wait_file "$work/agent.log" "parking in its room"
for _ in $(seq 100); do
  "${computer_env[@]}" "$bin/herdr-host" status 2>/dev/null | grep -q parked && break
  sleep 0.1
done

if [ -t 0 ] && [ -t 1 ]; then
  step "Connecting through the relay: you are in the live session (leave with ctrl+b d, or ~.)"
  "${device_env[@]}" "$bin/herdr-remote" connect demo-computer || echo "herdr-remote exited with $?"
  exit 0
fi

step "No terminal here: driving herdr-remote inside a headless local tmux"
start_local_terminal "XDG_CONFIG_HOME='$work/device' '$bin/herdr-remote' connect demo-computer"
wait_for '\[demo\]'
step "Typing a command into the computer's session, through the relay"
type_and_show 'echo "hello through the relay, session $(tmux display -p "#S")"; stty size' \
  "hello through the relay, session demo"
step "What the computer's agent logged:"
cat "$work/agent.log"
