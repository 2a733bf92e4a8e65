#!/usr/bin/env bash
# CLI tests of the real trace-filter and trace-csv binaries: options, exit codes, pipes,
# append mode for cron, interrupted runs. Usage: record_tools_cli.sh TOOLS_DIR
set -u
FILTER=$1/trace-filter
CSV=$1/trace-csv
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
source "$(dirname "$0")/../support/checks.sh"
source "$(dirname "$0")/../support/waits.sh"

record() {  # record TIMESTAMP PORT MESSAGE
  printf '{"timestamp":%s,"port":%s,"event":{"kind":"Text","data":{"message":"%s"}},"source":"itm","clock":"us"}\n' "$1" "$2" "$3"
}
{ record 1 0 boot; record 2 1 "second, with comma"; record 3 0 'quote \"x\"'; } > "$WORK/in.ndjson"

# --- trace-filter
check "filter reads a file" test "$("$FILTER" --port 0 "$WORK/in.ndjson" | wc -l)" -eq 2
check "and stdin" test "$("$FILTER" --port 0 < "$WORK/in.ndjson" | wc -l)" -eq 2
check "selected lines are byte for byte" bash -c "'$FILTER' --match message=boot '$WORK/in.ndjson' | cmp -s - <(head -1 '$WORK/in.ndjson')"
"$FILTER" --bogus > /dev/null 2> "$WORK/err"
check "bad option exits 2" test $? -eq 2
"$FILTER" --regex 'message=(' "$WORK/in.ndjson" > /dev/null 2> "$WORK/err"
check "bad regex exits 2" test $? -eq 2
check "and names the regex problem" grep -q "regular expression" "$WORK/err"
"$FILTER" --port 300 "$WORK/in.ndjson" > /dev/null 2>&1
check "bad port exits 2" test $? -eq 2
printf 'garbage\n' | cat "$WORK/in.ndjson" - | "$FILTER" > "$WORK/out" 2> "$WORK/err"
check "a bad line is skipped" test $? -eq 0 -a "$(wc -l < "$WORK/out")" -eq 3
check "and reported with its line number" grep -q "line 4:" "$WORK/err"
printf 'garbage\n' | cat "$WORK/in.ndjson" - | "$FILTER" --strict > "$WORK/out" 2> /dev/null
check "--strict makes it fatal (exit 6)" test $? -eq 6
check "after passing what came before" test "$(wc -l < "$WORK/out")" -eq 3
for i in $(seq 15); do echo "bad $i"; done | "$FILTER" 2> "$WORK/err" > /dev/null
check "the first ten bad lines are shown" test "$(grep -c ': line [0-9]*:' "$WORK/err")" -eq 10
check "then only counted" grep -q "further bad lines are counted, not shown" "$WORK/err"
check "and summed up" grep -q "15 of 15 lines were bad" "$WORK/err"
# A regex PCRE2 gives up on (catastrophic backtracking) is not "no match": the line is bad.
long=$(printf 'a%.0s' $(seq 5000))
{ record 1 0 "${long}!"; record 2 0 aaa; } > "$WORK/backtrack.ndjson"
"$FILTER" --stats --regex 'message=^(a+)+$' "$WORK/backtrack.ndjson" > "$WORK/out" 2> "$WORK/err"
check "a regex PCRE2 gives up on makes the line bad, not unmatched" grep -q "2 lines, 1 selected, 1 bad" "$WORK/err"
check "and says why" grep -q "could not finish (match limit exceeded)" "$WORK/err"
"$FILTER" --strict --regex 'message=^(a+)+$' "$WORK/backtrack.ndjson" > /dev/null 2>&1
check "--strict fails on it (exit 6)" test $? -eq 6
"$FILTER" --invert --stats --regex 'message=^(a+)+$' "$WORK/backtrack.ndjson" > "$WORK/out" 2> "$WORK/err"
check "--invert does not select it either" test "$(wc -l < "$WORK/out")" -eq 0
yes "$(record 5 0 endless)" | timeout 10 "$FILTER" --limit 3 > "$WORK/out"
check "--limit ends an endless input" test $? -eq 0 -a "$(wc -l < "$WORK/out")" -eq 3
yes "$(record 5 0 endless)" | head -c 50000000 | "$FILTER" 2> "$WORK/err" | head -1 > /dev/null
check "a closed pipe ends quietly" test "${PIPESTATUS[2]}" -eq 0 -a ! -s "$WORK/err"
"$FILTER" --kind text,Bogus "$WORK/in.ndjson" > "$WORK/out" 2> "$WORK/err"
check "an unknown --kind is a warning (exit 0, nothing selected)" test $? -eq 0 -a ! -s "$WORK/out"
check "naming the case slip" grep -q -- "--kind text: .*case-sensitive: Text?" "$WORK/err"
check "and listing the known kinds" grep -q -- "--kind Bogus: .*known kinds: Text, Marker, TaskSwitch" "$WORK/err"
"$FILTER" --kind Text,Itm "$WORK/in.ndjson" > /dev/null 2> "$WORK/err"
check "known kinds give no warning" test ! -s "$WORK/err"
"$FILTER" --stats --kind Text "$WORK/in.ndjson" > /dev/null 2> "$WORK/err"
check "--stats counts" grep -q "3 lines, 3 selected, 0 bad" "$WORK/err"

