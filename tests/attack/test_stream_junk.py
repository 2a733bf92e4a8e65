#!/usr/bin/env python3
"""itm-decode, trace-filter and trace-csv fed junk (issue 15): 100 MB of random bytes, 300 MB
of zeros, a 1 GB line with no newline, NUL bytes, invalid UTF-8, numbers over 2^64, 10,000
levels of nesting. Each must end with a documented exit code (0, or 6 for trace-filter
--strict), flat memory (peak RSS from wait4 under a bound that does not grow with the input),
and a clear message naming the problem; good records around the junk still come through.
Then signals mid-stream: SIGTERM, SIGINT and a closed pipe leave whole lines only.
Input is streamed through a pipe by a writer thread, never held in this process.
Usage: test_stream_junk.py TOOLS_DIR"""
import json
import os
import random
import re
import signal
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from checks import Checks  # noqa: E402
from waits import wait_until  # noqa: E402

tools = sys.argv[1]
check = Checks(show_passes=True)
SANITIZED = os.environ.get("TRACEPIPE_SANITIZED") == "1"
RSS_BOUND_KB = 96 * 1024  # a 16 MiB line buffer, simdjson's padding, the process: flat whatever the input
# itm-decode: docs/tools/itm-decode.md says "at most about 16 MB"; the bound is twice that.
ITM_DECODE_RSS_KB = 2 * 16 * 1024
MB = 1 << 20
RANDOM_MB = 20 if SANITIZED else 100  # a sanitizer build is ~5x slower: the same cases, less input
GOOD = (b'{"timestamp":1,"port":0,"event":{"kind":"Text","data":{"message":"good"}},"source":"itm","clock":"us"}\n')


class Output:
    """What a tool wrote: its first 4 MiB, and how much in all (never all of it in memory)."""

    def __init__(self, stream):
        self.head = b""
        self.size = 0
        while chunk := stream.read(1 << 16):
            self.size += len(chunk)
            if len(self.head) < 4 * MB:
                self.head += chunk[:4 * MB - len(self.head)]


