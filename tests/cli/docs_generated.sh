#!/usr/bin/env bash
# The option documentation has one source, the tools' CLI11 definitions (lib/cli/option_docs):
#   - every committed completion file and man page (completions/, man/) is byte for byte
#     what the tool generates (the build's copy in BUILD_DIR/docs, which is what is installed,
#     and the tool asked directly), so a deleted file or a help text edited in one place fails;
#   - the comparison itself catches a deleted file and an edited help text (planted in a copy);
#   - the generated scripts work in the real shells: bash (`complete -p`, the function run
#     as bash runs it, with compgen), zsh (parsed, and registered by compinit), fish (parsed
#     with --no-execute, and asked with `complete -C`).
# Usage: docs_generated.sh PROJECT_ROOT BUILD_DIR TOOL_BINARY...
set -u
source "$(dirname "$0")/../support/checks.sh"
root=$1
build=$2
shift 2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

for shell in bash zsh fish; do
  command -v $shell > /dev/null || { echo "FAIL $shell is not installed (scripts/install-deps installs it)"; exit 1; }
done

documents() {  # documents TOOL: the four generated files, relative to a docs tree
  echo "completions/bash/$1 completions/zsh/_$1 completions/fish/$1.fish man/$1.1"
}
same_tree() {  # same_TREE TOOL A B: each of TOOL's documents is in A and equal to B's
  local doc
  for doc in $(documents "$1"); do
    [ -f "$2/$doc" ] && cmp -s "$2/$doc" "$3/$doc" || return 1
  done
}
# The man page's OPTIONS section (from .SH OPTIONS to the next .SH).
options_section() { awk '/^\.SH OPTIONS$/ { on = 1; print; next } /^\.SH / { on = 0 } on' "$1"; }

# bash: what the completion function offers for the words given (the last is completed).
bash_offers() {  # bash_offers FILE WORD...
  local file=$1
  shift
  bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
    spec=$(complete -p "$1") || exit 1; fn=${spec#* -F }; fn=${fn%% *}
    "$fn"; printf "%s\n" "${COMPREPLY[@]}"' bash "$file" "$@"
}
fish_offers() {  # fish_offers FILE COMMAND_LINE
  fish --no-config -c "source '$1'; complete -C '$2'" | cut -f1
}

for binary in "$@"; do
  tool=$(basename "$binary")
  generated=$build/docs
  check "$tool: the committed completions and man page are what it generates" same_tree "$tool" "$root" "$generated"
  for shell in bash zsh fish; do
    file=$(documents "$tool" | tr ' ' '\n' | grep "completions/$shell/")
    check "$tool --generate-completions $shell gives the installed file" \
      cmp -s <("$binary" --generate-completions $shell) "$generated/$file"
  done
  check "$tool --generate-man-options gives the man page's OPTIONS" \
    cmp -s <("$binary" --generate-man-options) <(options_section "$generated/man/$tool.1")

  # An option with choices and a long option, from the definitions as --help prints them.
  bash_file=$generated/completions/bash/$tool
  check "bash: complete -p names $tool's function" bash -c "source '$bash_file'; complete -p '$tool' | grep -q -- ' -F _'"
  check "bash: --log-f completes to --log-format" grep -qx -- --log-format <(bash_offers "$bash_file" "$tool" --log-f)
  check "bash: --log-format offers text and json" \
    test "$(bash_offers "$bash_file" "$tool" --log-format '' | sort | tr '\n' ' ')" = "json text "
  zsh_file=$generated/completions/zsh/_$tool
  check "zsh: _$tool parses" zsh -n "$zsh_file"
  mkdir -p "$work/zsh-$tool"
  cp "$zsh_file" "$work/zsh-$tool/"
  check "zsh: compinit registers _$tool for $tool" zsh -f -c "fpath=('$work/zsh-$tool' \$fpath); autoload -Uz compinit
    compinit -u -d '$work/zcompdump-$tool'; [[ \${_comps[$tool]} == _$tool ]]"
  fish_file=$generated/completions/fish/$tool.fish
  check "fish: $tool.fish parses" fish --no-execute "$fish_file"
  check "fish: --log-f completes to --log-format" grep -qx -- --log-format <(fish_offers "$fish_file" "$tool --log-f")
  check "fish: --log-format offers text and json" \
    test "$(fish_offers "$fish_file" "$tool --log-format " | sort | tr '\n' ' ')" = "json text "
done

# Subcommands (chibi-pull): offered by name, and each one's own options after it.
for binary in "$@"; do
  [ "$(basename "$binary")" = chibi-pull ] || continue
  bash_file=$build/docs/completions/bash/chibi-pull
  check "bash: chibi-pull offers its subcommands" grep -qx timeline <(bash_offers "$bash_file" chibi-pull '')
  check "bash: chibi-pull timeline offers --svg" grep -qx -- --svg <(bash_offers "$bash_file" chibi-pull timeline --s)
  check "fish: chibi-pull offers its subcommands" grep -qx watch <(fish_offers "$build/docs/completions/fish/chibi-pull.fish" "chibi-pull ")
  check "fish: chibi-pull watch offers --every" \
    grep -qx -- --every <(fish_offers "$build/docs/completions/fish/chibi-pull.fish" "chibi-pull watch --ev")
done

# The comparison fails where it must: a committed file deleted, a help text edited.
first=$(basename "$1")
for variant in deleted edited; do
  mkdir -p "$work/$variant"
  cp -r "$root/completions" "$root/man" "$work/$variant/"
done
rm "$work/deleted/completions/fish/$first.fish"
sed -i '0,/^\.TP$/{n;n;s/$/ (edited by hand)/}' "$work/edited/man/$first.1"
check "the planted edit changed the man page" bash -c "! cmp -s '$work/edited/man/$first.1' '$root/man/$first.1'"
check "a deleted completion file is caught" bash -c "$(declare -f documents same_tree); ! same_tree '$first' '$work/deleted' '$build/docs'"
check "a help text edited in the man page only is caught" \
  bash -c "$(declare -f documents same_tree); ! same_tree '$first' '$work/edited' '$build/docs'"
summary