# A pipe is parsed on several threads (--threads, default one per core): the same output,
# counts and bad-line reports as the file, live records still come out while the input
# pauses, and SIGTERM passes on every whole line already read.
for i in $(seq 1 30000); do
  record "$i" $((i % 4)) "line $i"
  [ $((i % 7001)) -eq 0 ] && printf 'not a record %s\n\n' "$i"
done > "$WORK/big.ndjson"
"$FILTER" --stats --port 1,3 "$WORK/big.ndjson" > "$WORK/file.out" 2> /dev/null
cat "$WORK/big.ndjson" | "$FILTER" --threads 1 --stats --port 1,3 > /dev/null 2> "$WORK/one.err"
for threads in 2 3; do
  cat "$WORK/big.ndjson" | "$FILTER" --threads "$threads" --stats --port 1,3 > "$WORK/pipe.out" 2> "$WORK/pipe.err"
  check "a pipe on $threads threads: the file's output" cmp -s "$WORK/file.out" "$WORK/pipe.out"
  check "a pipe on $threads threads: the counts and bad-line reports of one thread" cmp -s "$WORK/one.err" "$WORK/pipe.err"
done
check "(the reports name lines past the first read)" grep -q "line 28011: " "$WORK/one.err"
mkfifo "$WORK/live-filter"
"$FILTER" --threads 2 --port 0 < "$WORK/live-filter" > "$WORK/live.out" &
pid=$!
exec 4> "$WORK/live-filter"
record 1 0 tick >&4
check "a pipe on threads: a record comes out while the input pauses" \
  wait_until "$WAIT_DEADLINE_S" file_has "$WORK/live.out" tick
exec 4>&-
wait "$pid"
mkfifo "$WORK/term-filter"
"$FILTER" --threads 2 < "$WORK/term-filter" > "$WORK/term.out" 2> /dev/null &
pid=$!
exec 4> "$WORK/term-filter"
cat "$WORK/big.ndjson" >&4
printf '{"timestamp":9,"port":0,"event":{"kind":"Text","data":{"message":"half a li' >&4
check "SIGTERM on threads: every record out before the signal" wait_until "$WAIT_DEADLINE_S" file_has "$WORK/term.out" '"line 30000"'
kill -TERM "$pid"
wait "$pid"
status=$?
exec 4>&-
check "SIGTERM on threads: exit 143" test "$status" -eq 143
check "every record read written, and no half line" test "$(wc -l < "$WORK/term.out")" -eq 30000 -a \
  "$(tail -c 1 "$WORK/term.out" | od -An -c | tr -d ' ')" = '\n'

# --- trace-csv
"$CSV" --columns time,port,message "$WORK/in.ndjson" > "$WORK/out.csv"
check "csv header and rows" test "$(head -1 "$WORK/out.csv")" = "time,port,message"
check "RFC 4180 quoting" grep -qF '2,1,"second, with comma"' "$WORK/out.csv"
check "quotes doubled" grep -qF '3,0,"quote ""x"""' "$WORK/out.csv"
check "--no-header" test "$("$CSV" --no-header --columns port "$WORK/in.ndjson" | head -1)" = "0"
check "--delimiter" test "$("$CSV" --delimiter ';' --columns time,port "$WORK/in.ndjson" | sed -n 2p)" = "1;0"
check "--crlf" bash -c "'$CSV' --crlf --columns port '$WORK/in.ndjson' | head -1 | od -c | grep -q '\\\\r  \\\\n'"
check "inferred columns" test "$("$CSV" "$WORK/in.ndjson" | head -1)" = "timestamp,port,event.kind,event.data.message,source,clock"
# A pipe on threads: with the columns given from the start, and with inferred columns once
# the first records decided them (read line by line until then): the rows and reports of one
# thread. The first records include bad lines and records of several shapes.
{ printf 'bad first line\n'; record 0 9 "first"; printf '{"timestamp":1,"port":2,"event":{"kind":"Marker","data":{"id":7}}}\n'
  cat "$WORK/big.ndjson"; printf '{"timestamp":9,"port":0,"event":{"kind":"Text","data":{"message":"no newline"}}}'; } \
  > "$WORK/csv-in.ndjson"
