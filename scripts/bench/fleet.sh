#!/usr/bin/env bash
# Benchmark of the fleet tools (issue "The fleet", Speed and memory): trace-ship against a plain
# cnats async publisher, trace-store against plain HTTP batches and clickhouse-client, RSS with
# the server away, board-to-browser latency. Real servers on loopback, started and stopped here.
# Usage: scripts/bench/fleet.sh [RECORDS_MAX_BYTES]   (swo-capture --max-bytes; default 26M, ~1M records)
# TMPDIR=/dev/shm keeps the servers' stores in memory: less of the disk's noise in the ratios.
set -euo pipefail
source "$(dirname "$0")/common.sh"
ensure_built tools/trace-ship tools/trace-pull tools/trace-store tools/trace-serve tools/swo-capture tools/itm-decode
exec python3 -u "$root/scripts/bench/fleet.py" "$build" "${1:-26M}"
