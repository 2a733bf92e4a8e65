#!/usr/bin/env bash
# The layering of lib/: the include graph derived from the sources has no cycle, between
# folders or between the files of one folder; docs/architecture.md's table gives every
# folder its layer; and the build's check (cmake/CheckLayers.cmake, run before anything is
# compiled) accepts the real tree and refuses each kind of violation planted in a copy of it;
# every tool's main is wiring, at most 120 lines; the web viewer's ES modules import each other
# without a cycle (import_graph.py), which a cycle planted in each form of import breaks; each
# is loaded from main.js and embedded by trace-serve (TRACEPIPE_VIEWER_FILES).
# Usage: test_layering.sh SOURCE_DIR LAYER_TABLE (the build's lib/layers.cmake)
set -u
source "$(dirname "$0")/../support/checks.sh"
src=$1
table=$2
graph=$src/tests/layering/include_graph.py
imports=$src/tests/layering/import_graph.py
viewer=$src/lib/serve/viewer
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

python3 "$imports" "$viewer" --entry main.js --embedded "$src/lib/CMakeLists.txt" > "$work/imports.txt"
imports_status=$?
cat "$work/imports.txt"
check "the viewer's modules import each other without a cycle, each loaded from main.js and embedded" \
  test "$imports_status" -eq 0
check "the viewer's entry composes the modules: main.js alone on the top layer" \
  grep -q "^layer [0-9]*: main.js (imports [^)]*)$" <(tail -n 1 "$work/imports.txt")
# trace-lab's front page (lib/lab/pages), by the same rules: lab.js composes its modules.
python3 "$imports" "$src/lib/lab/pages" --entry lab.js --embedded "$src/lib/CMakeLists.txt" --variable TRACEPIPE_LAB_FILES \
  > "$work/lab-imports.txt"
lab_status=$?
cat "$work/lab-imports.txt"
check "the lab page's modules import each other without a cycle, each loaded from lab.js and embedded" \
  test "$lab_status" -eq 0
check "the lab page's entry composes the modules: lab.js alone on the top layer" \
  grep -q "^layer [0-9]*: lab.js (imports [^)]*)$" <(tail -n 1 "$work/lab-imports.txt")
plant_js() {  # plant_js NAME TEXT: a copy of the viewer with TEXT (printf %b) above the first line of config.js
  rm -rf "${work:?}/$1"
  cp -r "$viewer" "$work/$1"
  { printf '%b\n' "$2"; cat "$viewer/config.js"; } > "$work/$1/config.js"
}
# main.js reaches every module (checked above), config.js too: an import of main.js from
# config.js closes a cycle, whatever the modules between them.
for form in "import * as app from './main.js';" "import {\n  app,\n} from \"./main.js\";" \
            "export { app } from './main.js';" "export * from './main.js';" "import './main.js';" \
            "const later = () => import('./main.js');"; do
  plant_js planted "$form"
  python3 "$imports" "$work/planted" > "$work/planted.txt"
  check "a cycle planted as $(printf '%b' "$form" | tr -s '\n ' ' ') is found" \
    grep -q "^import cycle between modules: .*config.js -> main.js" "$work/planted.txt"
  check "  and named by the import that closes it" grep -qF "config.js -> main.js: $work/planted/config.js:1" "$work/planted.txt"
done
plant_js commented "// import * as app from './main.js';\n/* import('./main.js') */"
python3 "$imports" "$work/commented" > "$work/commented.txt"
check "an import in a comment is no edge" test $? -eq 0
plant_js missing "import { ring } from './rings.js';"
python3 "$imports" "$work/missing" > "$work/missing.txt"
check "an import of a file that is not a viewer module is reported" \
  grep -qF "$work/missing/config.js:1: imports ./rings.js, which is not a module of $work/missing" "$work/missing.txt"
rm -rf "${work:?}/orphan"
cp -r "$viewer" "$work/orphan"
echo "export const unused = 1;" > "$work/orphan/chart.js"
sed 's/set(TRACEPIPE_VIEWER_FILES /&gone.js /' "$src/lib/CMakeLists.txt" > "$work/CMakeLists.txt"
python3 "$imports" "$work/orphan" --entry main.js --embedded "$work/CMakeLists.txt" > "$work/orphan.txt"
check "a module main.js does not load is reported" grep -qF "$work/orphan/chart.js: not reached from main.js" "$work/orphan.txt"
check "a module trace-serve does not embed is reported" \
  grep -qF "$work/orphan/chart.js: not in TRACEPIPE_VIEWER_FILES ($work/CMakeLists.txt)" "$work/orphan.txt"
check "an embedded file that is not a module is reported" \
  grep -qF "$work/CMakeLists.txt: TRACEPIPE_VIEWER_FILES has gone.js, which is not a module of $work/orphan" "$work/orphan.txt"
summary
