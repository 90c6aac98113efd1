#!/usr/bin/env bash
# Installs the four programs, their bash, zsh and fish completions and man pages (printed by the
# programs themselves from their command specs), the systemd units, the relay's env file example
# and the web client's static files (share/herdr-remote/web: what `herdr-relay serve --web-client`
# serves by default, or any web server's root); or removes exactly what an install put there.
# `make install` and `make uninstall` run it.
#
#   scripts/install.sh install BINDIR   # BINDIR holds the built herdr-remote, herdr-pair, herdr-host, herdr-relay
#   scripts/install.sh uninstall
#
# PREFIX (default /usr/local) and DESTDIR (default empty: this system; created when missing), as
# make passes them: files go to $DESTDIR$PREFIX/..., and the units' ExecStart names $PREFIX/bin.
# Each install records the files it wrote and the directories it created in
# $PREFIX/share/herdr-remote/install-manifest; uninstall removes those files, then those
# directories if they are empty, and nothing else (a directory that was there before stays).
set -euo pipefail

programs=(herdr-remote herdr-pair herdr-host herdr-relay)
prefix=${PREFIX:-/usr/local}
destdir=${DESTDIR:-}
repository=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

die() {
  echo "install.sh: $*" >&2
  exit 1
}

# The prefix ends up in sed expressions and unit files: keep it a plain absolute path.
case "$prefix" in
  /*) ;;
  *) die "PREFIX must be an absolute path, not '$prefix'" ;;
esac
[[ $prefix != *[$'|\n\\ ']* ]] || die "PREFIX must not contain '|', a backslash, a space or a newline"
prefix=${prefix%/}
manifest_path="$prefix/share/herdr-remote/install-manifest"
manifest="$destdir$manifest_path"

record() { # record file|dir PATH (without DESTDIR)
  printf '%s %s\n' "$1" "$2" >>"$manifest"
}

# Creates directory $1 (without DESTDIR) and its missing parents, recording each one created.
# DESTDIR itself exists by now (make_destdir), so the walk up ends there at the latest.
make_directory() {
  local path=$1 missing=()
  while [ "$path" != / ] && [ ! -d "$destdir$path" ]; do
    missing=("$path" "${missing[@]}")
    path=$(dirname "$path")
  done
  local directory error
  for directory in "${missing[@]}"; do
    [ ! -e "$destdir$directory" ] || die "cannot create $destdir$directory: it is there and not a directory"
    error=$(mkdir -m 0755 "$destdir$directory" 2>&1) || die "cannot create $destdir$directory: ${error##*: }"
    [ -f "$manifest" ] && record dir "$directory"
    created+=("$directory")
  done
  return 0
}

# A DESTDIR that does not exist yet (a packager's fresh staging root) is created; it is not the
# install's, so uninstall leaves it (empty). One that cannot be made stops the install before it
# has written anything.
make_destdir() {
  if [ -z "$destdir" ] || [ -d "$destdir" ]; then return 0; fi
  local existing=$destdir error
  # The nearest part of the path that exists: a file there is the usual reason.
  while [ ! -e "$existing" ] && [ "$existing" != "$(dirname "$existing")" ]; do
    existing=$(dirname "$existing")
  done
  [ -d "$existing" ] || die "DESTDIR $destdir cannot be created: $existing is not a directory"
  error=$(mkdir -p -m 0755 -- "$destdir" 2>&1) || die "DESTDIR $destdir cannot be created: ${error##*: }"
}

# put MODE SOURCE TARGET: installs SOURCE as $DESTDIR$TARGET and records it.
put() {
  make_directory "$(dirname "$3")"
  install -m "$1" "$2" "$destdir$3"
  record file "$3"
}

# The web client's files below Web/, NUL-separated, in bytewise order.
web_client_files() {
  (
    cd "$repository/Web"
    find . \( \( -name '.?*' -o -name test -o -name test-support -o -name bench -o -name node_modules \) -prune \) \
      -o -type f \( -name '*.html' -o -name '*.js' -o -name '*.css' -o -name '*.json' -o -name '*.webmanifest' \
      -o -name '*.png' -o -name '*.svg' -o -name '*.ico' -o -name '*.txt' \) \
      ! -path ./package.json ! -path ./tsconfig.json -print0 |
      sed -z 's|^\./||' | LC_ALL=C sort -z
  )
}

install_all() {
  local bindir=${1:?usage: install.sh install BINDIR}
  local program
  for program in "${programs[@]}"; do
    [ -x "$bindir/$program" ] || die "$bindir/$program is missing; build first (make release)"
  done
  make_destdir
  stage=$(mktemp -d) # global: the EXIT trap runs after this function has returned
  trap 'rm -rf "$stage"' EXIT

  # The manifest first, so that whatever happens next is recorded. Directories an earlier install
  # created stay listed: this one finds them already there.
  created=()
  make_directory "$(dirname "$manifest_path")"
  local previous=()
  if [ -f "$manifest" ]; then
    mapfile -t previous < <(grep '^dir ' "$manifest" || true)
  fi
  : >"$manifest"
  local entry
  for entry in "${previous[@]}" "${created[@]/#/dir }"; do
    [ -n "$entry" ] && printf '%s\n' "$entry" >>"$manifest"
  done

  for program in "${programs[@]}"; do
    put 0755 "$bindir/$program" "$prefix/bin/$program"
    "$bindir/$program" --generate-completion-script bash >"$stage/$program.bash"
    "$bindir/$program" --generate-completion-script zsh >"$stage/$program.zsh"
    "$bindir/$program" --generate-completion-script fish >"$stage/$program.fish"
    "$bindir/$program" --generate-manual >"$stage/$program.1"
    put 0644 "$stage/$program.bash" "$prefix/share/bash-completion/completions/$program"
    put 0644 "$stage/$program.zsh" "$prefix/share/zsh/site-functions/_$program"
    put 0644 "$stage/$program.fish" "$prefix/share/fish/vendor_completions.d/$program.fish"
    put 0644 "$stage/$program.1" "$prefix/share/man/man1/$program.1"
  done

  # The relay is a system service; herdr-host runs as the user whose sessions it serves.
  local unit kind
  for unit in herdr-relay:system herdr-host:user; do
    kind=${unit#*:}
    unit=${unit%:*}
    sed "s|^ExecStart=/usr/local/bin/|ExecStart=$prefix/bin/|" "$repository/contrib/$unit.service" >"$stage/$unit.service"
    grep -q "^ExecStart=$prefix/bin/$unit " "$stage/$unit.service" || die "contrib/$unit.service: no ExecStart=/usr/local/bin/$unit"
    put 0644 "$stage/$unit.service" "$prefix/lib/systemd/$kind/$unit.service"
  done
  put 0644 "$repository/contrib/herdr-relay.env.example" "$prefix/share/doc/herdr-remote/herdr-relay.env.example"

  # The web client: the files herdr-relay would serve from Web/ (its extensions, no dotfiles, no
  # test, test-support, bench or node_modules directory), less the tooling's own JSON.
  local file
  while IFS= read -r -d '' file; do
    put 0644 "$repository/Web/$file" "$prefix/share/herdr-remote/web/$file"
  done < <(web_client_files)

  # One line per path, even after installing twice.
  awk '!seen[$0]++' "$manifest" >"$stage/manifest"
  cat "$stage/manifest" >"$manifest"
  echo "Installed into $destdir$prefix (listed in $manifest)."
}

uninstall_all() {
  [ -f "$manifest" ] || die "no $manifest: nothing was installed with PREFIX=$prefix DESTDIR=$destdir"
  local kind path directories=()
  while read -r kind path; do
    [[ $path == /* && $path != *"/.."* ]] || continue
    # Whatever the manifest says: files only below the prefix; directories there too, or the
    # prefix and the directories above it that the install created (in a fresh DESTDIR).
    case "$kind" in
      file) [[ $path == "$prefix/"* ]] && rm -f "$destdir$path" ;;
      dir) [[ $path == "$prefix/"* || "$prefix/" == "$path/"* ]] && directories+=("$path") ;;
    esac
  done <"$manifest"
  rm -f "$manifest"
  # Deepest first; a directory that is not empty (something else lives there now) stays.
  local directory
  while IFS= read -r directory; do
    [ -n "$directory" ] && rmdir "$destdir$directory" 2>/dev/null || true
  done < <(printf '%s\n' "${directories[@]}" | sort -r)
  echo "Removed what was installed into $destdir$prefix."
}

case "${1:-}" in
  install) install_all "${2:-}" ;;
  uninstall) uninstall_all ;;
  *) die "usage: install.sh install BINDIR | install.sh uninstall (PREFIX=/usr/local DESTDIR= in the environment)" ;;
esac
