#!/usr/bin/env bash
# Each chart tab's drawing on a whole recording (issue 47): the simulated target's records
# (swo-capture --simulate | itm-decode) fed to trace-serve --top-interval 1, the viewer in
# headless Chromium with the tab open; once the stream has ended, the tab shown over the
# whole range (its "Fit all") and drawn 30 times: how long each draw takes in the page and
# how long until the second frame after it (two frames at 60 Hz, 33 ms, when nothing is
# slow). Target: the next frame within the viewer's 50 ms budget.
# Usage: scripts/bench/viewer-charts.sh [SIM_MB [TAB...]]   (default 20 MB of simulated SWO, every chart tab)
set -euo pipefail
source "$(dirname "$0")/common.sh"
sim_mb=${1:-20}
shift || true
ensure_built tools/trace-serve tools/itm-decode tools/swo-capture
[ -d "$root/tests/serve/node_modules/ws" ] || { echo "run scripts/install-deps first (the ws package)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$build/tools/swo-capture" --simulate --rate 0 --max-bytes $((sim_mb * 1000000)) | "$build/tools/itm-decode" > "$work/sim.ndjson"
exec node "$root/scripts/bench/viewer-charts.mjs" "$build/tools/trace-serve" "$work/sim.ndjson" "$@"
