#!/usr/bin/env bash
# The lab benchmark (issue 46): N boards at once through a rack leaf into an R3 hub and into
# ClickHouse by one and several trace-store processes; stores side by side and one killed;
# the five questions over 100M rows of 7 days and 100 boards; the per-board cost on a rack host.
# Usage: scripts/bench/lab.sh [--boards 10,50,100] [--rate 1000] [--seconds 20] [--rows 100M]
# (--help lists all; a smoke: --boards 2 --seconds 2 --rows 100K --kill-wait 0).
set -euo pipefail
source "$(dirname "$0")/common.sh"
ensure_built tools/trace-ship tools/trace-store tools/swo-capture tools/itm-decode
exec python3 -u "$root/scripts/bench/lab.py" "$build" "$@"
