#!/usr/bin/env python3
"""The whole trace-lab stack on this machine, for tests and for working on the pages: a real
nats-server (max_payload 256 KiB, so a larger record becomes a Loss) and clickhouse-server on
free loopback ports, simulated boards shipped by real trace-ship and stored by real
trace-store, and trace-lab on a free port. Everything is stopped by pid.

  stack = LabStack(TOOLS_DIR, work_dir)
  stack.start(boards=8)           # rack3-b00.. rack3-b07, rack3-b02 losing, rack3-b05 faulting
  stack.get_json("/api/boards")   # or stack.url("/")
  stack.ship_live("rack3-b00")    # a trace-ship that goes on feeding (feed_lines / close)
  stack.stop()

As a program it starts the stack, prints trace-lab's URL and keeps it up until Ctrl-C:
  tests/lab/lab_stack.py build/tools [BOARDS]"""
import json
import os
import re
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "support"))
sys.path.insert(0, os.path.join(HERE, "..", "fleet"))
from waits import wait_until  # noqa: E402
import engines  # noqa: E402

MAX_PAYLOAD = 262144
LOSING = "rack3-b02"   # one record larger than the server's largest message: a Loss (too_large)
FAULTING = "rack3-b05"  # HardFault exceptions and a watchdog Text line


def simulated_records(tools, seed, max_bytes="400K"):
    capture = subprocess.Popen([os.path.join(tools, "swo-capture"), "--simulate", "--rate", "0", "--seed", str(seed),
                                "--max-bytes", max_bytes], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    decoded = subprocess.run([os.path.join(tools, "itm-decode")], stdin=capture.stdout, capture_output=True, text=True,
                             check=True)
    capture.wait()
    return decoded.stdout.splitlines()


def text_line(timestamp, message):
    return json.dumps({"timestamp": timestamp, "port": 0, "event": {"kind": "Text", "data": {"message": message}},
                       "source": "itm", "clock": "cycles"}, separators=(",", ":"))


def hardfault_line(timestamp):
    return json.dumps({"timestamp": timestamp, "port": 0, "event": {"kind": "Exception", "data": {
        "number": 3, "name": "HardFault", "action": "enter"}}, "source": "dwt", "clock": "cycles"},
        separators=(",", ":"))


class LabStack:
    def __init__(self, tools, work=None):
        self.tools = tools
        self.work = work or tempfile.mkdtemp(prefix="tp-lab-")
        self.nats = self.clickhouse = self.lab = None
        self.lab_port = None
        self.lab_binary = os.path.join(tools, "trace-lab")  # another build's to test that one
        self.shipped = {}  # board -> the lines given to trace-ship (run "r1")
        self.live = []

    def tool(self, name):
        return os.path.join(self.tools, name)

    def start(self, boards=8, lab_args=(), records="400K"):
        engines.require_tools()
        self.nats = engines.single_node(os.path.join(self.work, "nats"), extra=f"max_payload: {MAX_PAYLOAD}")
        self.clickhouse = engines.ClickHouse(os.path.join(self.work, "clickhouse")).start()
        for i in range(boards):
            board = f"rack3-b{i:02}"
            lines = simulated_records(self.tools, 100 + i, records)
            if board == LOSING:
                big = text_line(1, "x" * (MAX_PAYLOAD + 1000))
                lines = lines[:len(lines) // 2] + [big] + lines[len(lines) // 2:]
            if board == FAULTING:
                lines = lines + [hardfault_line(10**9), text_line(10**9 + 1, "watchdog: task 3 starved, resetting")]
            self.ship(board, "r1", lines)
        self.store_until_idle(create=True)
        self.start_lab(*lab_args)
        return self

    def ship(self, board, run, lines):
        result = subprocess.run([self.tool("trace-ship"), "--board", board, "--run", run, "--server", self.nats.url(),
                                 "--create-stream", "--stats"], input="\n".join(lines) + "\n", capture_output=True,
                                text=True, timeout=300)
        if result.returncode != 0:
            raise AssertionError(f"trace-ship {board}: {result.returncode} {result.stderr[-400:]}")
        self.shipped.setdefault(board, []).extend(lines)

    def store_until_idle(self, create=False):
        result = subprocess.run([self.tool("trace-store"), "--server", self.nats.url(), "--clickhouse",
                                 self.clickhouse.url(), "--until-idle", "--stats"] +
                                (["--create-table"] if create else []), capture_output=True, text=True, timeout=600)
        if result.returncode != 0:
            raise AssertionError(f"trace-store: {result.returncode} {result.stderr[-400:]}")
        return result

    def start_lab(self, *args, clickhouse_url=None):
        """trace-lab on these engines (on ClickHouse at clickhouse_url: a proxy of it)."""
        log_path = os.path.join(self.work, "trace-lab.log")
        self.lab = engines.Process("trace-lab", [self.lab_binary, "--listen", "127.0.0.1:0", "--server",
                                                 self.nats.url(), "--clickhouse",
                                                 clickhouse_url or self.clickhouse.url(), "-v", *args],
                                   log_path).start()
        pattern = re.compile(r"trace-lab on http://127\.0\.0\.1:(\d+)/")
        wait_until(lambda: pattern.search(self.lab.log()) or not self.lab.running(), "trace-lab says its URL",
                   lambda: self.lab.log()[-500:])
        if not self.lab.running():
            raise AssertionError(f"trace-lab exited: {self.lab.log()[-1000:]}")
        self.lab_port = int(pattern.search(self.lab.log()).group(1))
        wait_until(lambda: self.boards_answer_ok(), "trace-lab's /api/boards answers 200 (NATS and ClickHouse seen)",
                   lambda: self.lab.log()[-500:])

    def boards_answer_ok(self):
        try:
            self.get_json("/api/boards")
            return True
        except urllib.error.HTTPError:
            return False

    def url(self, path="/"):
        return f"http://127.0.0.1:{self.lab_port}{path}"

    def get(self, path, headers=None):
        """(status, body bytes) of a GET; an HTTP error is a status like any other."""
        request = urllib.request.Request(self.url(path), headers=headers or {})
        try:
            with urllib.request.urlopen(request, timeout=60) as r:
                return r.status, r.read()
        except urllib.error.HTTPError as e:
            return e.code, e.read()

    def get_json(self, path):
        with urllib.request.urlopen(self.url(path), timeout=60) as r:
            return json.loads(r.read())

    def ship_live(self, board, run="live"):
        """A trace-ship that keeps its stdin open: feed_lines(lines) then close()."""
        proc = subprocess.Popen([self.tool("trace-ship"), "--board", board, "--run", run, "--server", self.nats.url(),
                                 "--stats"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, text=True)
        self.live.append(proc)
        return proc

    def stop(self):
        for proc in self.live:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        for server in (self.lab, self.clickhouse, self.nats):
            if server is not None and server.running():
                server.kill()


if __name__ == "__main__":
    stack = LabStack(sys.argv[1])
    try:
        stack.start(boards=int(sys.argv[2]) if len(sys.argv) > 2 else 8)
        print(f"trace-lab: {stack.url('/')}  (NATS {stack.nats.url()}, ClickHouse {stack.clickhouse.url()}, "
              f"work {stack.work}); Ctrl-C stops", flush=True)
        stack.lab.proc.wait()
    except KeyboardInterrupt:
        pass
    finally:
        stack.stop()
