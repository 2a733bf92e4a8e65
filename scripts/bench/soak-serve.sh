#!/usr/bin/env bash
# Soak: swo-capture --simulate | itm-decode | trace-serve for DURATION (default 600 s) with
# 20 WebSocket clients joining and leaving (one swap every 500 ms). Samples the server's RSS
# and open descriptors every 10 s, then ends the input and checks that every client still
# there gets its closing Stats with exact accounting (received + dropped = offered).
# Passes when RSS after warm-up grows by less than 10 % (and 5 MB), the descriptors return to
# where they started, and every final account is exact. Usage: scripts/bench/soak-serve.sh [SECONDS]
set -euo pipefail
source "$(dirname "$0")/common.sh"
duration=${1:-600}
ensure_built tools/swo-capture tools/itm-decode tools/trace-serve
work=$(mktemp -d)
trap 'kill $(jobs -p) 2> /dev/null || true; rm -rf "$work"' EXIT
mkfifo "$work/records"
"$build/tools/trace-serve" --listen 127.0.0.1:0 --stats < "$work/records" 2> "$work/serve.log" &
serve_pid=$!
# The capture runs until the soak driver is done; then its output (the server's input) ends.
( "$build/tools/swo-capture" --simulate --seed 3 --duration "$((duration + 5))s" | "$build/tools/itm-decode" ) > "$work/records" &
capture_pid=$!
for _ in $(seq 200); do grep -q "serving on" "$work/serve.log" && break; sleep 0.05; done
port=$(sed -n 's|.*serving on http://127.0.0.1:\([0-9]*\)/.*|\1|p' "$work/serve.log" | head -1)
echo "soak: trace-serve pid $serve_pid on port $port for $duration s, 20 clients joining and leaving"
node "$root/scripts/bench/soak-serve.mjs" "ws://127.0.0.1:$port/ws" "$serve_pid" "$duration" 10 > "$work/figures" &
driver_pid=$!
while ! grep -q READY_TO_END "$work/figures" 2> /dev/null; do sleep 1; done
kill "$capture_pid" 2> /dev/null || true
pkill -P "$capture_pid" 2> /dev/null || true
wait "$driver_pid"
figures=$(grep '^{' "$work/figures")
kill -TERM "$serve_pid"
wait "$serve_pid" || true
echo "$figures" | jq .
grep -E "records read" "$work/serve.log" || true
verdict=$(echo "$figures" | jq -r '
  (.rss_mb_last - .rss_mb_first_warm) as $growth
  | if ($growth > (.rss_mb_first_warm * 0.10) and $growth > 5) then "FAIL: RSS grew by \($growth) MB after warm-up"
    elif .fds_last > .fds_first then "FAIL: descriptors \(.fds_first) -> \(.fds_last)"
    elif .exact_accounting != .clients then "FAIL: \(.exact_accounting) of \(.clients) final accounts exact"
    else "ok: RSS \(.rss_mb_first_warm) -> \(.rss_mb_last) MB (max \(.rss_mb_max)), descriptors \(.fds_first) -> \(.fds_last), \(.joins) joins, every final account exact" end')
echo "$verdict"
[[ $verdict == ok* ]]
