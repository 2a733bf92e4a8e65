#!/usr/bin/env python3
"""jq as the oracle for trace-filter and trace-csv, on random record corpora.

Corpora hold every record kind, odd strings (quotes, backslashes, commas, newlines,
control characters, unicode, emoji), escapes written both ways, random key order and
spacing, and malformed lines. For each filter, trace-filter must select exactly the
lines jq selects, passing them through byte for byte; trace-csv must equal
jq -r '[...] | @csv'. Malformed lines must be counted and skipped, never fatal. Both tools
judge lines with the record's one validator: which lines are records is decided here by
record.schema.json through the jsonschema package (an independent validator), not by us.

Usage: record_tools_oracle.py BIN_DIR
"""
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from checks import Checks  # noqa: E402

BIN = sys.argv[1]
FILTER = os.path.join(BIN, "trace-filter")
CSV = os.path.join(BIN, "trace-csv")
check = Checks(show_passes=False)




ODD = ["plain", 'quo"te', "back\\slash", "comma, here", "new\nline", "tab\there", "cr\rhere", "ctl\x01\x1f",
       "caf\u00e9", "\u6f22\u5b57", "emoji \U0001F680", "", " lead and trail ", "slash/and~tilde", "boot", "error: fault"]


def text(rng):
    return "".join(rng.choice(ODD) for _ in range(rng.randint(1, 3)))


def event(rng):
    kind = rng.choice(["Text", "Marker", "TaskSwitch", "IsrEnter", "IsrExit", "IdleEnter", "IdleExit", "Counter",
                       "Raw", "Exception", "PcSample", "DataTrace", "EventCounter", "Overflow", "Malformed"])
    u32 = lambda: rng.randint(0, 2**32 - 1)
    data = {
        "Text": lambda: {"message": text(rng)},
        "Marker": lambda: {"id": u32(), **({"name": text(rng)} if rng.random() < 0.5 else {})},
        "TaskSwitch": lambda: {"from_task": u32(), "to_task": u32()},
        "IsrEnter": lambda: {"isr_id": rng.randint(0, 300), "name": text(rng)},
        "IsrExit": lambda: {"isr_id": rng.randint(0, 300)},
        "Counter": lambda: {"counter_id": u32(), "value": rng.randint(0, 2**53)},
        "Raw": lambda: {"data": [rng.randint(0, 255) for _ in range(rng.randint(1, 4))]},
        "Exception": lambda: {"number": rng.randint(0, 511), "name": "IRQ5", "action": rng.choice(["enter", "exit", "resume"])},
        "PcSample": lambda: {"pc": u32(), "sleep": rng.random() < 0.1},
        "DataTrace": lambda: {"comparator": rng.randint(0, 3), "type": rng.choice(["pc", "read", "write"]), "value": u32(), "size": 4},
        "EventCounter": lambda: {b: rng.random() < 0.5 for b in ["cpi", "exc", "sleep", "lsu", "fold", "cyc"]},
        "Overflow": lambda: {},
        "Malformed": lambda: {"reason": text(rng), "bytes": rng.randint(1, 9)},
    }
    ev = {"kind": kind}
    if kind in data:
        ev["data"] = data[kind]()
    return ev


def record(rng):
    fields = [("timestamp", rng.randint(0, 2**53)), ("port", rng.randint(0, 255)), ("event", event(rng))]
    if rng.random() < 0.9:
        fields.append(("source", rng.choice(["itm", "dwt", "palm", "chibios"])))
    fields.append(("clock", rng.choice(["cycles", "ns", "us"])))
    rng.shuffle(fields)
    separators = rng.choice([(",", ":"), (", ", ": ")])
    return json.dumps(dict(fields), ensure_ascii=rng.random() < 0.5, separators=separators)


# Bad for both tools: not one JSON object.
NOT_OBJECTS = ["not json", "{\"timestamp\": 5", "[1,2,3]", "{\"timestamp\": 1, \"port\": 0, \"event\": {\"kind\": \"Text\"}} trailing",
               "{\"a\": {\"b\": [1, {\"c\": 2}}"]
