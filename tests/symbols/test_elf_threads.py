#!/usr/bin/env python3
"""itm-decode --elf with DWARF while records are formatted on two threads (issue 34, item 1).

itm-decode formats its records on a writer thread, and on the decoding thread too when the
writer's queue is full. Both look source lines up in libdw, which is not thread-safe per
Dwfl: unguarded, runs differed (file/line missing on some samples) and now and then crashed.
A PC-sample stream (ARM ARM D4.3.3, written here, not by tracepipe's encoder) over every
halfword of the DWARF firmware, repeated until formatting outweighs decoding, is decoded
RUNS times (default 30): every run must succeed, give the same bytes, and name each sample's
file:line as addr2line does; the runs together must have formatted batches on the decoding
thread (--stats says how many), or the test did not test the race. libdw itself is not built
with the sanitizers, so ThreadSanitizer cannot see a race inside it: PROBE (LD_PRELOAD,
tests/tools/libdw_one_at_a_time.cpp) aborts a run the moment two threads are inside libdw's
line lookups at once. Without the lock every run aborted within its first batches.
Usage: test_elf_threads.py BUILD_DIR PROBE [RUNS] [SAMPLES]"""
import json
import os
import re
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from checks import Checks  # noqa: E402
from firmware import addr2line, build_symbols_firmware, functions_of  # noqa: E402

build_dir = sys.argv[1]
probe = sys.argv[2]
runs = int(sys.argv[3]) if len(sys.argv) > 3 else 30
sample_count = int(sys.argv[4]) if len(sys.argv) > 4 else 100_000
itm_decode = os.path.join(build_dir, "tools", "itm-decode")
check = Checks(show_passes=True)


def main():
    with tempfile.TemporaryDirectory() as out:
        elf = build_symbols_firmware(out)
        pcs = sorted({pc for start, size, _ in functions_of(elf) for pc in range(start, start + max(size, 2), 2)})
        check(len(pcs) > 50, f"the firmware has code to sample ({len(pcs)} halfwords)")
        lines = {}
        for pc, (_, place) in zip(pcs, addr2line(elf, pcs)):
            file, _, line = place.rpartition(":")
            line = line.split()[0]
            if file != "??" and line.isdigit() and int(line) > 0:
                lines[pc] = (file, int(line))
        check(len(lines) > len(pcs) // 2, f"addr2line gives most PCs a line ({len(lines)} of {len(pcs)})")
        stream_path = os.path.join(out, "samples.bin")
        order = [pcs[(i * 7919) % len(pcs)] for i in range(sample_count)]
        with open(stream_path, "wb") as f:
            f.write(b"".join(bytes([0x17]) + struct.pack("<I", pc) for pc in order))

        outputs = set()
        owner_batches = 0
        failures = []
        for i in range(runs):
            result = subprocess.run([itm_decode, "--elf", elf, "--timestamps", "none", "--stats", stream_path],
                                    capture_output=True, env={**os.environ, "LD_PRELOAD": probe})
            if result.returncode != 0:
                failures.append((i, result.returncode, result.stderr[-300:]))
                continue
            outputs.add(result.stdout)
            found = re.search(rb"(\d+) batches formatted on the decoding thread", result.stderr)
            owner_batches += int(found.group(1)) if found else 0
        check(not failures, f"{runs} runs of itm-decode --elf all exit 0", failures[:2])
        check(len(outputs) == 1, f"{runs} runs give the same bytes ({len(outputs)} different outputs)")
        check(owner_batches > 0, f"the decoding thread formatted batches too, beside the writer thread "
                                 f"({owner_batches} over {runs} runs)")
        if outputs:
            records = [json.loads(line) for line in next(iter(outputs)).decode().splitlines()]
            samples = [r["event"]["data"] for r in records if r["event"]["kind"] == "PcSample"]
            check(len(samples) == sample_count, f"a record per sample ({len(samples)} of {sample_count})")
            wrong = [s for s in samples if (("file" in s) and (s["file"], s["line"])) != (lines.get(s["pc"]) or False)]
            check(not wrong, f"every sample's file:line is addr2line's ({len(samples) - len(wrong)} of {len(samples)}; "
                             f"first wrong: {wrong[:1]})")
    return check.summary()


sys.exit(main())
