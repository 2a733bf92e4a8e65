#!/usr/bin/env bash
# itm-decode on real captures of other tools (../shared/reference/captures): sigrok's STM32F105
# stream raw and TPIU-framed, probe-rs' capture as frame lines. Skipped (exit 77) without
# ../shared, the only reason a test here may skip.
# Usage: itm_decode_captures.sh PATH/TO/itm-decode SHARED_DIR
set -u
BIN=$1
CAPTURES=$2/reference/captures
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
source "$(dirname "$0")/../support/checks.sh"
if [ ! -d "$CAPTURES" ]; then
  echo "skipped: $CAPTURES not found (../shared absent)"
  exit 77
fi
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
summary
