#!/usr/bin/env bash
# Every long option a tool's --help lists must appear in its man page and in its bash,
# zsh and fish completions (DESIGN.md: "kept in step with its options by a test").
# Usage: docs_in_step.sh PROJECT_ROOT TOOL_BINARY...
set -u
root=$1
shift
passed=0
failed=0
for binary in "$@"; do
  tool=$(basename "$binary")
  options=$("$binary" --help | sed -n '/^Options:/,/^Exit codes:/p' | grep -oE -- '--[a-z][a-z0-9-]+' | sort -u)
  [ -n "$options" ] || { echo "FAIL $tool: no options found in --help"; failed=$((failed + 1)); continue; }
  for doc in "man/$tool.1" "completions/bash/$tool" "completions/zsh/_$tool" "completions/fish/$tool.fish"; do
    file=$root/$doc
    if [ ! -f "$file" ]; then
      echo "FAIL $tool: $doc is missing"
      failed=$((failed + 1))
      continue
    fi
    # man pages escape dashes as \-; fish lists options without the leading dashes.
    text=$(sed -e 's/\\-/-/g' "$file")
    for option in $options; do
      name=${option#--}
      if grep -qE -- "(--|-l )$name([^a-z0-9-]|\$)" <<< "$text"; then
        passed=$((passed + 1))
      else
        echo "FAIL $tool: $doc does not mention $option"
        failed=$((failed + 1))
      fi
    done
  done
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
