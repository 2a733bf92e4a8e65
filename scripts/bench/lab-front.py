#!/usr/bin/env python3
"""trace-lab's front door benchmark (issue 45, Checks and figures): real nats-server and
clickhouse-server (tests/fleet/engines.py), real trace-ship and trace-lab, and viewers that take
the batched subprotocol as the browser's viewer does (scripts/bench/lab-front.mjs).

1. The boards page over --boards boards known to the stream and the store: --rows rows made
   inside ClickHouse (INSERT ... SELECT FROM numbers(), over the last 24 hours) and a chunk
   published by trace-ship for each board; /api/boards timed (its default window, an hour, and
   24 hours) against the same SQL by clickhouse-client, with ClickHouse's own time (query_log).
2. Opening a live board: from the WebSocket's open to the first Event of a record written to a
   feeding trace-ship after it; against trace-pull started and fed the same way.
3. A stored range of --range rows (one board, made in ClickHouse) to a viewer: records/s, each
   record the range's (count, sum and order of seqs as clickhouse-client gives them); against
   trace-query | wc -l.
4. Search over the rows: a text that hits few rows, one that hits many; against clickhouse-client.
5. trace-lab's RSS (/proc) with --viewers viewers (live views of 4 fed boards, stored views),
   then with two of them stopping reading.
The machine's load average is printed beside each figure: the servers and clients share its cores.
Usage: scripts/bench/lab-front.py BUILD_DIR [--smoke] [options]"""
import argparse
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request

root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(root, "tests", "fleet"))
import engines  # noqa: E402

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("build")
parser.add_argument("--boards", type=int, default=200)
parser.add_argument("--rows", default="10M", help="rows of the boards over 24 hours (K, M suffixes)")
parser.add_argument("--range", default="1M", help="rows of the stored range (one board)")
parser.add_argument("--viewers", type=int, default=20)
parser.add_argument("--seconds", type=float, default=30, help="seconds of each memory phase")
parser.add_argument("--opens", type=int, default=5, help="live board openings timed")
parser.add_argument("--smoke", action="store_true", help="small sizes, every step once: a check that it runs")
args = parser.parse_args()
if args.smoke:
    args.boards, args.rows, args.range, args.viewers, args.seconds, args.opens = 5, "20K", "10K", 4, 3, 1
tools = os.path.join(args.build, "tools")
work = tempfile.mkdtemp(prefix="tp-bench-lab-front-")
HERE = os.path.dirname(os.path.abspath(__file__))
CLIENT = os.path.join(HERE, "lab-front.mjs")
RATE = 1000  # records/s of each fed live board
bench_start = time.monotonic()
failures = []


def tool(name):
    return os.path.join(tools, name)


def load():
    return "load {:.2f} {:.2f} {:.2f}".format(*os.getloadavg())


def count_of(text):
    scale = {"K": 1_000, "M": 1_000_000}.get(text[-1:].upper(), 1)
    return int(float(text.rstrip("KkMm")) * scale)


def check(ok, what):
    if not ok:
        failures.append(what)
        print(f"  WRONG: {what}")


def target(ok, what):
    """A figure's target: judged on the full sizes only (--smoke's are too small to mean anything)."""
    if not ok:
        print(f"  MISSED: {what}" if not args.smoke else f"  (below target at --smoke sizes: {what})")
        if not args.smoke:
            failures.append(what)


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        return int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1))


def start_clickhouse():
    """clickhouse-server with query_log on for every query (the default profile's log_queries),
    so trace-lab's own SQL and ClickHouse's time for it can be read back."""
    server = engines.ClickHouse(os.path.join(work, "clickhouse"))
    users = os.path.join(work, "clickhouse", "users.xml")
    with open("/etc/clickhouse-server/users.xml") as f:
        text = f.read()
    with open(users, "w") as f:
        f.write(re.sub(r"(<profiles>.*?<default>)", r"\1<log_queries>1</log_queries>", text, count=1, flags=re.S))
    config = os.path.join(work, "clickhouse", "config.xml")
    with open(config) as f:
        text = f.read()
    with open(config, "w") as f:
        f.write(text.replace("/etc/clickhouse-server/users.xml", users).replace(
            "</yandex>", "<query_log><database>system</database><table>query_log</table></query_log></yandex>"))
    return server.start()


