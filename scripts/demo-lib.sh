# Shared by the demo scripts (sourced): their progress lines, a free loopback port, the tmux-backed
# herdr stand-in, and the headless local terminal that drives herdr-remote without a terminal.
# The sourcing script sets `work` (its temporary directory) first.

step() { printf '\033[1m==> %s\033[0m\n' "$*"; }

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# write_herdr_stand_in BIN_DIR TMUX_SOCKET: a `herdr` with the same command line, backed by tmux.
write_herdr_stand_in() {
  mkdir -p "$1"
  cat > "$1/herdr" <<HERDR
#!/bin/sh
# herdr stand-in for the demo: the same command line, backed by tmux.
case "\$1" in
  "") exec tmux -S "$2" new-session -A -s default ;;
  session) [ "\$2" = attach ] && exec tmux -S "$2" new-session -A -s "\$3" ;;
esac
echo "herdr stand-in: unsupported: \$*" >&2; exit 2
HERDR
  chmod 755 "$1/herdr"
}

# start_local_terminal COMMAND: runs COMMAND (then reports its exit) in a headless 100×30 tmux.
local_tmux=(tmux -S "$work/local-tmux.sock")
start_local_terminal() {
  "${local_tmux[@]}" new-session -d -x 100 -y 30 -s local "$1; echo herdr-remote exited with \$?; sleep 60"
}
screen() { "${local_tmux[@]}" capture-pane -p -t local; }
wait_for() {  # wait_for PATTERN: until the local screen shows it (10 s at most)
  for _ in $(seq 100); do screen | grep -q -- "$1" && return 0; sleep 0.1; done
  echo "error: timed out waiting for '$1'; the screen was:" >&2; screen >&2; exit 1
}

# type_and_show KEYS PATTERN: types KEYS into the session, waits for PATTERN, prints the screen,
# then leaves with ~. and shows how herdr-remote exited.
type_and_show() {
  "${local_tmux[@]}" send-keys -t local "$1" Enter
  wait_for "$2"
  sleep 0.3
  step "The screen herdr-remote showed:"
  screen | sed -e "s/[[:space:]]*$//" | cat -s
  step "Disconnecting with ~."
  "${local_tmux[@]}" send-keys -t local Enter '~.'
  wait_for "herdr-remote exited with"
  screen | grep "herdr-remote exited with"
}
