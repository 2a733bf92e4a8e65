#!/usr/bin/env bash
# Byte-identity of two builds' tools, for a refactoring that must not change behaviour: every
# tool's stdout (and exit status) on the same inputs, compared byte for byte. Inputs: the
# independent mixes of itm-mixes.py (rtos-printf, text, dwt, taskisr, tpiu), the simulated
# target and its truth records, the real captures in ../shared/reference/captures (host-time
# fields masked: they differ from run to run), the records itm-decode makes of the mixes, and
# the record fuzz corpora; through itm-decode (NDJSON, text, frames, TPIU), swo-capture,
# trace-filter, trace-csv, trace-top and trace-timeline.
# Usage: scripts/bench/same-output.sh OLD_TOOLS_DIR [NEW_TOOLS_DIR]   (default new: build/tools)
set -u
source "$(dirname "$0")/common.sh"
old=$(cd "$1" && pwd)
new=$(cd "${2:-$build/tools}" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
for mix in rtos-printf text dwt taskisr tpiu; do python3 "$root/scripts/bench/itm-mixes.py" $mix 3000000 7 > $mix.itm; done
"$old/swo-capture" --simulate --rate 0 --max-bytes 2M --seed 3 --sim-events sim-truth.ndjson -o sim.swo 2> /dev/null
failed=0
same() {  # same NAME COMMAND (with {} for the tools' directory)
  local name=$1 cmd=$2 old_status new_status
  (eval "${cmd//\{\}/$old}") > old.out 2> /dev/null
  old_status=$?
  (eval "${cmd//\{\}/$new}") > new.out 2> /dev/null
  new_status=$?
  if cmp -s old.out new.out && [ $old_status = $new_status ]; then
    echo "same  $name ($(wc -c < new.out) bytes, exit $new_status)"
  else
    echo "DIFF  $name (exit $old_status / $new_status)"
    failed=$((failed + 1))
  fi
}
for mix in rtos-printf text dwt taskisr; do
  same "itm-decode $mix" "{}/itm-decode $mix.itm"
  same "itm-decode --format text $mix" "{}/itm-decode --format text $mix.itm"
  same "itm-decode --frames $mix" "{}/itm-decode --frames $mix.itm"
done
same "itm-decode --tpiu tpiu" "{}/itm-decode --tpiu tpiu.itm"
same "itm-decode simulated" "{}/itm-decode sim.swo"
same "swo-capture --simulate --sim-events" "{}/swo-capture --simulate --rate 0 --max-bytes 1M --seed 5 --sim-events /dev/stdout -o /dev/null"
for capture in $(find "$root/../shared/reference/captures" -type f -name '*.bin' 2> /dev/null | sort); do
  name=$(basename "$capture")
  same "itm-decode $name (host time masked)" "{}/itm-decode $capture | sed -E 's/\"timestamp\":[0-9]+//g'"
  same "itm-decode --format text $name (host time masked)" "{}/itm-decode --format text $capture | cut -c 20-"
done
"$new/itm-decode" rtos-printf.itm > rtos.ndjson 2> /dev/null
"$new/itm-decode" dwt.itm > dwt.ndjson 2> /dev/null
cat "$root"/tests/fuzz/corpus/*record*/* > corpus.ndjson 2> /dev/null
for input in rtos.ndjson dwt.ndjson sim-truth.ndjson corpus.ndjson; do
  same "trace-filter --kind $input" "{}/trace-filter --kind Text,TaskSwitch,Exception $input"
  same "trace-filter --port --invert $input" "{}/trace-filter --port 1-3 --invert $input"
  same "trace-filter --regex $input" "{}/trace-filter --regex event.data.message=ok $input"
  same "trace-filter --threads 1 $input" "{}/trace-filter --threads 1 --kind Counter,Marker < $input"
  same "trace-csv $input" "{}/trace-csv $input"
  same "trace-csv --columns $input" "{}/trace-csv --columns timestamp,port,event.kind,event.data.name $input"
  same "trace-top --format table $input" "{}/trace-top --format table $input"
  same "trace-top --format folded $input" "{}/trace-top --format folded $input"
  same "trace-top --format ndjson --once $input" "{}/trace-top --format ndjson --once $input"
  same "trace-timeline $input" "{}/trace-timeline $input"
done
echo "$failed differences"
[ "$failed" -eq 0 ]
