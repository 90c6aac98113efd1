#!/usr/bin/env bash
# Installs what building, testing and the demo need, only what is missing: Debian packages
# (with apt-get, as root or through sudo) and Python packages (with pip). With `--bench`, also
# what only the benchmarks use (`make bench`): mosh, herdr-bench wan's anchor, and matplotlib,
# which draws their plots.
set -euo pipefail

apt_packages=(
  pkg-config libssl-dev libssh2-1-dev   # C libraries the Swift package links
  libzbar-dev libpng-dev qrencode       # herdr-remote pair --image (zbar, libpng); QR pictures for its tests
  libqrencode-dev zbar-tools util-linux # herdr-pair's QR code (libqrencode); zbarimg and setpriv for its tests
  openssh-server openssh-client tmux    # real peers: sshd, ssh-keygen/ssh-keyscan, the multiplexer
  iproute2 procps vim less              # test network namespaces, ps; vim, less and top drawn through screen sessions
  libsqlite3-dev openssl                # herdr-relay's store (SQLite); throwaway TLS certificates for its tests
  libhiredis-dev redis-server haproxy   # herdr-relay's shared store (Redis, through hiredis) and the nodes' router, for its tests
  libvterm-dev                          # herdr-host's screen sessions: the terminal emulator that keeps the screen
  systemd                               # systemd-analyze verify, for the shipped units
  zsh fish groff-base                   # the shells whose completion scripts the tests load; groff checks the man pages
  python3 python3-pip                   # Python peers of the interop tests
  nodejs node-typescript                # the web client's checks: node --test, tsc --checkJs (scripts/web-check.sh)
  chromium                              # the phone's browser of the web client's tests (driven by Playwright, no browser download)
)
pip_packages=(noiseprotocol websockets playwright)  # independent peers of the interop tests: Noise (Tests/NoiseTests/Peers), relay WebSocket client (RelayServerTests); Playwright drives chromium (PhoneBrowserTests)
if [ "${1:-}" = "--bench" ]; then
  apt_packages+=(mosh)        # herdr-bench wan's anchor: mosh-server and mosh-client 1.4
  pip_packages+=(matplotlib)  # scripts/plot-bench.py
fi

missing=()
for package in "${apt_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if ((${#missing[@]})); then
  echo "Installing Debian packages: ${missing[*]}"
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "error: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
    sudo="sudo"
  fi
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if ((${#pip_packages[@]})); then
  pip_install() {
    python3 -m pip --version >/dev/null 2>&1 || { echo "error: pip is missing; install python3-pip" >&2; exit 1; }
    echo "Installing Python packages: $*"
    # Debian's own python3 refuses pip installs into it (PEP 668) unless told; ours are test peers only.
    python3 -m pip install -q --root-user-action=ignore "$@" 2>/dev/null \
      || python3 -m pip install -q --root-user-action=ignore --break-system-packages "$@"
  }
  python3 - "${pip_packages[@]}" <<'PY' || pip_install "${pip_packages[@]}"
import importlib.metadata, sys
missing = []
for spec in sys.argv[1:]:
    try:
        importlib.metadata.version(spec.split("==")[0])
    except importlib.metadata.PackageNotFoundError:
        missing.append(spec)
sys.exit(1 if missing else 0)
PY
fi

command -v swift >/dev/null || { echo "error: swift is not on PATH; install the Swift 6 toolchain first" >&2; exit 1; }
