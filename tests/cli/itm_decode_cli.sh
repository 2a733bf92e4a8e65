#!/usr/bin/env bash
# CLI tests of the real itm-decode binary: inputs, options, exit codes, pipes, signals.
# Usage: itm_decode_cli.sh PATH/TO/itm-decode   (the real captures: itm_decode_captures.sh)
set -u
BIN=$1
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
source "$(dirname "$0")/../support/checks.sh"
source "$(dirname "$0")/../support/waits.sh"

# Bytes written independently of our encoder: SWIT 1-byte writes on port 0 (header 0x01).
itm_text() { python3 -c '
import sys
out = bytearray()
for c in sys.argv[1].encode():
    out += bytes([0x01, c])
sys.stdout.buffer.write(bytes(out))' "$1"; }

itm_text $'hello\nworld\n' > "$WORK/text.bin"

# --- input from stdin and from a file
"$BIN" --timestamps none < "$WORK/text.bin" > "$WORK/stdin.out"
check "stdin input exits 0" test $? -eq 0
"$BIN" --timestamps none "$WORK/text.bin" > "$WORK/file.out"
check "file and stdin give the same records" cmp -s "$WORK/stdin.out" "$WORK/file.out"
"$BIN" --timestamps none - < "$WORK/text.bin" > "$WORK/dash.out"
check "'-' means stdin" cmp -s "$WORK/stdin.out" "$WORK/dash.out"
check "two Text records" test "$(jq -r '.event.data.message' "$WORK/file.out" | tr '\n' ' ')" = "hello world "
check "records without target time say so" test "$(jq -r '.clock' "$WORK/file.out" | sort -u)" = "none"
check "host time is the fallback clock" test "$("$BIN" "$WORK/text.bin" | jq -r '.clock' | sort -u)" = "us"
"$BIN" "$WORK/text.bin" -o "$WORK/o.out" && "$BIN" "$WORK/text.bin" -o "$WORK/o.out" --append
check "-o with --append appends" test "$(wc -l < "$WORK/o.out")" -eq 4

# --- formats and stats
"$BIN" --format text "$WORK/text.bin" > "$WORK/text.out"
check "--format text shows the port name and message" grep -q '\[Console\] hello' "$WORK/text.out"
"$BIN" --format none --stats "$WORK/text.bin" > "$WORK/none.out" 2> "$WORK/none.err"
check "--format none writes nothing" test ! -s "$WORK/none.out"
check "--stats reports counts on stderr" grep -q '24 bytes, 12 packets' "$WORK/none.err"
# Memory follows the lines, not --max-line (it cost 530 MB up front at 16 MiB: a timestamp
# ring and a line buffer per Text port sized by it).
rss_default=$(/usr/bin/time -f %M "$BIN" --format none "$WORK/text.bin" 2>&1 > /dev/null | tail -n 1)
rss_large=$(/usr/bin/time -f %M "$BIN" --format none --max-line 16777216 "$WORK/text.bin" 2>&1 > /dev/null | tail -n 1)
check "--max-line 16777216 takes no memory up front (peak RSS $rss_default KB, with it $rss_large KB)" \
  test "$rss_large" -lt $((rss_default + 8192))

# --- port map
cat > "$WORK/map.json" <<'JSON'
{"0": {"port": 0, "name": "Hex", "decoder": {"User": {"format": "0x%02x"}}, "enabled": true}}
JSON
"$BIN" --port-map "$WORK/map.json" "$WORK/text.bin" > "$WORK/map.out"
check "--port-map applies a User format" test "$(head -1 "$WORK/map.out" | jq -r .event.data.message)" = "0x68"
echo '{"0": {"decoder": "Nope"}}' > "$WORK/badmap.json"
"$BIN" --port-map "$WORK/badmap.json" "$WORK/text.bin" > /dev/null 2> "$WORK/badmap.err"
check "a bad port map exits 6 (bad input)" test $? -eq 6
check "and names the problem" grep -q "unknown decoder 'Nope'" "$WORK/badmap.err"
"$BIN" --ports 0x2 "$WORK/text.bin" > "$WORK/masked.out"
check "--ports masks port 0" test ! -s "$WORK/masked.out"

# --- errors and exit codes
"$BIN" /nonexistent/file.bin > /dev/null 2> "$WORK/missing.err"
check "a missing file exits 3 (not found)" test $? -eq 3
check "with one clear line" test "$(wc -l < "$WORK/missing.err")" -eq 1
"$BIN" --bogus-option > /dev/null 2> "$WORK/usage.err"
check "a bad option exits 2 (usage)" test $? -eq 2
check "and says so on stderr" grep -qi "bogus" "$WORK/usage.err"
"$BIN" --log-format json /nonexistent > /dev/null 2> "$WORK/json.err"
check "--log-format json errors are JSON with a code" test "$(jq -r .code "$WORK/json.err")" = "NOT_FOUND"
"$BIN" --help > "$WORK/help.out"
check "--help exits 0 and lists exit codes" grep -q "Exit codes" "$WORK/help.out"
check "--version" bash -c "'$BIN' --version | grep -q tracepipe"
printf '\x90\x01A\x01\n' | "$BIN" > "$WORK/bad.out" 2> "$WORK/bad.err"
check "malformed input is reported as a record, decoding goes on" \
  test "$(jq -r .event.kind "$WORK/bad.out" | tr '\n' ' ')" = "Malformed Text "
check "and counted in a warning" grep -q "1 malformed packets" "$WORK/bad.err"

# --- a reader that goes away: quiet exit
python3 -c '
import sys
chunk = bytes([0x01, 0x61]) * 40 + bytes([0x01, 0x0a])
sys.stdout.buffer.write(chunk * 200000)' > "$WORK/big.bin"
"$BIN" "$WORK/big.bin" 2> "$WORK/pipe.err" | head -1 > "$WORK/head.out"
status=${PIPESTATUS[0]}
check "itm-decode big.bin | head -1 exits 0" test "$status" -eq 0
check "quietly" test ! -s "$WORK/pipe.err"
check "head got one whole record" jq -e '.event.data.message | length == 40' "$WORK/head.out" > /dev/null

# --- SIGTERM mid-stream: complete lines flushed, exit 143
mkfifo "$WORK/fifo"
"$BIN" < "$WORK/fifo" > "$WORK/term.out" 2> "$WORK/term.err" &
pid=$!
exec 3> "$WORK/fifo"
itm_text $'one\ntwo\npartial' >&3
# One write: once its whole lines are out (flushed as the input pauses) all of it was read.
check "the lines before SIGTERM come out while the input pauses" wait_until "$WAIT_DEADLINE_S" file_has "$WORK/term.out" two
kill -TERM "$pid"
wait "$pid"
status=$?
exec 3>&-
check "SIGTERM exits 143" test "$status" -eq 143
check "after writing every record decoded" test "$(jq -r .event.data.message "$WORK/term.out" | tr '\n' ' ')" = "one two partial "
check "as whole lines" bash -c "tail -c 1 '$WORK/term.out' | od -An -c | grep -q '\\\\n'"

# --- live pipelines stay live: a record appears while the writer keeps the pipe open
mkfifo "$WORK/live"
"$BIN" < "$WORK/live" > "$WORK/live.out" &
pid=$!
exec 4> "$WORK/live"
itm_text $'tick\n' >&4
check "output is flushed while input pauses (the writer keeps the pipe open)" \
  wait_until "$WAIT_DEADLINE_S" file_has "$WORK/live.out" tick
exec 4>&-
wait "$pid"

# --- --follow on a growing file
itm_text $'first\n' > "$WORK/grow.bin"
"$BIN" --follow "$WORK/grow.bin" > "$WORK/follow.out" &
pid=$!
check "--follow decodes what the file holds" wait_until "$WAIT_DEADLINE_S" file_has "$WORK/follow.out" first
itm_text $'second\n' >> "$WORK/grow.bin"
check "--follow decodes what is appended" wait_until "$WAIT_DEADLINE_S" file_has "$WORK/follow.out" second
kill -INT "$pid"
wait "$pid"
check "--follow picks up appended data" test "$(jq -r .event.data.message "$WORK/follow.out" | tr '\n' ' ')" = "first second "

summary
