#!/usr/bin/env python3
"""trace-top against an independent model and the record schema (issue 21, item 2).

The model below recomputes, from the records alone and the definitions in trace-top's man
page, what trace-top reports: PC samples per function, each exception's count and own time
(without nested handlers), min and max over intervals that did not span an Overflow, the
deepest nesting, CPU time per task without idle stretches, idle time. It shares no code with
lib/analysis. Streams: the simulated target (itm-decode's records) and, on a pseudo-terminal,
the table redrawn while records arrive. Every snapshot record must validate against
schemas/record.schema.json (python-jsonschema, the project's record oracle)."""
import json
import os
import pty
import re
import select
import subprocess
import sys
import time

import jsonschema

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from checks import Checks  # noqa: E402

build_dir, source_dir = sys.argv[1], sys.argv[2]
tools = os.path.join(build_dir, "tools")
check = Checks(show_passes=False)


def records_of(seed, size):
    capture = subprocess.run([os.path.join(tools, "swo-capture"), "--simulate", "--seed", str(seed), "--rate", "0",
                              "--max-bytes", str(size)], capture_output=True, check=True).stdout
    decoded = subprocess.run([os.path.join(tools, "itm-decode")], input=capture, capture_output=True, check=True)
    return decoded.stdout


def model(lines):
    """The statistics as the man page defines them, from the records alone."""
    functions, samples, sleeping, stacks = {}, 0, 0, {}
    handlers = {}  # number -> dict(count, total, certain: [durations], uncertain, nesting)
    stack = []  # [number, since, own, uncertain]
    tasks, running, since, idle_since, idle = {}, None, 0, None, 0
    first = last = None
    for line in lines:
        r = json.loads(line)
        if "event" not in r:
            continue
        t, kind, data = r["timestamp"], r["event"]["kind"], r["event"].get("data", {})
        first = t if first is None else first
        last = t if last is None else max(last, t)
        if kind == "PcSample":
            samples += 1
            if data["sleep"]:
                sleeping += 1
                key = "[sleep]"
            else:
                key = data.get("function") or f"0x{data['pc']:08x}"
                functions[key] = functions.get(key, 0) + 1
            # What had the CPU at the sample, as a flame graph's first frame.
            task = "idle" if idle_since is not None else (f"task {running}" if running is not None else "")
            frames = f"{task};{key}" if task else key
            stacks[frames] = stacks.get(frames, 0) + 1
        elif kind == "Exception" and data["action"] == "enter":
            if stack:
                stack[-1][2] += t - stack[-1][1]
            stack.append([data["number"], t, 0, False])
            h = handlers.setdefault(data["number"], {"count": 0, "total": 0, "certain": [], "uncertain": 0, "nesting": 0})
            h["nesting"] = max(h["nesting"], len(stack))
        elif kind == "Exception" and data["action"] == "exit":
            if not any(a[0] == data["number"] for a in stack):
                continue
            while stack:
                number, began, own, uncertain = stack.pop()
                own += t - began
                closes_it = number == data["number"]
                h = handlers[number]
                h["count"] += 1
                h["total"] += own
                if uncertain or not closes_it:
                    h["uncertain"] += 1
                else:
                    h["certain"].append(own)
                if stack:
                    stack[-1][1] = t
                if closes_it:
                    break
        elif kind in ("Overflow", "Malformed"):  # a loss: the target's, or bytes the decoder skipped
            for active in stack:
                active[3] = True
        elif kind == "TaskSwitch":
            if running is not None and idle_since is None:
                tasks[running] = tasks.get(running, 0) + t - since
            running, since = data["to_task"], t
            tasks.setdefault(running, 0)
        elif kind == "IdleEnter" and idle_since is None:
            if running is not None:
                tasks[running] = tasks.get(running, 0) + t - since
            idle_since = t
        elif kind == "IdleExit" and idle_since is not None:
            idle += t - idle_since
            idle_since, since = None, t
    if running is not None and idle_since is None:
        tasks[running] = tasks.get(running, 0) + last - since
    if idle_since is not None:
        idle += last - idle_since
    return {"functions": functions, "samples": samples, "sleeping": sleeping, "handlers": handlers, "tasks": tasks,
            "idle": idle, "span": last - first, "records": sum(1 for _ in lines), "stacks": stacks}


def snapshot(stdin, *args):
    out = subprocess.run([os.path.join(tools, "trace-top"), "--once", "--top", "100000", *args], input=stdin,
                         capture_output=True, check=True).stdout.decode()
    return [json.loads(line) for line in out.splitlines()]


