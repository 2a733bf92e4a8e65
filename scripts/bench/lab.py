#!/usr/bin/env python3
"""The lab benchmark (issue 46): many boards at once, stores side by side, questions over days.

1. N boards at once (--boards, default 10,50,100): N real trace-ship processes, fed from one
   pre-made record file by one paced writer (--rate records/s per board for --seconds), into a
   rack leaf node (its own JetStream domain), sourced by a 3-node hub at R3, stored in ClickHouse
   by --live-stores trace-store processes on one durable. Per N: records/s in and stored, every
   board's accounting by clickhouse-client (0 lost, 0 doubled), CPU and peak RSS per trace-ship
   and per trace-store, the latency from a record's host_us to its row being queryable.
2. Stores side by side: 1, 2, 3 trace-store --until-idle on a fresh durable over the largest
   stream, rows/s each; ClickHouse's own insert rate of the same rows by clickhouse-client (one,
   and two at once) on the same machine; then 3 stores with one killed (SIGKILL) mid-run: every
   board's rows once (FINAL), the re-inserted rows counted.
3. The per-board cost on a rack host: swo-capture --simulate (2 Mbit/s) | itm-decode | trace-ship
   into the leaf: CPU and RSS of each, and the boards one core takes.
4. Questions over days: --rows (default 100M) rows of 7 days and 100 boards generated inside
   ClickHouse in the store's layout; the five questions of docs/tools/fleet.md, the boards table
   and search, timed.
The machine's load average is printed beside each figure: the servers and clients share its cores.
Usage: scripts/bench/lab.py BUILD_DIR [options]"""
import argparse
import json
import os
import re
import resource
import signal
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
parser.add_argument("--boards", default="10,50,100", help="the Ns, comma-separated")
parser.add_argument("--rate", type=int, default=1000, help="records/s per board")
parser.add_argument("--seconds", type=float, default=20, help="seconds each board is fed")
parser.add_argument("--live-stores", type=int, default=2, help="trace-store processes during the live runs")
parser.add_argument("--side-by-side", default="1,2,3", help="store counts of the drain runs")
parser.add_argument("--rows", default="100M", help="rows of the questions over days (K, M suffixes)")
parser.add_argument("--parts", default="boards,stores,cost,questions", help="the parts to run, comma-separated "
                    "(stores needs boards)")
parser.add_argument("--cost-seconds", type=float, default=20, help="seconds of the per-board cost run")
args = parser.parse_args()
tools = os.path.join(args.build, "tools")
work = tempfile.mkdtemp(prefix="tp-bench-lab-")
FLEET_DIR = os.path.join(root, "tests", "fleet")
bench_start = time.monotonic()


def tool(name):
    return os.path.join(tools, name)


def load():
    return "load {:.2f} {:.2f} {:.2f}".format(*os.getloadavg())


def count_of(text):
    scale = {"K": 1_000, "M": 1_000_000}.get(text[-1:].upper(), 1)
    return int(float(text.rstrip("KkMm")) * scale)