def ch_http(sql, timeout=1800):
    request = urllib.request.Request(clickhouse.url() + "/?" + urllib.parse.urlencode({"query": sql}), data=b"",
                                     method="POST")
    with urllib.request.urlopen(request, timeout=timeout) as reply:
        return reply.read().decode()


def ch_client_seconds(sql, runs=3):
    """The best time of the query by clickhouse-client over its native protocol (its --time: from
    sending the query to the answer's end, without the client's start), answer to /dev/null."""
    best = None
    for _ in range(runs):
        done = subprocess.run([engines.CLICKHOUSE_CLIENT, "--port", str(clickhouse.tcp_port), "--time", "-q", sql],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=True, timeout=600)
        took = float(done.stderr.split()[-1])
        best = took if best is None else min(best, took)
    return best


def lab_sql_since(marker_us, needle):
    """trace-lab's latest query holding needle since marker_us, from query_log: (SQL, ms)."""
    ch_http("SYSTEM FLUSH LOGS")
    rows = ch_http(f"SELECT query, query_duration_ms FROM system.query_log WHERE type = 2 AND event_time >= "
                   f"toDateTime({marker_us // 1_000_000 - 1}) AND position(query, '{needle}') > 0 AND "
                   f"position(query, 'query_log') = 0 ORDER BY event_time DESC LIMIT 1 FORMAT JSONEachRow")
    if not rows.strip():
        return None, None
    row = json.loads(rows.splitlines()[0])
    return row["query"], int(row["query_duration_ms"])


def make_rows(board_sql, boards, rows, start_us, step_us):
    """rows in the store's layout, board_sql (of number) in turn over boards, a board's records
    step_us apart from start_us: one in 20 a Text record 'frame N sent', one in a million
    'watchdog: task 3 starved, resetting'; Exceptions, Overflows and Counters besides."""
    ch_http(f"""
INSERT INTO trace SELECT board, 'r1' AS run, i + 1 AS seq, host_us, toDate(toDateTime(intDiv(host_us, 1000000))) AS day,
  i * 1000 AS timestamp, 'cycles' AS clock, 0 AS port, 'itm' AS source, 1 AS time_exact, kind, data, '' AS extra
FROM (SELECT {board_sql} AS board, intDiv(number, {boards}) AS i,
        {start_us} + i * {step_us} + number % {boards} AS host_us, i % 20 AS r,
        multiIf(number % 1000000 = 12345, 'Text', r < 4, 'Exception', r = 6, 'Text', r = 7 AND i % 1000 = 7,
                'Overflow', 'Counter') AS kind,
        multiIf(number % 1000000 = 12345, '{{"message":"watchdog: task 3 starved, resetting"}}',
                r < 4, concat('{{"number":', toString(11 + i % 5), ',"name":"IRQ","action":"', if(r % 2 = 0, 'enter', 'exit'), '"}}'),
                r = 6, concat('{{"message":"frame ', toString(i % 100000), ' sent"}}'),
                concat('{{"counter_id":3,"value":', toString(i % 4096), '}}')) AS data
      FROM numbers({rows}))""")


