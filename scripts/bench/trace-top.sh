#!/usr/bin/env bash
# Benchmark of trace-top (issue 21): records per second on the simulated target's stream and
# on an independent DWT-heavy mix (scripts/bench/itm-mixes.py, decoded by itm-decode), in one
# run beside the cheapest aggregation jq and gojq can do on the same records (a count by
# kind: far less than trace-top computes), per record, with peak memory at two sizes
# (flat memory: it must not grow with the input). orbtop is not packaged in Debian, so it
# cannot run here. Target: >= 5 M records/s, flat memory. The same figures made by trace-serve
# --top-interval for the viewer's charts (with each task's, idle's and handler's time per
# interval, and the handlers' histograms) on the same records, served to nobody: what the
# viewer's Statistics, CPU load and Durations tabs cost the server beside its plain forwarding.
# Usage: scripts/bench/trace-top.sh [SIM_MB]   (default 40 MB of simulated SWO)
set -euo pipefail
source "$(dirname "$0")/common.sh"
sim_mb=${1:-40}
ensure_built tools/trace-top tools/trace-serve tools/itm-decode tools/swo-capture
for tool in jq gojq; do command -v "$tool" > /dev/null || { echo "needs $tool (scripts/install-deps)"; exit 1; }; done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$build/tools/swo-capture" --simulate --seed 5 --rate 0 --max-bytes $((sim_mb * 1000000)) | "$build/tools/itm-decode" \
  > "$work/sim.ndjson"
"$build/tools/swo-capture" --simulate --seed 6 --rate 0 --max-bytes $((sim_mb * 250000)) | "$build/tools/itm-decode" \
  > "$work/sim-quarter.ndjson"
python3 "$root/scripts/bench/itm-mixes.py" dwt $((sim_mb * 250000)) 1 | "$build/tools/itm-decode" > "$work/dwt.ndjson"
jq_expr='reduce inputs as $r ({}; .[$r.event.kind] += 1)'
records_row_header
row() {  # row NAME FILE COMMAND
  records_row "$@"
  echo "$1 $records_row_seconds" >> "$work/times"
}
row "trace-top --once (simulator)" "$work/sim.ndjson" "'$build/tools/trace-top' --once '$work/sim.ndjson'"
row "trace-top --once (simulator, 1/4)" "$work/sim-quarter.ndjson" \
  "'$build/tools/trace-top' --once '$work/sim-quarter.ndjson'"
row "trace-top --once (DWT-heavy mix)" "$work/dwt.ndjson" "'$build/tools/trace-top' --once '$work/dwt.ndjson'"
serve="'$build/tools/trace-serve' --listen 127.0.0.1:0 --exit-on-eof --quiet"
row "trace-serve, forwarding only (simulator)" "$work/sim.ndjson" "$serve '$work/sim.ndjson'"
row "trace-serve --top-interval 1 (simulator)" "$work/sim.ndjson" "$serve --top-interval 1 '$work/sim.ndjson'"
row "jq -n (count by kind, 1/4)" "$work/sim-quarter.ndjson" "jq -n '$jq_expr' '$work/sim-quarter.ndjson'"
row "gojq -n (count by kind, 1/4)" "$work/sim-quarter.ndjson" "gojq -n '$jq_expr' '$work/sim-quarter.ndjson'"
ratio() { awk -v a="$(grep "^$1 " "$work/times" | awk '{print $NF}')" -v b="$(grep "^$2 " "$work/times" | awk '{print $NF}')" \
  'BEGIN { printf "%.1fx", (b > 0) ? a / b : 0 }'; }
echo
echo "trace-top vs jq:   $(ratio "jq -n (count by kind, 1/4)" "trace-top --once (simulator, 1/4)") (same records)"
echo "trace-top vs gojq: $(ratio "gojq -n (count by kind, 1/4)" "trace-top --once (simulator, 1/4)") (same records)"
echo "target (issue 21): >= 5 M records/s on the simulator's stream, memory flat (compare the two simulator rows)."
