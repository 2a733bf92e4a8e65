#!/usr/bin/env python3
"""eko-collect against real GDB servers: QEMU's gdbstub running the rig firmware
(tests/eko/fw, cross-built here: Cortex-M3 32-bit LE, AArch64 64-bit LE, ARMv7 BE8
32-bit BE) and GNU gdbserver running the same firmware natively (run-length-encoded
replies, no-ack mode). gdb-multiarch in batch mode is the independent reader. The firmware's
tracers behave as ekotrace's (tests/eko/fw/tracer.c: history.rs's rules, a 20 KiB tracer with
320 clocks, back-to-back clock groups, its own finished_report_logging).
- the CSV equals the firmware's deterministic sequence, every entry once, no log lost, a
  report-finish after every poll and each tracer's local clock up by exactly one each time;
- segments by ekotrace's rule; an ekotrace-style reader (ekotrace_reader.py: LCIndex, causal
  links) finds no collision, and finds one in a CSV made to have it;
- the clear leaves the tracer byte for byte as its own finished_report_logging does (run on
  the same state, restored by gdb) and as history.rs says;
- CSV equals gdb's read of the same halted memory (--no-clear);
- symbols and addresses mixed; ELF word size / endianness detection; flag contradictions;
- in_use held -> skipped and counted, data still complete; NULL tracers (QEMU -S);
  an unmapped address (E14); all tracers unreadable -> exit 6;
- the server killed mid-run -> exit 7, CSV intact; SIGTERM while the target is halted
  -> exit 143 and the target runs on; the target runs on after every exit;
- --format ndjson through trace-csv --preset ekotrace gives the same rows.
Usage: test_eko_collect.py EKO_COLLECT TRACE_CSV WORK_DIR"""
import csv
import io
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from checks import Checks  # noqa: E402
from waits import WaitTimeout, wait_until  # noqa: E402

import ekotrace_reader  # noqa: E402  (tests/eko, beside this file)

tool, trace_csv, work = sys.argv[1], sys.argv[2], sys.argv[3]
here = os.path.dirname(os.path.abspath(__file__))
check = Checks(show_passes=True)

TARGETS = {  # name: (qemu command, elf, word size, endianness)
    "cm3": (["qemu-system-arm", "-M", "lm3s6965evb", "-cpu", "cortex-m3"], "fw-cm3.elf", 4, "little"),
    "a64": (["qemu-system-aarch64", "-M", "virt", "-cpu", "cortex-a53"], "fw-a64.elf", 8, "little"),
    "armbe": (["qemu-system-arm", "-M", "virt", "-cpu", "cortex-a15"], "fw-armbe.elf", 4, "big"),
}




def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_listening(port, proc, seconds=60):
    # Never probe with connect(): every connection pauses the VM (QEMU's gdbstub).
    deadline = time.time() + seconds
    while time.time() < deadline:
        if proc.poll() is not None:
            return False
        if f":{port} " in subprocess.run(["ss", "-ltnH"], capture_output=True, text=True).stdout:
            return True
        time.sleep(0.05)  # pace: the polling interval of a wait with a deadline
    return False


class Qemu:
    def __init__(self, target, halted=False):
        command, elf, self.word, self.endian = TARGETS[target]
        self.elf = os.path.join(work, elf)
        self.port = free_port()
        self.log = open(os.path.join(work, f"qemu-{target}.log"), "w")
        args = command + ["-nographic", "-kernel", self.elf, "-gdb", f"tcp:127.0.0.1:{self.port}"]
        if target != "cm3":
            args += ["-nic", "none"]  # virt's default NIC wants a ROM Debian ships only with recommends
        self.proc = subprocess.Popen(args + (["-S"] if halted else []), stdin=subprocess.DEVNULL, stdout=self.log,
                                     stderr=subprocess.STDOUT)
        if not wait_listening(self.port, self.proc):
            raise RuntimeError(f"QEMU for {target} did not start: {open(self.log.name).read()}")
        self.server = f"127.0.0.1:{self.port}"

    def gdb(self, *commands, leave="detach"):
        """gdb-multiarch in batch mode; returns the values printed ($N = value), in order."""
        args = ["gdb-multiarch", "-batch", "-nx", "-ex", "set confirm off", "-ex", f"target remote {self.server}"]
        for c in commands:
            args += ["-ex", c]
        args += ["-ex", leave, self.elf]
        out = subprocess.run(args, capture_output=True, text=True, timeout=60).stdout
        return re.findall(r"^\$\d+ = (.*)$", out, re.M)

    def value(self, expression):
        return int(self.gdb(f"print/d {expression}")[0])

    def running(self, timeout=30):
        """Whether the firmware's counter advances (within a generous deadline)."""
        first = self.value("g_counter")
        until = time.monotonic() + timeout
        while time.monotonic() < until:
            if self.value("g_counter") > first:
                return True
            time.sleep(0.05)  # pace: the polling interval of a wait with a deadline
        return False

    def stop(self):
        self.proc.kill()
        self.proc.wait()
        self.log.close()


