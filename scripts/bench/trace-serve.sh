#!/usr/bin/env bash
# Benchmark of trace-serve (issue: trace-serve, "Speed") against the peer a user would
# otherwise write, a Node `ws` broadcast server (node-ws-broadcast.mjs), on the same
# generated stream in one run; a C++ client (ws-load) measures what the clients receive.
#   1. throughput, stdin -> 1 client              target >= 1M events/s
#   2. throughput, stdin -> 100 clients            target >= 3x the Node server
#   3. latency p99 at 10k events/s, 100 clients    target < 5 ms
#   4. peak RSS with a stalled client              target: bounded
# Usage: scripts/bench/trace-serve.sh [RECORDS]   (default 1000000)
set -euo pipefail
source "$(dirname "$0")/common.sh"
ensure_built tools/trace-serve tools/itm-decode tests/itm-synth tests/ws-load
records=${1:-1000000}
node_modules=$root/tests/serve/node_modules
[ -d "$node_modules/ws" ] || { echo "run scripts/install-deps first (npm ws for the Node peer)" >&2; exit 1; }
work=$(mktemp -d)
trap 'kill $(jobs -p) 2> /dev/null; rm -rf "$work"' EXIT
load=$build/tests/ws-load

# The stream: core-kind records from the synthetic target, then an end marker.
"$build/tests/itm-synth" --size $((records * 40)) --seed 9 | "$build/tools/itm-decode" |
  grep -v -e '"Exception"' -e '"PcSample"' -e '"Overflow"' -e '"DataTrace"' -e '"EventCounter"' -e '"Malformed"' |
  head -n "$records" > "$work/records.ndjson"
echo '{"timestamp":0,"port":0,"event":{"kind":"Text","data":{"message":"__end__"}}}' >> "$work/records.ndjson"
lines=$(wc -l < "$work/records.ndjson")
size=$(du -m "$work/records.ndjson" | cut -f1)
echo "trace-serve benchmark, $(nproc) cores: $lines records ($size MB)"

port_of() {  # port_of LOG: waits for the server's listening line
  local port=""
  for _ in $(seq 200); do
    port=$(grep -soE '(serving on http://127\.0\.0\.1:|listening on 127\.0\.0\.1:)[0-9]+' "$1" | grep -oE '[0-9]+$' || true)
    [ -n "$port" ] && { echo "$port"; return; }
    sleep 0.05
  done
  echo "server did not start: $(cat "$1")" >&2
  exit 1
}

# run SERVER CLIENTS STALLED FEEDER...: starts the server fed by FEEDER once the clients
# are ready; prints ws-load's JSON, then the server's peak RSS in kB.
run() {
  local server=$1 clients=$2 stalled=$3
  shift 3
  local log=$work/server.log ready=$work/ready
  rm -f "$ready" "$log"
  case $server in
    trace-serve)
      ( while [ ! -e "$ready" ]; do sleep 0.02; done; "$@" ) |
        /usr/bin/time -f '%M' -o "$work/rss" "$build/tools/trace-serve" --listen 127.0.0.1:0 ${SERVER_ARGS:-} 2> "$log" &
      ;;
    node)
      ( while [ ! -e "$ready" ]; do sleep 0.02; done; "$@" ) |
        /usr/bin/time -f '%M' -o "$work/rss" node "$root/scripts/bench/node-ws-broadcast.mjs" 0 2> "$log" &
      ;;
  esac
  local pid=$!
  local port
  port=$(port_of "$log")
  local extra=()
  [ "${LATENCY:-0}" = 1 ] && extra+=(--latency)
  "$load" --port "$port" --clients "$clients" --stalled "$stalled" --ready-file "$ready" --quiet 3 --timeout 300 "${extra[@]}" > "$work/result.json"
  sleep 0.5
  # Stop the server (the child of time, which then writes its peak RSS) and the feeder.
  pkill -TERM -P "$pid" 2> /dev/null || true
  wait "$pid" 2> /dev/null || true
  local rss
  rss=$(grep -E '^[0-9]+$' "$work/rss" 2> /dev/null | tail -1)
  echo "$(cat "$work/result.json") ${rss:-0}"
}