def rfc3339(us):
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(us // 1_000_000)) + f".{us % 1_000_000:06d}Z"


def publish_boards(boards):
    """A chunk of 3 records for each board through trace-ship (8 at once): the stream knows them."""
    lines = "".join(line + "\n" for line in records[:3])
    pending = list(boards)
    while pending:
        batch, pending = pending[:8], pending[8:]
        ships = [subprocess.Popen([tool("trace-ship"), "--board", b, "--run", "p1", "--server", nats.url(),
                                   "--create-stream", "-q"], stdin=subprocess.PIPE, text=True) for b in batch]
        for ship in ships:
            ship.communicate(lines, timeout=120)
            check(ship.returncode == 0, f"trace-ship exited {ship.returncode}")


class Feeder:
    """A trace-ship fed RATE records/s from the simulated records, 100 ms at a time, by a thread;
    mark(text) writes a Text record at once, between two ticks."""

    def __init__(self, board):
        self.ship = subprocess.Popen([tool("trace-ship"), "--board", board, "--run", "live", "--server", nats.url(),
                                      "-q"], stdin=subprocess.PIPE, text=True)
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self.run)
        self.thread.start()

    def run(self):
        per_tick, at = RATE // 10, 0
        while not self.stopping.wait(0.1):  # pace: RATE records/s
            chunk = "".join(records[(at + k) % len(records)] + "\n" for k in range(per_tick))
            at += per_tick
            with self.lock:
                self.ship.stdin.write(chunk)
                self.ship.stdin.flush()

    def mark(self, text):
        with self.lock:
            self.ship.stdin.write(lab_stack.text_line(1, text) + "\n")
            self.ship.stdin.flush()

    def stop(self):
        self.stopping.set()
        self.thread.join()
        self.ship.stdin.close()
        self.ship.wait(timeout=60)


def get_seconds(path):
    start = time.monotonic()
    with urllib.request.urlopen(lab_url("http", path), timeout=120) as reply:
        body = reply.read()
    return time.monotonic() - start, json.loads(body)


def lab_url(scheme, path):
    return f"{scheme}://127.0.0.1:{lab_port}{path}"


def timed_api(path, needle, runs=3):
    """trace-lab's answer to path: the median of runs, ClickHouse's own time of its SQL (query_log)
    and clickhouse-client's time of the same SQL; prints one line."""
    marker_us = time.time_ns() // 1000
    times, answer = [], None
    for _ in range(runs):
        took, answer = get_seconds(path)
        times.append(took)
    sql, own_ms = lab_sql_since(marker_us, needle)
    median = statistics.median(times)
    reference = ch_client_seconds(sql) if sql else None
    ratio = f"{median / reference:.2f}x clickhouse-client's {reference * 1000:.0f} ms" if reference else "no SQL logged"
    # Where ClickHouse's time goes: the same SQL without FINAL (not exact: rows inserted twice count twice).
    unmerged = f", {ch_client_seconds(sql.replace(' FINAL', '', 1), 1) * 1000:.0f} ms without FINAL" if sql else ""
    print(f"  {path}: median {median * 1000:.0f} ms, max {max(times) * 1000:.0f} ms of {runs} ({ratio}; ClickHouse's "
          f"own {own_ms} ms in query_log{unmerged}; {load()})")
    return median, answer


def boards_page(boards):
    print(f"\nthe boards page over {len(boards)} boards, {rows} rows of 24 h in the store ({load()})")
    median, _ = timed_api("/api/boards", "argMaxIf")
    target(median < 1.0, f"/api/boards (its default window, an hour) took {median:.2f} s, not under 1 s")
    median, answer = timed_api("/api/boards?window=172800", "argMaxIf")
    if median >= 1.0:
        print(f"  (over every row of the store, 24 h: {median:.2f} s; not the page's default window, not judged)")
    counts = dict(line.split("\t") for line in ch_http(
        "SELECT board, count() FROM trace FINAL WHERE board LIKE 'b1%' GROUP BY board FORMAT TSV").splitlines())
    listed = {b["board"]: b for b in answer["boards"]}
    wrong = [b for b in boards if b not in listed or listed[b]["records"] != int(counts.get(b, -1))]
    check(not wrong, f"boards whose records are not clickhouse-client's count: {wrong[:5]}")
    print(f"  every board listed with clickhouse-client's count: {not wrong} ({len(listed)} boards listed; "
          f"{sum(1 for b in listed.values() if b['live'])} live)")


