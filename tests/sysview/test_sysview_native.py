#!/usr/bin/env python3
"""sysview-decode against SEGGER's own target code: SEGGER_SYSVIEW.c and SEGGER_RTT.c from
../shared/reference/segger, unmodified, built for the host with native_target.c, which drives
them through 5000 scheduled calls (tasks, nested ISRs, timers, idle, marks, printf with
arguments, prints at three levels, ready/blocked, data samples, user events) while it plays
the host that drains the SysView channel and sends the start and stop commands. The host
looks away twice, so SEGGER's code drops packets and reports them (its Overflow packet).
- every record equals what segger_model.py derives from the calls (timestamps exact, in ticks
  across the 32-bit wrap of the target's counter; Overflow's dropped = the calls whose packets
  did not reach the buffer);
- in ns from the rate the target announced; the same records from any split of the input;
- junk before the stream and between two streams: one Malformed each, its exact byte count;
- every record valid against record.schema.json (ajv) and trace-filter's validator (--strict);
- trace-top and trace-timeline show the recording as they show ITM's: task loads by name,
  handlers named by the system description, a track per task and per handler; trace-serve
  serves it to real WebSocket clients (serve_sysview.mjs: Callisto's schema holds).
Usage: test_sysview_native.py SYSVIEW_DECODE TRACE_FILTER TRACE_TOP TRACE_TIMELINE TRACE_SERVE SHARED_DIR WORK_DIR"""
import json
import os
import random
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from checks import Checks  # noqa: E402

from segger_model import expected_records, records_as_tuples  # noqa: E402

tool, trace_filter, trace_top, trace_timeline, trace_serve, shared, work = sys.argv[1:8]
here = os.path.dirname(os.path.abspath(__file__))
root = os.path.normpath(os.path.join(here, "..", ".."))
segger = os.path.join(shared, "reference", "segger")
if not os.path.isdir(segger):
    print(f"skipped: {segger} not found")
    sys.exit(77)
check = Checks(show_passes=True)
os.makedirs(work, exist_ok=True)
isr_names = {15: "SysTick", 16: "UART0"}


def build(buffer_size):
    binary = os.path.join(work, f"native_target_{buffer_size}")
    includes = [f"-I{os.path.join(segger, d)}" for d in ("rtt/RTT", "rtt/Config", "systemview/SYSVIEW",
                                                          "systemview/Config", "systemview/SEGGER")]
    # -w: SEGGER's code casts pointers to U32, which a 64-bit host warns about; it is built as it is.
    subprocess.run([shutil.which("cc") or "gcc", "-O1", "-w", *includes, f"-DSEGGER_SYSVIEW_RTT_BUFFER_SIZE={buffer_size}",
                    "-include", os.path.join(here, "rig_hooks.h"),
                    os.path.join(segger, "rtt/RTT/SEGGER_RTT.c"), os.path.join(segger, "systemview/SYSVIEW/SEGGER_SYSVIEW.c"),
                    os.path.join(here, "native_target.c"), "-o", binary], check=True)
    return binary


def run_target(binary, name, steps):
    stream, calls = os.path.join(work, f"{name}.bin"), os.path.join(work, f"{name}.calls")
    subprocess.run([binary, stream, calls, str(steps)], check=True)
    with open(calls) as f:
        return stream, [json.loads(line) for line in f]


def decode(args, data=None, path=None, chunks=None):
    command = [tool, *args] + ([path] if path else [])
    if chunks is None:
        result = subprocess.run(command, input=data, capture_output=True)
        stdout, stderr, code = result.stdout, result.stderr, result.returncode
    else:
        proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        for chunk in chunks:
            proc.stdin.write(chunk)
            proc.stdin.flush()
        proc.stdin.close()
        stdout, stderr = proc.stdout.read(), proc.stderr.read()
        code = proc.wait(timeout=120)
    records = [json.loads(line) for line in stdout.decode().splitlines()]
    return records, stderr.decode(), code


def first_difference(expected, got):
    for i, (a, b) in enumerate(zip(expected, got)):
        if a != b:
            return f"record {i}: expected {a}, got {b}"
    return f"{len(expected)} records expected, {len(got)} written"


binary = build(512)
stream_path, calls = run_target(binary, "run", 5000)
expected = expected_records(calls, isr_names)
drops = sum(1 for c in calls if c.get("sent") is False)
check(drops > 100, "SEGGER's code dropped packets while the host looked away", f"{drops} dropped")

records, stderr, code = decode(["--ticks", "--stats"], path=stream_path)
check(code == 0, "sysview-decode exits 0", stderr)
got = records_as_tuples(records)
check(got == expected, f"every record as the calls say ({len(expected)} records, timestamps in ticks)",
      first_difference(expected, got))
check(all(r["clock"] == "cycles" and r["source"] == "sysview" and r["port"] == 1 for r in records),
      "clock cycles, source sysview, port 1")
dropped = sum(r["event"]["data"]["dropped"] for r in records if r["event"]["kind"] == "Overflow")
check(dropped == drops, "Overflow records add up to the packets SEGGER's code dropped", f"{dropped} vs {drops}")
check(f"{drops} packets dropped by the target" in stderr and "0 time mismatches" in stderr,
      "--stats reports the drops and no time mismatch", stderr)
