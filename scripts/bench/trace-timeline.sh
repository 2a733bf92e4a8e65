#!/usr/bin/env bash
# Benchmark of trace-timeline (issue 21, item 3): records per second and peak memory on the
# simulated target's stream at two sizes, the larger about 10 M records (memory must be flat:
# the same peak RSS at both), and on an independent DWT-heavy mix (scripts/bench/itm-mixes.py,
# decoded by itm-decode). The JSON goes to /dev/null.
# Usage: scripts/bench/trace-timeline.sh [SIM_MB]   (default 260 MB of simulated SWO: ~10 M records)
set -euo pipefail
source "$(dirname "$0")/common.sh"
sim_mb=${1:-260}
ensure_built tools/trace-timeline tools/itm-decode tools/swo-capture
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$build/tools/swo-capture" --simulate --seed 5 --rate 0 --max-bytes $((sim_mb * 1000000)) | "$build/tools/itm-decode" \
  > "$work/sim.ndjson"
"$build/tools/swo-capture" --simulate --seed 6 --rate 0 --max-bytes $((sim_mb * 125000)) | "$build/tools/itm-decode" \
  > "$work/sim-eighth.ndjson"
python3 "$root/scripts/bench/itm-mixes.py" dwt $((sim_mb * 125000)) 1 | "$build/tools/itm-decode" > "$work/dwt.ndjson"
records_row_header
row() { records_row "$1" "$2" "'$build/tools/trace-timeline' --cpu-hz 64000000 -o /dev/null '$2'"; }  # row NAME FILE
row "trace-timeline (simulator)" "$work/sim.ndjson"
row "trace-timeline (simulator, 1/8)" "$work/sim-eighth.ndjson"
row "trace-timeline (DWT-heavy mix)" "$work/dwt.ndjson"
echo
echo "memory flat: compare the peak RSS of the two simulator rows (8x the records)."
