#!/usr/bin/env bash
# trace-lab's front door benchmark (issue 45): the boards page over 200 boards, opening a live
# board, a stored range of 1M records to a viewer, search over 10M rows, RSS with 20 viewers;
# each against the engines' own answer (clickhouse-client, trace-pull, trace-query).
# Usage: scripts/bench/lab-front.sh [--boards 200] [--rows 10M] [--range 1M] [--viewers 20] [--smoke]
set -euo pipefail
source "$(dirname "$0")/common.sh"
ensure_built tools/trace-lab tools/trace-pull tools/trace-query tools/trace-ship tools/trace-store tools/swo-capture \
  tools/itm-decode
exec python3 -u "$root/scripts/bench/lab-front.py" "$build" "$@"