# JSON objects that are not records (by record.schema.json): bad for both tools.
NOT_RECORDS = ["{\"port\": 1, \"event\": {\"kind\": \"Text\"}}", "{\"timestamp\": -1, \"port\": 0, \"event\": {\"kind\": \"Text\"}}",
               "{\"timestamp\": 1}", "{\"timestamp\": 1, \"event\": {\"kind\": \"Text\"}}", "{\"timestamp\": 2, \"port\": 300, \"event\": {}}",
               "{\"timestamp\": 3, \"port\": 0, \"event\": {\"kind\": \"Text\", \"data\": {}}}",
               "{\"timestamp\": 3, \"port\": 0, \"event\": {\"kind\": \"Text\"}}",
               "{\"timestamp\": 3, \"port\": 0, \"event\": {\"kind\": \"Marker\", \"data\": {\"id\": 4294967296}}}",
               "{\"timestamp\": 3, \"port\": 0, \"event\": {\"kind\": \"Exception\", \"data\": {\"number\": 3, \"name\": \"x\", \"action\": \"leave\"}}}",
               "{\"timestamp\": 3, \"port\": 0, \"event\": {\"kind\": \"PcSample\", \"data\": {\"pc\": 1}}}",
               "{\"timestamp\": 3, \"port\": 0, \"event\": {\"kind\": \"Counter\", \"data\": {\"counter_id\": 1, \"value\": -2}}}"]
BAD_LINES = NOT_OBJECTS + NOT_RECORDS


def schema_validator():
    """record.schema.json through the jsonschema package (python3-jsonschema)."""
    try:
        import jsonschema
    except ImportError:
        check(False, "python3-jsonschema is installed (scripts/install-deps)")
        return None
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    with open(os.path.join(root, "schemas", "record.schema.json")) as f:
        schema = json.load(f)
    return jsonschema.validators.validator_for(schema)(schema)


def oracle_agrees(validator):
    """The corpus's own premise, checked independently: every generated record is valid by
    the schema and every line of NOT_RECORDS is not."""
    if validator is None:
        return
    rng = random.Random(99)
    invalid = [line for line in (record(rng) for _ in range(3000)) if not validator.is_valid(json.loads(line))]
    check(not invalid, "jsonschema: every generated record is valid by record.schema.json", invalid[:1])
    valid = [line for line in NOT_RECORDS if validator.is_valid(json.loads(line))]
    check(not valid, "jsonschema: every line of NOT_RECORDS breaks record.schema.json", valid)


def run(args, stdin_path):
    with open(stdin_path, "rb") as stdin:
        return subprocess.run(args, stdin=stdin, capture_output=True)


def jq(expression, path, raw=False):
    args = ["jq", "-r" if raw else "-c", expression, path]
    return subprocess.run(args, capture_output=True, check=True).stdout


FILTERS = [
    (["--kind", "Text"], 'select(.event.kind == "Text")'),
    (["--kind", "Exception,PcSample"], 'select(.event.kind == "Exception" or .event.kind == "PcSample")'),
    (["--port", "0,3-5,200-255"], "select(.port == 0 or (.port >= 3 and .port <= 5) or .port >= 200)"),
    (["--source", "dwt,palm"], 'select(.source == "dwt" or .source == "palm")'),
    (["--since", "1000000000000000", "--until", "6000000000000000"],
     "select(.timestamp >= 1000000000000000 and .timestamp < 6000000000000000)"),
    (["--match", "message=boot"], 'select(.event.data.message == "boot")'),
    (["--match", "event.data.action=enter", "--kind", "Exception"],
     'select(.event.kind == "Exception" and .event.data.action == "enter")'),
    (["--match", "event.data.sleep=true"], "select(.event.data.sleep == true)"),
    (["--regex", "message=caf\u00e9|\U0001F680"], 'select((.event.data.message // null | type) == "string" and (.event.data.message | test("caf\u00e9|\U0001F680")))'),
    (["--regex", "event.data.name=^IRQ"], 'select((.event.data.name | type) == "string" and (.event.data.name | test("^IRQ")))'),
    (["--kind", "Text", "--invert"], 'select(.event.kind != "Text")'),
    (["--port", "7-9", "--kind", "Counter,Marker", "--invert"],
     'select(((.port >= 7 and .port <= 9) and (.event.kind == "Counter" or .event.kind == "Marker")) | not)'),
]

CSV_COLUMNS = [
    ("time,port,kind,message", "[.timestamp, .port, .event.kind, .event.data.message]"),
    ("timestamp,source,event.data.name,event.data.id,event.data.sleep",
     "[.timestamp, .source, .event.data.name, .event.data.id, .event.data.sleep]"),
]


