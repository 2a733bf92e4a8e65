#!/usr/bin/env python3
"""trace-lab attacked as a lab would (issue 45): how it ends, and what it leaves behind, with
live and stored views open (a live one on a quiet board: its trace-pull writes nothing; a
stored one whose viewer stopped reading: its trace-query blocked on its pipe).
- SIGTERM, SIGINT, SIGHUP, SIGQUIT: a clean stop, exit 128+signal, no trace-pull/trace-query
  left running (SIGHUP and SIGQUIT ended trace-lab at once, their default, and left both);
- SIGKILL: its view readers end too (they were left running, each in its own process group,
  a quiet board's trace-pull holding its consumer for ever);
- a second trace-lab on the same --listen port: exit 5 and a message naming the address.
Usage: test_lab_attacks.py BUILD_TOOLS_DIR"""
import json
import os
import shutil
import signal
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "support"))
sys.path.insert(0, os.path.join(HERE, "..", "lab"))
from checks import Checks  # noqa: E402
from waits import WaitTimeout, wait_until  # noqa: E402
from lab_stack import LabStack, text_line  # noqa: E402

TOOLS = sys.argv[1]
check = Checks()
VIEW = os.path.join(HERE, "..", "lab", "ws_view.mjs")
READERS = ("trace-pull", "trace-query")


def readers_of(stack):
    """pids of trace-pull/trace-query reading this stack's engines, whoever their parent is."""
    urls = (stack.nats.url(), stack.clickhouse.url())
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = f.read().decode(errors="replace").split("\0")
            with open(f"/proc/{pid}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if os.path.basename(argv[0]) in READERS and state != "Z" and any(u in argv for u in urls):
            found.append(int(pid))
    return found


def open_views(stack):
    """A live view on a quiet board and a stored view whose viewer stops reading: both readers run."""
    url = f"ws://127.0.0.1:{stack.lab_port}/ws?"
    viewers = [subprocess.Popen(["node", VIEW, url + "board=quiet-b&live=1", "--seconds", "600"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL),
               subprocess.Popen(["node", VIEW, url + "board=big&run=b1",
                                 "--stall-after", "1"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    wait_until(lambda: len(readers_of(stack)) == 2, "the views' trace-pull and trace-query run",
               lambda: stack.lab.log()[-600:])
    return viewers


def close_viewers(viewers):
    for viewer in viewers:
        if viewer.poll() is None:
            viewer.kill()
        viewer.wait()


def check_stop(stack, signo):
    name = signal.Signals(signo).name
    viewers = open_views(stack)
    stack.lab.kill(signo)
    stack.lab.proc.wait(timeout=120)
    code = stack.lab.proc.returncode
    if signo == signal.SIGKILL:
        check(code == -signal.SIGKILL, "trace-lab was killed by SIGKILL", code)
    else:
        check(code == 128 + signo, f"{name}: trace-lab exits {128 + signo}", (code, stack.lab.log()[-400:]))
    try:
        wait_until(lambda: not readers_of(stack), "", timeout=30)
        left = []
    except WaitTimeout:
        left = readers_of(stack)
        for pid in left:
            os.kill(pid, signal.SIGKILL)  # not to confuse the next case
    check(not left, f"{name}: no trace-pull/trace-query of trace-lab's left running", left)
    close_viewers(viewers)
    log = os.path.join(stack.work, "trace-lab.log")
    os.replace(log, f"{log}.{name}")  # the next trace-lab's URL is read from a fresh log
    stack.start_lab()


def check_second_on_port(stack):
    result = subprocess.run([stack.lab_binary, "--listen", f"127.0.0.1:{stack.lab_port}", "--server", stack.nats.url(),
                             "--clickhouse", stack.clickhouse.url()], capture_output=True, text=True, timeout=120)
    check(result.returncode == 5, "a second trace-lab on the same port: exit 5 (the port is in use)",
          (result.returncode, result.stderr[-300:]))
    check(f"127.0.0.1:{stack.lab_port}" in result.stderr, "its message names the address", result.stderr[-300:])


def check_readers_missing(stack):
    alone = os.path.join(stack.work, "alone")
    os.makedirs(alone)
    shutil.copy(stack.lab_binary, alone)
    stack.lab.kill()
    log = os.path.join(stack.work, "trace-lab.log")
    os.replace(log, f"{log}.before-alone")
    stack.lab_binary = os.path.join(alone, "trace-lab")
    path = os.environ["PATH"]
    os.environ["PATH"] = "/usr/bin:/bin"  # trace-pull and trace-query are in neither
    try:
        stack.start_lab()
    finally:
        os.environ["PATH"] = path
    for query, reader in (("board=rack3-b00&live=1", "trace-pull"), ("board=rack3-b00&run=r1", "trace-query")):
        viewer = subprocess.run(["node", VIEW, f"ws://127.0.0.1:{stack.lab_port}/ws?{query}", "--seconds", "3"],
                                capture_output=True, text=True, timeout=120)
        errors = json.loads(viewer.stderr.strip().splitlines()[-1])["errors"]
        check(len(errors) == 1 and reader in errors[0]["message"] and errors[0]["code"] == "PROBE_NOT_FOUND",
              f"{reader} missing: the viewer is told why, with a code (PROBE_NOT_FOUND)", errors)
    kids = [pid for pid in filter(str.isdigit, os.listdir("/proc")) if parent_of(pid) == stack.lab.proc.pid]
    check(not kids, "no child of trace-lab's (none running, no zombie)", kids)


def parent_of(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[1])
    except OSError:
        return None


stack = LabStack(TOOLS)
try:
    stack.start(boards=1, records="100K")
    stack.ship("big", "b1", [text_line(i, f"{i} " + "x" * 50000) for i in range(400)])  # 20 MB: more than in flight
    stack.store_until_idle()
    check_second_on_port(stack)
    for signo in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT, signal.SIGKILL):
        check_stop(stack, signo)
    check_readers_missing(stack)
finally:
    stack.stop()
sys.exit(check.summary())