def first_marker(argv, board_feeder, marker, opened_on_start):
    """ms from the open (the node viewer's, or the process's start) to the marker record's
    arrival, the marker written to the feeding trace-ship at that open."""
    start_ms = time.time() * 1000
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if opened_on_start:
        board_feeder.mark(marker)
    opened = start_ms
    for line in proc.stdout:
        if not opened_on_start and line.startswith('{"open"'):
            opened = json.loads(line)["open"]
            board_feeder.mark(marker)
        elif line.startswith('{"marker"') or marker in line:
            arrived = json.loads(line)["marker"] if line.startswith('{"marker"') else time.time() * 1000
            proc.kill()
            proc.wait()
            return arrived - opened
    proc.wait()
    raise AssertionError(f"{argv[:3]} ended without the marker: {proc.stderr.read()[-500:]}")


def live_opening(board, board_feeder):
    print(f"\nopening a live board (fed at {RATE} records/s by trace-ship; {load()})")
    lab, pull = [], []
    for i in range(args.opens):
        lab.append(first_marker(["node", CLIENT, "live", lab_url("ws", f"/ws?board={board}&live=1"), f"open-{i}-lab"],
                                board_feeder, f"open-{i}-lab", False))
        pull.append(first_marker([tool("trace-pull"), "--server", nats.url(), "--board", board, "--follow", "--since",
                                  "10s"], board_feeder, f"open-{i}-pull", True))
    median, reference = statistics.median(lab), statistics.median(pull)
    print(f"  WebSocket open to the first record shipped after it: median {median:.0f} ms, max {max(lab):.0f} ms of "
          f"{len(lab)} openings ({median / reference:.2f}x trace-pull started and fed the same way: median "
          f"{reference:.0f} ms; {load()})")
    target(median < 1000, f"a live board's first record after {median:.0f} ms, not under 1 s")


