#!/usr/bin/env bash
# The .deb that `cpack` builds, checked by lintian (Debian's own package checker) and by
# looking inside: every man page compressed (gzip -9n) and equal to its source, the
# copyright file and changelog, a real maintainer, every tool, completions and udev rules.
# Usage: test_deb.sh SOURCE_DIR BUILD_DIR
set -u
SOURCE=$1
BUILD=$2
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
source "$(dirname "$0")/../support/checks.sh"
for tool in cpack dpkg-deb lintian; do
  if ! command -v "$tool" > /dev/null; then
    echo "FAIL missing $tool: run scripts/install-deps"
    exit 1
  fi
done

cpack -G DEB -B "$WORK/out" --config "$BUILD/CPackConfig.cmake" > "$WORK/cpack.log" 2>&1
deb=$(ls "$WORK"/out/*.deb 2> /dev/null | head -1)
check "cpack builds the .deb" test -n "$deb"
if [ -z "$deb" ]; then
  tail -20 "$WORK/cpack.log"
  summary
  exit 1
fi
dpkg-deb -c "$deb" | awk '{print $6}' > "$WORK/files"
dpkg-deb -x "$deb" "$WORK/root"

for tool in swo-capture itm-decode trace-serve palm-recv chibi-pull eko-collect trace-filter trace-csv trace-top trace-timeline; do
  check "$tool installed" test -x "$WORK/root/usr/bin/$tool"
  check "$tool: bash, zsh and fish completions" test -f "$WORK/root/usr/share/bash-completion/completions/$tool" \
    -a -f "$WORK/root/usr/share/zsh/vendor-completions/_$tool" -a -f "$WORK/root/usr/share/fish/vendor_completions.d/$tool.fish"
done
for page in "$SOURCE"/man/*.1; do
  name=$(basename "$page")
  gz="$WORK/root/usr/share/man/man1/$name.gz"
  check "man page $name.gz, its source uncompressed" cmp -s <(gzip -dc "$gz") "$page"
  check "$name.gz: gzip -9 without a name or time stamp" test "$(od -An -tu1 -j3 -N7 "$gz" | tr -s ' ')" = " 0 0 0 0 0 2 3"
done
check "no uncompressed man page" test -z "$(grep -E 'man1/.*\.1$' "$WORK/files")"
check "the copyright file" grep -q "CLI11" "$WORK/root/usr/share/doc/tracepipe/copyright"
check "the copyright file says MIT" grep -q "^License: MIT" "$WORK/root/usr/share/doc/tracepipe/copyright"
check "the changelog, compressed" gzip -t "$WORK/root/usr/share/doc/tracepipe/changelog.gz"
check "udev rules for the probes" test -f "$WORK/root/usr/lib/udev/rules.d/60-tracepipe-probes.rules"
maintainer=$(dpkg-deb -f "$deb" Maintainer)
check "a maintainer that is not a placeholder ($maintainer)" bash -c "[[ '$maintainer' != *.invalid* && '$maintainer' == *@* ]]"
check "an extended description" test "$(dpkg-deb -f "$deb" Description | wc -l)" -gt 3
lintian --tag-display-limit 0 --fail-on error,warning "$deb" > "$WORK/lintian" 2>&1
check "lintian: no error, no warning" test $? -eq 0
grep -E '^[EW]:' "$WORK/lintian"
summary