def cpu_seconds(pid):
    """user+system CPU seconds of a running process, from /proc."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except OSError:
        return 0.0


def timed_process(argv, name, **popen):
    """A process under /usr/bin/time, which writes its CPU and peak RSS to a file at its end."""
    path = os.path.join(work, f"{name}.time")
    proc = subprocess.Popen(["/usr/bin/time", "-o", path, "-f", "%e %U %S %M", *argv], **popen)
    proc.time_path = path
    started.append(proc)
    return proc


def signal_timed(proc, sig):
    """Signals the command of a timed_process (not /usr/bin/time, which would die without a word)."""
    try:
        with open(f"/proc/{proc.pid}/task/{proc.pid}/children") as f:
            os.kill(int(f.read().split()[0]), sig)
    except (OSError, IndexError, ValueError):
        pass  # it ended


def time_of(proc):
    """(wall s, CPU s, peak RSS KiB) from a timed_process that ended."""
    with open(proc.time_path) as f:
        line = f.read().strip().splitlines()[-1]
    wall, user, system, rss = line.split()
    return float(wall), float(user) + float(system), int(rss)


def node_script(url, body):
    script = f"import('nats').then(async ({{ connect }}) => {{ const nc = await connect({{ servers: '{url}' }}); " \
             f"const jsm = await nc.jetstreamManager(); {body}; await nc.close(); }});"
    subprocess.run(["node", "-e", script], check=True, cwd=FLEET_DIR)


class ClickHouseHttp:
    def __init__(self, server):
        self.server = server

    def query(self, sql, timeout=600):
        request = urllib.request.Request(self.server.url() + "/?" + urllib.parse.urlencode({"query": sql}),
                                         data=b"", method="POST")
        with urllib.request.urlopen(request, timeout=timeout) as reply:
            return reply.read().decode()

    def scalar(self, sql):
        return int(self.query(sql).strip() or 0)


def cpu_of_servers():
    return {"hub": sum(cpu_seconds(n.proc.pid) for n in hub), "leaf": cpu_seconds(leaf.proc.pid),
            "clickhouse": cpu_seconds(clickhouse.proc.pid)}


def servers_used(before, wall):
    after = cpu_of_servers()
    return ", ".join(f"{k} {(after[k] - before[k]) / wall:.2f} cores" for k in after)


def make_records(count):
    path = os.path.join(work, f"records-{count}.ndjson")
    capture = subprocess.Popen([tool("swo-capture"), "--simulate", "--rate", "0", "--max-bytes", str(count * 40)],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    decoded = subprocess.run([tool("itm-decode")], stdin=capture.stdout, capture_output=True, text=True, check=True)
    capture.wait()
    lines = decoded.stdout.splitlines(keepends=True)
    assert len(lines) >= count, f"{len(lines)} records made, {count} wanted"
    return lines[:count]


def start_stores(stream, prefix, durable, table, count, until_idle, name, extra=()):
    """count trace-store processes on one durable; the first creates the table."""
    stores = []
    for i in range(count):
        argv = [tool("trace-store"), "--server", hub_urls, "--stream", stream, "--subject-prefix", prefix,
                "--durable", durable, "--clickhouse", clickhouse.url(), "--table", table, "--stats", *extra]
        if i == 0:
            argv.append("--create-table")
        if until_idle:
            argv.append("--until-idle")
        err = open(os.path.join(work, f"{name}-{i}.err"), "w")
        stores.append(timed_process(argv, f"{name}-{i}", stderr=err, stdout=subprocess.DEVNULL))
        stores[-1].err_path = err.name
        if i == 0:
            engines.wait_until(lambda: ch.scalar(f"SELECT count() FROM system.tables WHERE name = '{table}'") == 1,
                               f"{table} created", lambda: open(err.name).read()[-300:])
    return stores


def store_stats(store):
    with open(store.err_path) as f:
        return engines.stats_of(f.read()) or {}


def accounting(table, expected, boards):
    """Every board's rows by clickhouse-client: rows as inserted, distinct seqs, rows under FINAL."""
    theirs = "WHERE board != 'warmup' GROUP BY board"  # the warm-up board made the rack's stream
    out = clickhouse.query(f"SELECT board, count(), uniqExact(seq), min(seq), max(seq) FROM {table} {theirs} "
                           f"ORDER BY board FORMAT TSV")
    final = dict(line.split("\t") for line in clickhouse.query(
        f"SELECT board, count() FROM {table} FINAL {theirs} FORMAT TSV").split("\n") if line)
    seen, problems, inserted_twice = {}, [], 0
    for line in out.splitlines():
        board, rows, distinct, low, high = line.split("\t")
        seen[board] = True
        rows, distinct, low, high = int(rows), int(distinct), int(low), int(high)
        inserted_twice += rows - distinct
        lost = expected - distinct
        doubled = int(final.get(board, 0)) - distinct
        if lost or doubled or high - low + 1 != distinct:
            problems.append(f"{board}: {distinct} of {expected} (seq {low}-{high}), {doubled} doubled under FINAL")
    for board in boards:
        if board not in seen:
            problems.append(f"{board}: no rows")
    return problems, inserted_twice


