#!/usr/bin/env python3
"""trace-pull and trace-store as a lab runs them (issue 43), against a real nats-server and
clickhouse-server started here (tests/fleet/engines.py):
- hostile chunks hand-published over raw NATS (a socket speaking the protocol): bodies that
  are not records, records without fleet fields, seq 9 then 7 in one chunk, lying
  Tp-First-Seq / Tp-Last-Seq headers (2^64-1 too); the records' own seq decides, what is not
  a record is counted and never written;
- `trace-pull | head -c 1000`, `> /dev/full`, `--durable | head`: never a crash (0, 7, 0);
- times: a date that does not exist, a duration past 2^64, the first and last times: exit 2
  with the reason, or what the stream holds;
- the nightly cron: `trace-store --until-idle` five times on one durable with records added
  between (and once with nothing to do, and two stores side by side): every run ends, each
  record once (clickhouse-client: count() and uniqExact(board, run, seq), no FINAL);
- --batch-rows is a bound: no insert holds more (but a message alone).
Usage: test_fleet_pull_attacks.py BUILD_TOOLS_DIR PROJECT_ROOT [HEAD_RUNS]"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "support"))
sys.path.insert(0, os.path.join(HERE, "..", "fleet"))
from checks import Checks  # noqa: E402
from waits import wait_until  # noqa: E402
import engines  # noqa: E402

TOOLS, ROOT = sys.argv[1], sys.argv[2]
HEAD_RUNS = int(sys.argv[3]) if len(sys.argv) > 3 else 100
check = Checks()
engines.require_tools()
work = tempfile.mkdtemp(prefix="tp-fleet-pull-attacks-")


def tool(name):
    return os.path.join(TOOLS, name)


def run(argv, timeout=300, **kwargs):
    return subprocess.run(argv, capture_output=True, timeout=timeout, **kwargs)


def stamped(board, seq, run_id="r1", message="x"):
    return json.dumps({"timestamp": 1000 + seq, "port": 0, "event": {"kind": "Text", "data": {"message": message}},
                       "source": "itm", "clock": "cycles", "board": board, "run": run_id, "seq": seq,
                       "host_us": 1_795_773_600_000_000 + seq}, separators=(",", ":"))


def chunk_headers(board, first, last, run_id="r1"):
    return {"Nats-Msg-Id": f"{board}.{run_id}.{first}", "Tp-Board": board, "Tp-Run": run_id,
            "Tp-First-Seq": str(first), "Tp-Last-Seq": str(last)}


def stream_messages(stream):
    for account in nats.jsz("streams=true").get("account_details", []):
        for detail in account.get("stream_detail", []):
            if detail.get("name") == stream:
                return detail["state"]["messages"]
    return 0


def pull(*args, stdout=None):
    argv = [tool("trace-pull"), "--server", nats.url(), "--stats", *args]
    if stdout is None:
        return run(argv)
    return subprocess.run(argv, stdout=stdout, stderr=subprocess.PIPE, timeout=300)


def seqs_of(stdout):
    return [json.loads(line)["seq"] for line in stdout.decode().splitlines()]


def ship(board, run_id, lines, *extra):
    result = run([tool("trace-ship"), "--board", board, "--run", run_id, "--server", nats.url(), "--create-stream",
                  "--stats", *extra], input=("\n".join(lines) + "\n").encode())
    stats = engines.stats_of(result.stderr.decode())
    check(result.returncode == 0 and stats and stats["acknowledged"] == len(lines),
          f"shipped {board} {run_id}: {len(lines)} records", result.stderr.decode()[-400:])


def simulated_records(seed, max_bytes):
    capture = subprocess.Popen([tool("swo-capture"), "--simulate", "--rate", "0", "--seed", str(seed), "--max-bytes",
                                max_bytes], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    decoded = run([tool("itm-decode")], stdin=capture.stdout)
    capture.wait()
    return decoded.stdout.decode().splitlines()


def hostile_chunks():
    """Chunks a hostile or broken peer publishes, read back by trace-pull --board."""
    raw = engines.RawNats(nats.port)
    before = stream_messages("TRACE")
    for seq, body in enumerate((b'{"a":1}\n', b"\xff\xfe\x00\n", b'{"timestamp":1,"port":0,"event":{"kind":"Text"}}\n')):
        raw.publish("trace.junk", chunk_headers("junk", seq, seq), body)
    # Seq 9 then 7 in one chunk, whose headers say 7-9.
    raw.publish("trace.order", chunk_headers("order", 7, 9), (stamped("order", 9) + "\n" + stamped("order", 7) + "\n")
                .encode())
    # Records 0-2 told truly, then records 3-6 under a lying Tp-First-Seq: 100.
    raw.publish("trace.liar", chunk_headers("liar", 0, 2), "".join(stamped("liar", s) + "\n" for s in range(3)).encode())
    raw.publish("trace.liar", chunk_headers("liar", 100, 103),
                "".join(stamped("liar", s) + "\n" for s in range(3, 7)).encode())
    # Tp-Last-Seq 2^64-1 over records 0-1, then a record whose own seq is 2^64-1.
    raw.publish("trace.wrap", chunk_headers("wrap", 0, 2**64 - 1), (stamped("wrap", 0) + "\n" + stamped("wrap", 1) + "\n")
                .encode())
    raw.publish("trace.wrap", chunk_headers("wrap", 2, 2), (stamped("wrap", 2**64 - 1) + "\n").encode())
    # Another board's records on this board's subject, and a message with no headers at all.
    raw.publish("trace.liar", chunk_headers("liar", 7, 7), (stamped("other", 0) + "\n").encode())
    raw.publish("trace.liar", {}, b"not json at all\n")
    raw.flush()
    raw.close()
    wait_until(lambda: stream_messages("TRACE") == before + 10, "the stream holds the 10 hand-published chunks",
               lambda: str(stream_messages("TRACE")))

    result = pull("--board", "junk")
    stats = engines.stats_of(result.stderr.decode())
    check(result.returncode == 0 and result.stdout == b"", "junk chunks: nothing reaches stdout",
          (result.returncode, result.stdout[:300]))
    check(stats and stats.get("bad_lines") == 3 and stats["records"] == 0, "junk chunks: 3 lines counted as not records",
          stats)
    check(result.stderr.decode().count("not written") == 3, "junk chunks: each bad line reported",
          result.stderr.decode()[-600:])

    result = pull("--board", "order")
    check(result.returncode == 0 and seqs_of(result.stdout) == [7, 9], "seq 9 then 7 in one chunk: written 7, 9",
          result.stdout[:300])
    check("seq 8-8 missing" in result.stderr.decode(), "seq 9 then 7: the gap is seq 8", result.stderr.decode()[-400:])

    result = pull("--board", "liar")
    stats = engines.stats_of(result.stderr.decode())
    check(result.returncode == 0 and seqs_of(result.stdout) == list(range(7)),
          "lying Tp-First-Seq: records 0-6 in order, by their own seq", result.stdout[:400])
    check(" missing (" not in result.stderr.decode() and stats and stats["missing"] == 0 and stats.get("bad_lines") == 1,
          "lying Tp-First-Seq: no false gap; another board's record is not this board's; a bare line is bad",
          result.stderr.decode()[-600:])

    result = pull("--board", "wrap")
    stats = engines.stats_of(result.stderr.decode())
    check(result.returncode == 0 and seqs_of(result.stdout) == [0, 1], "Tp-Last-Seq 2^64-1: records 0-1 written",
          result.stdout[:300])
    check(stats and stats["missing"] == 0 and stats["gaps"] == 0 and stats["records"] == 2 and stats.get("bad_lines") == 1,
          "Tp-Last-Seq 2^64-1: no wrapped gap or stats; seq 2^64-1 is not a record", stats)


def closed_outputs():
    """The reader goes away, or the disk is full: exit 0 or 7, never a signal."""
    outcomes = {}
    for index in range(HEAD_RUNS):
        pulling = subprocess.Popen([tool("trace-pull"), "--server", nats.url()], stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE)
        head = subprocess.run(["head", "-c", "1000"], stdin=pulling.stdout, capture_output=True, timeout=120)
        pulling.stdout.close()
        pulling.wait(timeout=120)
        err = pulling.stderr.read().decode()
        pulling.stderr.close()
        outcomes.setdefault(pulling.returncode, []).append(err[-300:])
        if len(head.stdout) != 1000:
            check(False, "head got its 1000 bytes", len(head.stdout))
    check(list(outcomes) == [0], f"trace-pull | head -c 1000, {HEAD_RUNS} runs: exit 0 every time",
          {code: (len(errs), errs[0]) for code, errs in outcomes.items()})

    for durable in (False, True):
        codes = []
        for index in range(max(HEAD_RUNS // 4, 5)):
            extra = ["--durable", f"head{index}"] if durable else []
            with open("/dev/full", "wb") as full:
                result = subprocess.run([tool("trace-pull"), "--server", nats.url(), *extra], stdout=full,
                                        stderr=subprocess.PIPE, timeout=120)
            codes.append(result.returncode)
        check(set(codes) == {7}, f"trace-pull {'--durable ' if durable else ''}> /dev/full: exit 7 every time", codes)
    codes = []
    for index in range(max(HEAD_RUNS // 4, 5)):
        pulling = subprocess.Popen([tool("trace-pull"), "--server", nats.url(), "--durable", f"piped{index}"],
                                   stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        subprocess.run(["head", "-c", "1000"], stdin=pulling.stdout, capture_output=True, timeout=120)
        pulling.stdout.close()
        codes.append(pulling.wait(timeout=120))
    check(set(codes) == {0}, "trace-pull --durable | head -c 1000: exit 0 every time", codes)
    handed_back()


def consumer_state(name):
    """(messages not delivered, delivered and not acknowledged) of the consumer, as the server says."""
    for account in nats.jsz("consumers=true").get("account_details", []):
        for stream in account.get("stream_detail", []):
            for consumer in stream.get("consumer_detail") or []:
                if consumer["name"] == name:
                    return consumer["num_pending"], consumer["num_ack_pending"]
    raise AssertionError(f"no consumer {name} in the server's monitoring")


def handed_back():
    """One durable read into `head` again and again, then whole. The readers that went away
    held messages delivered and not acknowledged: before, the whole pull found nothing
    undelivered and ended at once, exit 0, writing nothing. Now they are handed back (nak) or
    come after the ack wait, and the whole pull gets every message no head acknowledged (a
    head's reader may have taken some into its pipe), writing each record once."""
    for _ in range(5):
        pulling = subprocess.Popen([tool("trace-pull"), "--server", nats.url(), "--board", "big", "--durable",
                                    "handback"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        subprocess.run(["head", "-c", "1000"], stdin=pulling.stdout, capture_output=True, timeout=120)
        pulling.stdout.close()
        pulling.wait(timeout=120)
    undelivered, unacknowledged = consumer_state("handback")
    check(unacknowledged > 0, "five heads left messages delivered and not acknowledged (the fault happened)",
          (undelivered, unacknowledged))
    whole = pull("--board", "big", "--durable", "handback")
    got = seqs_of(whole.stdout)
    stats = engines.stats_of(whole.stderr.decode())
    check(whole.returncode == 0, "--durable after five heads: the whole pull ends (exit 0)",
          (whole.returncode, whole.stderr[-400:]))
    check(stats and stats["messages"] == undelivered + unacknowledged,
          "--durable after five heads: every message not acknowledged comes to the whole pull",
          (stats, undelivered, unacknowledged))
    check(got and len(got) == len(set(got)) and stats["records"] == len(got),
          "--durable after five heads: each record written once", (len(got), len(set(got))))
    check(consumer_state("handback") == (0, 0), "--durable after five heads: the consumer holds nothing more")


def times():
    for bad in ("2026-13-01T00:00:00Z", "2026-02-30T00:00:00Z", "2026-01-01T25:61:61Z", "18446744073709551615s",
                "9999-12-31T23:59:59Z"):
        result = pull("--since", bad)
        check(result.returncode == 2 and b"--since" in result.stderr and result.stdout == b"",
              f"trace-pull --since {bad}: exit 2 with the reason", (result.returncode, result.stderr[-300:]))
        result = run([tool("trace-query"), "--clickhouse", clickhouse.url(), "--since", bad])
        if bad != "9999-12-31T23:59:59Z":
            check(result.returncode == 2 and b"--since" in result.stderr,
                  f"trace-query --since {bad}: exit 2 with the reason", (result.returncode, result.stderr[-300:]))
    everything = pull("--board", "liar")
    result = pull("--board", "liar", "--since", "1970-01-01T00:00:00Z")
    check(result.returncode == 0 and result.stdout == everything.stdout and everything.stdout != b"",
          "trace-pull --since 1970-01-01T00:00:00Z: everything the stream holds", result.stderr[-300:])


def store(durable, table, *extra, timeout=240):
    argv = [tool("trace-store"), "--server", nats.url(), "--clickhouse", clickhouse.url(), "--stream", "CRON",
            "--subject-prefix", "cron", "--durable", durable, "--table", table, "--create-table", "--until-idle",
            "--stats", "-v", *extra]
    return subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def ended(process, what, timeout=240):
    try:
        _, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        _, err = process.communicate()
        check(False, f"{what}: ended within {timeout} s", err.decode()[-600:])
        return None
    stats = engines.stats_of(err.decode())
    check(process.returncode == 0 and stats is not None, f"{what}: ended, exit 0", err.decode()[-600:])
    return stats


def stored_once(table, expected, what):
    counted = clickhouse.query(f"SELECT count(), uniqExact(board, run, seq) FROM {table}").split()
    check(counted == [str(expected), str(expected)], f"{what}: clickhouse-client counts {expected} rows, each once",
          counted)


def cron_ship(run_id, lines):
    ship("cron1", run_id, lines, "--stream", "CRON", "--subject-prefix", "cron")


def nightly_cron(base):
    total = 0
    for night in range(5):
        lines = base[night * 4000:(night + 1) * 4000]
        cron_ship(f"night{night}", lines)
        total += len(lines)
        stats = ended(store("nightly", "nightly"), f"night {night + 1}: trace-store --until-idle")
        check(stats and stats["rows"] == len(lines), f"night {night + 1}: stored the {len(lines)} new records", stats)
        stored_once("nightly", total, f"night {night + 1}")
    stats = ended(store("nightly", "nightly"), "a night with nothing new")
    check(stats and stats["rows"] == 0, "a night with nothing new: nothing stored", stats)

    # Two stores side by side on one durable: each ends once the stream is stored by either.
    lines = base[20000:60000]
    cron_ship("side", lines)
    total += len(lines)
    both = [store("nightly", "nightly", "--batch-rows", "2000") for _ in range(2)]
    rows = [ended(process, f"store {index + 1} of 2 side by side") for index, process in enumerate(both)]
    check(all(rows) and sum(s["rows"] for s in rows) == len(lines),
          "two stores side by side: the new records stored between them", rows)
    stored_once("nightly", total, "two stores side by side")


def batch_bound(total):
    for bound in (1000, 1):
        table = f"bound{bound}"
        stats = ended(store(table, table, "--batch-rows", str(bound)), f"--batch-rows {bound}")
        stored_once(table, total, f"--batch-rows {bound}")
        if not stats:
            continue
        if bound == 1:
            check(stats["inserts"] == stats["messages"], "--batch-rows 1: one message per insert", stats)
        else:
            # Chunks hold up to a few hundred records: a batch is cut before one that would
            # pass the bound, so no insert holds more than 1000 rows.
            check(stats["inserts"] >= -(-total // bound), f"--batch-rows {bound}: no insert over {bound} rows",
                  stats)


nats = engines.single_node(os.path.join(work, "nats"))
clickhouse = engines.ClickHouse(os.path.join(work, "clickhouse")).start()
try:
    big = simulated_records(31, "8M")
    ship("big", "r1", big)
    hostile_chunks()
    times()
    closed_outputs()
    nightly_cron(big)
    batch_bound(5 * 4000 + 40000)
finally:
    nats.kill()
    clickhouse.kill()
sys.exit(check.summary())