def stored_range(from_us, to_us, expected):
    print(f"\na stored range of {expected} records to a viewer ({load()})")
    url = lab_url("ws", f"/ws?board=bulk&from={from_us}&to={to_us}")
    before = cpu_split()
    done = subprocess.run(["node", CLIENT, "range", url], capture_output=True, text=True, timeout=600)
    engines.wait_until(lambda: not children_of(lab.proc.pid), "the range's trace-query ended and reaped", timeout=60)
    used = {k: v - before[k] for k, v in cpu_split().items()}
    check(done.returncode == 0, f"the range viewer: {done.stderr[-300:]}")
    got = json.loads(done.stdout)
    truth = ch_http(f"SELECT count(), sum(seq), min(seq), max(seq) FROM trace FINAL WHERE board = 'bulk' AND "
                    f"host_us >= {from_us} AND host_us < {to_us} FORMAT TSV").split()
    same = [got["records"], got["sum"], got["min"], got["max"]] == [int(x) for x in truth]
    check(same and got["rising"] and got["boards"] == ["bulk"], f"the viewer got {got}, clickhouse-client {truth}")
    start = time.monotonic()
    query = subprocess.Popen([tool("trace-query"), "--clickhouse", clickhouse.url(), "--board", "bulk", "--since",
                              rfc3339(from_us), "--until", rfc3339(to_us)], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
    lines = int(subprocess.run(["wc", "-l"], stdin=query.stdout, capture_output=True, text=True).stdout)
    check(query.wait() == 0, f"trace-query: {query.stderr.read()[-300:]}")
    reference = lines / (time.monotonic() - start)
    rate = got["records"] / got["seconds"]
    print(f"  {got['records']} records in {got['seconds']:.2f} s: {rate / 1e3:.0f}k records/s, each the range's "
          f"(count, sum, first and last seq as clickhouse-client's, in order): {same and got['rising']} "
          f"({rate / reference:.2f}x trace-query | wc -l: {reference / 1e3:.0f}k records/s, {lines} lines; {load()})")
    print("  CPU per record: " + ", ".join(f"{k} {v / max(got['records'], 1) * 1e9:.0f} ns" for k, v in used.items()) +
          f" ({sum(used.values()) / got['seconds']:.2f} cores of {os.cpu_count()} while it ran)")
    target(rate >= 200_000, f"a stored range at {rate / 1e3:.0f}k records/s, not >= 200k")


def cpu_split():
    """CPU seconds so far: trace-lab's own, its readers' (children it reaped: /proc stat's
    cutime and cstime), the viewers' (this script's reaped children: node), clickhouse-server's."""
    with open(f"/proc/{lab.proc.pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    with open(f"/proc/{clickhouse.proc.pid}/stat") as f:
        server = f.read().rsplit(")", 1)[1].split()
    viewer = resource.getrusage(resource.RUSAGE_CHILDREN)
    return {"trace-lab": (int(fields[11]) + int(fields[12])) / tick,
            "trace-query": (int(fields[13]) + int(fields[14])) / tick,
            "the viewer (node)": viewer.ru_utime + viewer.ru_stime,
            "clickhouse-server": (int(server[11]) + int(server[12])) / tick}


def search():
    print(f"\nsearch over {rows + range_rows} stored rows ({load()})")
    for text in ("watchdog", "sent"):
        median, answer = timed_api(f"/api/search?text={text}", "position(visitParamExtractString")
        condition = f"kind = 'Text' AND position(visitParamExtractString(data, 'message'), '{text}') > 0"
        matching = int(ch_http(f"SELECT count() FROM trace FINAL WHERE {condition}"))
        first_page = ch_http(f"SELECT board, run, seq FROM trace FINAL WHERE {condition} ORDER BY host_us DESC, "
                             f"board DESC, run DESC, seq DESC LIMIT 100 FORMAT TSV").splitlines()
        got = [f"{h['board']}\t{h['run']}\t{h['seq']}" for h in answer["hits"]]
        print(f"    text={text}: the first page's {len(got)} hits are clickhouse-client's first {len(first_page)} "
              f"of the {matching} rows it finds: {got == first_page}; next page: {answer['next'] is not None}")
        check(got == first_page and (answer["next"] is not None) == (matching > 100), f"search {text}: not the rows")
        target(median < 2.0, f"search for {text} took {median:.2f} s, not under 2 s")


def rss_during(seconds, urls):
    """trace-lab's RSS each 0.5 s while the viewers of urls run for seconds: (samples KiB, the
    viewers' record counts)."""
    viewers = subprocess.Popen(["node", CLIENT, "many", str(seconds), *urls], stdout=subprocess.PIPE, text=True)
    samples = []
    while viewers.poll() is None:
        samples.append(rss_kib(lab.proc.pid))
        time.sleep(0.5)  # pace: a sample every 0.5 s
    out = viewers.stdout.read()
    check(viewers.returncode == 0 and out, f"the viewers ended {viewers.returncode}")
    return samples, json.loads(out)["records"] if out else []


def memory(live_boards, from_us, to_us):
    print(f"\ntrace-lab's RSS with {args.viewers} viewers ({load()})")
    idle = rss_kib(lab.proc.pid)
    stored = max(1, args.viewers * 2 // 5)
    step = (to_us - from_us) // stored
    urls = [lab_url("ws", f"/ws?board={live_boards[i % len(live_boards)]}&live=1")
            for i in range(args.viewers - stored)]
    urls += [lab_url("ws", f"/ws?board=bulk&from={from_us + i * step}&to={to_us}") for i in range(stored)]
    phases = (("reading", urls), ("two stop reading", [urls[0] + "#stall", urls[-1] + "#stall"] + urls[1:-1]),
              ("reading again", urls))
    for name, phase in phases:
        samples, counts = rss_during(args.seconds, phase)
        engines.wait_until(lambda: not children_of(lab.proc.pid), "trace-lab's readers gone with their viewers",
                           timeout=60)
        settled = samples[len(samples) // 3:]
        print(f"  {name}: {len(phase)} viewers ({len(phase) - stored} live on {len(live_boards)} boards, {stored} "
              f"stored), {args.seconds:.0f} s: RSS after the first third {settled[0] / 1024:.1f} -> last "
              f"{settled[-1] / 1024:.1f}, max {max(samples) / 1024:.1f} MiB; the viewers and their readers gone: "
              f"{rss_kib(lab.proc.pid) / 1024:.1f} MiB (idle before any: {idle / 1024:.1f}); records per viewer "
              f"{counts} ({load()})")
        growth = settled[-1] - settled[0]
        target(growth < 16 * 1024, f"{name}: RSS grew {growth / 1024:.1f} MiB after the first third")


def children_of(pid):
    """Its child processes, whichever of its threads started them (/proc lists them per thread)."""
    children = []
    for task in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{task}/children") as f:
            children += f.read().split()
    return children


def setup():
    global records, rows, range_rows
    records = lab_stack.simulated_records(tools, 7, "200K")
    subprocess.run([tool("trace-store"), "--server", nats.url(), "--stream", "NONE", "--clickhouse",
                    clickhouse.url(), "--create-table"], capture_output=True, timeout=60)
    now_us = time.time_ns() // 1000
    start = time.monotonic()
    per_board = max(1, count_of(args.rows) // args.boards)
    rows = per_board * args.boards
    make_rows(f"concat('b', toString(1000 + number % {args.boards}))", args.boards, rows,
              now_us - 86_400_000_000, 86_400_000_000 // per_board)
    range_rows = count_of(args.range)
    range_from = now_us - 1_800_000_000
    make_rows("'bulk'", 1, range_rows, range_from, 100)
    # Rows inserted twice, as a store killed after an insert does: the answers count them once (FINAL).
    ch_http(f"INSERT INTO trace SELECT * FROM trace WHERE board = 'b1001' AND seq <= {per_board // 2}")
    made = time.monotonic() - start
    boards = [f"b{1000 + i}" for i in range(args.boards)]
    publish_boards(boards)
    print(f"  {rows + range_rows} rows made in ClickHouse (and {per_board // 2} of board b1001 inserted again) in {made:.0f} s; a chunk published for each of "
          f"{len(boards)} boards in {time.monotonic() - start - made:.0f} s ({load()})")
    return boards, range_from, range_from + range_rows * 100


def start_lab():
    global lab, lab_port
    lab = engines.Process("trace-lab", [tool("trace-lab"), "--listen", "127.0.0.1:0", "--server", nats.url(),
                                        "--clickhouse", clickhouse.url()], os.path.join(work, "trace-lab.log")).start()
    pattern = re.compile(r"trace-lab on http://127\.0\.0\.1:(\d+)/")
    engines.wait_until(lambda: pattern.search(lab.log()) or not lab.running(), "trace-lab says its URL",
                       lambda: lab.log()[-500:])
    lab_port = int(pattern.search(lab.log()).group(1))


sys.path.insert(0, os.path.join(root, "tests", "lab"))
import lab_stack  # noqa: E402

nats = clickhouse = lab = None
feeders = []
try:
    engines.require_tools()
    print(f"trace-lab front door benchmark, {os.cpu_count()} cores, {load()}")
    nats = engines.single_node(os.path.join(work, "nats"))
    clickhouse = start_clickhouse()
    boards, range_from, range_to = setup()
    live_boards = [f"live{i}" for i in range(4)]
    feeders = [Feeder(b) for b in live_boards]
    start_lab()
    boards_page(boards)
    live_opening(live_boards[0], feeders[0])
    stored_range(range_from, range_to, range_rows)
    search()
    memory(live_boards, range_from, range_to)
finally:
    for feeder in feeders:
        feeder.stop()
    for server in (lab, clickhouse, nats):
        if server is not None:
            server.kill()
    shutil.rmtree(work, ignore_errors=True)
print(f"\nthe benchmark took {time.monotonic() - bench_start:.0f} s; " +
      ("every target met, every answer right" if not failures else f"{len(failures)} MISSED or WRONG: {failures}"))
sys.exit(1 if failures else 0)
