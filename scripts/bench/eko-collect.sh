#!/usr/bin/env bash
# Benchmark of eko-collect's poll cycle (issue: eko-collect, "Speed"): time and round trips
# per poll for 1, 4 and 16 tracers against QEMU's gdbstub running the rig firmware
# (tests/eko/fw, Cortex-M3), compared in the same run with gdb-multiarch in batch mode doing
# the same reads (connect, read each tracer's handle, history and log, detach: what a user
# would script otherwise); then 16 tracers at a 10 ms interval for 10 s.
# Targets: >= 10x faster per cycle than gdb batch; 10 ms sustainable with 16 tracers.
# Usage: scripts/bench/eko-collect.sh [GDB_CYCLES]   (default 20)
set -euo pipefail
source "$(dirname "$0")/common.sh"
ensure_built tools/eko-collect
for tool in qemu-system-arm arm-none-eabi-gcc gdb-multiarch; do
  command -v "$tool" > /dev/null || { echo "$tool is missing (scripts/install-deps installs it)"; exit 1; }
done
gdb_cycles=${1:-20}
work=$(mktemp -d)
qemu_pid=
trap '[ -n "$qemu_pid" ] && kill "$qemu_pid" 2> /dev/null; rm -rf "$work"' EXIT
"$root/tests/eko/fw/build.sh" "$work" > /dev/null
elf=$work/fw-cm3.elf
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
qemu-system-arm -M lm3s6965evb -cpu cortex-m3 -nographic -kernel "$elf" -gdb "tcp:127.0.0.1:$port" \
  < /dev/null > "$work/qemu.log" 2>&1 &
qemu_pid=$!
until ss -ltnH | grep -q ":$port "; do sleep 0.05; done  # no connect(): it would pause the VM
eko=$build/tools/eko-collect
tracers() { for i in $(seq "$1"); do printf 'TRACER_%s ' "$i"; done; }

# eko-collect: mean ms and round trips per poll over 300 polls at 10 ms.
eko_cycle() {  # eko_cycle N -> "MS TRIPS"
  # shellcheck disable=SC2046
  "$eko" -e "$elf" -g "127.0.0.1:$port" -i 10 --polls 300 --stats -q -o /dev/null $(tracers "$1") 2>&1 |
    sed -nE 's/.*round trips \(([0-9.]+) per poll\), ([0-9.]+) ms per poll.*/\2 \1/p'
}

# gdb-multiarch batch: one run per cycle, reading what eko-collect reads.
gdb_cycle() {  # gdb_cycle N -> "MS TRIPS"
  local n=$1 script=$work/read$1.gdb i
  : > "$script"
  for i in $(seq "$n"); do
    {
      echo "print *TRACER_$i"
      echo "print *TRACER_$i->history"
      echo "print *(logical_clock (*)[4]) TRACER_$i->history->clocks.storage_ptr"
      echo "x/256wx TRACER_$i->history->compact_log.storage_ptr"
    } >> "$script"
  done
  local start end trips
  start=$(date +%s%N)
  for i in $(seq "$gdb_cycles"); do
    gdb-multiarch -batch -nx -ex 'set confirm off' -ex 'set debug remote 1' -ex "target remote 127.0.0.1:$port" \
      -x "$script" -ex detach "$elf" > /dev/null 2> "$work/gdb.log"
  done
  end=$(date +%s%N)
  trips=$(grep -c "Sending packet" "$work/gdb.log" || true)  # the last run's packets: one cycle
  echo "$(( (end - start) / gdb_cycles / 1000 )) $trips" | awk '{ printf "%.3f %d\n", $1 / 1000, $2 }'
}

printf '%-9s %14s %12s %14s %12s %8s\n' tracers "eko ms/poll" "eko trips" "gdb ms/cycle" "gdb trips" ratio
for n in 1 4 16; do
  read -r eko_ms eko_trips < <(eko_cycle "$n")
  read -r gdb_ms gdb_trips < <(gdb_cycle "$n")
  ratio=$(awk -v g="$gdb_ms" -v e="$eko_ms" 'BEGIN { printf "%.0fx", g / e }')
  printf '%-9s %14s %12s %14s %12s %8s\n' "$n" "$eko_ms" "$eko_trips" "$gdb_ms" "$gdb_trips" "$ratio"
done

echo
echo "16 tracers at a 10 ms interval for 10 s:"
# shellcheck disable=SC2046
"$eko" -e "$elf" -g "127.0.0.1:$port" -i 10 --duration 10s --stats -q -o "$work/sustained.csv" $(tracers 16) 2>&1 |
  grep -E 'polls,' | sed 's/^eko-collect: /  /'
echo "  rows written: $(($(wc -l < "$work/sustained.csv") - 1))"
