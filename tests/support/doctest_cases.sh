#!/usr/bin/env bash
# Runs a doctest binary with filters, failing when the filters select no test case (doctest
# itself passes then, having run nothing).
# Usage: doctest_cases.sh BINARY [DOCTEST-ARGS...]
set -u
count=$("$@" --count | sed -n 's/.*passing the current filters: \([0-9][0-9]*\).*/\1/p')
if [ "${count:-0}" -eq 0 ]; then
  echo "FAIL no test case of $(basename "$1") matches: ${*:2}"
  exit 1
fi
echo "$count test cases match: ${*:2}"
exec "$@"
