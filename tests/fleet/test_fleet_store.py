#!/usr/bin/env python3
"""trace-store and trace-query against a real clickhouse-server (and nats-server): every record
once in ClickHouse (counted by clickhouse-client, FINAL), through ClickHouse killed under
trace-store and restarted; stored records back out byte for byte as trace-pull writes them;
docs/tools/fleet.md's five queries run against the real server and checked against the same answers
computed here from the records; a durable trace-pull that sees no record twice across runs.

Usage: test_fleet_store.py BUILD_TOOLS_DIR PROJECT_ROOT"""
import datetime
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "support"))
sys.path.insert(0, HERE)
from checks import Checks  # noqa: E402
from waits import wait_until  # noqa: E402
import engines  # noqa: E402

TOOLS, ROOT = sys.argv[1], sys.argv[2]
check = Checks()
engines.require_tools()
work = tempfile.mkdtemp(prefix="tp-fleet-store-")


def tool(name):
    return os.path.join(TOOLS, name)


def simulated_records(seed, max_bytes):
    capture = subprocess.Popen([tool("swo-capture"), "--simulate", "--rate", "0", "--seed", str(seed), "--max-bytes",
                                max_bytes], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    decoded = subprocess.run([tool("itm-decode")], stdin=capture.stdout, capture_output=True, text=True, check=True)
    capture.wait()
    return decoded.stdout.splitlines()


def ship(board, run, lines):
    result = subprocess.run([tool("trace-ship"), "--board", board, "--run", run, "--server", nats.url(),
                             "--create-stream", "--stats"], input="\n".join(lines) + "\n", capture_output=True,
                            text=True, timeout=300)
    stats = engines.stats_of(result.stderr)
    check(result.returncode == 0 and stats["acknowledged"] == len(lines), f"shipped {board} {run}: {len(lines)}",
          result.stderr[-400:])


def store_until_idle(*extra):
    result = subprocess.run([tool("trace-store"), "--server", nats.url(), "--clickhouse", clickhouse.url(),
                             "--until-idle", "--stats", *extra], capture_output=True, text=True, timeout=600)
    return result, engines.stats_of(result.stderr)


def pull(*args):
    """trace-pull's output; a run that does not end with exit 0 fails the check (an empty
    output from a crash is not "nothing new")."""
    result = subprocess.run([tool("trace-pull"), "--server", nats.url(), *args], capture_output=True, text=True,
                            timeout=300)
    check(result.returncode == 0, f"trace-pull {' '.join(args)}: exit 0", f"{result.returncode} {result.stderr[-400:]}")
    return result.stdout


FLEET_FIELDS = ("board", "run", "seq", "host_us")


def bodies(lines):
    """The records without their fleet fields, as comparable values (the stamp is trace-ship's)."""
    out = []
    for line in lines:
        record = json.loads(line)
        out.append(json.dumps({k: v for k, v in record.items() if k not in FLEET_FIELDS}, sort_keys=True))
    return out


def documented_queries():
    text = open(os.path.join(ROOT, "docs", "tools", "fleet.md")).read()
    return dict(re.findall(r"<!-- fleet-query: (\w+) -->\n```sql\n(.*?)```", text, re.S))


HARDFAULT = ('{"timestamp":%d,"port":0,"event":{"kind":"Exception","data":{"number":3,"name":"HardFault",'
             '"action":"%s"}},"source":"dwt","clock":"cycles"}')


def with_hardfaults(lines, at):
    out = list(lines)
    for index in sorted(at, reverse=True):
        stamp = json.loads(out[index - 1])["timestamp"] + 1
        out[index:index] = [HARDFAULT % (stamp, "enter"), HARDFAULT % (stamp + 50, "exit")]
    return out


def fewer_idles(lines):
    """Every other IdleEnter/IdleExit pair left out: the target idles half as long."""
    out, pair, skip = [], 0, False
    for line in lines:
        kind = json.loads(line)["event"]["kind"]
        if kind == "IdleEnter":
            skip = pair % 2 == 1
            pair += 1
        if not ((kind == "IdleEnter" or kind == "IdleExit") and skip):
            out.append(line)
    return out


nats = engines.single_node(os.path.join(work, "nats"))
clickhouse = engines.ClickHouse(os.path.join(work, "clickhouse")).start()
try:
    base1 = simulated_records(21, "2M")
    base2 = simulated_records(22, "2M")
    s1_run1 = with_hardfaults(base1, [5000, 30000])
    s1_run2 = fewer_idles(base1)
    ship("s1", "r1", s1_run1)
    ship("s2", "r1", base2)
    time.sleep(0.01)  # pace: the second runs start later (the load query orders runs by host_us)
    ship("s1", "r2", s1_run2)
    ship("s2", "r2", base2)
    total = len(s1_run1) + len(base2) + len(s1_run2) + len(base2)
    shipped = {"s1 r1": s1_run1, "s2 r1": base2, "s1 r2": s1_run2, "s2 r2": base2}
    account = engines.read_stream(nats.url(), "TRACE", inputs=shipped)
    for key in shipped:
        run = account["runs"].get(key)
        check(run is not None and run["doubled"] == 0 and run["missing"] == [] and
              not engines.body_problems(run), f"the stream holds run {key} as shipped (the official client)",
              run and engines.body_problems(run))

    result, stats = store_until_idle("--create-table")
    check(result.returncode == 0 and stats and stats["rows"] == total and stats["bad_lines"] == 0,
          f"trace-store inserted {total} rows and ended when idle", result.stderr[-600:])
    check(stats is not None and stats["inserts"] * 10000 <= total + 10000 * 2,
          "inserts are batched (10k rows or more each, but for the last)", stats)
    counted = clickhouse.query("SELECT count(), uniqExact(board, run, seq) FROM trace FINAL").split()
    check(counted == [str(total), str(total)], "clickhouse-client: every record once (FINAL)", counted)
    # The counts view --create-table makes: records per board, kind and hour, as the table holds them
    # (no batch was inserted twice here).
    by_kind = "GROUP BY board, kind, hour ORDER BY board, kind, hour"
    summed = clickhouse.query(f"SELECT board, kind, hour, sum(records) FROM trace_counts {by_kind}")
    from_table = clickhouse.query("SELECT board, kind, toStartOfHour(toDateTime(intDiv(host_us, 1000000))) AS hour, "
                                  f"count() FROM trace FINAL {by_kind}")
    check(summed == from_table and summed, "trace_counts: the records per board, kind and hour the table holds",
          f"{summed[:300]} vs {from_table[:300]}")

    # Stored records come back byte for byte as trace-pull writes them.
    pulled = pull("--board", "s1")
    queried = subprocess.run([tool("trace-query"), "--clickhouse", clickhouse.url(), "--board", "s1"],
                             capture_output=True, text=True, timeout=300).stdout
    check(pulled == queried and len(queried.splitlines()) == len(s1_run1) + len(s1_run2),
          "trace-query --board s1 writes exactly what trace-pull writes", f"{len(pulled)} vs {len(queried)}")
    every_line = pull().splitlines()
    records = [json.loads(line) for line in every_line]
    check(len(records) == total, "trace-pull of every board", len(records))
    for key, lines in shipped.items():
        board, run = key.split(" ")
        got = [line for line, r in zip(every_line, records) if r["board"] == board and r["run"] == run]
        check(bodies(got) == bodies(lines), f"trace-pull: run {key} is the lines shipped, in order",
              f"{len(got)} records vs {len(lines)} lines")
    exceptions = subprocess.run([tool("trace-query"), "--clickhouse", clickhouse.url(), "--board", "s?",
                                 "--kind", "Exception"], capture_output=True, text=True).stdout.splitlines()
    check(len(exceptions) == sum(1 for r in records if r["event"]["kind"] == "Exception"),
          "trace-query --board s? --kind Exception: every Exception record", len(exceptions))
    bad = subprocess.run([tool("trace-query"), "--clickhouse", clickhouse.url(), "--where", "no_such_column = 1"],
                         capture_output=True, text=True)
    check(bad.returncode == 1 and "no_such_column" in bad.stderr, "a bad --where: exit 1 with ClickHouse's message",
          bad.stderr[-300:])

    # docs/tools/fleet.md's five queries, against answers computed here.
    queries = documented_queries()
    check(sorted(queries) == sorted(["exceptions_per_hour", "top_isrs", "before_hardfault", "load_rose",
                                     "text_search"]), "docs/tools/fleet.md has the five queries", sorted(queries))

    def rows(name):
        return [line.split("\t") for line in clickhouse.query(queries[name]).splitlines()]

    per_hour = {}
    for r in records:
        if r["event"]["kind"] == "Exception" and r["event"]["data"]["action"] == "enter":
            hour = datetime.datetime.fromtimestamp(r["host_us"] // 1000000, datetime.timezone.utc)
            key = (r["board"], hour.strftime("%Y-%m-%d %H:00:00"))
            per_hour[key] = per_hour.get(key, 0) + 1
    expected = [[board, hour, str(count)] for (board, hour), count in sorted(per_hour.items())]
    check(rows("exceptions_per_hour") == expected, "query: exceptions per board per hour", rows("exceptions_per_hour"))

    by_number = {}
    runs = {}
    for r in records:
        if r["event"]["kind"] == "Exception" and r["event"]["data"]["action"] in ("enter", "exit"):
            runs.setdefault((r["board"], r["run"], r["event"]["data"]["number"]), []).append(r)
    for (board, run, number), items in runs.items():
        items.sort(key=lambda r: r["seq"])
        total_cycles = sum(b["timestamp"] - a["timestamp"] for a, b in zip(items, items[1:])
                           if b["event"]["data"]["action"] == "exit" and a["event"]["data"]["action"] == "enter")
        entries = sum(1 for r in items if r["event"]["data"]["action"] == "enter")
        cycles, count = by_number.get(number, (0, 0))
        by_number[number] = (cycles + total_cycles, count + entries)
    expected = [[str(n), str(c), str(e)] for n, (c, e) in sorted(by_number.items(), key=lambda x: (-x[1][0], x[0]))][:10]
    check(rows("top_isrs") == expected, "query: top ISRs by total time", f"{rows('top_isrs')} vs {expected}")

    faults = [(r["board"], r["run"], r["seq"]) for r in records if r["event"]["kind"] == "Exception" and
              r["event"]["data"]["number"] == 3 and r["event"]["data"]["action"] == "enter"]
    wanted = sorted((b, run, s) for b, run, f in faults for s in range(max(0, f - 1000), f))
    got = [(b, run, int(s)) for b, run, s, *_ in rows("before_hardfault")]
    check(len(faults) == 2 and got == wanted, "query: the 1000 records before each HardFault",
          f"{len(faults)} faults, {len(got)} rows vs {len(wanted)}")
    condition = queries["before_hardfault"].split("WHERE", 1)[1].rsplit("ORDER BY", 1)[0].strip()
    as_records = subprocess.run([tool("trace-query"), "--clickhouse", clickhouse.url(), "--where", condition],
                                capture_output=True, text=True).stdout.splitlines()
    check([(json.loads(l)["board"], json.loads(l)["run"], json.loads(l)["seq"]) for l in as_records] == wanted,
          "the same condition with trace-query --where gives those records")

    loads = {}
    for (board, run) in sorted({(r["board"], r["run"]) for r in records}):
        items = sorted((r for r in records if r["board"] == board and r["run"] == run and r.get("clock") == "cycles"),
                       key=lambda r: r["seq"])
        idles = [r for r in items if r["event"]["kind"] in ("IdleEnter", "IdleExit")]
        idle = sum(b["timestamp"] - a["timestamp"] for a, b in zip(idles, idles[1:])
                   if b["event"]["kind"] == "IdleExit" and a["event"]["kind"] == "IdleEnter")
        stamps = [r["timestamp"] for r in items]
        started = min(r["host_us"] for r in records if r["board"] == board and r["run"] == run)
        loads.setdefault(board, []).append((started, 1 - idle / (max(stamps) - min(stamps))))
    rose = [board for board, values in sorted(loads.items())
            if len(values) >= 2 and sorted(values)[-1][1] > sorted(values)[-2][1] * 1.1]
    got = rows("load_rose")
    check([row[0] for row in got] == rose == ["s1"], "query: the boards whose load rose (s1 idles half as long)",
          f"{got} vs {rose} {loads}")
    if got:
        before, after = sorted(loads["s1"])[-2][1], sorted(loads["s1"])[-1][1]
        check(abs(float(got[0][1]) - before) < 1e-9 and abs(float(got[0][2]) - after) < 1e-9,
              "query: the loads are the ones computed here", f"{got[0]} vs {before} {after}")

    expected = [[r["board"], r["run"], str(r["seq"]), r["event"]["data"]["message"]] for r in
                sorted(records, key=lambda r: (r["board"], r["run"], r["seq"]))
                if r["event"]["kind"] == "Text" and "frame 7 sent" in r["event"]["data"]["message"].lower()]
    check(rows("text_search") == expected and expected, "query: text search", f"{len(rows('text_search'))} vs "
          f"{len(expected)}")

    # --- ClickHouse killed under trace-store, restarted: every record once.
    store_err = open(os.path.join(work, "store.err"), "w")
    store = subprocess.Popen([tool("trace-store"), "--server", nats.url(), "--clickhouse", clickhouse.url(),
                              "--stats", "--batch-ms", "200"], stderr=store_err, stdout=subprocess.DEVNULL)
    live = subprocess.Popen([tool("trace-ship"), "--board", "live", "--server", nats.url(), "--stats", "--wait",
                             "never"], stdin=subprocess.PIPE, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL,
                            text=True)
    live_lines = simulated_records(23, "3M")
    fed = {"n": 0}

    def feed():
        for i in range(0, len(live_lines), 100):
            live.stdin.write("\n".join(live_lines[i:i + 100]) + "\n")
            live.stdin.flush()
            fed["n"] = i + 100
            time.sleep(0.01)  # pace: about 10k records/s from the board

    feeder = threading.Thread(target=feed, daemon=True)
    feeder.start()

    def stored(board):
        try:
            return int(clickhouse.query(f"SELECT count() FROM trace FINAL WHERE board = '{board}'").strip())
        except AssertionError:
            return -1

    wait_until(lambda: stored("live") > 10000, "trace-store inserts the live board's records",
               lambda: str(stored("live")))
    stored_at_kill = stored("live")
    clickhouse.kill()
    killed_at = fed["n"]
    check(store.poll() is None and 0 < stored_at_kill < len(live_lines) and killed_at < len(live_lines),
          "ClickHouse killed mid-run: trace-store running, part of the live board stored, records still to come",
          f"store exit {store.poll()}, stored {stored_at_kill}, fed {killed_at} of {len(live_lines)}")
    wait_until(lambda: fed["n"] > killed_at + 20000 or not feeder.is_alive(), "2 s of records while ClickHouse is down")
    clickhouse.start()
    feeder.join(300)
    _, live_err = live.communicate(timeout=120)
    shipped = engines.stats_of(live_err)
    check(live.returncode == 0 and shipped["acknowledged"] == len(live_lines), "the live board was shipped whole",
          live_err[-300:])
    wait_until(lambda: stored("live") == len(live_lines), "ClickHouse has every live record after its restart",
               lambda: str(stored("live")), timeout=120)
    store.send_signal(signal.SIGTERM)
    store.wait(timeout=60)
    store_err.close()
    err = open(os.path.join(work, "store.err")).read()
    stats = engines.stats_of(err)
    check(store.returncode == 143 and stats and stats["failed_inserts"] > 0,
          "trace-store: inserts refused while ClickHouse was down, then redelivered; exit 143 on SIGTERM",
          err[-600:])
    counted = clickhouse.query("SELECT count(), uniqExact(seq), min(seq), max(seq) FROM trace FINAL "
                               "WHERE board = 'live'").split()
    check(counted == [str(len(live_lines)), str(len(live_lines)), "0", str(len(live_lines) - 1)],
          "ClickHouse killed: every live seq exactly once (FINAL)", counted)
    if stats:
        print(f"     (ClickHouse killed: {stats['failed_inserts']} inserts refused and redelivered)")

    # --- A Distributed table over two shards, by board: trace-store inserts through it.
    shard_port = engines.free_port()
    shard = engines.ClickHouse(os.path.join(work, "shard2"), tcp_port=shard_port).start()
    front = None
    try:
        front_port = engines.free_port()
        front = engines.ClickHouse(os.path.join(work, "front"), tcp_port=front_port,
                                   shards=(front_port, shard_port)).start()
        # The local table and its counts view on the other shard, as trace-store made them for trace
        # (before any row is sent there: the view counts only what arrives after it).
        for made in ("trace", "trace_counts"):
            shard.query(clickhouse.query(f"SHOW CREATE TABLE default.{made}").strip().replace(
                "\\n", " ").replace("\\'", "'").replace("default.trace", "default.dtrace"))
        result = subprocess.run([tool("trace-store"), "--server", nats.url(), "--clickhouse", front.url(),
                                 "--durable", "sharded", "--table", "dtrace", "--distributed", "fleet",
                                 "--create-table", "--until-idle", "--stats"], capture_output=True, text=True,
                                timeout=300)
        expected_rows = total + len(live_lines)
        stats = engines.stats_of(result.stderr)
        check(result.returncode == 0 and stats and stats["rows"] == expected_rows,
              "trace-store --distributed: every row inserted through dtrace_all", result.stderr[-500:])

        def local_counts():
            try:
                return [int(ch.query("SELECT count() FROM dtrace FINAL").strip()) for ch in (front, shard)]
            except AssertionError:
                return [0, 0]
        engines.wait_until(lambda: sum(local_counts()) == expected_rows, "the Distributed table sent every row",
                           lambda: str(local_counts()))
        counts = local_counts()
        per_board = {line.split("\t")[0]: line.split("\t")[1] for line in
                     front.query("SELECT board, count() FROM dtrace_all FINAL GROUP BY board").splitlines()}
        check(all(c > 0 for c in counts) and sum(counts) == expected_rows,
              f"rows sharded by board over both servers ({counts[0]} + {counts[1]})", counts)
        check(per_board.get("live") == str(len(live_lines)), "dtrace_all FINAL: one row per record, per board",
              per_board)
        counted = front.query("SELECT sum(records) FROM dtrace_counts_all").strip()
        check(counted == str(expected_rows), "dtrace_counts_all: every row counted once over both shards' views",
              counted)
        distributed_out = subprocess.run([tool("trace-query"), "--clickhouse", front.url(), "--table", "dtrace_all",
                                          "--board", "s1"], capture_output=True, text=True).stdout
        check(distributed_out == queried, "trace-query through the Distributed table: the same records")
    finally:
        shard.kill()
        if front:
            front.kill()

    # --- A durable trace-pull sees each record once across runs.
    first = pull("--durable", "cron", "--board", "s2")
    ship("s2", "r3", base2[:5000])
    second = pull("--durable", "cron", "--board", "s2")
    third = pull("--durable", "cron", "--board", "s2")
    first_runs = {json.loads(l)["run"] for l in first.splitlines()}
    second_lines = second.splitlines()
    check(len(first.splitlines()) == 2 * len(base2) and first_runs == {"r1", "r2"},
          "durable pull: the first run gets everything", len(first.splitlines()))
    check(len(second_lines) == 5000 and all(json.loads(l)["run"] == "r3" for l in second_lines),
          "durable pull: the next run gets only what came since", len(second_lines))
    check(third == "", "durable pull: and then nothing", third[:200])
finally:
    clickhouse.kill()
    nats.kill()

subprocess.run(["rm", "-rf", work])
sys.exit(check.summary())
