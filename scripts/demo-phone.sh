#!/usr/bin/env bash
# The phone's road, end to end on this machine: a loopback herdr-relay serving the web client
# (--web-client, this checkout's Web/), herdr-host with a throwaway tmux-backed herdr, and a phone:
# Debian's chromium headless in a 390×844 touch screen's emulation (Playwright for Python, the
# tests' driver). The phone opens the address `herdr-host pair --web` shows, as its camera would;
# the six digits it shows are typed on the computer; it opens the computer's terminal and a
# command is typed there. The screens are saved as PNG files (.build/demo/). Everything it starts
# is stopped on exit.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
bin="${HERDR_BIN:-$root/.build/debug}"
for program in herdr-relay herdr-host; do
  [ -x "$bin/$program" ] || { echo "error: $bin/$program is missing; run make build" >&2; exit 1; }
done
for need in /usr/bin/chromium python3; do
  command -v "$need" >/dev/null || { echo "error: $need is missing; run make deps" >&2; exit 1; }
done
python3 -c 'import playwright' 2>/dev/null || { echo "error: Playwright for Python is missing; run make deps" >&2; exit 1; }

work=$(mktemp -d /tmp/herdr-phone-demo.XXXXXX)
chmod 755 "$work"
shots="$root/.build/demo"
mkdir -p "$shots"
pids=()
cleanup() {
  exec 4>&- 5<&- 2>/dev/null || true
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  tmux -S "$work/computer-tmux.sock" kill-server 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT INT TERM HUP
source "$root/scripts/demo-lib.sh"
wait_file() {  # wait_file FILE PATTERN: until FILE holds PATTERN (10 s at most)
  for _ in $(seq 100); do grep -q -- "$2" "$1" 2>/dev/null && return 0; sleep 0.1; done
  echo "error: timed out waiting for '$2' in $1:" >&2; cat "$1" >&2; exit 1
}

# The phone's browser on two pipes: commands to fd 4, answers from fd 5.
mkfifo "$work/phone-in" "$work/phone-out"
python3 "$root/Tests/TestSupport/PhoneBrowser/phone.py" < "$work/phone-in" > "$work/phone-out" 2> "$work/phone.log" &
pids+=($!)
exec 4> "$work/phone-in" 5< "$work/phone-out"
# phone JSON: one command to the phone's browser, its answer on stdout; stops the demo on a failure.
phone() {
  echo "$1" >&4
  local answer
  IFS= read -r -t 90 answer <&5 || { echo "error: the phone's browser did not answer:" >&2; cat "$work/phone.log" >&2; exit 1; }
  case "$answer" in
    '{"ok": true'*) printf '%s\n' "$answer" ;;
    *) echo "error: the phone's browser could not $1: $answer" >&2; exit 1 ;;
  esac
}
read -r -t 90 ready <&5 || { echo "error: chromium did not start:" >&2; cat "$work/phone.log" >&2; exit 1; }

port=$(free_port)
origin="http://127.0.0.1:$port"
step "Starting herdr-relay on $origin, serving the web client from $root/Web"
ATTEST_REQUIRED=false "$bin/herdr-relay" serve --listen "127.0.0.1:$port" --origin "$origin" \
  --db "$work/relay.sqlite" --web-client --web-root "$root/Web" --log > "$work/relay.log" 2>&1 &
pids+=($!)
wait_file "$work/relay.log" "listening"
grep -m1 "manifest" "$work/relay.log" || true

write_herdr_stand_in "$work/computer/home/bin" "$work/computer-tmux.sock"
printf 'PATH="%s:$PATH"\nexport PATH\n' "$work/computer/home/bin" > "$work/computer/home/.profile"
computer_env=(env XDG_CONFIG_HOME="$work/computer/config" HOME="$work/computer/home" SHELL=/bin/sh)
"${computer_env[@]}" "$bin/herdr-host" config home-listen off > /dev/null

step "Pairing: herdr-host pair --web shows the web client's address; the phone's camera opens it"
mkfifo "$work/pair-input"
# HERDR_WEB_ROOT: the web client "installed" on this computer, which pair compares with what the
# relay serves before it shows the code.
"${computer_env[@]}" HERDR_WEB_ROOT="$root/Web" "$bin/herdr-host" pair --relay "$origin" --name demo-computer --web \
  < "$work/pair-input" > "$work/pair.out" 2>&1 &
pids+=($!)
pair_pid=$!
exec 3> "$work/pair-input"
wait_file "$work/pair.out" "#v=1&"
grep '^Web client\|^warning' "$work/pair.out" || true
address=$(grep -o 'http[^[:space:]]*#v=1&[^[:space:]]*' "$work/pair.out" | head -1)
echo "$address"
phone "$(printf '{"op":"open","url":"%s"}' "$address")" > /dev/null
phone '{"op":"wait","selector":"#pairing-code","text":" "}' > /dev/null
digits=$(phone '{"op":"text","selector":"#pairing-code"}' | grep -o '[0-9]\{3\} [0-9]\{3\}')
echo "The phone shows: $digits (typed on the computer by the demo)"
wait_file "$work/pair.out" "Type the code it shows"
echo "$digits" >&3
wait "$pair_pid" || { echo "error: herdr-host pair failed:" >&2; cat "$work/pair.out" >&2; exit 1; }
exec 3>&-
phone '{"op":"wait","selector":"#pairing-state","text":"Paired","state":"attached"}' > /dev/null

step "Starting herdr-host run; the phone's board connects"
"${computer_env[@]}" "$bin/herdr-host" run 2> "$work/agent.log" &
pids+=($!)
wait_file "$work/agent.log" "parking in its room"
phone '{"op":"wait","selector":".computer .state","text":"connected"}' > /dev/null
phone "{\"op\":\"screenshot\",\"path\":\"$shots/phone-board.png\"}" > /dev/null
phone '{"op":"text","selector":"#board"}' | python3 -c 'import json,sys; print(json.load(sys.stdin)["text"])'

step "The phone opens the computer's terminal and types a command"
phone "{\"op\":\"tap\",\"selector\":\"[aria-label=\\\"Open demo-computer's terminal\\\"]\"}" > /dev/null
phone '{"op":"wait","selector":".screen .row"}' > /dev/null
phone '{"op":"type","text":"echo \"hello from the phone, $((6*7))\"\n"}' > /dev/null
phone '{"op":"wait","selector":".screen","text":"hello from the phone, 42"}' > /dev/null
phone "{\"op\":\"screenshot\",\"path\":\"$shots/phone-terminal.png\"}" > /dev/null
step "The phone's screen:"
phone '{"op":"text","selector":".screen"}' \
  | python3 -c 'import json,sys; print("\n".join(l.rstrip() for l in json.load(sys.stdin)["text"].split("\n")).strip())' | cat -s
step "Screenshots: $shots/phone-board.png, $shots/phone-terminal.png"
