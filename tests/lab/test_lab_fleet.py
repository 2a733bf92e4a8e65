#!/usr/bin/env python3
"""trace-lab over the fleet's other shapes (issue 45), with the engines of tests/fleet/engines.py:

- a JetStream domain: the boards ship into the stream of a leaf node (its own domain, rack3)
  and trace-lab is connected to the hub (whose own JetStream has no such stream) with
  --domain rack3: /api/boards lists a board that only the leaf's stream holds (the stream's
  subjects, read through the domain's API prefix) and a board shipping now as live; a live
  view gets the records shipped after it opened;
- trace-store's Distributed table over a two-shard ClickHouse cluster (--distributed):
  /api/boards' counts and /api/search's hits equal clickhouse-client's over trace_all, and a
  stored view is byte for byte trace-query's through trace_all.

Usage: test_lab_fleet.py BUILD_TOOLS_DIR"""
import json
import os
import subprocess
import sys
import threading
import time
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "support"))
sys.path.insert(0, HERE)
from checks import Checks  # noqa: E402
from waits import wait_until  # noqa: E402
from lab_stack import LabStack, simulated_records, text_line, hardfault_line  # noqa: E402
import engines  # noqa: E402  (lab_stack put tests/fleet on the path)

TOOLS = sys.argv[1]
check = Checks()
VIEW = os.path.join(HERE, "ws_view.mjs")
DOMAIN = "rack3"
BOARDS = [f"rack3-b{i:02}" for i in range(6)]
STREAM_ONLY = "rack3-unstored"  # shipped after the store ran: only the leaf's stream holds it


def tool(name):
    return os.path.join(TOOLS, name)


def ship(board, run, lines):
    """Into the leaf's stream, as a rack's shipper does (connected to its leaf node)."""
    result = subprocess.run([tool("trace-ship"), "--board", board, "--run", run, "--server", leaf.url(),
                             "--create-stream", "--stats"], input="".join(line + "\n" for line in lines),
                            capture_output=True, text=True, timeout=300)
    if result.returncode != 0:
        raise AssertionError(f"trace-ship {board}: {result.returncode} {result.stderr[-400:]}")


def store(clickhouse, *args):
    """trace-store from the hub through the domain; raises unless it ends well."""
    result = subprocess.run([tool("trace-store"), "--server", hub.url(), "--domain", DOMAIN, "--clickhouse",
                             clickhouse.url(), "--until-idle", "--stats", *args], capture_output=True, text=True,
                            timeout=600)
    if result.returncode != 0:
        raise AssertionError(f"trace-store {' '.join(args)}: {result.returncode} {result.stderr[-400:]}")
    return engines.stats_of(result.stderr)


def ch_rows(sql):
    return [line.split("\t") for line in front.query(sql).splitlines() if line]


def view(query, *args, timeout=300):
    url = f"ws://127.0.0.1:{stack.lab_port}/ws?{query}"
    result = subprocess.run(["node", VIEW, url, *args], capture_output=True, timeout=timeout)
    summary = json.loads(result.stderr.decode().strip().splitlines()[-1]) if result.stderr.strip() else {}
    return result.returncode, result.stdout.decode(), summary


def make_cluster(work):
    """Two ClickHouse servers, one cluster `fleet` of two shards (the first is the front)."""
    shard_port, front_port = engines.free_port(), engines.free_port()
    shard = engines.ClickHouse(os.path.join(work, "shard2"), tcp_port=shard_port).start()
    front = engines.ClickHouse(os.path.join(work, "front"), tcp_port=front_port,
                               shards=(front_port, shard_port)).start()
    return front, shard