for options in "--infer-lines 5" "--infer-lines 20000" "--columns time,port,message" "--preset basic"; do
  cat "$WORK/csv-in.ndjson" | "$CSV" $options --threads 1 > "$WORK/one.csv" 2> "$WORK/one.err"
  cat "$WORK/csv-in.ndjson" | "$CSV" $options --threads 2 > "$WORK/two.csv" 2> "$WORK/two.err"
  check "trace-csv $options from a pipe on threads: the rows of one thread" cmp -s "$WORK/one.csv" "$WORK/two.csv"
  check "trace-csv $options from a pipe on threads: the reports of one thread" cmp -s "$WORK/one.err" "$WORK/two.err"
done
check "(every record a row)" test "$(wc -l < "$WORK/one.csv")" -eq 30004
check "--preset basic" test "$("$CSV" --preset basic "$WORK/in.ndjson" | head -1)" = "time,port,kind,message"
check "--preset ekotrace header" test "$("$CSV" --preset ekotrace < /dev/null)" = \
  "session_id,segment_id,segment_index,receive_time,tracer_id,event_id,event_payload,lc_tracer_id,lc_clock"
check "--time seconds" test "$("$CSV" --no-header --time seconds --columns time "$WORK/in.ndjson" | head -1)" = "0.000001000"
check "--time rfc3339" bash -c "'$CSV' --no-header --time rfc3339 --columns time '$WORK/in.ndjson' | head -1 | grep -qE '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}\\.[0-9]{6}Z$'"
"$CSV" --columns time --preset basic "$WORK/in.ndjson" > /dev/null 2>&1
check "--columns with --preset exits 2" test $? -eq 2

# --- append mode for cron: one header; an interrupted run leaves only whole lines
log=$WORK/cron.csv
"$CSV" --preset basic -o "$log" --append "$WORK/in.ndjson"
"$CSV" --preset basic -o "$log" --append "$WORK/in.ndjson"
check "two appending runs, one header" test "$(grep -c '^time,' "$log")" -eq 1 -a "$(wc -l < "$log")" -eq 7
: > "$WORK/empty.csv"
"$CSV" --preset basic -o "$WORK/empty.csv" --append "$WORK/in.ndjson"
check "an empty existing file gets the header" test "$(head -1 "$WORK/empty.csv")" = "time,port,kind,message"
"$CSV" --preset basic -o "$log" "$WORK/in.ndjson"
check "without --append the file is replaced" test "$(wc -l < "$log")" -eq 4

whole_lines() {  # every line complete and with 4 fields, file ends in a newline
  python3 - "$1" <<'PY'
import csv, sys
data = open(sys.argv[1], newline="").read()
rows = list(csv.reader(data.splitlines(True)))
sys.exit(0 if data.endswith("\n") and rows and all(len(r) == 4 for r in rows) else 1)
PY
}
for signal in TERM INT KILL; do
  log=$WORK/interrupted-$signal.csv
  mkfifo "$WORK/fifo-$signal"
  "$CSV" --preset basic -o "$log" --append < "$WORK/fifo-$signal" &
  pid=$!
  exec 3> "$WORK/fifo-$signal"
  for i in $(seq 1 2000); do record "$i" 0 "line $i"; done >&3
  printf '{"timestamp":9,"port":0,"event":{"kind":"Text","data":{"message":"half a li' >&3
  # The header and the 2000 rows are out (flushed as the input pauses): the half line is read.
  check "SIG$signal: the rows come out while the input pauses" wait_until "$WAIT_DEADLINE_S" lines_at_least "$log" 2001
  kill -"$signal" "$pid"
  wait "$pid" 2> /dev/null
  exec 3>&-
  check "SIG$signal mid-run leaves only whole lines" whole_lines "$log"
  [ "$signal" = KILL ] || check "SIG$signal keeps every record read" test "$(wc -l < "$log")" -eq 2001
done

summary
