# Pass/fail counting for the shell tests (sourced): `check NAME COMMAND...` runs the command
# and prints "ok   NAME" or "FAIL NAME"; `summary` prints ctest's "N passed, N failed" line
# and returns the exit status.
passed=0
failed=0

check() {
  local name=$1
  shift
  if "$@"; then
    passed=$((passed + 1))
    echo "ok   $name"
  else
    failed=$((failed + 1))
    echo "FAIL $name"
  fi
}

summary() {
  echo "$passed passed, $failed failed"
  [ "$failed" -eq 0 ]
}
