#!/usr/bin/env python3
"""The command-line edges a hostile or unlucky user meets (issue 34, items 7-13), through the
real binaries:
  - usage errors in --log-format json (given before or after the bad option, or by
    TRACEPIPE_LOG_FORMAT): one JSON line with code INVALID_PARAMETERS, exit 2;
  - stdin or stdout closed (`<&-`, `>&-`): no internal descriptor takes their place; a tool
    that reads or writes them says it cannot, exit 7 (trace-serve --exit-on-eof too);
  - every option that takes several values (found in each tool's --help) takes one value per
    occurrence and leaves a FILE after it a FILE;
  - trace-csv: an empty input writes nothing; --append writes the header into an empty file,
    or one holding only an older version's lone newline, and only there;
  - --elf: /dev/zero and a FIFO refused at once, an ELF for x86-64 warned about, a symbol
    string table past the end of the file refused (exit 6);
  - duplicate keys inside event and data refused by the validator (trace-filter --strict);
  - trace-timeline's microseconds exact at cycle counts past 2^61 (Python's integers);
  - delimiters that cannot be quoted, zero limits, --since >= --until: exit 2;
  - a failed write of eko-collect --print-layout or --list-chips: exit 7;
  - every tool's --version names the license (MIT).
Usage: test_cli_edges.py TOOLS_DIR"""
import json
import os
import re
import struct
import subprocess
import sys
import tempfile
from fractions import Fraction

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from checks import Checks  # noqa: E402

tools = sys.argv[1]
check = Checks()
TOOLS = ["swo-capture", "itm-decode", "trace-serve", "trace-filter", "trace-csv", "trace-top", "trace-timeline",
         "palm-recv", "chibi-pull", "eko-collect"]
FILE_TOOLS = ["itm-decode", "trace-serve", "trace-filter", "trace-csv", "trace-top", "trace-timeline"]
RECORD = ('{"timestamp":1,"port":0,"event":{"kind":"Text","data":{"message":"a"}},"source":"itm",'
          '"clock":"cycles"}\n')


def tool(name):
    return os.path.join(tools, name)


def run(args, **kwargs):
    kwargs.setdefault("capture_output", True)
    kwargs.setdefault("timeout", 30)
    try:
        return subprocess.run(args, **kwargs)
    except subprocess.TimeoutExpired:  # a tool that never ends fails its check, not the test
        return subprocess.CompletedProcess(args, None, b"", b"timed out")


def json_usage_errors():
    for name in TOOLS:
        for args, env in ((["--log-format", "json", "--no-such-option"], None),
                          (["--no-such-option", "--log-format", "json"], None),
                          (["--no-such-option"], {**os.environ, "TRACEPIPE_LOG_FORMAT": "json"})):
            r = run([tool(name), *args], env=env, stdin=subprocess.DEVNULL)
            lines = r.stderr.decode().splitlines()
            try:
                parsed = [json.loads(x) for x in lines]
            except ValueError:
                parsed = None
            check(r.returncode == 2 and parsed and parsed[0].get("code") == "INVALID_PARAMETERS",
                  f"{name} {' '.join(args)}{' (env)' if env else ''}: a JSON usage error, exit 2",
                  f"{r.returncode}: {r.stderr[-200:]}")
    r = run([tool("trace-filter"), "--threads", "99", "--log-format", "json"], stdin=subprocess.DEVNULL)
    try:
        code = json.loads(r.stderr.decode().splitlines()[0])["code"]
    except (ValueError, IndexError, KeyError):
        code = None
    check(r.returncode == 2 and code == "INVALID_PARAMETERS", "an out-of-range value is a JSON usage error too",
          r.stderr[-200:])