def run(command, chunks, timeout=600):
    """Streams the byte chunks (an iterable) into the command's stdin from a thread.
    Returns (exit code, Output, stderr text, peak RSS kB). The peak is GNU time's (%M) for
    the tool itself: wait4's figure for a child forked from this process would include
    this process's pages at the fork."""
    rss_file = f"/tmp/tp-junk-rss-{os.getpid()}"
    proc = subprocess.Popen(["/usr/bin/time", "-f", "%M", "-o", rss_file, *command], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = [], []

    def write():
        try:
            for chunk in chunks:
                proc.stdin.write(chunk)
            proc.stdin.close()
        except (BrokenPipeError, ValueError):
            pass

    threads = [threading.Thread(target=write, daemon=True),
               threading.Thread(target=lambda: out.append(Output(proc.stdout)), daemon=True),
               threading.Thread(target=lambda: err.append(proc.stderr.read()), daemon=True)]
    for t in threads:
        t.start()
    try:
        rc = proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        rc = proc.wait()
    for t in threads:
        t.join(30)
    with open(rss_file) as f:
        rss = int(f.read().strip().splitlines()[-1])
    os.remove(rss_file)
    return rc, out[0], (err[0] if err else b"").decode("utf-8", "replace"), rss


def random_bytes(total, seed=15):
    rng = random.Random(seed)
    for _ in range(total // MB):
        yield rng.randbytes(MB)


def repeated(unit, total):
    block = unit * (MB // len(unit))
    for _ in range(total // len(block)):
        yield block


def flat(rss):
    return SANITIZED or rss < RSS_BOUND_KB


def itm_decode_cases():
    tool = os.path.join(tools, "itm-decode")
    rc, out, err, rss = run([tool, "--stats"], random_bytes(RANDOM_MB * MB))
    lines = out.head.splitlines()[:-1]  # the last of the head may be cut
    check(rc == 0 and len(lines) > 1000 and all(json.loads(line) for line in lines),
          f"itm-decode, {RANDOM_MB} MB random: exit {rc}, NDJSON out ({out.size // MB} MB)")
    check(SANITIZED or rss < ITM_DECODE_RSS_KB,
          f"itm-decode, {RANDOM_MB} MB random: peak RSS {rss // 1024} MB (bound {ITM_DECODE_RSS_KB // 1024} MB: twice "
          "the documented figure)")
    skipped = re.search(r"(\d+) malformed packets \((\d+) bytes\)", err)
    check(skipped is not None and int(skipped.group(1)) > 0 and int(skipped.group(2)) > 0,
          f"itm-decode, {RANDOM_MB} MB random: --stats counts the malformed packets and their bytes", err[-300:])
    rc, out, err, rss = run([tool], repeated(b"\0", 300 * MB))
    check(rc == 0 and (SANITIZED or rss < ITM_DECODE_RSS_KB),
          f"itm-decode, 300 MB of zeros (sync): exit {rc}, peak RSS {rss // 1024} MB")


def filter_cases():
    tool = os.path.join(tools, "trace-filter")

    def long_line():
        yield GOOD
        yield from repeated(b"a", 1024 * MB)
        yield b"\n" + GOOD

    rc, out, err, rss = run([tool], long_line())
    check(rc == 0 and out.head == GOOD * 2, f"trace-filter, a 1 GB line: exit {rc}, the good lines around it pass ({out.size} bytes)")
    check(flat(rss), f"trace-filter, a 1 GB line: peak RSS {rss // 1024} MB (flat)")
    check("line 2" in err and "long" in err, "trace-filter, a 1 GB line: reported as too long, with its number", err[-300:])

    def no_newline():
        yield from repeated(b"x", 1024 * MB)

    rc, out, err, rss = run([tool], no_newline())
    check(rc == 0 and out.size == 0 and flat(rss), f"trace-filter, 1 GB without any newline: exit {rc}, peak RSS {rss // 1024} MB")

    rc, out, err, rss = run([tool], random_bytes(RANDOM_MB * MB))
    check(rc == 0 and out.size == 0 and flat(rss), f"trace-filter, {RANDOM_MB} MB random: exit {rc}, nothing selected, peak RSS {rss // 1024} MB")
    check("were bad" in err, f"trace-filter, {RANDOM_MB} MB random: the bad lines are summed up", err[-200:])
    rc, out, err, rss = run([tool], repeated(b"\0", 300 * MB))
    check(rc == 0 and out.size == 0 and flat(rss), f"trace-filter, 300 MB of NUL bytes: exit {rc}, peak RSS {rss // 1024} MB")

    odd = [b'{"timestamp":1,"port":0,"event":{"kind":"Text","data":{"message":"a\0b"}}}\n',  # raw NUL in a string
           b'{"timestamp":1,"port":0,"event":{"kind":"Text","data":{"message":"\xff\xfe"}}}\n',  # invalid UTF-8
           b'{"timestamp":18446744073709551616,"port":0,"event":{"kind":"Text","data":{}}}\n',  # 2^64
           b'{"timestamp":1,"port":99999999999999999999999,"event":{"kind":"Text","data":{}}}\n',
           b'{"timestamp":1,"port":0,"event":{"kind":"Text","data":' + b"[" * 10000 + b"]" * 10000 + b"}}\n",
           b'{"a":' * 10000 + b"1" + b"}" * 10000 + b"\n"]
    rc, out, err, rss = run([tool, "--stats"], [GOOD] + odd + [GOOD])
    check(rc == 0 and out.head == GOOD * 2, f"trace-filter, NUL / invalid UTF-8 / over 2^64 / 10,000 deep: exit {rc}, only the good lines", out.head[:300])
    check(f"{len(odd) + 2} lines, 2 selected, {len(odd)} bad" in err, "... each one counted as bad", err[-400:])
    rc, out, err, _ = run([tool, "--strict"], [GOOD] + odd)
    check(rc == 6 and out.head == GOOD and "line 2" in err, f"trace-filter --strict: exit 6 at the first of them, after the good line ({rc})")


def csv_cases():
    tool = os.path.join(tools, "trace-csv")
    # Written here, not by trace-csv: the header and the row of GOOD (trace-csv's RFC 4180 form:
    # numbers bare, strings quoted).
    header = b"time,message\n"
    expected_head = header + b'1,"good"\n' * 2
    rc, out, err, rss = run([tool, "--columns", "time,message"], random_bytes(RANDOM_MB * MB))
    check(rc == 0 and out.head == header and flat(rss), f"trace-csv, {RANDOM_MB} MB random: exit {rc}, header only, peak RSS {rss // 1024} MB")

    def long_line():
        yield GOOD
        yield from repeated(b"[", 1024 * MB)
        yield b"\n" + GOOD

    rc, out, err, rss = run([tool, "--columns", "time,message"], long_line())
    check(rc == 0 and out.head == expected_head, f"trace-csv, a 1 GB line of '[': exit {rc}, the good rows", out.head[:200])
    check(flat(rss), f"trace-csv, a 1 GB line: peak RSS {rss // 1024} MB (flat)")


def signals_mid_stream():
    """Whole lines only when a tool is stopped mid-stream: SIGTERM, SIGINT, a closed pipe."""
    for name in ("trace-filter", "trace-csv", "itm-decode"):
        tool = os.path.join(tools, name)
        for signo, code in ((signal.SIGTERM, 143), (signal.SIGINT, 130)):
            proc = subprocess.Popen([tool], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
            stop = threading.Event()

            def feed():
                body = GOOD * 5000 if name != "itm-decode" else bytes([0x01, ord("x")]) * 100000  # ITM port 0, 1 byte
                try:
                    while not stop.is_set():
                        proc.stdin.write(body)
                except (BrokenPipeError, ValueError):
                    pass

            chunks = []
            started = threading.Event()

            def read():
                while chunk := proc.stdout.read1(65536):
                    chunks.append(chunk)
                    started.set()

            threading.Thread(target=feed, daemon=True).start()
            reader = threading.Thread(target=read, daemon=True)
            reader.start()
            # Mid-stream means once it writes (its handlers are in place by then): a slow
            # machine or a sanitizer only makes that later. The deadline fails loudly.
            if not started.wait(60):
                check(False, f"{name}: no output within 60 s, no signal sent")
                proc.kill()
                proc.wait()
                stop.set()
                continue
            proc.send_signal(signo)
            rc = proc.wait(30)
            stop.set()
            reader.join(30)
            data = b"".join(chunks)
            last = data.split(b"\n")[-4:-1]
            if name == "trace-csv":  # every row of the same record is the same row
                whole = data.endswith(b"\n") and len(set(last)) == 1
            else:
                whole = data.endswith(b"\n") and all(json.loads(line) for line in last)
            check(rc == code and whole, f"{name}: {signal.Signals(signo).name} mid-stream -> {code}, whole lines only ({rc}, {len(data)} bytes)")
        # A closed pipe: the reader goes away; the tool ends quietly, exit 0.
        shell = f"yes '{GOOD.decode().strip()}' | head -c 50000000 | '{tool}' 2> /tmp/tp-sigpipe-$$ | head -c 100000 > /dev/null; " \
                f"echo ${{PIPESTATUS[2]}}; cat /tmp/tp-sigpipe-$$; rm -f /tmp/tp-sigpipe-$$"
        if name == "itm-decode":
            shell = shell.replace(f"yes '{GOOD.decode().strip()}'", "yes x")
        result = subprocess.run(["bash", "-c", shell], capture_output=True, text=True, timeout=120)
        status, _, rest = result.stdout.partition("\n")
        check(status.strip() == "0" and rest.strip() == "", f"{name}: its reader closes the pipe -> exit 0, no message ({status.strip()} {rest[:200]!r})")


itm_decode_cases()
filter_cases()
csv_cases()
signals_mid_stream()
sys.exit(check.summary())
