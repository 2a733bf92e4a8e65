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