def closed_descriptors(work):
    records = os.path.join(work, "one.ndjson")
    with open(records, "w") as f:
        f.write(RECORD)
    for name, args in (("trace-filter", []), ("trace-csv", []), ("itm-decode", []), ("trace-timeline", []),
                       ("trace-top", ["--once"]), ("trace-serve", ["--exit-on-eof", "--listen", "127.0.0.1:0"])):
        r = run(["bash", "-c", f'exec "$0" "$@" <&-', tool(name), *args])
        check(r.returncode == 7 and b"cannot read stdin: it is closed" in r.stderr,
              f"{name} <&-: cannot read stdin, exit 7", f"{r.returncode}: {r.stderr[-200:]}")
    for name, args in (("trace-filter", [records]), ("itm-decode", [records]), ("trace-csv", [records])):
        r = run(["bash", "-c", f'exec "$0" "$@" >&-', tool(name), *args])
        check(r.returncode == 7 and b"cannot write stdout: it is closed" in r.stderr,
              f"{name} >&-: cannot write stdout, exit 7", f"{r.returncode}: {r.stderr[-200:]}")


def multi_value_options():
    found = 0
    for name in FILE_TOOLS:
        help_text = run([tool(name), "--help"]).stdout.decode()
        for option, type_name in re.findall(r"^\s+(?:-\w,)?(--[\w-]+) (\S+) \.\.\.", help_text, re.M):
            found += 1
            value = "a=b" if type_name != "TEXT" else "http://x"
            r = run([tool(name), option, value, "/nonexistent/input"], stdin=subprocess.DEVNULL)
            check(r.returncode == 3 and b"/nonexistent/input" in r.stderr,
                  f"{name} {option} {value} FILE: FILE stays the input (exit 3 naming it)",
                  f"{r.returncode}: {r.stderr[-200:]}")
    check(found >= 3, f"the tools' multi-value options were found in --help ({found})")
    r = run([tool("trace-serve"), "--allow-origin", "http://a", "--allow-origin", "http://b", "/nonexistent/input"])
    check(r.returncode == 3 and b"/nonexistent/input" in r.stderr, "--allow-origin A --allow-origin B FILE")


def csv_append(work):
    out = os.path.join(work, "log.csv")
    r = run([tool("trace-csv"), "-o", out], input=b"")
    check(r.returncode == 0 and os.path.getsize(out) == 0, "trace-csv: an empty input writes nothing",
          os.path.getsize(out))
    for _ in range(2):
        run([tool("trace-csv"), "--append", "-o", out], input=RECORD.encode())
    lines = open(out).read().splitlines()
    check(len(lines) == 3 and lines[0].startswith("timestamp,") and not lines[1].startswith("timestamp"),
          "trace-csv --append: the header once, into the empty file", lines)
    with open(out, "w") as f:
        f.write("\n")
    run([tool("trace-csv"), "--append", "-o", out], input=RECORD.encode())
    lines = open(out).read().splitlines()
    check(len(lines) == 2 and lines[0].startswith("timestamp,"),
          "trace-csv --append: a file with only an older version's newline gets the header", lines)


def hostile_elves(work):
    r = run([tool("itm-decode"), "--elf", "/dev/zero"], input=b"", timeout=10)
    check(r.returncode == 6 and b"not a regular file" in r.stderr, "--elf /dev/zero: refused at once, exit 6",
          r.stderr[-200:])
    fifo = os.path.join(work, "fifo")
    os.mkfifo(fifo)
    r = run([tool("itm-decode"), "--elf", fifo], input=b"", timeout=10)
    check(r.returncode == 6 and b"not a regular file" in r.stderr, "--elf FIFO: refused without blocking",
          r.stderr[-200:])
    r = run([tool("trace-serve"), "--elf", fifo, "--exit-on-eof", "--listen", "127.0.0.1:0"], input=b"", timeout=10)
    check(r.returncode == 6, "trace-serve --elf FIFO: refused too", r.stderr[-200:])
    r = run([tool("itm-decode"), "--elf", tool("itm-decode")], input=b"")
    check(r.returncode == 0 and b"not ARM" in r.stderr, "--elf of an x86-64 program: warned about", r.stderr[-200:])
    data = bytearray(open(tool("itm-decode"), "rb").read())
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    bad = None
    for i in range(shnum):
        at = shoff + i * shentsize
        if struct.unpack_from("<I", data, at + 4)[0] == 2:  # SHT_SYMTAB: its sh_link names the string table
            link = struct.unpack_from("<I", data, at + 40)[0]
            struct.pack_into("<Q", data, shoff + link * shentsize + 24, len(data) + 4096)
            bad = os.path.join(work, "bad-strtab.elf")
            open(bad, "wb").write(data)
    check(bad is not None, "the x86-64 program has a symbol table to spoil")
    if bad:
        r = run([tool("itm-decode"), "--elf", bad], input=b"")
        check(r.returncode == 6 and b"string table" in r.stderr, "a string table past the end of the file: exit 6",
              r.stderr[-200:])


