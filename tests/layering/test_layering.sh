#!/usr/bin/env bash
# The layering of lib/: the include graph derived from the sources has no cycle, between
# folders or between the files of one folder; docs/architecture.md's table gives every
# folder its layer; and the build's check (cmake/CheckLayers.cmake, run before anything is
# compiled) accepts the real tree and refuses each kind of violation planted in a copy of it;
# every tool's main is wiring, at most 120 lines.
# Usage: test_layering.sh SOURCE_DIR LAYER_TABLE (the build's lib/layers.cmake)
set -u
source "$(dirname "$0")/../support/checks.sh"
src=$1
table=$2
graph=$src/tests/layering/include_graph.py
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

layer_check() {  # layer_check LIB_DIR: the build's check, its messages in $work/check.log
  cmake -DLIB_DIR="$1" -DTABLE="$table" -DSTAMP="$work/stamp" -P "$src/cmake/CheckLayers.cmake" > "$work/check.log" 2>&1
}
refused() {  # refused LIB_DIR TEXT: the check fails and names TEXT
  ! layer_check "$1" && grep -qF "$2" "$work/check.log"
}
plant() {  # plant NAME FILE LINE: a fresh copy of lib/ with LINE added at the top of FILE
  rm -rf "${work:?}/$1"
  cp -r "$src/lib" "$work/$1"
  sed -i "1i $3" "$work/$1/$2"
}

python3 "$graph" "$src/lib" --readme "$src/docs/architecture.md" > "$work/layers.txt"
graph_status=$?
cat "$work/layers.txt"
check "the include graph of lib/ has no cycle, between folders or files, and docs/architecture.md agrees" \
  test "$graph_status" -eq 0
check "the graph puts core and itm at the bottom" grep -q "^layer 0: core (uses nothing), itm (uses nothing)$" "$work/layers.txt"
check "the build's check accepts lib/" layer_check "$src/lib"

plant cycle core/log.cpp '#include "serve/server.hpp"'
python3 "$graph" "$work/cycle" > "$work/cycle.txt"
check "a planted cycle is found" grep -q "^include cycle between folders: " "$work/cycle.txt"
check "the cycle names the include that closes it" grep -qF "lib/core/log.cpp:1" "$work/cycle.txt"

plant files serve/session_host.hpp '#include "serve/server_core.hpp"'
python3 "$graph" "$work/files" > "$work/files.txt"
check "a planted cycle between the files of a folder is found" \
  grep -q "^include cycle between the files of lib/serve: " "$work/files.txt"
check "the file cycle names the include that closes it" grep -qF "lib/serve/session_host.hpp:1" "$work/files.txt"

sed 's/^    layer 1  records /    layer 2  records /' "$src/docs/architecture.md" > "$work/architecture.md"
python3 "$graph" "$src/lib" --readme "$work/architecture.md" > "$work/readme.txt"
check "an architecture table that moves a folder is caught" \
  grep -qF "the architecture table puts records in layer 2; its includes put it in layer 1" "$work/readme.txt"

plant upward net/tcp_connect.cpp '#include "swo/rate.hpp"'
check "an upward include fails the build's check" \
  refused "$work/upward" 'lib/net/tcp_connect.cpp: #include "swo/rate.hpp" (lib/net does not declare lib/swo)'
plant private palm/parser.hpp '#include "records/record_check.hpp"'
check "a header including a PRIVATE layer fails it" \
  refused "$work/private" 'lib/palm/parser.hpp: #include "records/record_check.hpp" (a header may include only PUBLIC layers)'
plant cli core/log.hpp '#include <CLI/CLI.hpp>'
check "CLI11 outside lib/cli fails it" refused "$work/cli" "lib/core/log.hpp: #include <CLI/CLI.hpp> (CLI11 is for lib/cli and tools/ only)"
plant folder core/log.cpp '// an unchanged tree'
mkdir "$work/folder/undeclared"
check "an undeclared folder fails it" refused "$work/folder" "lib/undeclared/ is not a declared layer"
# A tool's main is wiring over lib/ (docs/design.md "Conventions"): at most 120 lines.
for main in "$src"/tools/*/main.cpp; do
  check "$(basename "$(dirname "$main")")'s main is at most 120 lines ($(wc -l < "$main"))" test "$(wc -l < "$main")" -le 120
done
summary
