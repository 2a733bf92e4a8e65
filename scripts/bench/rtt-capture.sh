#!/usr/bin/env bash
# Benchmark of rtt-capture (issue: RTT and SystemView, "Speed"), on the RTT rig firmware
# (tests/rtt/fw: SEGGER's own SEGGER_RTT.c from ../shared) under QEMU's Cortex-M3:
# - over QEMU's gdbstub: bytes/s of a channel the firmware fills as fast as it is read
#   ("flood": 20000 lines of 72 bytes, BLOCK_IF_FIFO_FULL), polls, round trips and the time the
#   target was halted per poll; compared in the same run with gdb-multiarch in batch mode doing
#   one poll's reads per run (the descriptor, the 1 KiB ring, RdOff written back: what a user
#   would script), in ms per poll and the bytes/s that gives;
# - over CMSIS-DAP (the emulated probe of tests/usb under the real libusb): DAP_Transfer
#   commands per poll (the descriptor's) and per poll with data (the ring's, RdOff written back
#   in the same command), bytes per command, against the probe's limit (a v2 packet of 512
#   bytes carries 127 words read; v1's 64-byte report 15).
# Usage: scripts/bench/rtt-capture.sh [GDB_POLLS]   (default 20)
set -euo pipefail
source "$(dirname "$0")/common.sh"
ensure_built tools/rtt-capture
segger=${TRACEPIPE_SHARED_DIR:-$root/../shared}/reference/segger
[ -d "$segger" ] || { echo "needs SEGGER's sources in $segger (../shared)"; exit 1; }
for tool in qemu-system-arm arm-none-eabi-gcc gdb-multiarch; do
  command -v "$tool" > /dev/null || { echo "$tool is missing (scripts/install-deps installs it)"; exit 1; }
done
gdb_polls=${1:-20}
work=$(mktemp -d)
qemu_pid=
trap '[ -n "$qemu_pid" ] && kill "$qemu_pid" 2> /dev/null; rm -rf "$work"' EXIT
"$root/tests/rtt/fw/build.sh" "$segger" "$work" > /dev/null
elf=$work/rig-cm3.elf
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
qemu-system-arm -M lm3s6965evb -cpu cortex-m3 -display none -serial null -monitor none -kernel "$elf" \
  -gdb "tcp:127.0.0.1:$port" < /dev/null > "$work/qemu.log" 2>&1 &
qemu_pid=$!
until ss -ltnH | grep -q ":$port "; do sleep 0.05; done  # no connect(): it would pause the VM
rtt=$build/tools/rtt-capture

# rtt-capture: the flood, until 1 s without data.
start=$(date +%s%N)
"$rtt" -g "127.0.0.1:$port" --elf "$elf" --send $'flood\n' --idle-exit 1s --stats -o "$work/flood.txt" \
  2> "$work/rtt.log"
end=$(date +%s%N)
bytes=$(stat -c %s "$work/flood.txt")
lines=$(grep -c '^flood ' "$work/flood.txt" || true)
seconds=$(awk -v s="$start" -v e="$end" 'BEGIN { printf "%.3f", (e - s) / 1e9 - 1 }')  # less the idle second
polls=$(sed -nE 's/.*: ([0-9]+) polls \(([0-9]+) with data\).*/\2/p' "$work/rtt.log")
trips=$(sed -nE 's/.*round trips \(([0-9.]+) per poll\).*/\1/p' "$work/rtt.log")
halted=$(sed -nE 's/.*halted ([0-9.]+) ms per poll on average, ([0-9.]+) ms at most.*/\1 \2/p' "$work/rtt.log")
rtt_rate=$(awk -v b="$bytes" -v s="$seconds" 'BEGIN { printf "%.0f", b / s }')
rtt_ms=$(awk -v s="$seconds" -v p="$polls" 'BEGIN { printf "%.3f", s * 1000 / p }')

# gdb-multiarch batch: one run per poll (connect, read the descriptor and the ring, write RdOff, detach).
cat > "$work/poll.gdb" << 'GDB'
print _SEGGER_RTT.aUp[0]
x/256wx _SEGGER_RTT.aUp[0].pBuffer
set var _SEGGER_RTT.aUp[0].RdOff = _SEGGER_RTT.aUp[0].WrOff
GDB
start=$(date +%s%N)
for _ in $(seq "$gdb_polls"); do
  gdb-multiarch -batch -nx -ex 'set confirm off' -ex "target remote 127.0.0.1:$port" -x "$work/poll.gdb" \
    -ex detach "$elf" > /dev/null 2>&1
done
end=$(date +%s%N)
gdb_ms=$(awk -v s="$start" -v e="$end" -v n="$gdb_polls" 'BEGIN { printf "%.3f", (e - s) / 1e6 / n }')
gdb_rate=$(awk -v ms="$gdb_ms" 'BEGIN { printf "%.0f", 1023 * 1000 / ms }')  # at best a full ring per poll

echo "over QEMU's gdbstub (lm3s6965evb), a 1 KiB ring filled as fast as it is read:"
printf '  %-26s %12s %12s %14s %22s\n' "" "bytes/s" "ms/poll" "trips/poll" "halted ms/poll (max)"
printf '  %-26s %12s %12s %14s %22s\n' "rtt-capture" "$rtt_rate" "$rtt_ms" "$trips" "$(echo "$halted" | awk '{ printf "%s (%s)", $1, $2 }')"
printf '  %-26s %12s %12s %14s %22s\n' "gdb-multiarch batch/poll" "$gdb_rate" "$gdb_ms" "-" "the whole run"
awk -v a="$rtt_rate" -v b="$gdb_rate" 'BEGIN { printf "  ratio: rtt-capture moves %.1fx the bytes/s of a gdb batch run per poll\n", a / b }'
echo "  ($bytes bytes, $lines of 20000 lines, in $seconds s, $polls polls with data)"

# CMSIS-DAP: the emulated probe's counters, from the USB test's scenarios.
usb_test=$build/tests/test_rtt_capture_usb
if [ -x "$usb_test" ]; then
  echo "over CMSIS-DAP (the emulated probe, real libusb):"
  "$usb_test" "$rtt" "$work/usb" "$root/tests/fuzz/corpus/sysview_stream/segger_start_and_schedule" 2>&1 |
    sed -nE 's/^info +/  /p'
fi
