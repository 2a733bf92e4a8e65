#!/usr/bin/env python3
"""The record tools read a file on threads exactly as --threads 1 reads it (issue 34, items 2, 3).

For trace-filter and trace-csv, each case on the default threads and on --threads 1:
  - a file that grows while it is read (the tool held on its full output pipe, lines appended,
    then the pipe read): the appended lines are in the output, as one thread reading to the
    end gives them;
  - a file truncated while read (logrotate's copytruncate, the same way): exit 7, "file
    truncated", never a quiet success;
  - a file whose st_size is 0 although it has lines (procfs): its lines are read;
  - a line just over the 16 MiB limit, in a file and through a pipe: skipped with the same
    message everywhere, the lines around it kept; two runs through a pipe agree;
  - the output path equal to the input (or stdin's file): exit 2 before the input is touched.
Usage: test_threaded_reader.py TOOLS_DIR"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from checks import Checks  # noqa: E402
from waits import wait_pipe_full  # noqa: E402

tools = sys.argv[1]
check = Checks()
MAX_LINE = 16 << 20


def record(i, message=None):
    return json.dumps({"timestamp": i, "port": i % 4, "event": {"kind": "Text", "data": {"message": message or f"m{i}"}},
                       "source": "itm", "clock": "cycles"}, separators=(",", ":")) + "\n"


def tool_args(tool, threads, quiet=True):
    args = [os.path.join(tools, tool)] + (["-q"] if quiet else [])
    if tool == "trace-csv":
        args += ["--columns", "time,port,message"]
    return args + (["--threads", "1"] if threads == 1 else [])


def hold_on_full_pipe(args, path):
    """Starts the tool on `path` with its output into a pipe nobody reads, and returns once the
    pipe is full (the tool is past opening the file, blocked in the middle of it)."""
    read_end, write_end = os.pipe()
    tool = subprocess.Popen([*args, path], stdout=write_end, stderr=subprocess.PIPE)
    os.close(write_end)
    wait_pipe_full(tool, read_end, f"{args}: the output pipe fills")
    return tool, read_end


def drain(tool, read_end):
    data = bytearray()
    with os.fdopen(read_end, "rb") as out:
        while chunk := out.read(1 << 20):
            data += chunk
    tool.wait(timeout=60)
    return bytes(data), tool.stderr.read().decode()


def main():
    with tempfile.TemporaryDirectory() as work:
        base = "".join(record(i) for i in range(300_000))  # ~30 MB: far more than a pipe holds
        added = "".join(record(1_000_000 + i, "appended") for i in range(1000))
        for tool in ("trace-filter", "trace-csv"):
            expected_grown = None
            for threads in (0, 1):
                label = f"{tool} {'--threads 1' if threads == 1 else 'on threads'}"
                args = tool_args(tool, threads)
                path = os.path.join(work, "grows.ndjson")
                with open(path, "w") as f:
                    f.write(base)
                tool_process, read_end = hold_on_full_pipe(args, path)
                with open(path, "a") as f:
                    f.write(added)
                out, err = drain(tool_process, read_end)
                check(tool_process.returncode == 0 and out.count(b"appended") == 1000,
                      f"{label}: lines appended while it reads are read to the end", f"{out.count(b'appended')} of 1000; "
                      f"exit {tool_process.returncode}; {err[-200:]}")
                if expected_grown is None:
                    expected_grown = out
                else:
                    check(out == expected_grown, f"{tool}: the grown file gives the same bytes on threads and on one")

                path = os.path.join(work, "shrinks.ndjson")
                with open(path, "w") as f:
                    f.write(base)
                tool_process, read_end = hold_on_full_pipe(args, path)
                os.truncate(path, 0)
                with open(path, "a") as f:
                    f.write(record(7))
                out, err = drain(tool_process, read_end)
                check(tool_process.returncode == 7 and "file truncated" in err,
                      f"{label}: a file truncated while read is exit 7, 'file truncated'",
                      f"exit {tool_process.returncode}: {err[-300:]}")

            procfs = "/proc/self/mountinfo"  # st_size 0, lines that are not records
            runs = [subprocess.run([*tool_args(tool, threads, quiet=False), procfs], capture_output=True, text=True)
                    for threads in (0, 1)]
            counts = [r.stderr.count("(skipped)") for r in runs]
            check(all(r.returncode == 0 for r in runs) and counts[0] > 0 and counts[0] == counts[1],
                  f"{tool}: a file with st_size 0 is read (its bad lines reported alike: {counts})",
                  [r.stderr[-200:] for r in runs])

            long_path = os.path.join(work, "long.ndjson")
            over = record(2, "x" * (MAX_LINE - 80))
            check(len(over) - 1 > MAX_LINE and len(over) - 1 < MAX_LINE + 40, "the long line is just over 16 MiB")
            with open(long_path, "w") as f:
                f.write(record(1) + over + record(3))
            results = []
            for threads in (0, 1):
                r = subprocess.run([*tool_args(tool, threads, quiet=False), long_path], capture_output=True)
                results.append((r.returncode, r.stdout, r.stderr))
            for _ in range(2):
                with open(long_path, "rb") as f:
                    r = subprocess.run(tool_args(tool, 0, quiet=False), capture_output=True, input=f.read())
                results.append((r.returncode, r.stdout, r.stderr))
            check(len({(c, o) for c, o, _ in results}) == 1 and b"m1" in results[0][1] and b"m3" in results[0][1]
                  and b"xxxx" not in results[0][1],
                  f"{tool}: a line just over the limit is skipped alike in a file, on threads, through a pipe (twice)",
                  [(c, len(o)) for c, o, _ in results])
            check(all(b"line 2: line longer than 16777216 bytes skipped" in e for _, _, e in results),
                  f"{tool}: the same message for it everywhere", [e[-200:] for _, _, e in results])

            same = os.path.join(work, "same.ndjson")
            with open(same, "w") as f:
                f.write(base[:10_000])
            r = subprocess.run([os.path.join(tools, tool), "-o", same, same], capture_output=True, text=True)
            check(r.returncode == 2 and "is the input" in r.stderr and os.path.getsize(same) == 10_000,
                  f"{tool}: -o FILE FILE is refused (exit 2) and FILE kept", f"{r.returncode}: {r.stderr[-200:]}")
            with open(same) as stdin:
                r = subprocess.run([os.path.join(tools, tool), "--append", "-o", same], stdin=stdin, capture_output=True,
                                   text=True)
            check(r.returncode == 2 and os.path.getsize(same) == 10_000,
                  f"{tool}: --append -o FILE < FILE is refused too", f"{r.returncode}: {r.stderr[-200:]}")

        for args in (["itm-decode", "-o", "{x}", "{x}"], ["trace-timeline", "-o", "{x}", "{x}"],
                     ["trace-top", "--once", "-o", "{x}", "{x}"], ["swo-capture", "--file", "{x}", "-o", "{x}"]):
            same = os.path.join(work, "same.bin")
            with open(same, "w") as f:
                f.write(base[:10_000])
            argv = [os.path.join(tools, args[0]), *[a.replace("{x}", same) for a in args[1:]]]
            r = subprocess.run(argv, capture_output=True, text=True, stdin=subprocess.DEVNULL)
            check(r.returncode == 2 and "is the input" in r.stderr and os.path.getsize(same) == 10_000,
                  f"{' '.join(args)}: refused with exit 2, the file kept", f"{r.returncode}: {r.stderr[-200:]}")
    return check.summary()


sys.exit(main())
