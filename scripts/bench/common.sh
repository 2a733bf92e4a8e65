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
