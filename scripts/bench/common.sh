# Shared by the benchmark scripts (sourced): builds Release once if a tool is missing.
# Sets root and build.
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=$root/build
ensure_built() {  # ensure_built EXECUTABLE...
  local missing=0 file
  for file in "$@"; do [ -x "$build/$file" ] || missing=1; done
  if [ "$missing" -eq 1 ]; then
    cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release > /dev/null
    cmake --build "$build" > /dev/null
  fi
}
best_of_3() {  # prints the best wall time in seconds of a shell command, of three runs
  local best=999999 t
  for _ in 1 2 3; do
    t=$( { /usr/bin/time -f "%e" bash -c "$1" > /dev/null; } 2>&1 | tail -n 1)
    best=$(awk -v a="$t" -v b="$best" 'BEGIN { print (a < b) ? a : b }')
  done
  echo "$best"
}
peak_rss_kb() { { /usr/bin/time -f "%M" bash -c "$1" > /dev/null; } 2>&1 | tail -n 1; }
records_row_header() { printf '%-44s %10s %10s %12s %10s\n' input records seconds "records/s" "RSS KB"; }
# records_row NAME FILE COMMAND: the records in FILE, COMMAND's best time over them, records
# per second and peak RSS, as a row under records_row_header; the time is left in
# records_row_seconds.
records_row() {
  local lines rss
  lines=$(wc -l < "$2")
  records_row_seconds=$(best_of_3 "$3")
  rss=$(peak_rss_kb "$3")
  printf '%-44s %10s %10s %12s %10s\n' "$1" "$lines" "$records_row_seconds" \
    "$(awk -v n="$lines" -v s="$records_row_seconds" 'BEGIN { printf "%.2fM", (s > 0) ? n / s / 1e6 : 0 }')" "$rss"
}
