#!/usr/bin/env bash
# Benchmark of trace-serve's own viewer at live rates (issue 17, item 7) against the original
# Callisto client on the same stream: the simulated target paced to each rate, through
# itm-decode and trace-serve, into headless Chromium. Targets: >= 200,000 events/s for 30 s
# with no drops, next frame < 100 ms, 1,000,000 records held.
# Usage: scripts/bench/viewer.sh [SECONDS [RATE...]]   (default 30 s at 50k 100k 200k 300k)
# TRACEPIPE_BENCH_TAB=load (durations, flame, ...): that tab open meanwhile (default timeline).
# TRACEPIPE_BENCH_CALLISTO=0: our viewer only; TRACEPIPE_BENCH_TRACE=1: the page's longest tasks;
# TRACEPIPE_BENCH_TOP=1: the server sends its statistics (--top-interval 1) whatever the tab.
set -euo pipefail
source "$(dirname "$0")/common.sh"
ensure_built tools/trace-serve tools/itm-decode tools/swo-capture
[ -d "$root/tests/serve/node_modules/ws" ] || { echo "run scripts/install-deps first (the ws package)" >&2; exit 1; }
seconds=${1:-30}
shift || true
rates=("$@")
[ ${#rates[@]} -gt 0 ] || rates=(50000 100000 200000 300000)
exec node "$root/scripts/bench/viewer-bench.mjs" "$build" "$root/../shared" "$seconds" "${rates[@]}"