field() { python3 -c "import json,sys; print(json.loads(sys.argv[1].rsplit(' ',1)[0])['$2'])" "$1"; }
rss_of() { echo "${1##* }"; }

report() {  # report LABEL RESULT
  local r=$2
  printf '  %-12s %10s events/s delivered  (%s events, least per client %s of %s, %s s)  peak RSS %s MB\n' \
    "$1" "$(field "$r" events_per_sec)" "$(field "$r" events)" "$(field "$r" least_per_client)" "${3:-$lines}" \
    "$(field "$r" seconds)" "$(( $(rss_of "$r") / 1024 ))"
}

echo
echo "1. stdin -> 1 client (as fast as the input comes)"
# The Node server buffers without limit, so nothing is dropped there; for the same terms
# trace-serve gets a queue that holds the whole stream (its default, 1 MiB, drops instead).
export SERVER_ARGS="--queue-size 268435456"
ts1=$(run trace-serve 1 0 cat "$work/records.ndjson"); report trace-serve "$ts1"
nd1=$(run node 1 0 cat "$work/records.ndjson"); report node-ws "$nd1"
python3 -c "import sys; a,b=map(float,sys.argv[1:]); print(f'  ratio {a/b:.1f}x   (target: trace-serve >= 1M events/s: {\"met\" if a>=1e6 else \"NOT met\"})')" \
  "$(field "$ts1" events_per_sec)" "$(field "$nd1" events_per_sec)"

echo
echo "2. stdin -> 100 clients"
head -n 50000 "$work/records.ndjson" > "$work/small.ndjson"
tail -1 "$work/records.ndjson" >> "$work/small.ndjson"
ts100=$(run trace-serve 100 0 cat "$work/small.ndjson"); report trace-serve "$ts100" 50001
nd100=$(run node 100 0 cat "$work/small.ndjson"); report node-ws "$nd100" 50001
python3 -c "import sys; a,b=map(float,sys.argv[1:]); print(f'  ratio {a/b:.1f}x   (target >= 3x: {\"met\" if a>=3*b else \"NOT met\"})')" \
  "$(field "$ts100" events_per_sec)" "$(field "$nd100" events_per_sec)"

unset SERVER_ARGS

echo
echo "3. latency, 10k events/s for 10 s, 100 clients"
export LATENCY=1
tsl=$(run trace-serve 100 0 python3 "$root/scripts/bench/pace-records.py" 10000 10)
ndl=$(run node 100 0 python3 "$root/scripts/bench/pace-records.py" 10000 10)
unset LATENCY
for pair in "trace-serve:$tsl" "node-ws:$ndl"; do
  name=${pair%%:*}; r=${pair#*:}
  printf '  %-12s p50 %6s us   p99 %6s us   max %7s us   (%s samples, least per client %s)\n' "$name" \
    "$(field "$r" latency_p50_us)" "$(field "$r" latency_p99_us)" "$(field "$r" latency_max_us)" "$(field "$r" samples)" "$(field "$r" least_per_client)"
done
python3 -c "import sys; p=int(sys.argv[1]); print(f'  target p99 < 5 ms: {\"met\" if p<5000 else \"NOT met\"}')" "$(field "$tsl" latency_p99_us)"

echo
echo "4. one stalled client + 1 reader, the whole stream"
tss=$(run trace-serve 1 1 cat "$work/records.ndjson"); report trace-serve "$tss"
nds=$(run node 1 1 cat "$work/records.ndjson"); report node-ws "$nds"
echo "  trace-serve's memory is bounded by its per-client queue (--queue-size, 1 MB); the Node server buffers without limit"
