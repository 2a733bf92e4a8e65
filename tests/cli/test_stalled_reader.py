#!/usr/bin/env python3
"""A stop signal ends a tool whose output's reader has stalled (issue 34, item 4).

Each of the five tools that stream output (swo-capture, itm-decode, trace-filter, trace-csv,
trace-timeline) writes into a pipe this test never reads, until the pipe is full (its
FIONREAD reaches the pipe's size less two pages). Then SIGTERM: the tool must end within
the second of grace it gives a reader that takes nothing (checked with a 10 s deadline, so a
busy machine is not red) with exit 143 and a line saying what was not written; the bytes in
the pipe must end with a whole line (the record tools). Before the fix every tool stayed in
write(2) for as long as the reader stalled and then exited 0.
Usage: test_stalled_reader.py TOOLS_DIR"""
import os
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from checks import Checks  # noqa: E402
from waits import WaitTimeout, wait_pipe_full  # noqa: E402

tools = sys.argv[1]
check = Checks()


def stalled_stop(name, args, lines=True):
    read_end, write_end = os.pipe()
    tool = subprocess.Popen([os.path.join(tools, args[0]), *args[1:]], stdout=write_end, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL)
    os.close(write_end)
    try:
        why = ""
        try:
            wait_pipe_full(tool, read_end, f"{name}: its output pipe fills while nobody reads it")
        except WaitTimeout as e:
            why = str(e)
        full = why == ""
        check(full, f"{name}: its output pipe fills while nobody reads it", why)
        if not full:
            return
        tool.send_signal(signal.SIGTERM)
        started = time.monotonic()
        try:
            tool.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        took = time.monotonic() - started
        ended = tool.poll() is not None
        check(ended, f"{name}: SIGTERM ends it while the reader still stalls ({took:.2f} s)",
              "still blocked after 10 s")
        if not ended:
            tool.kill()
            tool.wait()
            return
        err = tool.stderr.read().decode()
        check(tool.returncode == 143, f"{name}: exit 143 ({tool.returncode})", err[-300:])
        check("reader took nothing" in err, f"{name}: says what was not written", err[-300:])
        if lines:
            os.set_blocking(read_end, False)
            data = b""
            try:
                while chunk := os.read(read_end, 1 << 20):
                    data += chunk
            except BlockingIOError:
                pass
            check(data.endswith(b"\n"), f"{name}: the pipe holds whole lines ({len(data)} bytes)", data[-80:])
    finally:
        if tool.poll() is None:
            tool.kill()
            tool.wait()
        os.close(read_end)


def main():
    with tempfile.TemporaryDirectory() as work:
        itm = os.path.join(work, "sim.bin")
        subprocess.run([os.path.join(tools, "swo-capture"), "--simulate", "--rate", "0", "--max-bytes", "4M", "-o", itm,
                        "-q"], check=True)
        records = os.path.join(work, "records.ndjson")
        subprocess.run([os.path.join(tools, "itm-decode"), "-q", "-o", records, itm], check=True)
        stalled_stop("swo-capture", ["swo-capture", "--simulate", "--rate", "0", "-q"], lines=False)
        stalled_stop("itm-decode", ["itm-decode", "-q", itm])
        stalled_stop("trace-filter", ["trace-filter", "-q", records])
        stalled_stop("trace-filter --threads 1", ["trace-filter", "-q", "--threads", "1", records])
        stalled_stop("trace-csv", ["trace-csv", "-q", "--columns", "time,port,kind,message", records])
        stalled_stop("trace-timeline", ["trace-timeline", "-q", records], lines=False)
    return check.summary()


sys.exit(main())