check(any(r["timestamp"] > 0xFFFFFFFF for r in records), "time runs on past the target counter's 32-bit wrap")
sysview_kinds = {"TaskSwitch", "IdleEnter", "IdleExit", "IsrEnter", "IsrExit", "TimerEnter", "TimerExit", "Marker",
                 "Text", "Overflow", "TaskInfo", "TaskState", "StackInfo", "DataSample", "HeapEvent", "SystemInfo",
                 "UserEvent"}
check(sysview_kinds <= {r["event"]["kind"] for r in records}, "every kind sysview-decode writes was written",
      sysview_kinds - {r["event"]["kind"] for r in records})

records_ns, _, _ = decode([], path=stream_path)
ns_expected = [(t * 1000, kind, data) for t, kind, data in expected]  # the target announced 1 MHz
check(records_as_tuples(records_ns) == ns_expected and records_ns[0]["clock"] == "ns",
      "in ns from the rate SEGGER's Init packet announced", first_difference(ns_expected, records_as_tuples(records_ns)))

with open(stream_path, "rb") as f:
    stream = f.read()
rng = random.Random(7)
chunks, at = [], 0
while at < len(stream):
    size = rng.choice([1, 2, 3, 5, 7, 64, 1000])
    chunks.append(stream[at:at + size])
    at += size
split, _, _ = decode(["--ticks"], chunks=chunks)
check(records_as_tuples(split) == expected, f"the same records from {len(chunks)} writes of 1 to 1000 bytes",
      first_difference(expected, records_as_tuples(split)))

junk = bytes([0x55, 0xAA, 0x01, 0x02, 0x7F, 0x13, 0x99])
records, stderr, _ = decode(["--ticks"], data=junk + stream)
malformed = [r for r in records if r["event"]["kind"] == "Malformed"]
check(len(malformed) == 1 and malformed[0]["event"]["data"] == {"reason": "before the first sync", "bytes": 7},
      "bytes before the first sync: one Malformed with their count", malformed)
check(records_as_tuples([r for r in records if r["event"]["kind"] != "Malformed"]) == expected,
      "then every record as without them")

second_path, second_calls = run_target(binary, "second", 1000)
with open(second_path, "rb") as f:
    second = f.read()
bad = bytes([0xFF] * 6)  # an event id over 5 bytes
records, stderr, _ = decode(["--ticks"], data=stream + bad + second)
malformed = [r for r in records if r["event"]["kind"] == "Malformed"]
check(len(malformed) == 1 and malformed[0]["event"]["data"]["bytes"] == 6
      and "over 5 bytes" in malformed[0]["event"]["data"]["reason"],
      "a malformed packet: one Malformed, the 6 bytes up to the next sync", malformed)
kinds = [r["event"]["kind"] for r in records]
second_kinds = [kind for _, kind, _ in expected_records(second_calls, isr_names)]
check(kinds[len(expected) + 1:] == second_kinds, "the stream after the resync decodes whole",
      f"{len(kinds) - len(expected) - 1} records after the resync, {len(second_kinds)} expected")

records_file = os.path.join(work, "records.ndjson")
with open(records_file, "w") as f:
    f.write("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in records))
schema = subprocess.run(["node", os.path.join(root, "tests/schema/validate_file.mjs"), root, records_file],
                        capture_output=True, text=True)
check(schema.returncode == 0, "every record valid against record.schema.json (ajv)", schema.stdout[-800:])
strict = subprocess.run([trace_filter, "--strict", records_file], capture_output=True, text=True)
check(strict.returncode == 0 and len(strict.stdout.splitlines()) == len(records),
      "and against the tools' own validator (trace-filter --strict)", strict.stderr[-800:])

top = subprocess.run([trace_top, "--once", "--format", "ndjson", records_file], capture_output=True, text=True)
top_records = [json.loads(line) for line in top.stdout.splitlines()]
task_names = {r["event"]["data"]["name"] for r in top_records if r["event"]["kind"] == "TopTask"}
handlers = {r["event"]["data"]["name"] for r in top_records if r["event"]["kind"] == "TopHandler"}
check(top.returncode == 0 and {"Main", "Sensor", "Comms"} <= task_names and "SysTick" in handlers,
      "trace-top: task loads by name, handlers named by the system description", (task_names, handlers, top.stderr))
timeline_file = os.path.join(work, "timeline.json")
timeline = subprocess.run([trace_timeline, "-o", timeline_file, records_file], capture_output=True, text=True)
with open(timeline_file) as f:
    events = json.load(f)["traceEvents"]
tracks = {e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "thread_name"}
check(timeline.returncode == 0 and {"Main", "Sensor", "Comms", "SysTick", "idle"} <= tracks,
      "trace-timeline: a track per task, per handler, and idle", tracks)
served = subprocess.run(["node", os.path.join(here, "serve_sysview.mjs"), root, shared, trace_serve, records_file],
                        capture_output=True, text=True, timeout=300)
print(served.stdout, end="")
check(served.returncode == 0, "trace-serve: the recording to WebSocket clients", served.stderr[-800:])

sys.exit(check.summary())
