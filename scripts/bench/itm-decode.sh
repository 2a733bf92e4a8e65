#!/usr/bin/env bash
# Benchmark of itm-decode (issue: foundation, "Speed and memory").
# Builds Release if needed, generates a deterministic mixed ITM stream (itm-synth: 1-byte
# console text, 4-byte counters, RTOS records, markers, local timestamps, DWT PC samples
# and exceptions), then in one run measures:
#   - cat of the same file into the same pipe (the ceiling),
#   - itm-decode to NDJSON into that pipe: input MB/s, ratio to cat, output size,
#   - itm-decode --format none --stats (decoding only),
#   - TPIU-framed input,
#   - peak RSS (/usr/bin/time) for 20 MB, 200 MB and a 1 GB stream on stdin.
# Usage: scripts/bench/itm-decode.sh [SIZE_MB]   (default 200)
set -euo pipefail
source "$(dirname "$0")/common.sh"
size_mb=${1:-200}
ensure_built tools/itm-decode tests/itm-synth
decode=$build/tools/itm-decode
synth=$build/tests/itm-synth
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
input=$work/mixed.bin
"$synth" --size $((size_mb * 1000000)) --seed 1 > "$input"
"$synth" --size $((size_mb * 1000000)) --seed 1 --tpiu > "$work/mixed-tpiu.bin"
bytes=$(stat -c %s "$input")
mb=$(awk -v b="$bytes" 'BEGIN { printf "%.1f", b / 1e6 }')

rate() { awk -v b="$bytes" -v s="$1" 'BEGIN { printf "%.0f", (s > 0) ? b / 1e6 / s : 0 }'; }

echo "itm-decode benchmark: $mb MB mixed ITM stream, $(nproc) cores, $(uname -m)"
"$decode" --format none --stats "$input" 2>&1 | sed 's/^/  /'
cat_s=$(best_of_3 "cat '$input' | cat > /dev/null")
ndjson_s=$(best_of_3 "'$decode' '$input' | cat > /dev/null")
none_s=$(best_of_3 "'$decode' --format none '$input'")
tpiu_s=$(best_of_3 "'$decode' --tpiu '$work/mixed-tpiu.bin' | cat > /dev/null")
text_s=$(best_of_3 "'$decode' --format text '$input' | cat > /dev/null")
out_bytes=$("$decode" "$input" | wc -c)
cat_rate=$(rate "$cat_s")
printf '\n%-44s %8s %10s %12s\n' "command (input into a pipe)" "seconds" "MB/s in" "vs cat"
row() { printf '%-44s %8s %10s %12s\n' "$1" "$2" "$(rate "$2")" "$(awk -v r="$(rate "$2")" -v c="$cat_rate" 'BEGIN { printf "%.2fx", r / c }')"; }
row "cat FILE | cat" "$cat_s"
row "itm-decode FILE | cat  (NDJSON)" "$ndjson_s"
row "itm-decode --format text FILE | cat" "$text_s"
row "itm-decode --tpiu FILE.tpiu | cat" "$tpiu_s"
row "itm-decode --format none FILE  (no output)" "$none_s"
awk -v o="$out_bytes" -v b="$bytes" -v s="$ndjson_s" 'BEGIN {
  printf "\nNDJSON output: %.1f MB (%.1fx the input), written at %.0f MB/s\n", o / 1e6, o / b, o / 1e6 / s }'

echo
echo "peak RSS (KB):"
head -c 20000000 "$input" > "$work/small.bin"
printf '  %-40s %s\n' "20 MB file -> NDJSON" "$(peak_rss_kb "'$decode' '$work/small.bin' | cat > /dev/null")"
printf '  %-40s %s\n' "$mb MB file -> NDJSON" "$(peak_rss_kb "'$decode' '$input' | cat > /dev/null")"
printf '  %-40s %s\n' "1 GB on stdin -> --format none" \
  "$(peak_rss_kb "'$synth' --size 1000000000 --seed 2 | '$decode' --format none")"
echo
echo "targets: NDJSON >= 300 MB/s into a pipe, >= 1000 MB/s with no output, RSS < 20 MB flat."
echo "reference (not measurable here: orbuculum is not packaged in Debian): orbcat is reported"
echo "at ~56 MB/s with no output and 2-5 MB/s when printing (it flushes after every packet)."
