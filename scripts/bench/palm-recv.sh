#!/usr/bin/env bash
# Benchmark of palm-recv (issue: palm-recv, "Speed"): parser throughput in messages/s and
# MB/s, then end-to-end messages/s over loopback (TCP senders -> palm-recv -> NDJSON on a
# pipe, counted) with 1 and 50 concurrent senders. Target: >= 1M messages/s for the parser.
# Usage: scripts/bench/palm-recv.sh [MESSAGES]   (default 1000000 in total per run)
set -euo pipefail
source "$(dirname "$0")/common.sh"
ensure_built tools/palm-recv tests/palm-bench
total=${1:-1000000}
bench=$build/tests/palm-bench
work=$(mktemp -d)
trap 'kill $(jobs -p) 2> /dev/null; rm -rf "$work"' EXIT

echo "palm-recv benchmark, $(nproc) cores"
"$bench" parse --messages "$total" --size 40

end_to_end() {  # end_to_end SENDERS
  local senders=$1 per=$((total / $1)) log=$work/recv-$1.log
  mkfifo "$work/out-$senders"
  # The counter opens the pipe first: a writer's open waits for a reader.
  "$bench" count --expect $((per * senders)) < "$work/out-$senders" > "$work/count-$senders" &
  local counter=$!
  "$build/tools/palm-recv" --listen 127.0.0.1:0 > "$work/out-$senders" 2> "$log" &
  local receiver=$!
  local port=""
  for _ in $(seq 100); do
    port=$(grep -soE 'listening on 127\.0\.0\.1:[0-9]+' "$log" | grep -oE '[0-9]+$' || true)
    [ -n "$port" ] && break
    sleep 0.05
  done
  local start end
  start=$(date +%s.%N)
  "$bench" send --port "$port" --senders "$senders" --messages "$per" --size 40
  wait "$counter"
  end=$(date +%s.%N)
  kill "$receiver"
  wait "$receiver" 2> /dev/null || true
  awk -v n="$(cat "$work/count-$senders")" -v a="$start" -v b="$end" -v k="$senders" \
    'BEGIN { printf "end to end, %2d senders      %10.0f messages/s  (%d records in %.2f s)\n", k, n / (b - a), n, b - a }'
}
end_to_end 1
end_to_end 50
echo "target: parser >= 1000000 messages/s"