def check_stream(label, data, validator):
    lines = [line for line in data.decode().splitlines() if line]
    expected = model(lines)
    got = snapshot(data)
    bad = [r for r in got if not validator.is_valid(r)]
    check(not bad, f"{label}: every snapshot record is valid under record.schema.json ({len(got)}; first bad: {bad[:1]})")
    by_kind = {}
    for r in got:
        by_kind.setdefault(r["event"]["kind"], []).append(r["event"]["data"])
    summary = by_kind["TopSummary"][0]
    check(summary["records"] == len(lines) and summary["span"] == expected["span"] and summary["final"],
          f"{label}: the summary covers every record and the span ({summary})")
    check(summary["pc_samples"] == expected["samples"] and summary["sleep_samples"] == expected["sleeping"],
          f"{label}: PC and sleep samples as counted ({summary['pc_samples']}, {expected['samples']})")
    functions = {f["function"]: f["samples"] for f in by_kind.get("TopFunction", [])}
    check(functions == expected["functions"], f"{label}: samples per function as the model counts them "
                                              f"({len(functions)} functions)")
    handlers = {h["number"]: h for h in by_kind.get("TopHandler", []) if h["source"] == "exception"}
    wrong = []
    for number, h in expected["handlers"].items():
        mine = handlers.get(number)
        certain = h["certain"]
        want = (h["count"], h["total"], min(certain) if certain else None, max(certain) if certain else None,
                h["nesting"], h["uncertain"])
        have = None if mine is None else (mine["count"], mine["total"], mine["min"], mine["max"], mine["max_nesting"],
                                          mine["uncertain"])
        if want != have:
            wrong.append((number, want, have))
    check(not wrong and len(handlers) == len(expected["handlers"]),
          f"{label}: every exception's count, own time, min, max, nesting and uncertain intervals as the model "
          f"({len(handlers)} handlers; first wrong: {wrong[:1]})")
    tasks = {t["task"]: t["time"] for t in by_kind.get("TopTask", [])}
    check(tasks.pop(None, None) == expected["idle"], f"{label}: idle time as the model ({expected['idle']})")
    check(tasks == expected["tasks"], f"{label}: CPU time per task as the model ({tasks} vs {expected['tasks']})")
    if expected["tasks"]:
        total = sum(expected["tasks"].values()) + expected["idle"]
        first_switch = expected["span"] - total
        check(0 <= first_switch < expected["span"] // 10,
              f"{label}: tasks and idle add up to the span from the first switch on ({total} of {expected['span']})")
    return got


def check_exports(data, expected):
    """--format folded as the model's stacks; --format callgrind read back by valgrind's own
    callgrind_annotate (an independent reader of the format)."""
    top = os.path.join(tools, "trace-top")
    folded = subprocess.run([top, "--format", "folded"], input=data, capture_output=True, check=True).stdout.decode()
    stacks = {}
    for line in folded.splitlines():
        stack, _, count = line.rpartition(" ")
        stacks[stack] = int(count)
    check(stacks == expected["stacks"], f"folded stacks (task;function count) as the model ({len(stacks)} stacks, "
                                        f"{sum(stacks.values())} samples)")
    callgrind = os.path.join(build_dir, "trace-top.callgrind")
    with open(callgrind, "wb") as f:
        f.write(subprocess.run([top, "--format", "callgrind"], input=data, capture_output=True, check=True).stdout)
    annotated = subprocess.run(["callgrind_annotate", "--threshold=100", "--auto=no", callgrind], capture_output=True,
                               check=True).stdout.decode()
    totals = {}
    program = None
    for line in annotated.splitlines():
        row = re.match(r"^\s*([\d,]+)\s+\(\s*[\d.]+%\)\s+(.*)$", line)
        if not row:
            continue
        samples, where = int(row.group(1).replace(",", "")), row.group(2)
        if where == "PROGRAM TOTALS":
            program = samples
        else:
            totals[where.split(":", 1)[1]] = samples
    want = dict(expected["functions"])
    if expected["sleeping"]:
        want["[sleep]"] = expected["sleeping"]
    check(program == expected["samples"], f"callgrind_annotate reads the profile: {program} samples in all")
    check(totals == want, f"callgrind_annotate's samples per function as the model ({len(totals)} functions)")