def one_corpus(seed, work):
    rng = random.Random(seed)
    lines = [record(rng) for _ in range(rng.randint(200, 1500))]
    bad = 0
    for _ in range(rng.randint(0, 6)):
        lines.insert(rng.randrange(len(lines) + 1), rng.choice(BAD_LINES))
        bad += 1
    raw = os.path.join(work, f"raw-{seed}.ndjson")
    with open(raw, "w", encoding="utf-8", newline="\n") as f:
        f.write("\n".join(lines) + "\n")
    good = os.path.join(work, f"good-{seed}.ndjson")
    with open(good, "w", encoding="utf-8", newline="\n") as f:
        f.write("\n".join(line for line in lines if line not in BAD_LINES) + "\n")

    for args, expression in FILTERS:
        # On the raw corpus: the lines jq selects (by number), byte for byte, bad lines skipped.
        result = run([FILTER, "--stats"] + args, raw)
        numbers = [int(n) for n in jq(f"{expression} | input_line_number", good).split()]
        good_lines = open(good, "rb").read().split(b"\n")
        expected = b"".join(good_lines[n - 1] + b"\n" for n in numbers)
        check(result.returncode == 0, f"seed {seed} {args}: exit {result.returncode}")
        check(result.stdout == expected, f"seed {seed} {args}: selection differs from jq ({len(numbers)} expected)")
        check(f"{bad} bad".encode() in result.stderr, f"seed {seed} {args}: {bad} bad lines not reported: {result.stderr[-200:]!r}")
        # On jq's own canonical form: equal to jq -c select(...) output.
        canonical = os.path.join(work, f"canon-{seed}.ndjson")
        with open(canonical, "wb") as f:
            f.write(jq(".", good))
        check(run([FILTER] + args, canonical).stdout == jq(expression, canonical), f"seed {seed} {args}: != jq -c on jq's form")

    for columns, expression in CSV_COLUMNS:
        result = run([CSV, "--no-header", "--columns", columns], raw)
        check(result.returncode == 0, f"seed {seed} csv {columns}: exit {result.returncode}")
        check(result.stdout == jq(expression + " | @csv", good, raw=True), f"seed {seed} csv {columns}: differs from jq @csv")
        reported = bad == 0 or f"{bad} of".encode() in result.stderr
        check(reported, f"seed {seed} csv: {bad} bad lines not reported: {result.stderr[-200:]!r}")


def chunked_reading(work):
    """A file of several 1 MiB chunks (read on several threads) reads as a pipe does (line by
    line): the same output, the same bad lines with the same numbers, --limit and --strict
    stopping at the same line; and jq still agrees."""
    rng = random.Random(2026)
    lines = [record(rng) for _ in range(36000)]
    for _ in range(40):  # bad lines, some of which break a whole simdjson batch
        lines.insert(rng.randrange(len(lines)), rng.choice(BAD_LINES + ["{\"s\": \"\udcff\"}", "{\"open\": \"string"]))
    raw = os.path.join(work, "chunked.ndjson")
    with open(raw, "w", encoding="utf-8", newline="\n", errors="surrogateescape") as f:
        f.write("\n".join(lines) + "\n\n" + lines[0])  # a blank line and no final newline
    check(os.path.getsize(raw) > 4 << 20, "the chunked corpus spans several chunks")

    def piped(args):
        with open(raw, "rb") as f:
            return subprocess.run(args, input=f.read(), capture_output=True)

    cases = [[FILTER, "--stats", "--kind", "Text,Counter"], [FILTER, "--regex", "message=caf"],
             [FILTER, "--limit", "9000", "--port", "0-99"], [FILTER, "--strict", "--kind", "Text"],
             [CSV, "--columns", "time,port,kind,message"], [CSV], [CSV, "--preset", "exceptions", "--strict"]]
    for args in cases:
        line_by_line = piped(args)
        for threads in ("2", "3"):
            chunked = run(args + ["--threads", threads], raw)
            same = (chunked.returncode, chunked.stdout, chunked.stderr) == (line_by_line.returncode, line_by_line.stdout,
                                                                               line_by_line.stderr)
            check(same, f"{os.path.basename(args[0])} {args[1:]} --threads {threads} on a file == through a pipe",
                  f"exit {chunked.returncode}/{line_by_line.returncode} out {len(chunked.stdout)}/{len(line_by_line.stdout)} "
                  f"err {chunked.stderr[-300:]!r} vs {line_by_line.stderr[-300:]!r}")
    good = raw_good(raw, work)
    numbers = [int(n) for n in jq('select(.event.kind == "Text") | input_line_number', good).split()]
    good_lines = open(good, "rb").read().split(b"\n")
    expected = b"".join(good_lines[n - 1] + b"\n" for n in numbers)
    check(run([FILTER, "--kind", "Text", raw], os.devnull).stdout == expected, "chunked trace-filter --kind Text == jq")
    # stdin from a file that a previous reader left part-way: only the rest is read.
    with open(raw, "rb", buffering=0) as f:  # unbuffered: the descriptor's offset is where Python stands
        f.seek(1000)
        first = f.readline()
        rest = subprocess.run([FILTER, "--kind", "Text,Counter,Marker"], stdin=f, capture_output=True).stdout
        f.seek(1000 + len(first))
        expected_rest = subprocess.run([FILTER, "--kind", "Text,Counter,Marker"], input=f.read(), capture_output=True).stdout
    check(rest == expected_rest and rest, "a file on stdin is read from where its offset stands")