def latency_quantiles(table, polls):
    """p50/p99 of (the first poll that saw a record's row) - its host_us, over every 10th record.
    A board's rows are taken as visible in seq order (its count at a poll covers its first seqs)."""
    rows = clickhouse.query(f"SELECT board, seq - min_seq + 1, host_us FROM {table} ANY INNER JOIN "
                            f"(SELECT board, min(seq) AS min_seq FROM {table} GROUP BY board) USING board "
                            f"WHERE seq % 10 = 0 FORMAT TSV")
    counts = {}
    for at_us, per_board in polls:
        for board, count in per_board.items():
            counts.setdefault(board, []).append((count, at_us))
    latencies = []
    for line in rows.splitlines():
        board, rank, host_us = line.split("\t")
        rank, host_us = int(rank), int(host_us)
        seen_at = next((at for count, at in counts.get(board, []) if count >= rank), None)
        if seen_at is not None:
            latencies.append((seen_at - host_us) / 1000)
    latencies.sort()
    if not latencies:
        return "no latency (no poll saw the rows)"
    return f"p50 {latencies[len(latencies) // 2]:.0f} ms, p99 {latencies[int(len(latencies) * 0.99)]:.0f} ms " \
           f"({len(latencies)} records, polls every 100 ms)"


def feed(ships, lines, rate, seconds):
    """One writer for every board: each gets rate/10 lines every 100 ms (pace) from the same records."""
    per_tick = max(1, rate // 10)
    ticks = int(seconds * 10)
    start = time.monotonic()
    for tick in range(ticks):
        chunk = "".join(lines[tick * per_tick:(tick + 1) * per_tick])
        for ship in ships:
            ship.stdin.write(chunk)
            ship.stdin.flush()
        ahead = start + (tick + 1) / 10 - time.monotonic()
        if ahead > 0:
            time.sleep(ahead)  # pace: rate records/s per board
    for ship in ships:
        ship.stdin.close()
    return time.monotonic() - start, per_tick * ticks


def boards_at_once(n, lines):
    prefix, stream, table = f"n{n}", f"TRACE{n}", f"lab_n{n}"
    # The rack's stream (made by a warm-up board's trace-ship) and the hub's R3 stream sourcing it.
    subprocess.run([tool("trace-ship"), "--board", "warmup", "--server", leaf.url(), "--stream", stream,
                    "--subject-prefix", prefix, "--create-stream"], input=lines[0], text=True, check=True,
                   stderr=subprocess.DEVNULL)
    node_script(hub[0].url(), f"await jsm.streams.add({{ name: 'FLEET{n}', num_replicas: 3, subjects: [], "
                              f"sources: [{{ name: '{stream}', external: {{ api: '$JS.rack1.API' }} }}] }})")
    stores = start_stores(f"FLEET{n}", prefix, f"lab{n}", table, args.live_stores, False, f"live{n}")
    boards = [f"b{i:03d}" for i in range(n)]
    polls, polling = [], threading.Event()

    def poll():
        while not polling.is_set():
            at_us = time.time_ns() // 1000
            reply = ch.query(f"SELECT board, count() FROM {table} WHERE board != 'warmup' GROUP BY board FORMAT TSV")
            polls.append((at_us, {b: int(c) for b, c in (x.split("\t") for x in reply.splitlines())}))
            polling.wait(0.1)  # pace: a poll every 100 ms

    poller = threading.Thread(target=poll)
    poller.start()
    servers_before = cpu_of_servers()
    ships = [timed_process([tool("trace-ship"), "--board", b, "--run", prefix, "--server", leaf.url(), "--stream",
                            stream, "--subject-prefix", prefix, "--stats"], f"ship{n}-{b}", stdin=subprocess.PIPE,
                           stderr=open(os.path.join(work, f"ship{n}-{b}.err"), "w"), text=True) for b in boards]
    start = time.monotonic()
    fed_seconds, fed = feed(ships, lines, args.rate, args.seconds)
    for ship in ships:
        ship.wait(timeout=300)
    expected_total = fed * n
    engines.wait_until(lambda: ch.scalar(f"SELECT count() FROM {table} WHERE board != 'warmup'") >= expected_total,
                       f"{expected_total} rows in {table}", timeout=600)
    stored_seconds = time.monotonic() - start
    polling.set()
    poller.join()
    servers = servers_used(servers_before, stored_seconds)
    for store in stores:
        signal_timed(store, signal.SIGTERM)
        store.wait(timeout=120)
    problems, inserted_twice = accounting(table, fed, boards)
    acknowledged = sum((engines.stats_of(open(os.path.join(work, f"ship{n}-{b}.err")).read()) or {})
                       .get("acknowledged", 0) for b in boards)
    ship_times = [time_of(s) for s in ships]
    store_times = [time_of(s) for s in stores]
    print(f"\n{n} boards at once, {args.rate} records/s each for {args.seconds:.0f} s, {args.live_stores} stores ({load()})")
    print(f"  in: {expected_total / fed_seconds / 1e3:.1f}k records/s ({expected_total} records, "
          f"{acknowledged} acknowledged to the ships); stored: {expected_total / stored_seconds / 1e3:.1f}k rows/s "
          f"(the last row queryable {stored_seconds - fed_seconds:.1f} s after the last record went in)")
    print(f"  accounting (clickhouse-client, per board): " + (
        f"every one of {n} boards {fed} rows, 0 lost, 0 doubled under FINAL ({inserted_twice} rows inserted twice)"
        if not problems else f"{len(problems)} boards wrong: {problems[:5]}"))
    ship_cpu = [cpu / wall * 100 for wall, cpu, _ in ship_times]
    print(f"  per trace-ship: CPU {sum(ship_cpu) / n:.2f}% of a core (max {max(ship_cpu):.2f}%), peak RSS "
          f"{sum(r for _, _, r in ship_times) / n / 1024:.1f} MiB (max {max(r for _, _, r in ship_times) / 1024:.1f})")
    print(f"  per trace-store: " + "; ".join(f"CPU {cpu / wall * 100:.1f}% of a core, peak RSS {rss / 1024:.0f} MiB"
                                               for wall, cpu, rss in store_times))
    print(f"  servers: {servers}")
    print(f"  host_us to queryable: {latency_quantiles(table, polls)}")
    return not problems


def side_by_side(n, total):
    """Stores on fresh durables over FLEET{n}'s backlog: rows/s by their number."""
    rates = {}
    for count in [int(x) for x in args.side_by_side.split(",")]:
        table = f"drain{count}"
        before = cpu_of_servers()
        start = time.monotonic()
        stores = start_stores(f"FLEET{n}", f"n{n}", f"drain{count}", table, count, True, f"drain{count}")
        for store in stores:
            store.wait(timeout=900)
        wall = time.monotonic() - start
        rows = ch.scalar(f"SELECT count() FROM {table} FINAL")
        rates[count] = rows / wall
        shares = [store_stats(s).get("rows", 0) for s in stores]
        cpu = sum(time_of(s)[1] for s in stores)
        print(f"  {count} store(s): {rows / wall / 1e3:.0f}k rows/s ({rows} of {total} rows in {wall:.1f} s; rows "
              f"per store {shares}; the stores {cpu / wall:.2f} cores, {servers_used(before, wall)}; {load()})")
    return rates


def clickhouse_own_rate(table):
    """ClickHouse's insert rate of the same rows as JSONEachRow by clickhouse-client: one, then two at once."""
    path = os.path.join(work, "rows.ndjson")
    with open(path, "w") as out:
        subprocess.run([engines.CLICKHOUSE_CLIENT, "--port", str(clickhouse.tcp_port), "-q",
                        f"SELECT * FROM {table} FORMAT JSONEachRow"], stdout=out, check=True)
    lines = sum(1 for _ in open(path))
    halves = [os.path.join(work, "rows-a.ndjson"), os.path.join(work, "rows-b.ndjson")]
    subprocess.run(["split", "-n", "l/2", path, os.path.join(work, "half-")], check=True)
    os.rename(os.path.join(work, "half-aa"), halves[0])
    os.rename(os.path.join(work, "half-ab"), halves[1])
    for clients, files in ((1, [path]), (2, halves)):
        clickhouse.query(f"CREATE TABLE own{clients} AS {table}")
        before = cpu_seconds(clickhouse.proc.pid)
        start = time.monotonic()
        procs = [subprocess.Popen([engines.CLICKHOUSE_CLIENT, "--port", str(clickhouse.tcp_port), "-q",
                                   f"INSERT INTO own{clients} FORMAT JSONEachRow"], stdin=open(f)) for f in files]
        assert all(p.wait() == 0 for p in procs)
        wall = time.monotonic() - start
        print(f"  clickhouse-client, {clients} at once, the same {lines} rows as JSONEachRow: "
              f"{lines / wall / 1e3:.0f}k rows/s (clickhouse-server {(cpu_seconds(clickhouse.proc.pid) - before) / wall:.2f} "
              f"cores; {load()})")


def store_killed(n, total, boards):
    table = "killed"
    if total < 100_000:
        print(f"  one store killed: not run ({total} records are a batch or two: no mid-run to kill in)")
        return True
    stores = start_stores(f"FLEET{n}", f"n{n}", "killed", table, 3, True, "killed", ["--batch-rows", "20000"])
    engines.wait_until(lambda: ch.scalar(f"SELECT count() FROM {table}") >= total // 4, f"a quarter of {table}",
                       timeout=600)
    signal_timed(stores[0], signal.SIGKILL)
    assert stores[0].wait(timeout=60) != 0, "the killed store ended well"
    at_kill = ch.scalar(f"SELECT count() FROM {table} WHERE board != 'warmup'")
    assert at_kill < total, "the store was killed after every row was stored: no fault"
    start = time.monotonic()
    for store in stores[1:]:
        store.wait(timeout=900)
    wall = time.monotonic() - start
    problems, inserted_twice = accounting(table, total // len(boards), boards)
    print(f"  3 stores, one SIGKILLed at {at_kill} of {total} rows: the other two ended {wall:.0f} s later "
          f"(its fetched messages come back after the consumer's AckWait, 120 s); " + (
              f"every one of {len(boards)} boards exact under FINAL, 0 lost, 0 doubled ({inserted_twice} rows "
              f"inserted twice, one row each under FINAL)" if not problems else f"WRONG: {problems[:5]}"))
    return not problems


def per_board_cost():
    """swo-capture --simulate at 200 kB/s (2 Mbit/s SWO) | itm-decode | trace-ship into the leaf."""
    seconds = args.cost_seconds
    leaf_before = cpu_seconds(leaf.proc.pid)
    capture = timed_process([tool("swo-capture"), "--simulate", "--duration", f"{int(seconds)}s"], "cost-capture",
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    decode = timed_process([tool("itm-decode")], "cost-decode", stdin=capture.stdout, stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL)
    capture.stdout.close()
    ship = timed_process([tool("trace-ship"), "--board", "cost", "--server", leaf.url(), "--stream", "COST",
                          "--subject-prefix", "cost", "--create-stream", "--stats"], "cost-ship", stdin=decode.stdout,
                         stderr=open(os.path.join(work, "cost-ship.err"), "w"))
    decode.stdout.close()
    for proc in (capture, decode, ship):
        proc.wait(timeout=seconds + 120)
    records = (engines.stats_of(open(os.path.join(work, "cost-ship.err")).read()) or {}).get("acknowledged", 0)
    leaf_share = (cpu_seconds(leaf.proc.pid) - leaf_before) / seconds
    used = [(name, *time_of(proc)[1:]) for name, proc in
            (("swo-capture", capture), ("itm-decode", decode), ("trace-ship", ship))]
    shares = [f"{name} {cpu / seconds * 100:.2f}% of a core, {rss / 1024:.1f} MiB" for name, cpu, rss in used]
    total = sum(cpu for _, cpu, _ in used) / seconds
    first_share = used[0][1] / seconds
    print(f"\nper-board cost on a rack host, 2 Mbit/s SWO (swo-capture --simulate, {records / seconds / 1e3:.1f}k "
          f"records/s, {seconds:.0f} s; {load()}):")
    print(f"  {'; '.join(shares)}")
    print(f"  together {total * 100:.2f}% of a core: {1 / total:.0f} boards per core by CPU; without the "
          f"simulator's generating (a probe's capture is not measured here) {1 / (total - first_share):.0f} boards per "
          f"core; the rack's leaf node took {leaf_share * 100:.2f}% of a core for this board (not counted)")


def fleet_queries():
    """The five questions as docs/tools/fleet.md writes them (its fleet-query blocks)."""
    text = open(os.path.join(root, "docs", "tools", "fleet.md")).read()
    return dict(re.findall(r"<!-- fleet-query: (\w+) -->\n```sql\n(.*?)```", text, re.S))


def generate_days(table, rows):
    """rows in the store's layout: 100 boards, one run a day for 7 days, 20 kinds of record in turn
    (Exceptions entering and leaving, idle, console Text, Overflow; rarely Malformed, Loss and a
    HardFault)."""
    per_board = rows // 100
    step_us = 7 * 86400 * 1_000_000 // per_board
    ch.query(f"""
INSERT INTO {table} SELECT board, run, seq, host_us, toDate(toDateTime(intDiv(host_us, 1000000))) AS day,
  i * 1000 AS timestamp, 'cycles' AS clock, 0 AS port, 'itm' AS source, 1 AS time_exact, kind, data, '' AS extra
FROM (SELECT concat('b', toString(100 + number % 100)) AS board, intDiv(number, 100) AS i,
        intDiv(i * 7, {per_board}) AS run_day, concat('day', toString(run_day)) AS run,
        i - intDiv(run_day * {per_board} + 6, 7) + 1 AS seq,
        1767225600000000 + i * {step_us} + number % 100 AS host_us, i % 20 AS r,
        multiIf(i % 500000 = 250000, 'Exception', r < 4, 'Exception', r = 4, 'IdleEnter', r = 5, 'IdleExit',
                r = 6, 'Text', r = 7 AND i % 1000 = 7, 'Overflow', i % 100000 = 8, 'Malformed',
                i % 100000 = 28, 'Loss', 'Counter') AS kind,
        multiIf(i % 500000 = 250000, '{{"number":3,"name":"HardFault","action":"enter"}}',
                r < 4, concat('{{"number":', toString(11 + intDiv(i, 20) % 5), ',"action":"',
                              if(r % 2 = 0, 'enter', 'exit'), '"}}'),
                r = 6, concat('{{"message":"frame ', toString(intDiv(i, 20) % 100000), ' sent"}}'),
                r = 4 OR r = 5, '', concat('{{"counter_id":3,"value":', toString(i % 4096), '}}')) AS data
      FROM numbers({rows}))""", timeout=3600)


def timed_query(sql, runs=1):
    """The best of runs wall times of a query over HTTP, and its answer's lines."""
    best, rows = None, 0
    for _ in range(runs):
        start = time.monotonic()
        reply = ch.query(sql + " FORMAT TSV", timeout=1800)
        took = time.monotonic() - start
        best = took if best is None else min(best, took)
        rows = reply.splitlines()
    return best, rows


def questions_over_days(rows):
    table = "days"
    # trace-store makes the table (and its counts view) before it asks for the stream, here none.
    subprocess.run([tool("trace-store"), "--server", leaf.url(), "--stream", "NONE", "--clickhouse",
                    clickhouse.url(), "--table", table, "--create-table"], capture_output=True, timeout=60)
    assert ch.scalar(f"SELECT count() FROM system.tables WHERE name = '{table}'") == 1, "trace-store made no table"
    start = time.monotonic()
    generate_days(table, rows)
    made = time.monotonic() - start
    stored = ch.scalar(f"SELECT count() FROM {table}")
    size = ch.scalar(f"SELECT sum(bytes_on_disk) FROM system.parts WHERE table = '{table}' AND active")
    print(f"\nquestions over days: {stored / 1e6:.1f}M rows of 7 days and 100 boards made in {made:.0f} s "
          f"({stored / made / 1e6:.2f}M rows/s by INSERT SELECT; {size / 2**20:.0f} MiB on disk; {load()})")
    last_us = int(ch.query(f"SELECT max(host_us) FROM {table}").strip())
    # The last 24 hours, from an hour's start: the window the counts view (hours) answers exactly.
    since_s = (last_us // 3_600_000_000 - 23) * 3600
    kinds = "kind IN ('Exception', 'Overflow', 'Malformed', 'Loss')"
    questions = {name: sql.replace("FROM trace", f"FROM {table}") for name, sql in fleet_queries().items()}
    questions["boards_table"] = (f"SELECT board, count() AS records, max(host_us) AS last FROM {table} "
                                 f"GROUP BY board ORDER BY board")
    questions["counts_last_24h_final"] = (f"SELECT board, kind, count() FROM {table} FINAL WHERE host_us >= "
                                          f"{since_s * 1_000_000} AND {kinds} GROUP BY board, kind ORDER BY board, kind")
    questions["counts_last_24h"] = questions["counts_last_24h_final"].replace(" FINAL", "")
    questions["counts_7_days"] = (f"SELECT board, kind, count() FROM {table} WHERE {kinds} "
                                  f"GROUP BY board, kind ORDER BY board, kind")
    questions["text_newest_first"] = (f"SELECT board, run, seq, host_us, data FROM {table} WHERE kind = 'Text' AND "
                                      f"positionCaseInsensitive(data, 'frame 4242 sent') > 0 "
                                      f"ORDER BY host_us DESC LIMIT 100")
    if ch.scalar(f"SELECT count() FROM system.tables WHERE name = '{table}_counts'") == 1:
        counts = f"{table}_counts"  # the view trace-store --create-table makes (docs/design.md)
        questions["boards_table (counts view)"] = (f"SELECT board, sum(records) AS records, max(hour) AS last "
                                                   f"FROM {counts} GROUP BY board ORDER BY board")
        questions["counts_last_24h (counts view)"] = (
            f"SELECT board, kind, sum(records) FROM {counts} WHERE hour >= toDateTime({since_s}) AND {kinds} "
            f"GROUP BY board, kind ORDER BY board, kind")
        questions["counts_7_days (counts view)"] = (f"SELECT board, kind, sum(records) FROM {counts} WHERE {kinds} "
                                                    f"GROUP BY board, kind ORDER BY board, kind")
    answers = {}
    for name, sql in questions.items():
        took, answers[name] = timed_query(sql)
        print(f"  {name:30s} {took:7.2f} s  ({len(answers[name])} rows; {load()})")
    for name in ("counts_last_24h", "counts_7_days"):
        if f"{name} (counts view)" in answers:
            same = answers[name] == answers[f"{name} (counts view)"]
            print(f"  {name}: the counts view's answer {'is' if same else 'is NOT'} the table's")


hub, leaf, clickhouse, started = [], None, None, []
try:
    print(f"lab benchmark, {os.cpu_count()} cores, {load()}")
    hub = engines.cluster_of_three(os.path.join(work, "hub"))
    hub_urls = ",".join(n.url() for n in hub)
    leaf = engines.NatsNode(os.path.join(work, "leaf"), "rack1", domain="rack1",
                            leaf_remote=f"127.0.0.1:{hub[0].leaf_port}")
    leaf.write_config()
    leaf.start()
    clickhouse = engines.ClickHouse(os.path.join(work, "clickhouse")).start()
    ch = ClickHouseHttp(clickhouse)
    parts = args.parts.split(",")
    if "stores" in parts and "boards" not in parts:
        sys.exit("lab.py: --parts stores drains the streams the boards part fills: add boards "
                 "(e.g. --parts boards,stores --boards 100)")
    exact = True
    if "boards" in parts:
        per_tick = max(1, args.rate // 10)
        lines = make_records(per_tick * int(args.seconds * 10))
        ns = [int(x) for x in args.boards.split(",")]
        exact = all([boards_at_once(n, lines) for n in ns])
    if "stores" in parts:
        biggest = max(ns)
        total = biggest * per_tick * int(args.seconds * 10)
        print(f"\nstores side by side over FLEET{biggest}'s {total} records ({load()}):")
        side_by_side(biggest, total)
        clickhouse_own_rate(f"drain{args.side_by_side.split(',')[0]}")
        exact = store_killed(biggest, total, [f"b{i:03d}" for i in range(biggest)]) and exact
    if "cost" in parts:
        per_board_cost()
    if "questions" in parts:
        questions_over_days(count_of(args.rows))
    print(f"\nthe benchmark took {time.monotonic() - bench_start:.0f} s; every board exact: {exact}")
    sys.exit(0 if exact else 1)
finally:
    for proc in started:  # what a failure left running (a store retrying into a server gone)
        if proc.poll() is None:
            signal_timed(proc, signal.SIGKILL)
    for process in [*hub, leaf, clickhouse]:
        if process:
            process.kill()
    subprocess.run(["rm", "-rf", work])
