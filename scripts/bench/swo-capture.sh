#!/usr/bin/env bash
# Benchmark of swo-capture (issue: swo-capture, "Speed"), in one run:
# - CPU time per captured MB for each probe model under emulation (the real libusb against
#   the umockdev probe models of tests/usb; the emulator's own work is not counted);
# - TCP (a local server) and file sources, each against `cat` doing the same copy;
# - the simulated target's rate (target >= 100 MB/s).
# Usage: scripts/bench/swo-capture.sh [MB]   (default 20 for probes; files and TCP use 10x)
set -euo pipefail
source "$(dirname "$0")/common.sh"
ensure_built tools/swo-capture tests/test_swo_capture_usb
mb=${1:-20}
work=$(mktemp -d)
trap 'rm -rf "$work"; kill %1 2> /dev/null || true' EXIT
capture=$build/tools/swo-capture

cpu_of() {  # cpu_of COMMAND...: prints "cpu wall" seconds (user+sys, microseconds; stdout to /dev/null)
  python3 - "$@" <<'PY'
import resource, subprocess, sys, time
start = time.monotonic()
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, check=True)
wall = time.monotonic() - start
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
print(f"{usage.ru_utime + usage.ru_stime:.6f} {wall:.6f}")
PY
}

row() {  # row NAME MB CPU WALL [BASELINE_CPU]
  awk -v name="$1" -v mb="$2" -v cpu="$3" -v wall="$4" -v base="${5:-}" 'BEGIN {
    printf "%-34s %6.1f MB  %6.2f s wall  %7.1f MB/s  %6.1f ms CPU/MB", name, mb, wall, mb / wall, cpu * 1000 / mb
    if (base != "") printf "  (cat: %.1f ms CPU/MB, ratio %.2f)", base * 1000 / mb, (base > 0 ? cpu / base : 0)
    printf "\n" }'
}

echo "== probes under emulation (umockdev + real libusb), $mb MB each"
"$build/tests/test_swo_capture_usb" "$capture" "$work" --bench "$mb"

big=$((mb * 10))
echo "== file and TCP sources, $big MB"
"$capture" --simulate --rate 0 --max-bytes "${big}M" > "$work/stream.swo"
bytes=$(stat -c %s "$work/stream.swo")
size_mb=$(awk -v b="$bytes" 'BEGIN { printf "%.1f", b / 1e6 }')
read -r cpu wall <<< "$(cpu_of "$capture" --file "$work/stream.swo")"
read -r base _ <<< "$(cpu_of cat "$work/stream.swo")"
row "file" "$size_mb" "$cpu" "$wall" "$base"

serve() {  # a local TCP server that sends the stream once per connection
  python3 - "$work/stream.swo" "$work/port" <<'PY' &
import socket, sys
data = open(sys.argv[1], "rb").read()
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(("127.0.0.1", 0)); s.listen(2)
open(sys.argv[2], "w").write(str(s.getsockname()[1]))
for _ in range(2):
    c, _ = s.accept(); c.sendall(data); c.close()
PY
  for _ in $(seq 100); do [ -s "$work/port" ] && break; sleep 0.05; done
}
serve
port=$(cat "$work/port")
read -r cpu wall <<< "$(cpu_of "$capture" --tcp "127.0.0.1:$port")"
read -r base _ <<< "$(cpu_of bash -c "cat < /dev/tcp/127.0.0.1/$port")"
row "tcp" "$size_mb" "$cpu" "$wall" "$base"

echo "== the simulated target (swo-capture --simulate --rate 0), $big MB"
read -r cpu wall <<< "$(cpu_of "$capture" --simulate --rate 0 --max-bytes "${big}M")"
row "simulate" "$size_mb" "$cpu" "$wall"
awk -v mb="$size_mb" -v wall="$wall" 'BEGIN { r = mb / wall; printf "simulator: %.0f MB/s (target >= 100 MB/s: %s)\n", r, (r >= 100 ? "met" : "NOT met") }'