def raw_good(raw, work):
    """The lines of `raw` that are records, for jq (which stops at a bad line)."""
    good = os.path.join(work, "chunked-good.ndjson")
    bad = set(BAD_LINES)
    with open(raw, encoding="utf-8", errors="surrogateescape") as f, \
            open(good, "w", encoding="utf-8", newline="\n", errors="surrogateescape") as out:
        kept = [line.rstrip("\n") for line in f]
        out.write("\n".join(line for line in kept if line and line not in bad and "\udcff" not in line
                             and not line.startswith("{\"open\"")) + "\n")
    return good


def stopped_mid_line():
    """SIGTERM/SIGINT while a line is half read: whole lines out, 130/143, no error for the
    cut line (the input did not end), even with --strict."""
    whole = b'{"timestamp":1,"port":0,"event":{"kind":"Text","data":{"message":"a"}}}\n'
    # trace-csv with --columns: it writes rows as they come (no inference window to wait for).
    for tool, signo, args in ((FILTER, signal.SIGTERM, []), (CSV, signal.SIGINT, ["--columns", "timestamp,message"])):
        p = subprocess.Popen([tool, "--strict", *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
        deadline = threading.Timer(60, p.kill)  # a tool that never writes the line fails, not hangs
        deadline.start()
        p.stdin.write(whole + b'{"timestamp":2,"port":0,"ev')
        p.stdin.flush()
        first = p.stdout.readline()  # the whole line is out (flushed within the batching delay)
        if tool == CSV:
            first = p.stdout.readline()  # after the header
        p.send_signal(signo)
        rest, err = p.communicate(timeout=30)
        deadline.cancel()
        name = os.path.basename(tool)
        check(p.returncode == 128 + signo and first.strip() and not rest and err == b"",
              f"{name} --strict stopped mid-line by signal {signo}: exit {128 + signo}, whole lines, no error",
              f"{p.returncode} {first!r} {rest!r} {err!r}")


# One value of a good record changed, as bytes: the line keeps its shape around the value,
# so trace-filter reads it by the shape its good neighbours taught (records/record_shapes)
# unless the value is outside what the shape's slot vouches for.
NEAR_MISSES = [(b'"port":', lambda v: b"256"), (b'"port":', lambda v: b"07"), (b'"timestamp":', lambda v: b"-" + v),
               (b'"timestamp":', lambda v: b"18446744073709551616"), (b'"timestamp":', lambda v: b"18446744073709551615"),
               (b'"pc":', lambda v: b"4294967296"),
               (b'"counter_id":', lambda v: b"4294967295"), (b'"message":', lambda v: b'"bad \\x"'),
               (b'"message":', lambda v: b'"ctl \x01"'), (b'"message":', lambda v: b'"utf8 \xc3\x28"'),
               (b'"message":', lambda v: b'"esc \\u00e9 \\n \\" ok"'), (b'"message":', lambda v: b'"open'),
               (b'"source":', lambda v: b'"\\u0069tm"'), (b'"sleep":', lambda v: b"1"), (b'"number":', lambda v: b"512")]


def integer_of_64_bits(text):
    """JSON integers of a record fit 64 bits (docs/design.md "The record"; the schema gives no maximum)."""
    value = int(text)
    if not -2**63 <= value < 2**64:
        raise ValueError(f"{text} does not fit 64 bits")
    return value


def judged_good(line, validator):
    """Whether a line is a record: strict UTF-8 and JSON (Python's json), then the schema."""
    try:
        return validator.is_valid(json.loads(line.decode("utf-8"), parse_int=integer_of_64_bits))
    except (UnicodeDecodeError, ValueError):
        return False


def near_misses(work, validator):
    """Good records in a few fixed shapes, each followed by a copy with one value changed:
    trace-filter keeps exactly the lines json and jsonschema call records."""
    if validator is None:
        return
    rng = random.Random(7)
    lines = []
    for i in range(6000):
        good = json.dumps({"timestamp": rng.randint(0, 2**53), "port": rng.randint(0, 255), "event": event(rng),
                           "source": "itm", "clock": "cycles"}, ensure_ascii=False, separators=(",", ":")).encode()
        lines.append(good)
        key, change = NEAR_MISSES[i % len(NEAR_MISSES)]
        at = good.find(key)
        if at < 0:
            continue
        start = at + len(key)
        end = start + 1
        if good[start:start + 1] == b'"':
            while good[end:end + 1] != b'"':
                end += 2 if good[end:end + 1] == b"\\" else 1
            end += 1
        else:
            while good[end:end + 1] not in (b",", b"}", b""):
                end += 1
        lines.append(good[:start] + change(good[start:end]) + good[end:])
    expected = [line for line in lines if judged_good(line, validator)]
    check(len(lines) - len(expected) > 1000, f"near misses: {len(lines) - len(expected)} of {len(lines)} lines are bad")
    path = os.path.join(work, "near-misses.ndjson")
    with open(path, "wb") as f:
        f.write(b"\n".join(lines) + b"\n")
    for threads in ("1", "2"):
        result = run([FILTER, "--stats", "--threads", threads, path], os.devnull)
        same = result.stdout == b"".join(line + b"\n" for line in expected)
        check(same and f"{len(lines) - len(expected)} bad".encode() in result.stderr,
              f"near misses (--threads {threads}): trace-filter keeps exactly the records json and jsonschema accept",
              f"{len(result.stdout.splitlines())} lines out, {len(expected)} expected; {result.stderr[-300:]!r}")


def read_bytes(pid):
    """What the process has read so far (rchar of /proc/PID/io)."""
    with open(f"/proc/{pid}/io") as f:
        for line in f:
            if line.startswith("rchar:"):
                return int(line.split()[1])
    return 0


def stopped_in_flight():
    """SIGTERM while lines read from a pipe are in flight on the threads: gathered into a piece
    that waits (up to 10 ms) for more, or parsed by a worker and not yet handed back (that
    happens on the next read, or after a 20 ms pause). The signal is sent as soon as the
    tool's read count covers them, well inside that window: every one must come out."""
    lines = b"".join(b'{"timestamp":%d,"port":0,"event":{"kind":"Text","data":{"message":"line %d"}},"clock":"us"}\n'
                     % (i, i) for i in range(1, 3001))
    first = b'{"timestamp":0,"port":0,"event":{"kind":"Text","data":{"message":"first"}},"clock":"us"}\n'
    for tool, args, rows in ((FILTER, [], lines), (CSV, ["--no-header", "--columns", "message"],
                                                   b"".join(b'"line %d"\n' % i for i in range(1, 3001)))):
        p = subprocess.Popen([tool, "--threads", "2", *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
        deadline = threading.Timer(60, p.kill)
        deadline.start()
        p.stdin.write(first)
        p.stdin.flush()
        p.stdout.readline()  # running, and past its first read
        before = read_bytes(p.pid)
        p.stdin.write(lines)
        p.stdin.flush()
        read_all = time.monotonic() + 30
        while read_bytes(p.pid) < before + len(lines) and time.monotonic() < read_all:
            pass
        check(time.monotonic() < read_all, f"{os.path.basename(tool)} on threads reads 3000 piped lines within 30 s")
        p.send_signal(signal.SIGTERM)
        out, err = p.communicate(timeout=30)
        deadline.cancel()
        check(p.returncode == 143 and out == rows and err == b"",
              f"{os.path.basename(tool)}: SIGTERM with lines in flight on threads writes every line read, exits 143",
              f"{p.returncode}: {len(out.splitlines())} of 3000 lines, {err[-200:]!r}")


def main():
    validator = schema_validator()
    oracle_agrees(validator)
    with tempfile.TemporaryDirectory() as work:
        for seed in range(1, 13):
            one_corpus(seed, work)
        chunked_reading(work)
        near_misses(work, validator)
    stopped_mid_line()
    stopped_in_flight()
    sys.exit(check.summary())


main()
