#!/usr/bin/env bash
# Benchmark of trace-filter and trace-csv (issue: trace-filter and trace-csv, "Speed").
# Generates a ~200 MB record file (itm-decode over the itm-synth stream: text, counters,
# RTOS records, markers, DWT exceptions and PC samples), then in one run times the
# tools next to the equivalent jq, gojq (a second jq, in Go) and Miller commands and prints
# throughput, ratios and peak RSS. Then the same for records of a stream the project's
# generator did not write (itm-mixes.py rtos-printf: other kinds, values and lengths, and
# "time_exact" on many lines), against jq. Targets (issue 20): trace-filter --kind >= 1.5 GB/s and
# >= 25x jq, trace-csv >= 20x jq; >= 3x mlr; memory flat.
# Usage: scripts/bench/record-tools.sh [SIZE_MB]   (default 200: MB of records)
set -euo pipefail
source "$(dirname "$0")/common.sh"
size_mb=${1:-200}
ensure_built tools/itm-decode tools/trace-filter tools/trace-csv tests/itm-synth
for tool in jq gojq mlr; do command -v "$tool" > /dev/null || { echo "needs $tool (scripts/install-deps)"; exit 1; }; done
tools=$build/tools
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
records=$work/records.ndjson
# itm-decode writes ~4.5 bytes of records per byte of this ITM stream.
"$build/tests/itm-synth" --size $((size_mb * 1000000 * 2 / 9)) --seed 1 | "$tools/itm-decode" > "$records"
mix_records=$work/mix-records.ndjson
# ... and ~11.6 bytes per byte of the rtos-printf mix.
python3 "$(dirname "$0")/itm-mixes.py" rtos-printf $((size_mb * 1000000 * 10 / 116)) 2 |
  "$tools/itm-decode" 2> /dev/null > "$mix_records"
bytes=$(stat -c %s "$records")
lines=$(wc -l < "$records")