def check_distributed_boards():
    answer = stack.get_json("/api/boards?window=86400")
    boards = {b["board"]: b for b in answer["boards"]}
    expected = {row[0]: row[1:] for row in ch_rows(
        "SELECT board, count(), countIf(kind = 'Exception'), countIf(kind = 'Overflow'), "
        "sumIf(visitParamExtractUInt(data, 'records'), kind = 'Loss') FROM trace_all FINAL GROUP BY board")}
    got = {name: [str(b["records"]), str(b["exceptions"]), str(b["overflows"]), str(b["lost"])]
           for name, b in boards.items() if name in expected}
    check(got == expected and sorted(expected) == BOARDS,
          "--distributed: /api/boards' records, exceptions, overflows, lost per board equal clickhouse-client's "
          "over trace_all FINAL", (got, expected))
    check("watchdog" in (boards.get("rack3-b01", {}).get("last_text") or ""),
          "the last Text line comes through the Distributed table", boards.get("rack3-b01"))


def search_all(query):
    hits, cursor = [], None
    for _ in range(1000):
        page = stack.get_json(f"/api/search?{query}" + (f"&before={urllib.parse.quote(cursor)}" if cursor else ""))
        hits += page["hits"]
        cursor = page["next"]
        if cursor is None:
            break
    return hits


def check_distributed_search():
    hits = search_all("kind=Overflow&kind=Exception&limit=50")
    expected = ch_rows("SELECT board, run, seq FROM trace_all FINAL WHERE kind IN ('Overflow', 'Exception') "
                       "ORDER BY host_us DESC, board DESC, run DESC, seq DESC")
    got = [[h["board"], h["run"], str(h["seq"])] for h in hits]
    check(got == expected and len({h[0] for h in expected}) > 1,
          f"--distributed: search kind=Overflow,Exception ({len(got)} hits, paged) equals clickhouse-client's "
          "over trace_all, newest first", (len(got), len(expected)))
    watchdog = stack.get_json("/api/search?text=watchdog")
    check([h["board"] for h in watchdog["hits"]] == ["rack3-b01"], "search text=watchdog through trace_all",
          watchdog)


def check_distributed_view():
    # A board of each shard's (its local table's first).
    for board in [ch.query("SELECT min(board) FROM trace").strip() for ch in (front, shard)]:
        code, lines, summary = view(f"board={board}&run=r1")
        expected = subprocess.run([tool("trace-query"), "--clickhouse", front.url(), "--table", "trace_all",
                                   "--board", board, "--run", "r1"], capture_output=True, text=True,
                                  timeout=300).stdout
        check(code == 0 and summary.get("why") == "final" and lines == expected and lines,
              f"--distributed: the stored view of {board} is byte for byte trace-query --table trace_all's "
              f"{expected.count(chr(10))} records", (summary, lines.count("\n"), expected.count("\n")))


def hub_streams():
    return [s["name"] for a in hub.jsz("streams=true").get("account_details", []) for s in a.get("stream_detail", [])]


def check_domain_boards():
    check("TRACE" not in hub_streams() and leaf.stream_messages("TRACE") > 0,
          "the stream TRACE is the leaf's: the hub trace-lab connects to has none of its own", hub_streams())
    answer = stack.get_json("/api/boards?window=86400")
    listed = {b["board"]: b for b in answer["boards"]}
    unstored = listed.get(STREAM_ONLY)
    check(unstored is not None and unstored["records"] == 0 and not unstored["live"],
          f"--domain: {STREAM_ONLY}, held only by the leaf's stream (not stored, not live), is listed: the stream's "
          "subjects were read through the domain", unstored or sorted(listed))


