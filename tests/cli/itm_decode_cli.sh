#!/usr/bin/env bash
# CLI tests of the real itm-decode binary: inputs, options, exit codes, pipes, signals.
# Usage: itm_decode_cli.sh PATH/TO/itm-decode [SHARED_DIR]
set -u
BIN=$1
SHARED=${2:-}
CAPTURES=$SHARED/reference/captures
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
source "$(dirname "$0")/../support/checks.sh"

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
sleep 0.5
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
sleep 0.4
check "output is flushed while input pauses" grep -q tick "$WORK/live.out"
exec 4>&-
wait "$pid"

# --- --follow on a growing file
itm_text $'first\n' > "$WORK/grow.bin"
"$BIN" --follow "$WORK/grow.bin" > "$WORK/follow.out" &
pid=$!
sleep 0.3
itm_text $'second\n' >> "$WORK/grow.bin"
sleep 0.5
kill -INT "$pid"
wait "$pid"
check "--follow picks up appended data" test "$(jq -r .event.data.message "$WORK/follow.out" | tr '\n' ' ')" = "first second "

# --- real captures
if [ -d "$CAPTURES" ]; then
  S=$CAPTURES/sigrok-stm32f105
  echo '{"0":{"decoder":"Text"},"1":{"decoder":"Text","value_format":"%u"}}' > "$WORK/sigrok.json"
  "$BIN" --timestamps none --port-map "$WORK/sigrok.json" "$S/stm32f105_itm_stream1.bin" > "$WORK/s1.out"
  "$BIN" --timestamps none --port-map "$WORK/sigrok.json" --tpiu --tpiu-stream 1 < "$S/stm32f105_swo_tpiu_raw.bin" > "$WORK/s2.out"
  check "sigrok: --tpiu on the raw bytes equals the extracted stream" cmp -s "$WORK/s1.out" "$WORK/s2.out"
  check "sigrok: 393 PC samples" test "$(jq -r 'select(.event.kind=="PcSample") | 1' "$WORK/s1.out" | wc -l)" -eq 393
  check "sigrok: the sorted values" \
    test "$(jq -r 'select(.port==1) | .event.data.message' "$WORK/s1.out" | head -6 | tr '\n' ' ')" = "Sort 2 2 11 35 235 "
  "$BIN" --frames "$CAPTURES/probe-rs/example_capture1.bin" > "$WORK/frames.out"
  check "--frames writes raw frame lines" test "$(jq -c 'select(.frames) | [.frames[].data[0]]' "$WORK/frames.out" | tr -d '\n')" = "[65][66][67]"
else
  echo "skip real-capture CLI tests: $CAPTURES not found"
fi

summary