measure() {  # measure NAME RUNS COMMAND: best wall time and its peak RSS
  local name=$1 runs=$2 best=999999 rss=0 out t m
  for _ in $(seq "$runs"); do
    out=$( { /usr/bin/time -f "%e %M" bash -c "$3" > /dev/null; } 2>&1 | tail -n 1)
    t=${out% *}
    m=${out#* }
    if awk -v a="$t" -v b="$best" 'BEGIN { exit !(a < b) }'; then best=$t; rss=$m; fi
  done
  printf '%s %s %s\n' "$name" "$best" "$rss"
}

filter_expr='select(.event.kind == "Text")'
csv_columns='time,port,kind,message'
echo "record tools benchmark: $(awk -v b="$bytes" 'BEGIN { printf "%.1f", b / 1e6 }') MB, $lines records, $(nproc) cores"
results=$work/results
{
  measure "trace-filter --kind Text" 3 "'$tools/trace-filter' --kind Text '$records'"
  measure "trace-filter --kind Text --threads 1" 3 "'$tools/trace-filter' --kind Text --threads 1 '$records'"
  measure "trace-filter --kind Text < pipe" 3 "cat '$records' | '$tools/trace-filter' --kind Text"
  measure "trace-filter --kind Text < pipe, 1 thread" 3 "cat '$records' | '$tools/trace-filter' --kind Text --threads 1"
  measure "jq -c 'select(.event.kind==\"Text\")'" 1 "jq -c '$filter_expr' '$records'"
  measure "gojq -c 'select(.event.kind==\"Text\")'" 1 "gojq -c '$filter_expr' '$records'"
  measure "mlr filter '\$event[\"kind\"]==\"Text\"'" 1 "mlr --ijsonl --ojsonl filter '\$event[\"kind\"] == \"Text\"' '$records'"
  measure "trace-filter --regex message=task.[0-3]" 3 "'$tools/trace-filter' --regex 'message=task [0-3] ' '$records'"
  measure "trace-csv --columns $csv_columns" 3 "'$tools/trace-csv' --columns $csv_columns '$records'"
  measure "trace-csv --columns ... --threads 1" 3 "'$tools/trace-csv' --columns $csv_columns --threads 1 '$records'"
  measure "trace-csv --columns ... < pipe" 3 "cat '$records' | '$tools/trace-csv' --columns $csv_columns"
  measure "trace-csv --columns ... < pipe, 1 thread" 3 \
    "cat '$records' | '$tools/trace-csv' --columns $csv_columns --threads 1"
  measure "jq -r '[...] | @csv'" 1 "jq -r '[.timestamp, .port, .event.kind, .event.data.message] | @csv' '$records'"
  measure "gojq -r '[...] | @csv'" 1 "gojq -r '[.timestamp, .port, .event.kind, .event.data.message] | @csv' '$records'"
  measure "mlr --ijsonl --ocsv flatten then cut" 1 \
    "mlr --ijsonl --ocsv flatten then cut -o -f timestamp,port,event.kind,event.data.message then unsparsify -f timestamp,port,event.kind,event.data.message '$records'"
  measure "trace-csv (inferred columns)" 3 "'$tools/trace-csv' '$records'"
} > "$results"

rate() { awk -v b="${2:-$bytes}" -v s="$1" 'BEGIN { printf "%.0f", (s > 0) ? b / 1e6 / s : 0 }'; }  # SECONDS [BYTES]
time_of() { grep -F "$1" "${2:-$results}" | head -1 | awk '{ print $(NF-1) }'; }  # NAME [RESULTS]
print_table() {  # print_table RESULTS BYTES: one row per measured command
  local line rss rest seconds name
  printf '%-44s %8s %9s %10s\n' "command" "seconds" "MB/s" "peak RSS"
  while read -r line; do
    rss=${line##* }
    rest=${line% *}
    seconds=${rest##* }
    name=${rest% *}
    printf '%-44s %8s %9s %8s KB\n' "$name" "$seconds" "$(rate "$seconds" "$2")" "$rss"
  done < "$1"
}
echo
print_table "$results" "$bytes"
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1fx", (a > 0) ? b / a : 0 }'; }
echo
echo "trace-filter --kind: $(rate "$(time_of 'trace-filter --kind')") MB/s   (target >= 1500)"
echo "trace-filter vs jq:  $(ratio "$(time_of 'trace-filter --kind')" "$(time_of 'jq -c')")   (target >= 25x)"
echo "trace-filter vs gojq: $(ratio "$(time_of 'trace-filter --kind')" "$(time_of 'gojq -c')")"
echo "trace-filter vs mlr: $(ratio "$(time_of 'trace-filter --kind')" "$(time_of 'mlr filter')")   (target >= 3x)"
echo "trace-csv vs jq:     $(ratio "$(time_of 'trace-csv --columns')" "$(time_of 'jq -r')")   (target >= 20x)"
echo "trace-csv vs gojq:   $(ratio "$(time_of 'trace-csv --columns')" "$(time_of 'gojq -r')")"
echo "trace-csv vs mlr:    $(ratio "$(time_of 'trace-csv --columns')" "$(time_of 'mlr --ijsonl --ocsv')")   (target >= 3x)"

# The independent mix's records.
mix_bytes=$(stat -c %s "$mix_records")
mix_results=$work/mix-results
{
  measure "trace-filter --kind Text" 3 "'$tools/trace-filter' --kind Text '$mix_records'"
  measure "trace-filter --kind Text --threads 1" 3 "'$tools/trace-filter' --kind Text --threads 1 '$mix_records'"
  measure "trace-filter --kind Text < pipe" 3 "cat '$mix_records' | '$tools/trace-filter' --kind Text"
  measure "jq -c 'select(.event.kind==\"Text\")'" 1 "jq -c '$filter_expr' '$mix_records'"
  measure "trace-csv --columns $csv_columns" 3 "'$tools/trace-csv' --columns $csv_columns '$mix_records'"
  measure "jq -r '[...] | @csv'" 1 "jq -r '[.timestamp, .port, .event.kind, .event.data.message] | @csv' '$mix_records'"
} > "$mix_results"
echo
echo "records of the independent rtos-printf mix: $(awk -v b="$mix_bytes" 'BEGIN { printf "%.1f", b / 1e6 }') MB, $(wc -l < "$mix_records") records"
print_table "$mix_results" "$mix_bytes"
mix_time_of() { time_of "$1" "$mix_results"; }
echo "trace-filter --kind: $(rate "$(mix_time_of 'trace-filter --kind')" "$mix_bytes") MB/s, $(ratio "$(mix_time_of 'trace-filter --kind')" "$(mix_time_of 'jq -c')") jq"
echo "trace-csv --columns: $(rate "$(mix_time_of 'trace-csv --columns')" "$mix_bytes") MB/s, $(ratio "$(mix_time_of 'trace-csv --columns')" "$(mix_time_of 'jq -r')") jq"
