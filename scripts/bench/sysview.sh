#!/usr/bin/env bash
# Benchmark of sysview-decode (issue: RTT and SystemView, "Speed"): MB/s of SystemView stream
# decoded into records, on a recording SEGGER's own target code made (tests/sysview/
# native_target.c with ../shared's SEGGER_SYSVIEW.c and SEGGER_RTT.c: 200000 scheduled calls of
# every kind, overflows included) repeated to SIZE MB; peak RSS at 1x and 4x the input (memory
# stays flat). In the same run: cat (reading the input, the ceiling) and the Python decoder an
# afternoon gives (scripts/bench/sysview_reference.py, on a 16 MB slice).
# Target: >= 200 MB/s (100x what a J-Link sustains over RTT).
# Usage: scripts/bench/sysview.sh [SIZE_MB]   (default 256)
set -euo pipefail
source "$(dirname "$0")/common.sh"
ensure_built tools/sysview-decode
segger=${TRACEPIPE_SHARED_DIR:-$root/../shared}/reference/segger
[ -d "$segger" ] || { echo "needs SEGGER's sources in $segger (../shared)"; exit 1; }
size_mb=${1:-256}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
includes=(-I"$segger/rtt/RTT" -I"$segger/rtt/Config" -I"$segger/systemview/SYSVIEW" -I"$segger/systemview/Config"
          -I"$segger/systemview/SEGGER")
cc -O1 -w "${includes[@]}" -DSEGGER_SYSVIEW_RTT_BUFFER_SIZE=4096 -include "$root/tests/sysview/rig_hooks.h" \
  "$segger/rtt/RTT/SEGGER_RTT.c" "$segger/systemview/SYSVIEW/SEGGER_SYSVIEW.c" "$root/tests/sysview/native_target.c" \
  -o "$work/native_target"
"$work/native_target" "$work/one.bin" "$work/calls.jsonl" 200000
one=$(stat -c %s "$work/one.bin")
copies=$(( size_mb * 1048576 / one + 1 ))
for _ in $(seq "$copies"); do cat "$work/one.bin"; done > "$work/stream.bin"
for _ in 1 2 3 4; do cat "$work/stream.bin"; done > "$work/stream4.bin"
bytes=$(stat -c %s "$work/stream.bin")
head -c 16777216 "$work/stream.bin" > "$work/slice.bin"
decode=$build/tools/sysview-decode
records=$("$decode" --ticks "$work/one.bin" 2> /dev/null | wc -l)

ours=$(best_of_3 "'$decode' --ticks '$work/stream.bin' -o /dev/null 2> /dev/null")
frame_only=$(best_of_3 "'$decode' --format none '$work/stream.bin' 2> /dev/null")
"$decode" --ticks "$work/stream.bin" -o "$work/records.ndjson" 2> /dev/null
ndjson=$(stat -c %s "$work/records.ndjson")
pipe=$(best_of_3 "cat '$work/records.ndjson' | cat > /dev/null")
rm -f "$work/records.ndjson"
ours_ns=$(best_of_3 "'$decode' '$work/stream.bin' -o /dev/null 2> /dev/null")
ceiling=$(best_of_3 "cat '$work/stream.bin' > /dev/null")
python=$(best_of_3 "python3 '$root/scripts/bench/sysview_reference.py' '$work/slice.bin' > /dev/null")
rss1=$(peak_rss_kb "'$decode' '$work/stream.bin' -o /dev/null 2> /dev/null")
rss4=$(peak_rss_kb "'$decode' '$work/stream4.bin' -o /dev/null 2> /dev/null")
mbs() { awk -v b="$1" -v s="$2" 'BEGIN { printf "%.0f", b / 1048576 / s }'; }
echo "input: $copies copies of a $one-byte recording by SEGGER's code ($records records each), $(( bytes / 1048576 )) MB"
printf '  %-40s %10s %10s\n' "" seconds "MB/s"
printf '  %-40s %10s %10s\n' "sysview-decode --ticks" "$ours" "$(mbs "$bytes" "$ours")"
printf '  %-40s %10s %10s\n' "sysview-decode (ns from the Init rate)" "$ours_ns" "$(mbs "$bytes" "$ours_ns")"
printf '  %-40s %10s %10s\n' "sysview-decode --format none (framing)" "$frame_only" "$(mbs "$bytes" "$frame_only")"
printf '  %-40s %10s %10s\n' "cat > /dev/null (the ceiling)" "$ceiling" "$(mbs "$bytes" "$ceiling")"
printf '  %-40s %10s %10s\n' "Python reference (16 MB slice)" "$python" "$(mbs 16777216 "$python")"
awk -v a="$(mbs "$bytes" "$ours")" -v b="$(mbs 16777216 "$python")" \
  'BEGIN { printf "  ratio: sysview-decode %.0fx the Python decoder; target 200 MB/s\n", a / b }'
echo "  peak RSS: $rss1 KB for 1x, $rss4 KB for 4x the input"
awk -v n="$ndjson" -v b="$bytes" -v s="$ours" -v p="$pipe" 'BEGIN {
  printf "  the records are %.1fx the input: %.0f MB/s of NDJSON written; cat | cat moves that NDJSON at %.0f MB/s\n",
         n / b, n / 1048576 / s, n / 1048576 / p }'