def duplicate_keys():
    for line in ('{"timestamp":1,"port":0,"event":{"kind":"Text","kind":"Marker","data":{"message":"a"}},'
                 '"source":"itm","clock":"cycles"}',
                 '{"timestamp":1,"port":0,"event":{"kind":"Marker","data":{"id":1},"data":{"id":2}},'
                 '"source":"itm","clock":"cycles"}',
                 '{"timestamp":1,"port":0,"event":{"kind":"Marker","data":{"id":1,"id":2}},'
                 '"source":"itm","clock":"cycles"}'):
        for threads in ("1", "2"):
            r = run([tool("trace-filter"), "--strict", "--threads", threads], input=(RECORD + line + "\n").encode())
            check(r.returncode == 6 and b"appears twice" in r.stderr,
                  f"trace-filter --strict --threads {threads}: a duplicate key is refused ({line[40:70]}...)",
                  r.stderr[-200:])


def exact_microseconds():
    lines = "".join(
        f'{{"timestamp":{t},"port":1,"event":{{"kind":"TaskSwitch","data":{{"from_task":0,"to_task":{i}}}}},'
        f'"source":"itm","clock":"cycles"}}\n' for i, t in enumerate((2**61, 2**62 + 7, 2**64 - 1), start=1))
    for hz in (1, 3, 72_000_000):
        r = run([tool("trace-timeline"), "-q", "--cpu-hz", str(hz)], input=lines.encode())
        stamps = re.findall(rb'"ts":([0-9.]+)', r.stdout)
        expected = []
        for t in (2**61, 2**62 + 7, 2**64 - 1):
            ns = Fraction(t * 10**9, hz).__floor__()
            expected.append(f"{ns // 1000}.{ns % 1000:03}".encode())
        check(r.returncode == 0 and sorted(set(stamps)) == sorted(set(expected)),
              f"trace-timeline --cpu-hz {hz}: exact microseconds past 2^61 cycles", (stamps, expected))


def refused_values(work):
    records = os.path.join(work, "one.ndjson")
    for args in ((tool("trace-csv"), "--delimiter", '"', records), (tool("trace-csv"), "--delimiter", "\n", records),
                 (tool("trace-filter"), "--limit", "0", records), (tool("swo-capture"), "--simulate", "--max-bytes", "0"),
                 (tool("trace-filter"), "--since", "5", "--until", "5", records),
                 (tool("trace-timeline"), "--since", "6", "--until", "5", records)):
        r = run(list(args), stdin=subprocess.DEVNULL)
        check(r.returncode == 2, f"{os.path.basename(args[0])} {' '.join(repr(a) for a in args[1:-1])}: exit 2",
              f"{r.returncode}: {r.stderr[-200:]}")
    for args in (["--print-layout"], ["--list-chips"]):
        with open("/dev/full", "w") as full:
            r = run([tool("eko-collect"), *args], stdout=full, capture_output=False, stderr=subprocess.PIPE)
        check(r.returncode == 7, f"eko-collect {args[0]} > /dev/full: exit 7 ({r.returncode})", r.stderr[-200:])


def licensed():
    for name in TOOLS:
        r = run([tool(name), "--version"], stdin=subprocess.DEVNULL)
        check(r.returncode == 0 and b"(tracepipe)" in r.stdout and b"License: MIT" in r.stdout,
              f"{name} --version says the license (MIT)", r.stdout[-200:])


def main():
    with tempfile.TemporaryDirectory() as work:
        licensed()
        json_usage_errors()
        closed_descriptors(work)
        multi_value_options()
        csv_append(work)
        hostile_elves(work)
        duplicate_keys()
        exact_microseconds()
        refused_values(work)
    return check.summary()


sys.exit(main())
