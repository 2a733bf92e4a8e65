#!/usr/bin/env python3
"""trace-lab attacked as a lab would (issue 45): how it ends, and what it leaves behind, with
live and stored views open (a live one on a quiet board: its trace-pull writes nothing; a
stored one whose viewer stopped reading: its trace-query blocked on its pipe).
- SIGTERM, SIGINT, SIGHUP, SIGQUIT: a clean stop, exit 128+signal, no trace-pull/trace-query
  left running (SIGHUP and SIGQUIT ended trace-lab at once, their default, and left both);
- SIGKILL: its view readers end too (they were left running, each in its own process group,
  a quiet board's trace-pull holding its consumer for ever);
- a second trace-lab on the same --listen port: exit 5 and a message naming the address;
- a slow store (ClickHouse behind a proxy holding its replies) while the boards page polls and
  searches come: each answered within the API deadline (10 s, the default), 504 or the boards
  with the store's figures null (they queued on one worker, each waiting --clickhouse-timeout,
  30 s: the page stalled for minutes); the store back, the boards answered whole again;
- a view whose reader cannot start: an Error PROBE_NOT_FOUND, then the WebSocket closed (1011,
  "view could not start"; it was left open, the viewer waiting for records).
Usage: test_lab_attacks.py BUILD_TOOLS_DIR"""
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "support"))
sys.path.insert(0, os.path.join(HERE, "..", "lab"))
sys.path.insert(0, os.path.join(HERE, "..", "fleet"))
import engines  # noqa: E402
from checks import Checks  # noqa: E402
from waits import WaitTimeout, wait_until  # noqa: E402
from lab_stack import LabStack, text_line  # noqa: E402

TOOLS = sys.argv[1]
check = Checks()
VIEW = os.path.join(HERE, "..", "lab", "ws_view.mjs")
READERS = ("trace-pull", "trace-query")
API_DEADLINE_S = 10  # trace-lab's default --api-deadline
ANSWER_SLACK_S = 5  # the answer's way back to the client on a loaded machine


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


def describe(pid):
    """A process as (pid, its argv[0], state, parent, kernel wait channel) for a failure's message."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            program = os.path.basename(f.read().split(b"\0")[0].decode(errors="replace"))
        with open(f"/proc/{pid}/status") as f:
            status = dict(line.split(":", 1) for line in f if ":" in line)
        with open(f"/proc/{pid}/wchan") as f:
            wchan = f.read()
        return pid, f"{program} state {status['State'].strip()} ppid {status['PPid'].strip()} in {wchan}"
    except OSError as error:
        return pid, str(error)


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
        left = [describe(pid) for pid in readers_of(stack)]
        for pid, _ in left:
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
        viewer = subprocess.run(["node", VIEW, f"ws://127.0.0.1:{stack.lab_port}/ws?{query}", "--seconds", "60"],
                                capture_output=True, text=True, timeout=120)
        summary = json.loads(viewer.stderr.strip().splitlines()[-1])
        errors = summary["errors"]
        check(len(errors) == 1 and reader in errors[0]["message"] and errors[0]["code"] == "PROBE_NOT_FOUND",
              f"{reader} missing: the viewer is told why, with a code (PROBE_NOT_FOUND)", errors)
        check(summary["closed"] == {"code": 1011, "reason": "view could not start"},
              f"{reader} missing: then the WebSocket is closed (1011), the viewer does not wait", summary)
    kids = [pid for pid in filter(str.isdigit, os.listdir("/proc")) if parent_of(pid) == stack.lab.proc.pid]
    check(not kids, "no child of trace-lab's (none running, no zombie)", kids)


def timed_get(stack, path, results):
    start = time.monotonic()
    try:
        status, body = stack.get(path)
    except OSError as e:  # no answer within get's 60 s
        status, body = None, str(e).encode()
    results.append((path, status, body, time.monotonic() - start))


def late_answer_ok(path, status, body):
    """504 naming the deadline; for the boards, also 200 with the store's figures null for it."""
    said = f"ClickHouse did not answer within {API_DEADLINE_S} s"
    try:
        answer = json.loads(body)
    except ValueError:
        return False
    if status == 504:
        return answer.get("error") == said
    return (status == 200 and path.startswith("/api/boards") and answer["away"] == {"engine": "clickhouse", "why": said}
            and all(b["records"] is None for b in answer["boards"]))


def check_slow_store(stack):
    proxy = engines.TcpProxy(stack.clickhouse.http_port)
    stack.lab.kill()
    log = os.path.join(stack.work, "trace-lab.log")
    os.replace(log, f"{log}.before-slow")
    stack.start_lab(clickhouse_url=f"http://127.0.0.1:{proxy.port}")
    proxy.hold_replies_after(b"SELECT")
    paths = (["/api/boards?window=3600"] * 6 + ["/api/boards?window=86400"] +
             [f"/api/search?text=watchdog{i}" for i in range(5)] + ["/api/runs?board=rack3-b00"])
    results = []
    threads = [threading.Thread(target=timed_get, args=(stack, path, results)) for path in paths]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    slow = [(p, s, round(t, 1)) for p, s, _, t in results if t > API_DEADLINE_S + ANSWER_SLACK_S]
    check(len(results) == len(paths) and not slow,
          f"a store holding its replies: each of {len(paths)} API requests answered within {API_DEADLINE_S} s", slow)
    wrong = [(p, s, b[:200]) for p, s, b, _ in results if not late_answer_ok(p, s, b)]
    check(not wrong, "each says ClickHouse did not answer in time (504, or the boards without the store's figures)",
          wrong)
    proxy.hold_replies_after(None)
    wait_until(lambda: stack.get_json("/api/boards?window=86400")["away"] is None,
               "the store answering again, the boards are answered whole", lambda: stack.lab.log()[-600:])
    proxy.close()


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
    check_slow_store(stack)
    check_readers_missing(stack)
finally:
    stack.stop()
sys.exit(check.summary())
