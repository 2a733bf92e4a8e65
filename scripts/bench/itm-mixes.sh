#!/usr/bin/env bash
# itm-decode on streams we did not write (issue 20): five mixes from an independent generator
# (scripts/bench/itm-mixes.py, written from the ARM ARM and the Callisto port map, sharing no
# code with lib/itm or itm-synth), beside itm-synth's own stream. For each, in one run: cat
# into a pipe, itm-decode to NDJSON into a pipe, itm-decode --format none, with
# MB/s, the ratio to cat and to orbcat's reported figures (2-5 MB/s printing, ~56 MB/s with no
# output: orbuculum is not packaged in Debian, so it cannot run here), and the peak RSS.
# NDJSON carries many bytes per input byte (a DWT packet of 3 bytes is a record of 150), so
# the pipe carries far more than the input: "JSON MB/s" is what itm-decode pushes through it,
# beside "cat JSON", cat pushing the same NDJSON through a pipe into cat (one thread copying in
# and out; itm-decode formats and writes on a second thread, so it can pass cat there). "floor": how fast
# one core merely walks the same stream packet by packet (tests/tools/itm_framing_floor.cpp:
# lengths from headers, packets counted, nothing decoded), the ceiling of any decoder that
# reads the stream in order on one thread; "of floor" is --format none's share of it.
# Usage: scripts/bench/itm-mixes.sh [UNIQUE_MB [COPIES]]   (default 16 MB generated, repeated 8x)
#        MIXES="text dwt" scripts/bench/itm-mixes.sh   (some of the mixes only)
set -euo pipefail
source "$(dirname "$0")/common.sh"
unique_mb=${1:-16}
copies=${2:-8}
ensure_built tools/itm-decode tests/itm-synth tests/itm-framing-floor
decode=$build/tools/itm-decode
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

mbps() { awk -v b="$1" -v s="$2" 'BEGIN { printf "%.0f", (s > 0) ? b / 1e6 / s : 0 }'; }

make_input() {  # make_input NAME: the mix, generated once and repeated
  local name=$1 one=$work/$1.one
  if [ "$name" = itm-synth ]; then
    "$build/tests/itm-synth" --size $((unique_mb * 1000000)) --seed 1 > "$one"
  else
    python3 "$root/scripts/bench/itm-mixes.py" "$name" $((unique_mb * 1000000)) 1 > "$one"
  fi
  for _ in $(seq "$copies"); do cat "$one"; done > "$work/$name.bin"
  local flags=""
  [ "$name" = tpiu ] && flags="--tpiu"
  "$decode" $flags "$one" > "$work/$name.ndjson"  # one copy's records, for cat JSON
  rm -f "$one"
}

echo "itm-decode on independent mixes: ${unique_mb} MB generated x ${copies}, $(nproc) cores, $(uname -m)"
printf '\n%-12s %5s %8s %7s %6s %9s %6s %9s %8s %6s %7s %6s %9s %6s %8s %9s %8s\n' mix MB "cat MB/s" "NDJSON" "vs cat" \
  "vs orbcat" "JSON x" "JSON MB/s" "cat JSON" "vs cat" "none" "vs cat" "vs orbcat" "floor" "of floor" "records" "RSS KB"
for mix in ${MIXES:-itm-synth rtos-printf text dwt taskisr tpiu}; do
  make_input "$mix"
  input=$work/$mix.bin
  flags=""
  [ "$mix" = tpiu ] && flags="--tpiu"
  bytes=$(stat -c %s "$input")
  cat_s=$(best_of_3 "cat '$input' | cat > /dev/null")
  ndjson_s=$(best_of_3 "'$decode' $flags '$input' | cat > /dev/null")
  none_s=$(best_of_3 "'$decode' $flags --format none '$input'")
  records=$("$decode" $flags --format none --stats "$input" 2>&1 | sed -n 's/.* \([0-9]*\) records;.*/\1/p' | head -n 1)
  json_bytes=$("$decode" $flags "$input" | wc -c)
  rss=$(peak_rss_kb "'$decode' $flags '$input' | cat > /dev/null")
  pipe_s=$(best_of_3 "for _ in \$(seq $copies); do cat '$work/$mix.ndjson'; done | cat > /dev/null")
  pipe_rate=$(mbps "$(($(stat -c %s "$work/$mix.ndjson") * copies))" "$pipe_s")
  json_rate=$(mbps "$json_bytes" "$ndjson_s")
  cat_rate=$(mbps "$bytes" "$cat_s")
  ndjson_rate=$(mbps "$bytes" "$ndjson_s")
  none_rate=$(mbps "$bytes" "$none_s")
  floor_rate=n/a  # the floor walks ITM packets, not TPIU frames
  [ "$mix" = tpiu ] || floor_rate=$("$build/tests/itm-framing-floor" "$input" | cut -d' ' -f1)
  vs_cat() { awk -v a="$1" -v c="$cat_rate" 'BEGIN { if (c > 0) printf "%.2fx", a / c; else printf "n/a" }'; }
  printf '%-12s %5.0f %8s %7s %6s %9s %6s %9s %8s %6s %7s %6s %9s %6s %8s %9s %8s\n' "$mix" \
    "$(awk -v b="$bytes" 'BEGIN { print b / 1e6 }')" "$cat_rate" "$ndjson_rate" "$(vs_cat "$ndjson_rate")" \
    "$(awk -v a="$ndjson_rate" 'BEGIN { printf "%.0f-%.0fx", a / 5, a / 2 }')" \
    "$(awk -v j="$json_bytes" -v b="$bytes" 'BEGIN { printf "%.1f", j / b }')" "$json_rate" \
    "$pipe_rate" "$(awk -v a="$json_rate" -v c="$pipe_rate" 'BEGIN { printf "%.2fx", a / c }')" \
    "$none_rate" "$(vs_cat "$none_rate")" \
    "$(awk -v a="$none_rate" 'BEGIN { printf "%.1fx", a / 56 }')" "$floor_rate" \
    "$(awk -v a="$none_rate" -v f="$floor_rate" 'BEGIN { if (f ~ /^[0-9]+$/ && f > 0) printf "%.0f%%", 100 * a / f; else printf "n/a" }')" \
    "$records" "$rss"
  rm -f "$input" "$work/$mix.ndjson"
done
echo
echo "NDJSON: itm-decode's records into a pipe (MB/s of input); JSON x: bytes of NDJSON written per input byte;"
echo "JSON MB/s: NDJSON written per second (what the pipe carries); cat JSON: cat pushing the same NDJSON"
echo "through a pipe, MB/s, and vs cat: JSON MB/s / cat JSON; none: --format none (decoding only);"
echo "floor: one core walking the packets and nothing else (the ceiling of an in-order one-thread decoder)."
echo "targets (issue 20): >= 300 MB/s NDJSON into a pipe and >= 1000 MB/s decoding only on EVERY mix, flat memory."
