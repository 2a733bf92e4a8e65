#!/usr/bin/env bash
# A tool's options and its documents agree, both ways (docs/design.md "Conventions": generated from
# the options, and kept in step by this test and docs_generated):
#   - every long option of --help, and of each subcommand's --help, appears in the tool's man
#     page and in its bash, zsh and fish completions;
#   - every long option the man page defines (the terms of its .TP entries) and every long
#     option the completions offer exists in --help or in a subcommand's --help.
# Usage: docs_in_step.sh PROJECT_ROOT TOOL_BINARY...
set -u
root=$1
shift
passed=0
failed=0
pass() { passed=$((passed + 1)); }
fail() { echo "FAIL $*"; failed=$((failed + 1)); }

# The long options a --help text lists under "Options:" (before "Subcommands:"/"Exit codes:").
help_options() {
  sed -n '/^Options:/,/^\(Subcommands\|Exit codes\):/p' | grep -oE -- '--[a-z][a-z0-9-]+' | sort -u
}
subcommands() {
  sed -n '/^Subcommands:/,/^$/p' | awk 'NR > 1 && NF { print $1 }'
}

for binary in "$@"; do
  tool=$(basename "$binary")
  help=$("$binary" --help)
  options=$(help_options <<< "$help")
  for sub in $(subcommands <<< "$help"); do
    sub_options=$("$binary" "$sub" --help | help_options)
    [ -n "$sub_options" ] || { fail "$tool $sub: --help lists no options"; continue; }
    options=$(printf '%s\n%s\n' "$options" "$sub_options" | sort -u)
  done
  [ -n "$options" ] || { fail "$tool: no options found in --help"; continue; }

  documents=("man/$tool.1" "completions/bash/$tool" "completions/zsh/_$tool" "completions/fish/$tool.fish")
  for doc in "${documents[@]}"; do
    file=$root/$doc
    [ -f "$file" ] || { fail "$tool: $doc is missing"; continue; }
    # man pages escape dashes as \-; fish names options without the leading dashes (-l NAME).
    text=$(sed -e 's/\\-/-/g' "$file")
    for option in $options; do
      if grep -qE -- "(--|-l )${option#--}([^a-z0-9-]|\$)" <<< "$text"; then pass; else fail "$tool: $doc does not mention $option"; fi
    done
    # The other way: what the document offers must exist.
    case $doc in
      man/*) offered=$(awk '/^\.TP/ { getline; print }' "$file" | sed -e 's/\\-/-/g' | grep -oE -- '--[a-z][a-z0-9-]+') ;;
      *.fish) offered=$(grep -oE -- ' -l [a-z][a-z0-9-]+' <<< "$text" | sed 's/ -l /--/') ;;
      *) offered=$(grep -oE -- '(^|[^a-z0-9-])--[a-z][a-z0-9-]+' <<< "$text" | grep -oE -- '--[a-z][a-z0-9-]+') ;;
    esac
    for option in $(sort -u <<< "$offered"); do
      if grep -qxF -- "$option" <<< "$options"; then pass; else fail "$tool: $doc offers $option, which --help does not list"; fi
    done
  done
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