def collect(*args, timeout=120):
    return subprocess.run([tool, *args], capture_output=True, text=True, timeout=timeout)


def parse_csv(text):
    rows = list(csv.reader(io.StringIO(text)))
    return rows[0] if rows else [], rows[1:]


def entries(rows, tracer_id):
    """('c', id, count) / ('e', id, payload|None) for one tracer, in order."""
    out = []
    for r in rows:
        if int(r[4]) != tracer_id:
            continue
        if r[5] == "":
            out.append(("c", int(r[7]), int(r[8])))
        else:
            out.append(("e", int(r[5]), int(r[6]) if r[6] else None))
    return out


PRODUCED_REPORT = 0x3FFFFFFE
LOG_OVERFLOWED = 0x3FFFFFFD


def step_entry(n):
    if n % 3 == 0:
        return ("e", 100, n)
    return ("e", 1 + n % 5, None)


def model(tracer_id, first_n, count):
    """The firmware's sequence for one tracer from step first_n (tests/eko/fw/tracer.c), as
    (entry, step) with clocks as ("c", id) (their counts are checked apart): a snapshot or
    a merge writes all the tracer's clocks; tracer 2 holds tracer 1's from its first merge."""
    out, n = [], first_n
    while len(out) < count:
        if tracer_id == 2:
            group = [("c", 2), ("c", 1)] if n >= 16 else [("c", 2)]
            if n % 32 == 0:
                out += [(e, n) for e in group + group]
            elif n % 8 == 0 and n % 2 == 0:
                out += [(e, n) for e in group]
            elif n % 2 == 0:
                out.append((step_entry(n), n))
        else:
            out.append((("c", tracer_id) if n % 8 == 0 else step_entry(n), n))
        n += 1
    return out[:count]


def split_reports(rows, tracer_id):
    """One tracer's entries in order, and how many report-finish groups were taken out: a
    "produced report" event with the clock rows before it in its segment (what the clear
    after a poll, or the tracer's own report, writes). Each entry is (segment, kind, id, value)."""
    tokens, reports = [], 0
    for r in rows:
        if int(r[4]) != tracer_id:
            continue
        segment = int(r[1])
        if r[5] == "":
            tokens.append((segment, "c", int(r[7]), int(r[8])))
            continue
        event = (segment, "e", int(r[5]), int(r[6]) if r[6] else None)
        if event[2] == PRODUCED_REPORT:
            while tokens and tokens[-1][0] == segment and tokens[-1][1] == "c":
                tokens.pop()
            reports += 1
            continue
        tokens.append(event)
    return tokens, reports


def sequence_complete(rows, tracer_id, tracer_1_clocks=None):
    """Every entry once and in order, against the firmware's steps once the report-finish
    groups are taken out; the tracer's own clock (snapshots, merges and reports alike) goes up
    by exactly one each time it is logged; tracer 2's copy of tracer 1's clock is the value
    tracer 1 logged at the merge. Returns (ok, detail, {step: own clock at that step})."""
    own_counts = [int(r[8]) for r in rows if int(r[4]) == tracer_id and r[5] == "" and int(r[7]) == tracer_id]
    steps_ok = all(b == a + 1 for a, b in zip(own_counts, own_counts[1:]))
    got, reports = split_reports(rows, tracer_id)
    # The first event with a payload (its step number) says where the sequence is.
    i = next((k for k, e in enumerate(got) if e[1] == "e" and e[2] == 100), None)
    if i is None:
        return False, f"{len(got)} entries, starting {got[:3]}", {}
    start_n = got[i][3]
    items = got[i:]
    want = model(tracer_id, start_n, len(items))
    key = [(e[1], e[2]) if e[1] == "c" else (e[1], e[2], e[3]) for e in items]
    bad = next((k for k, (a, (b, _)) in enumerate(zip(key, want)) if a != b), None)
    clock_at, merged_ok = {}, True
    for (segment, kind, ident, value), (_, n) in zip(items, want):
        if kind == "c" and ident == tracer_id:
            clock_at[n] = value
        if kind == "c" and ident == 1 and tracer_id == 2 and tracer_1_clocks is not None:
            merged_at = n - n % 16
            if merged_at in tracer_1_clocks and tracer_1_clocks[merged_at] != value:
                merged_ok = False
    ok = bad is None and len(items) > 50 and steps_ok and merged_ok and reports > 0
    return ok, f"{len(items)} entries from step {start_n}, {reports} reports; first difference at {bad}: " \
        f"{key[bad - 2:bad + 3] if bad is not None else ''} vs {want[bad - 2:bad + 3] if bad is not None else ''}; " \
        f"own clock +1 each time: {steps_ok}; tracer 1's clock as merged: {merged_ok}", clock_at


