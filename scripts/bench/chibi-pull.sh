#!/usr/bin/env bash
# Benchmark of chibi-pull's timeline reconstruction (issue: chibi-pull, "Speed"): a saved
# log of 1M context-switch records (and 100k, to show that memory does not grow with the
# log) rebuilt with `chibi-pull timeline --load` to NDJSON records and to CSV runs.
# Target: 1M records well under a second, flat memory.
# Usage: scripts/bench/chibi-pull.sh [RECORDS]   (default 1000000)
set -euo pipefail
source "$(dirname "$0")/common.sh"
ensure_built tools/chibi-pull
records=${1:-1000000}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

generate() {  # generate N FILE: 12 threads (3 not logged), 20 exits, up to 4 switches per tick
  python3 - "$1" "$2" <<'PY'
import random, sys
n, path = int(sys.argv[1]), sys.argv[2]
rng = random.Random(7)
alive = [("main", 64, True), ("idle", 1, True)] + [(f"Thd{i}", rng.choice((10, 64, 74)), i % 4 != 0) for i in range(10)]
deleted, lines, current, tick, exits = [], [], 1, 1000, 0
while len(lines) < n:
    tick += 1
    for _ in range(rng.choice((0, 1, 2, 4))):
        if exits < 20 and rng.random() < 0.0005 and current > 2 and len(alive) > 4:
            number = current
            lines.append("From %2d to %2d at %7d" % (number, number, tick & 0xFFFFF))
            name, prio, logged = alive.pop(number - 1)
            deleted.append((number, name, prio, logged))
            alive.append((f"New{exits}", 64, True))
            exits += 1
            current = rng.randrange(1, len(alive) + 1)
            lines.append("From  0 to %2d at %7d" % (current, tick & 0xFFFFF))
        else:
            nxt = rng.randrange(1, len(alive) + 1)
            if nxt != current:
                lines.append("From %2d to %2d at %7d" % (current, nxt, tick & 0xFFFFF))
                current = nxt
with open(path, "w") as f:
    f.write("Saved position\n0\n1\n0\n1\nthreads_list\n")
    for i, (name, prio, logged) in enumerate(alive):
        f.write("Thread number %2d : Prio = %3d, Log = %3s, Name = %s\n" % (i + 1, prio, "Yes" if logged else " No", name))
    f.write("Deleted threads: \n")
    for number, name, prio, logged in deleted:
        f.write("Thread number %2d : Prio = %3d, Log = %3s, Name = %s\n" % (number, prio, "Yes" if logged else " No", name))
    f.write("ch> \nthreads_timestamps\n" + "\n".join(lines[:n]) + "\nch> ")
PY
}

measure() {  # measure LABEL ARGS...
  local label=$1
  shift
  /usr/bin/time -f '%e %M' -o "$work/time" "$build/tools/chibi-pull" "$@" > "$work/out"
  read -r seconds rss < "$work/time"
  printf '  %-34s %6.2f s  %7.0f k records/s  peak RSS %5.1f MB  (%s output lines)\n' "$label" "$seconds" \
    "$(python3 -c "print($records_now / max($seconds, 0.005) / 1000)")" "$(python3 -c "print($rss / 1024)")" \
    "$(wc -l < "$work/out")"
}

echo "chibi-pull reconstruction benchmark, $(nproc) cores"
for records_now in $((records / 10)) "$records"; do
  generate "$records_now" "$work/log.txt"
  echo "$records_now records ($(du -m "$work/log.txt" | cut -f1) MB saved log):"
  measure "timeline --load -> NDJSON" timeline --load "$work/log.txt"
  measure "timeline --load --format csv" timeline --load "$work/log.txt" --format csv
  measure "timeline --load --svg (whole)" timeline --load "$work/log.txt" --svg "$work/t.svg" --format text
done
