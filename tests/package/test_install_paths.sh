#!/usr/bin/env bash
# `cmake --install` with --prefix /usr/local and with --prefix /usr (into a DESTDIR): the udev
# rules and the completions land where udev, zsh, fish and bash look for that prefix, asked
# of zsh and fish themselves (their fpath and fish_complete_path) and of udev's documented
# directories (udev(7): /etc/udev/rules.d, /run/udev/rules.d, /usr/lib/udev/rules.d).
# Usage: test_install_paths.sh BUILD_DIR
set -u
BUILD=$1
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
source "$(dirname "$0")/../support/checks.sh"
for tool in zsh fish; do
  if ! command -v "$tool" > /dev/null; then
    echo "FAIL missing $tool: run scripts/install-deps"
    exit 1
  fi
done
rules=60-tracepipe-probes.rules
tool=trace-ship

# The directories each program reads, with no user configuration and no XDG_DATA_DIRS (a
# console login: no desktop session sets it).
mkdir -p "$WORK/home"
zsh_dirs=$(env -i HOME="$WORK/home" zsh -fc 'print -l $fpath')
fish_dirs=$(env -i HOME="$WORK/home" fish -c 'string join \n $fish_complete_path')
bash_dirs=$(printf '%s/bash-completion/completions\n' /usr/local/share /usr/share)  # bash_completion's default
udev_dirs=$(printf '%s\n' /etc/udev/rules.d /run/udev/rules.d /usr/lib/udev/rules.d)

# installed_in DESTDIR DIRS FILE: FILE is in one of DIRS under DESTDIR, and nowhere else in it
# (but the tool of that name in bin/).
installed_in() {
  local where found
  found=$(cd "$1" && find . -name "$3" ! -path '*/bin/*' -printf '/%P\n')
  where=$(dirname "$found")
  [ "$(printf '%s\n' "$found" | wc -l)" -eq 1 ] && [ -n "$found" ] && grep -qxF "$where" <<< "$2" && return 0
  echo "     $3 is at: ${found:-nowhere}"
  return 1
}

for prefix in /usr/local /usr; do
  dest=$WORK/dest$(tr / _ <<< "$prefix")
  DESTDIR=$dest cmake --install "$BUILD" --prefix "$prefix" > "$WORK/install.log" 2>&1
  check "--prefix $prefix: cmake --install into a DESTDIR" test $? -eq 0 || tail -5 "$WORK/install.log"
  check "--prefix $prefix: $tool in $prefix/bin" test -x "$dest$prefix/bin/$tool"
  check "--prefix $prefix: the udev rules where udev reads them" installed_in "$dest" "$udev_dirs" "$rules"
  check "--prefix $prefix: the zsh completion on zsh's fpath" installed_in "$dest" "$zsh_dirs" "_$tool"
  check "--prefix $prefix: the fish completion on fish_complete_path" installed_in "$dest" "$fish_dirs" "$tool.fish"
  check "--prefix $prefix: the bash completion where bash-completion looks" installed_in "$dest" "$bash_dirs" "$tool"
  tools=$(ls "$dest$prefix/bin" | wc -l)
  check "--prefix $prefix: as many zsh, fish and bash completions as tools ($tools), beside trace-ship's" test \
    "$(find "$(dirname "$(find "$dest" -name "_$tool")")" -name '_*' | wc -l)" -eq "$tools" -a \
    "$(find "$(dirname "$(find "$dest" -name "$tool.fish")")" -name '*.fish' | wc -l)" -eq "$tools" -a \
    "$(find "$dest" -path '*/bash-completion/completions/*' | wc -l)" -eq "$tools"
done
check "--prefix /usr: nothing in /etc (a package's files are under /usr)" test ! -e "$WORK/dest_usr/etc"
summary