def check_terminal():
    """On a terminal: the table, redrawn in place every --interval while records arrive."""
    data = records_of(11, 400000).decode().splitlines(keepends=True)
    leader, follower = pty.openpty()
    top = subprocess.Popen([os.path.join(tools, "trace-top"), "--interval", "0.2", "--cpu-hz", "64000000"],
                           stdin=subprocess.PIPE, stdout=follower, stderr=subprocess.PIPE, env={**os.environ, "TERM": "xterm"})
    os.close(follower)
    screen = b""
    chunk = max(1, len(data) // 10)
    for i in range(0, len(data), chunk):
        top.stdin.write("".join(data[i:i + chunk]).encode())
        top.stdin.flush()
        deadline = time.time() + 0.3
        while time.time() < deadline:
            ready, _, _ = select.select([leader], [], [], 0.05)
            if ready:
                try:
                    screen += os.read(leader, 65536)
                except OSError:
                    break
    top.stdin.close()
    # The rest of the output, to the end: reading the pty ends (EIO) once trace-top has exited
    # and closed it; a deadline that runs out fails the test instead of cutting it short.
    deadline = time.time() + 60
    while True:
        if time.time() > deadline:
            raise AssertionError(f"trace-top's output on the pty did not end within 60 s ({len(screen)} bytes)")
        ready, _, _ = select.select([leader], [], [], 1.0)
        if not ready:
            continue
        try:
            more = os.read(leader, 65536)
        except OSError:
            break
        if not more:
            break
        screen += more
    top.wait(timeout=60)
    os.close(leader)
    redraws = screen.count(b"\x1b[H\x1b[2J")
    check(redraws >= 3, f"on a terminal the table is redrawn in place every interval ({redraws} redraws)")
    check(b"PC samples:" in screen and b"Exceptions (max nesting" in screen and b"Tasks" in screen,
          "the table has the profile, the exceptions and the tasks")
    check(b"\x1b[1;36m" in screen, "headings in colour on a terminal")
    check(b'"kind"' not in screen, "no records on a terminal")


def check_rates(records):
    """The table's rates: samples and handler activations per second of the span (--cpu-hz)."""
    lines = [json.loads(line) for line in records.decode().splitlines() if line]
    stamps = [r["timestamp"] for r in lines]
    seconds = (max(stamps) - min(stamps)) / 64e6
    samples = sum(1 for r in lines if r.get("event", {}).get("kind") == "PcSample")
    systick = sum(1 for r in lines if r.get("event", {}).get("kind") == "Exception"
                  and r["event"]["data"]["number"] == 15 and r["event"]["data"]["action"] == "exit")
    table = subprocess.run([os.path.join(tools, "trace-top"), "--once", "--format", "table", "--cpu-hz", "64000000"],
                           input=records, capture_output=True, check=True).stdout.decode()
    shown = re.search(r"PC samples: (\d+) \([\d.]+% asleep, ([\d.]+)/s\)", table)
    check(shown and abs(float(shown.group(2)) - samples / seconds) <= 1,
          "the table's samples per second: samples over the span", f"{shown and shown.group(2)} vs {samples / seconds}")
    row = re.search(r"^\s+15\s+SysTick\s+(\d+)\s+([\d.]+)/s", table, re.M)
    check(row and abs(float(row.group(2)) - systick / seconds) <= 1,
          "the table's SysTick rate: its exits over the span", f"{row and row.group(0)} vs {systick / seconds}")


def main():
    schema_dir = os.path.join(source_dir, "schemas")
    schema = json.load(open(os.path.join(schema_dir, "record.schema.json")))
    validator = jsonschema.Draft7Validator(schema)
    simulated = records_of(7, 3000000)
    got = check_stream("simulated target", simulated, validator)
    check_exports(simulated, model([line for line in simulated.decode().splitlines() if line]))
    check(any(r["event"]["kind"] == "TopTask" for r in got), "the simulated target's tasks are reported")
    check_rates(simulated)
    # Overflows in the middle of handlers: drop lines of a stream and put Overflow records in.
    lines = records_of(9, 1000000).decode().splitlines()
    lossy = []
    for i, line in enumerate(lines):
        if i % 500 == 250:
            r = json.loads(line)
            # Alternately the target's loss and the decoder's (bytes skipped to resync).
            loss = {"kind": "Overflow", "data": {}} if i % 1000 == 250 else \
                {"kind": "Malformed", "data": {"reason": "resync", "bytes": 3}}
            lossy.append(json.dumps({"timestamp": r["timestamp"], "port": 0, "event": loss,
                                     "source": "itm", "clock": r.get("clock", "cycles")}))
            continue
        lossy.append(line)
    got = check_stream("with overflows", ("\n".join(lossy) + "\n").encode(), validator)
    summary = [r for r in got if r["event"]["kind"] == "TopSummary"][0]["event"]["data"]
    check(summary["overflows"] > 0 and summary["resyncs"] > 0 and summary["uncertain"] > 0,
          f"overflows and resyncs make intervals uncertain ({summary['overflows']} overflows, {summary['resyncs']} "
          f"resyncs, {summary['uncertain']} uncertain)")
    check_terminal()
    empty = subprocess.run([os.path.join(tools, "trace-top"), "--once"], input=b"", capture_output=True)
    check(empty.returncode == 0 and b"TopSummary" in empty.stdout, "no input: one summary of nothing, exit 0")
    strict = subprocess.run([os.path.join(tools, "trace-top"), "--once", "--strict"], input=b"not json\n",
                            capture_output=True)
    check(strict.returncode == 6, f"--strict: a line that is not a record is exit 6 ({strict.returncode})")
    return check.summary()


sys.exit(main())