def check_domain_live():
    shipper = subprocess.Popen([tool("trace-ship"), "--board", "live-b", "--run", "live", "--server", leaf.url(),
                                "--stats"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               text=True)
    stop = threading.Event()

    def feed():
        i = 0
        while not stop.is_set():
            shipper.stdin.write(text_line(10**6 + i, f"warm {i}") + "\n")
            shipper.stdin.flush()
            i += 1
            stop.wait(0.02)  # pace: a board printing 50 lines a second

    feeder = threading.Thread(target=feed)
    feeder.start()
    try:
        def live_row():
            return next((b for b in stack.get_json("/api/boards")["boards"] if b["board"] == "live-b"), None)
        wait_until(lambda: (live_row() or {}).get("live"), "--domain: /api/boards lists the shipping board as live",
                   lambda: str(live_row()))
        row = live_row()
        check(row and row["run"] == "live" and row["records_per_s"] > 0,
              "--domain: the live board's run and records/s come from the leaf's stream", row)
        viewer = subprocess.Popen(["node", VIEW, f"ws://127.0.0.1:{stack.lab_port}/ws?board=live-b&live=1",
                                   "--until", "after open 99", "--seconds", "150"],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        wait_until(lambda: "views /ws?board=live-b&live=1" in stack.lab.log(), "the live viewer is on its view",
                   lambda: stack.lab.log()[-400:])
        stop.set()
        feeder.join()
        marks = [text_line(2 * 10**6 + i, f"after open {i}") for i in range(100)]
        shipper.stdin.write("\n".join(marks) + "\n")
        shipper.stdin.flush()
        out, err = viewer.communicate(timeout=180)
        got = [json.loads(line)["event"]["data"]["message"] for line in out.decode().splitlines()]
        after = [m for m in got if m.startswith("after open")]
        check(after == [f"after open {i}" for i in range(100)],
              "--domain: a live view gets the records shipped into the leaf after it opened, in order",
              (len(got), got[-3:], err.decode()[-300:]))
    finally:
        stop.set()
        feeder.join()
        shipper.stdin.close()
        shipper.wait(timeout=60)


work = __import__("tempfile").mkdtemp(prefix="tp-lab-fleet-")
engines.require_tools()
hub = engines.NatsNode(os.path.join(work, "hub"), "hub", domain="hub", leaf_listen=True)
hub.write_config()
hub.start()
leaf = engines.NatsNode(os.path.join(work, "leaf"), "rack3", domain=DOMAIN, leaf_remote=f"127.0.0.1:{hub.leaf_port}")
leaf.write_config()
stack = LabStack(TOOLS, work)
front = shard = None
try:
    leaf.start()
    wait_until(lambda: hub.leaf_connections() == 1, "the leaf connected to the hub")
    front, shard = make_cluster(work)
    # trace's local table and counts view on the second shard, as trace-store makes them,
    # before anything is shipped (the stream empty: nothing stored there by this run).
    ship("init", "i0", [])
    store(shard, "--create-table", "--durable", "init")
    for i, board in enumerate(BOARDS):
        lines = simulated_records(TOOLS, 200 + i, "200K")
        if board == "rack3-b01":
            lines += [hardfault_line(10**9), text_line(10**9 + 1, "watchdog: task 3 starved, resetting")]
        ship(board, "r1", lines)
    store(front, "--create-table", "--distributed", "fleet")
    wait_until(lambda: sum(int(ch.query("SELECT count() FROM trace FINAL").strip()) for ch in (front, shard)) ==
               int(ch_rows("SELECT count() FROM trace_all FINAL")[0][0]) > 0,
               "the Distributed table sent every row to its shard")
    local = [int(ch.query("SELECT count() FROM trace FINAL").strip()) for ch in (front, shard)]
    check(all(n > 0 for n in local), f"the boards' rows are spread over both shards ({local[0]} + {local[1]})", local)
    ship(STREAM_ONLY, "u1", [text_line(1, "never stored")])
    time.sleep(2)  # pace: its chunk older than --live-seconds when trace-lab starts: only the stream's subjects list it
    stack.nats, stack.clickhouse = hub, front
    stack.start_lab("--domain", DOMAIN, "--distributed", "--live-seconds", "1")
    check_distributed_boards()
    check_distributed_search()
    check_distributed_view()
    check_domain_boards()
    check_domain_live()
except Exception as e:  # noqa: BLE001 - reported as a failure with what was seen
    check(False, "the test ran to its end", f"{type(e).__name__}: {e}\n{stack.lab.log()[-1500:] if stack.lab else ''}")
finally:
    stack.stop()
    for server in (shard, leaf, hub):
        if server is not None and server.running():
            server.kill()
subprocess.run(["rm", "-rf", work])
sys.exit(check.summary())