def segments_follow_ekotrace(rows, target):
    """ekotrace's rule, checked row by row: a tracer's own clock starts a segment (index 0),
    nothing else does; segment ids count up from 0 in the order written; indexes are dense."""
    bad, next_segment, previous = [], 0, None
    for k, r in enumerate(rows):
        segment, index, tracer = int(r[1]), int(r[2]), int(r[4])
        own_clock = r[5] == "" and int(r[7]) == tracer
        if previous is None or segment != int(previous[1]):
            ok = index == 0 and segment == next_segment
            next_segment = segment + 1
        else:
            ok = not own_clock and tracer == int(previous[4]) and index == int(previous[2]) + 1
        if not ok:
            bad.append((k, r[1:3], r[4:]))
        previous = r
    check(not bad and next_segment > 100, f"{target}: segments by ekotrace's rule (every own clock starts one, "
          f"back-to-back clock groups too; {next_segment} segments)", bad[:5])


def address_of(qemu, symbol):
    return qemu.gdb(f"print/x &{symbol}")[0]


def target_run(target):
    q = Qemu(target)
    try:
        t3 = address_of(q, "TRACER_3")
        out = os.path.join(work, f"{target}.csv")
        if os.path.exists(out):
            os.remove(out)
        r = collect("-e", q.elf, "-g", q.server, "-i", "10", "--polls", "150", "--stats", "-v", "-o", out,
                    "TRACER_1", "TRACER_2", t3, "TRACER_16")
        check(r.returncode == 0, f"{target}: 150 polls, exit 0", r.stderr[-2000:])
        bits = q.word * 8
        check(f"target {bits}-bit {q.endian} endian" in r.stderr and f"ELF{bits}" in r.stderr,
              f"{target}: ELF{bits} {q.endian} endian detected from the ELF", r.stderr[:600])
        check("acknowledged mode" in r.stderr, f"{target}: QEMU has no no-ack mode: acknowledged mode used",
              r.stderr[-1500:])
        with open(out) as f:
            header, rows = parse_csv(f.read())
        check(header == ["session_id", "segment_id", "segment_index", "receive_time", "tracer_id", "event_id",
                         "event_payload", "lc_tracer_id", "lc_clock"], f"{target}: ekotrace's CSV header", header)
        tracer_1_clocks = None
        for tracer_id in (1, 2, 3, 16):
            ok, detail, clocks = sequence_complete(rows, tracer_id, tracer_1_clocks)
            tracer_1_clocks = tracer_1_clocks if tracer_1_clocks is not None else clocks
            check(ok, f"{target}: tracer {tracer_id} (symbols and 0x{t3[2:]} mixed): every entry once, in order, "
                  "a report-finish after each poll, its local clock up by one each time", detail)
        dropped = [int(v) for v in re.findall(r"\d+", q.gdb("set print repeats unlimited", "print/d g_dropped")[0])]
        # The tracers nobody collects fill up and drop, as ekotrace's do; the collected ones must not.
        check(len(dropped) == 16 and all(dropped[k - 1] == 0 for k in (1, 2, 3, 16)) and sum(dropped) > 0,
              f"{target}: the collected tracers' logs never filled up (no event dropped)", dropped)
        check(q.running(), f"{target}: the target runs after eko-collect exits")
        segments_follow_ekotrace(rows, target)
        big = q.gdb("print/d TRACER_16->history->clocks.storage_cap")
        check(big == ["320"], f"{target}: TRACER_16 has ekotrace's 320 clocks (a 20 KiB region) and is collected",
              big)
        links, collisions, metadata = ekotrace_reader.causal_links(ekotrace_reader.read_rows(open(out, newline="")), 0)
        check(not collisions and len(metadata) > 100 and ekotrace_reader.is_acyclic(links) and
              any(metadata[after][0] == 2 and metadata[before][0] == 1 for before, after in links),
              f"{target}: ekotrace's reader (LCIndex) keeps every segment: no two share a tracer and local clock, "
              f"the causal links are acyclic and tracer 2's merges link to tracer 1",
              f"{len(metadata)} segments, {len(links)} links, collisions {collisions[:5]}")
        check(all(r[0] == "0" for r in rows) and
              all(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z", r[3]) for r in rows[:50]),
              f"{target}: session 0, RFC 3339 receive times", rows[:3])
        # The same memory read by gdb and by eko-collect --no-clear, the VM paused between them.
        # Paused outside a step: inside one (in_use set, ~1 time in 16) eko-collect rightly
        # skips the tracer, so then let it run on and pause it again.
        for _ in range(50):
            in_use, length = map(int, q.gdb("print/d TRACER_1->history->in_use",
                                            "print/d TRACER_1->history->compact_log.len", leave="disconnect"))
            if in_use == 0:
                break
            q.gdb(leave="detach")  # resumes the VM
        log = q.gdb("set width 0", "set print elements unlimited", "set print repeats unlimited",
                    f"print/x *(unsigned int (*)[{max(length, 1)}])TRACER_1->history->compact_log.storage_ptr",
                    leave="disconnect")
        items = [int(w, 16) for w in re.findall(r"0x[0-9a-f]+", log[0])][:length]
        want = decode_log(items)
        r = collect("-e", q.elf, "-g", q.server, "--no-clear", "--polls", "1", "TRACER_1")
        got = entries(parse_csv(r.stdout)[1], 1)
        check(r.returncode == 0 and got == want and len(want) > 0,
              f"{target}: --no-clear on a halted target = gdb-multiarch's read of the same log ({len(want)} entries)",
              f"{got[:4]} vs {want[:4]} {r.stderr}")
        check(q.running(), f"{target}: a target found halted runs after eko-collect")
        r = collect("-e", q.elf, "-g", q.server, "-w", "64" if bits == 32 else "32", "TRACER_1")
        check(r.returncode == 2 and "contradicts" in r.stderr, f"{target}: --word-size contradicting the ELF -> 2",
              r.stderr)
        layout = collect("-e", q.elf, "--print-layout")
        check(f'"word_size":{q.word}' in layout.stdout, f"{target}: --print-layout shows {bits}-bit offsets",
              layout.stdout)
    finally:
        q.stop()


def slow_collector():
    """Polls 1.5 s apart, far slower than the firmware fills a log: the rig waits for its
    collector (tracer.c, "Pace") and the collected sequence is still whole. Shows that the
    timing-free sequences of target_run do not rest on eko-collect keeping up."""
    q = Qemu("cm3")
    try:
        r = collect("-e", q.elf, "-g", q.server, "-i", "1500", "--polls", "4", "TRACER_1")
        ok, detail, _ = sequence_complete(parse_csv(r.stdout)[1], 1)
        check(r.returncode == 0 and ok, "slow collector: tracer 1's sequence whole over 4 polls 1.5 s apart",
              f"{detail} {r.stderr[-500:]}")
        dropped = [int(v) for v in re.findall(r"\d+", q.gdb("set print repeats unlimited", "print/d g_dropped")[0])]
        waited = q.value("g_waiting_turns")
        check(dropped[0] == 0 and waited > 0 and sum(dropped) > 0,
              "slow collector: the firmware waited for it (tracer 1 dropped nothing, the uncollected ones did)",
              f"waiting turns {waited}, dropped {dropped}")
        check(q.running(), "slow collector: the target runs after eko-collect exits")
    finally:
        q.stop()


def reader_finds_collisions():
    """The reader itself can fail: two reports of tracer 1 with the same local clock (what a
    clear without ekotrace's increment produced) collide; with the increment they do not."""
    head = "session_id,segment_id,segment_index,receive_time,tracer_id,event_id,event_payload,lc_tracer_id,lc_clock\n"
    t = "2026-01-01T00:00:00.000000Z"

    def report(segment, clock):
        return f"0,{segment},0,{t},1,,,1,{clock}\n0,{segment},1,{t},1,{PRODUCED_REPORT},,,\n0,{segment},2,{t},1,7,,,\n"
    for clocks, want in (((5, 5), 1), ((5, 6), 0)):
        rows = ekotrace_reader.read_rows(io.StringIO(head + report(0, clocks[0]) + report(1, clocks[1])))
        _, collisions, _ = ekotrace_reader.causal_links(rows, 0)
        check(len(collisions) == want, f"ekotrace's reader: local clocks {clocks} -> {want} collision(s)", collisions)
        path = os.path.join(work, f"reader-{clocks[1]}.csv")
        with open(path, "w") as f:
            f.write(head + report(0, clocks[0]) + report(1, clocks[1]))
        r = subprocess.run([sys.executable, os.path.join(here, "ekotrace_reader.py"), path], capture_output=True,
                           text=True)
        check(r.returncode == want and f"{want} collisions" in r.stdout,
              f"ekotrace_reader.py as a program: exit {want} for local clocks {clocks}", r.stdout + r.stderr)
    try:
        ekotrace_reader.read_rows(io.StringIO(head + f"0,0,0,{t},1,0,,,\n"))
        check(False, "ekotrace's reader rejects event id 0")
    except ekotrace_reader.ReadError as e:
        check("invalid event id" in str(e), "ekotrace's reader rejects event id 0", str(e))


def decode_log(items):
    """Compact log items as entries ('c', id, count) / ('e', id, payload|None)."""
    out, k = [], 0
    while k < len(items):
        if items[k] & 0x80000000:
            out.append(("c", items[k] & 0x7fffffff, items[k + 1]))
            k += 2
        elif items[k] & 0x40000000:
            out.append(("e", items[k] & 0x3fffffff, items[k + 1]))
            k += 2
        else:
            out.append(("e", items[k], None))
            k += 1
    return out


def tracer_state(q, k):
    """TRACER_k's history as gdb reads it: event_count, clocks [(id, count)], log items, capacity."""
    h = f"histories[{k - 1}]"
    event_count, n_clocks, n_log, capacity = map(int, q.gdb(
        f"print/d {h}.event_count", f"print/d {h}.clocks.len", f"print/d {h}.compact_log.len",
        f"print/d {h}.compact_log.storage_cap"))
    clocks, log = q.gdb("set width 0", "set print elements unlimited", "set print repeats unlimited",
                        f"print/x *(unsigned int (*)[{2 * n_clocks}]){h}.clocks.storage_ptr",
                        f"print/x *(unsigned int (*)[{max(n_log, 1)}]){h}.compact_log.storage_ptr")
    words = [int(w, 16) for w in re.findall(r"0x[0-9a-f]+", clocks)]
    return {"event_count": event_count, "clocks": list(zip(words[::2], words[1::2])),
            "log": [int(w, 16) for w in re.findall(r"0x[0-9a-f]+", log)][:n_log], "capacity": capacity}


def report_finish_model(state):
    """history.rs finished_report_logging applied to a tracer's state: log cleared, local
    clock (the first) incremented (saturating), event_count reset, the clocks written while
    the log holds fewer than capacity - 2 items (else "log overflowed"), then the "produced
    report" event if there is room (event_count 1)."""
    clocks, capacity = list(state["clocks"]), state["capacity"]
    if clocks:
        clocks[0] = (clocks[0][0], min(clocks[0][1] + 1, 0xFFFFFFFF))
    log, event_count = [], 0
    if capacity > 0:
        overflowed = False
        for ident, count in clocks:
            if not len(log) < capacity - 2:
                overflowed = True
                break
            log += [0x80000000 | ident, count]
        if overflowed and len(log) < capacity:
            log.append(LOG_OVERFLOWED)
        if len(log) < capacity:
            log.append(PRODUCED_REPORT)
            event_count = 1
    return {"event_count": event_count, "clocks": clocks, "log": log, "capacity": capacity}


def clear_is_ekotraces_report_finish():
    """The clear after a poll leaves the tracer exactly as its own finished_report_logging
    would (the rig firmware's, run on the same state restored by gdb) and as history.rs says
    (report_finish_model): same clocks, log and event_count, byte for byte as gdb reads them."""
    q = Qemu("cm3")
    try:
        q.gdb("set var g_pause = 1")
        wait_until(lambda: q.value("g_paused") == 1, "the firmware parks between rounds")
        for k in (1, 2):  # tracer 2 holds two clocks
            h = f"histories[{k - 1}]"
            saved = [os.path.join(work, f"history-{k}.bin"), os.path.join(work, f"region-{k}.bin")]
            region_end = f"(char *){h}.compact_log.storage_ptr + 4 * {h}.compact_log.storage_cap"
            q.gdb(f"dump binary memory {saved[0]} &{h} (char *)&{h} + sizeof({h})",
                  f"dump binary memory {saved[1]} {h}.clocks.storage_ptr {region_end}")
            before = tracer_state(q, k)
            q.gdb(f"set var g_report_request = {k}")
            wait_until(lambda: q.value("g_report_request") == 0, f"TRACER_{k} finishes its own report")
            firmware = tracer_state(q, k)
            q.gdb(f"restore {saved[0]} binary &{h}", f"restore {saved[1]} binary {h}.clocks.storage_ptr")
            check(tracer_state(q, k) == before, f"TRACER_{k}: its state restored by gdb")
            r = collect("-e", q.elf, "-g", q.server, "--polls", "1", f"TRACER_{k}")
            collector = tracer_state(q, k)
            model = report_finish_model(before)
            check(r.returncode == 0 and collector == firmware == model and len(before["clocks"]) == k,
                  f"TRACER_{k}: eko-collect's clear = the tracer's own finished_report_logging = history.rs "
                  f"({len(before['clocks'])} clocks, local clock {before['clocks'][0][1]} -> "
                  f"{collector['clocks'][0][1]})", f"collector {collector}\nfirmware {firmware}\nmodel {model}")
            got = entries(parse_csv(r.stdout)[1], k)
            check(got == decode_log(before["log"]) and len(got) > 0,
                  f"TRACER_{k}: the poll handed out the log as it was before the clear ({len(got)} entries)",
                  f"{got[:4]} vs {decode_log(before['log'])[:4]}")
        q.gdb("set var g_pause = 0")
        check(q.running(), "the firmware runs on after the comparison")
    finally:
        q.stop()


def in_use_and_errors():
    q = Qemu("cm3")
    try:
        q.gdb("set var g_hold_in_use = 400000")  # the firmware now spends most time inside the tracers
        out = os.path.join(work, "in-use.csv")
        if os.path.exists(out):
            os.remove(out)  # eko-collect appends
        # Tracer 1 is inside a step about 1/16 of the time the firmware steps (16 tracers in
        # turn), but once it is ahead of the collector it waits outside them: how often a poll
        # finds it inside depends on the collector's speed (0 of 200 polls once under ASan). Runs
        # of 200 polls are repeated until one skip is seen, at most 10; the log stays complete
        # across them (the firmware waits for a collector, it does not overwrite). The USB test
        # has a tracer whose in_use never clears, for the exact count.
        skipped, runs = 0, 0
        while True:
            r = collect("-e", q.elf, "-g", q.server, "-i", "10", "--polls", "200", "--stats", "-o", out, "TRACER_1",
                        "0xfffffff0")
            runs += 1
            counted = re.search(r"tracer TRACER_1: \d+ entries in \d+ polls; skipped: (\d+) in use", r.stderr)
            if r.returncode != 0 or not counted:
                break
            skipped += int(counted.group(1))
            if skipped >= 1 or runs == 10:
                break
        check(r.returncode == 0 and skipped >= 1,
              f"in_use held: polls skip the tracer and count it ({skipped} in {runs} runs of 200 polls)",
              r.stderr[-1500:])
        with open(out) as f:
            ok, detail, _ = sequence_complete(parse_csv(f.read())[1], 1)
        check(ok, "in_use held: what is read is still complete", detail)
        check("cannot read the tracer reference at 0xfffffff0" in r.stderr and
              re.search(r"tracer 0xfffffff0: 0 entries .* (\d+) unreadable", r.stderr),
              "unmapped address (E14): warned, counted, the other tracer collected", r.stderr[-1500:])
        r = collect("-e", q.elf, "-g", q.server, "0xfffffff0")
        check(r.returncode == 6 and "no tracer could be read" in r.stderr, "only unreadable tracers -> exit 6", r.stderr)
        r = collect("-e", q.elf, "-g", q.server, "NO_SUCH_TRACER")
        check(r.returncode == 3 and "NO_SUCH_TRACER" in r.stderr, "unknown symbol -> exit 3", r.stderr)
        r = collect("-g", q.server, "TRACER_1")
        check(r.returncode == 2 and "--elf" in r.stderr, "symbol without --elf -> usage error", r.stderr)
        r = collect("-e", q.elf, "-g", q.server, "-s", "4294967296", "TRACER_1")
        check(r.returncode == 2 and "session-id" in r.stderr, "a session id past u32 (ekotrace's type) -> usage error",
              r.stderr)
        check(q.running(), "the target runs after the error exits")
    finally:
        q.stop()


def null_tracer():
    q = Qemu("cm3", halted=True)  # -S: nothing ran yet, TRACER_1 is NULL
    try:
        r = collect("-e", q.elf, "-g", q.server, "-i", "20", "--polls", "30", "--stats", "TRACER_1")
        null = re.search(r"skipped: \d+ in use, (\d+) NULL", r.stderr)
        rows = parse_csv(r.stdout)[1]
        check(r.returncode == 0 and null and int(null.group(1)) >= 1 and "NULL" in r.stderr and len(rows) > 0,
              "QEMU -S: a NULL tracer is counted, collection starts once the firmware set it", r.stderr[-800:])
    finally:
        q.stop()


def server_goes_away():
    q = Qemu("cm3")
    out = os.path.join(work, "away.csv")
    if os.path.exists(out):
        os.remove(out)
    proc = subprocess.Popen([tool, "-e", q.elf, "-g", q.server, "-i", "10", "-o", out, "TRACER_1", "TRACER_2"],
                            stderr=subprocess.PIPE, text=True)

    def rows_written():
        try:
            with open(out) as f:
                return f.read().count("\n") - 1
        except OSError:
            return 0
    try:  # killed once it has collected for a while
        wait_until(lambda: rows_written() > 150, "eko-collect writes rows", lambda: f"{rows_written()} rows")
    except WaitTimeout as e:
        check(False, "server killed mid-run: rows before it", str(e))
    q.stop()
    _, err = proc.communicate(timeout=30)
    with open(out) as f:
        text = f.read()
    header, rows = parse_csv(text)
    check(proc.returncode == 7 and ("closed the connection" in err or "connection lost" in err), "server killed mid-run -> exit 7, clear message",
          f"{proc.returncode} {err}")
    check(text.endswith("\n") and len(rows) > 100 and all(len(r) == 9 for r in rows) and
          text.count("session_id") == 1, "server killed mid-run: the CSV holds whole rows only", text[-300:])


class DelayingProxy(threading.Thread):
    """Between eko-collect and QEMU: after the client's interrupt (0x03) the stop reply is
    held back for `hold` seconds, so the target stays halted inside a poll."""

    def __init__(self, server_port, hold):
        super().__init__(daemon=True)
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.server_port, self.hold = server_port, hold
        self.interrupted = threading.Event()
        self.holding = threading.Event()  # set when the reply after the interrupt is held

    def run(self):
        client, _ = self.listener.accept()
        server = socket.create_connection(("127.0.0.1", self.server_port))

        def upstream():
            while data := client.recv(65536):
                if b"\x03" in data and not self.interrupted.is_set():
                    self.interrupted.set()
                server.sendall(data)
            server.shutdown(socket.SHUT_WR)

        threading.Thread(target=upstream, daemon=True).start()
        held = False
        try:
            while data := server.recv(65536):
                if self.interrupted.is_set() and not held:
                    held = True
                    self.holding.set()  # QEMU has answered the interrupt: the VM is halted
                    time.sleep(self.hold)  # pace: the stop reply is held this long (the scenario)
                client.sendall(data)
        except OSError:
            pass  # eko-collect was stopped with the target halted: that is the test
        client.close()


def sigterm_while_halted():
    q = Qemu("cm3")
    try:
        proxy = DelayingProxy(q.port, 1.5)
        proxy.start()
        out = os.path.join(work, "sigterm.csv")
        if os.path.exists(out):
            os.remove(out)
        proc = subprocess.Popen([tool, "-e", q.elf, "-g", f"127.0.0.1:{proxy.port}", "-i", "2000", "-o", out,
                                 "TRACER_1"], stderr=subprocess.PIPE, text=True)
        # The first poll is on the halted target after connecting; the second starts with 0x03.
        got = proxy.interrupted.wait(30) and proxy.holding.wait(30)  # halted, its stop reply held
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
        check(got and proc.returncode == 143, "SIGTERM while the target is halted -> exit 143", f"{proc.returncode} {err}")
        check(q.running(), "SIGTERM while the target is halted: the target runs afterwards (its counter advances)")
    finally:
        q.stop()


def ndjson_through_trace_csv():
    q = Qemu("cm3")
    try:
        r = collect("-e", q.elf, "-g", q.server, "--format", "ndjson", "--polls", "3", "-i", "10", "TRACER_1")
        lines = r.stdout.splitlines()
        check(r.returncode == 0 and len(lines) > 10 and '"kind":"EkoClock"' in lines[0] and
              '"source":"ekotrace"' in lines[0], "--format ndjson: EkoClock/EkoEvent records", lines[:1])
        schema_dir = os.path.join(here, "..", "schema")
        check(shutil.which("node") and os.path.isdir(os.path.join(schema_dir, "node_modules", "ajv")),
              "the schema check has node and tests/schema/node_modules (missing: run scripts/install-deps)")
        if shutil.which("node") and os.path.isdir(os.path.join(schema_dir, "node_modules", "ajv")):
            records = os.path.join(work, "eko.ndjson")
            with open(records, "w") as f:
                f.write(r.stdout)
            v = subprocess.run(["node", os.path.join(schema_dir, "validate_file.mjs"), os.path.join(here, "..", ".."),
                                records], capture_output=True, text=True)
            check(v.returncode == 0, "--format ndjson: every record valid under schemas/record.schema.json",
                  v.stdout)
        flat = subprocess.run([trace_csv, "--preset", "ekotrace"], input=r.stdout, capture_output=True, text=True)
        header, rows = parse_csv(flat.stdout)
        check(header[0] == "session_id" and len(rows) == len(lines) and rows[0][7] == "1",
              "--format ndjson | trace-csv --preset ekotrace: ekotrace's columns back", flat.stdout[:300])
    finally:
        q.stop()


def process_runs(pid, seconds=3):
    """True once the process is running or sleeping (not stopped under ptrace): the detach
    that lets it go takes a moment to reach the kernel."""
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            with open(f"/proc/{pid}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except FileNotFoundError:
            return False
        if state in ("R", "S"):
            return True
        time.sleep(0.05)  # pace: the polling interval of a wait with a deadline
    return False


def gdbserver_native():
    exe = os.path.join(work, "native-tracer")
    subprocess.run(["gcc", "-O2", "-no-pie", "-I", os.path.join(here, "fw"), "-DIDLE_LOOPS=2000000", "-DHOLD_IN_USE=100",
                    os.path.join(here, "fw", "tracer.c"), os.path.join(here, "native_main.c"), "-o", exe], check=True)
    port = free_port()
    server = subprocess.Popen(["gdbserver", f"127.0.0.1:{port}", exe], stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
    pid = None
    try:
        line = server.stdout.readline()
        pid = int(re.search(r"pid = (\d+)", line).group(1))
        r = collect("-e", exe, "-g", f"127.0.0.1:{port}", "-i", "20", "--polls", "20", "--stats", "-v", "TRACER_1",
                    "TRACER_2")
        rle = re.search(r"(\d+) run-length-encoded replies", r.stderr)
        check(r.returncode == 0 and "no-ack mode" in r.stderr and rle and int(rle.group(1)) > 0,
              "GNU gdbserver: no-ack mode negotiated, run-length-encoded replies decoded", r.stderr[-1200:])
        rows = parse_csv(r.stdout)[1]
        check(len(entries(rows, 1)) > 0 and len(entries(rows, 2)) > 0 and "64-bit little endian" in r.stderr,
              "GNU gdbserver: both tracers collected from the native x86-64 process (ELF64)", r.stderr[-500:])
        check(process_runs(pid), "GNU gdbserver: the process runs on after eko-collect detached")
    finally:
        if pid:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        server.kill()
        server.wait()


def main():
    missing = [t for t in ("qemu-system-arm", "arm-none-eabi-gcc", "gdb-multiarch") if not shutil.which(t)]
    if missing:
        print(f"FAIL missing {', '.join(missing)}: run scripts/install-deps")
        return 1
    os.makedirs(work, exist_ok=True)
    reader_finds_collisions()
    # The firmware paces itself on its collector (tracer.c, "Pace"), so no pace of the host
    # or of eko-collect (ASan on a loaded 2-core CI machine) makes a collected log fill up.
    subprocess.run([os.path.join(here, "fw", "build.sh"), work], check=True)
    for target in TARGETS:
        command, elf = TARGETS[target][0][0], TARGETS[target][1]
        if not shutil.which(command) or not os.path.exists(os.path.join(work, elf)):
            check(False, f"{target}: {command} or its cross compiler is missing")
            continue
        target_run(target)
    slow_collector()
    clear_is_ekotraces_report_finish()
    in_use_and_errors()
    null_tracer()
    server_goes_away()
    sigterm_while_halted()
    ndjson_through_trace_csv()
    if shutil.which("gdbserver"):
        gdbserver_native()
    else:
        check(False, "gdbserver is not installed")
    return check.summary()


if __name__ == "__main__":
    sys.exit(main())
