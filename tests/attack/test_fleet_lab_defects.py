#!/usr/bin/env python3
"""Three fleet defects a lab met (after issue 43), against a real nats-server and
clickhouse-server started here (tests/fleet/engines.py):
- `trace-pull --durable NAME` while the server still counts a subscriber on the durable (the
  reader before has just ended; here a raw NATS client keeps the interest): asked again with a
  -v line per try, bound once the subscriber goes (exit 0); still bound after the deadline:
  exit 5 with the reason;
- numbers as written (-0, 1e2, 1.50, -0.0, 1E-7) in data, event members and extra come back
  from trace-pull and trace-query equal to the input after jq -S (jq 1.6 keeps -0), and a
  tracepipe record byte for byte;
- an insert ClickHouse stores but answers only after --clickhouse-timeout (a proxy holds its
  replies): retried with a back-off and warnings counting the attempts, given up after
  --give-up-after (exit 8), nothing acknowledged; the copies the retries stored count once
  under FINAL once a later store has stored the rest;
- a fetch answered while the store waits on a slow insert: trace-store's first fetch asked for
  1024 chunks, more than the NATS client holds for a subscription by default (64 MiB); it dropped
  what did not fit (a slow consumer, said only under -v) and --until-idle waited the ack wait
  (120 s) for each dropped message to come again (the lab's store seen "hanging"): here every message is
  delivered once (the server's own count), none dropped, each record stored once.
Usage: test_fleet_lab_defects.py BUILD_TOOLS_DIR PROJECT_ROOT"""
import json
import os
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "support"))
sys.path.insert(0, os.path.join(HERE, "..", "fleet"))
from checks import Checks  # noqa: E402
from waits import wait_settled, wait_until  # noqa: E402
import engines  # noqa: E402

TOOLS, ROOT = sys.argv[1], sys.argv[2]
check = Checks()
engines.require_tools()
work = tempfile.mkdtemp(prefix="tp-fleet-lab-defects-")


def tool(name):
    return os.path.join(TOOLS, name)


def text_record(i, message="x"):
    return json.dumps({"timestamp": i, "port": 0, "event": {"kind": "Text", "data": {"message": message}},
                       "source": "itm", "clock": "cycles"}, separators=(",", ":"))


def ship(board, lines):
    result = subprocess.run([tool("trace-ship"), "--board", board, "--run", "r1", "--server", nats.url(),
                             "--create-stream", "--stats"], input="".join(line + "\n" for line in lines),
                            capture_output=True, text=True, timeout=300)
    stats = engines.stats_of(result.stderr)
    check(result.returncode == 0 and stats and stats["acknowledged"] == len(lines),
          f"shipped {len(lines)} records of {board}", result.stderr[-400:])


def lines_of(text):
    """NDJSON lines (str.splitlines would also split at U+2028 inside a string)."""
    return text.split("\n")[:-1] if text.endswith("\n") else text.split("\n")


def jq_sorted(lines, program="."):
    result = subprocess.run(["jq", "-S", "-c", program], input="".join(line + "\n" for line in lines),
                            capture_output=True, text=True, timeout=60)
    check(result.returncode == 0, "jq reads every line", result.stderr[-300:])
    return lines_of(result.stdout)


def consumer_detail(durable):
    for account in nats.jsz("streams=true&consumers=true&config=true").get("account_details", []):
        for stream in account.get("stream_detail", []):
            for consumer in stream.get("consumer_detail") or []:
                if consumer["name"] == durable:
                    return consumer
    return None


class StderrLines:
    """A process's stderr, read as it comes (a wait on a line is a wait on an event)."""

    def __init__(self, process):
        self.text = ""
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self._read, args=(process,), daemon=True)
        self.thread.start()

    def _read(self, process):
        for line in process.stderr:
            with self.lock:
                self.text += line

    def __str__(self):
        with self.lock:
            return self.text


def durable_still_bound():
    ship("bound", [text_record(i) for i in range(20)])
    first = subprocess.run([tool("trace-pull"), "--server", nats.url(), "--durable", "busy"], capture_output=True,
                           text=True, timeout=120)
    check(first.returncode == 0 and len(lines_of(first.stdout)) == 20, "the first trace-pull --durable busy",
          first.stderr[-300:])
    deliver = consumer_detail("busy")["config"]["deliver_subject"]
    # The server counts a subscriber on the durable's deliver subject: a reader just gone,
    # not yet seen gone by the server (as on another node of a cluster), or one still there.
    holder = engines.RawNats(nats.port)
    holder.subscribe(deliver)
    wait_until(lambda: consumer_detail("busy").get("push_bound"), "the server says the durable is bound",
               lambda: consumer_detail("busy"))
    started = time.monotonic()
    second = subprocess.Popen([tool("trace-pull"), "--server", nats.url(), "--durable", "busy", "-v"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    err = StderrLines(second)
    wait_until(lambda: "still bound to a subscriber" in str(err) or second.poll() is not None,
               "trace-pull says it asks again", lambda: str(err)[-300:], timeout=60)
    check(second.poll() is None and "still bound to a subscriber" in str(err),
          "bound to another subscriber: trace-pull asks again (-v)", f"exit {second.poll()}: {str(err)[-300:]}")
    holder.close()
    rc = second.wait(timeout=120)
    err.thread.join(timeout=10)
    check(rc == 0, "once the subscriber is gone, trace-pull binds and ends (exit 0)", f"exit {rc}: {str(err)[-400:]}")
    ship("bound", [text_record(i) for i in range(20, 30)])

    holder = engines.RawNats(nats.port)
    holder.subscribe(deliver)
    wait_until(lambda: consumer_detail("busy").get("push_bound"), "bound again", lambda: consumer_detail("busy"))
    started = time.monotonic()
    third = subprocess.run([tool("trace-pull"), "--server", nats.url(), "--durable", "busy", "-v"],
                           capture_output=True, text=True, timeout=120)
    took = time.monotonic() - started
    tries = third.stderr.count("still bound to a subscriber")
    check(third.returncode == 5 and "is in use" in third.stderr and tries >= 2,
          f"a subscriber that stays: exit 5 with the reason after {tries} tries in {took:.1f} s",
          f"exit {third.returncode}: {third.stderr[-500:]}")
    holder.close()


def numbers_round_trip():
    """-0 and numbers simdjson would write otherwise come back as they went in."""
    own = '{"timestamp":1,"port":3,"event":{"kind":"Vendor","data":{"value":-0,"v":[1e2,1.50,-0.0,1E-7,-0]}},' \
          '"source":"itm","clock":"cycles"}'
    others = [
        '{"timestamp":2,"port":0,"event":{"kind":"Text","data":{"message":"\\u00e9 x"},"unit":-0},'
        '"note":{"n":-0,"m":[1.0, 2e0]},"source":"itm"}',
        '{"timestamp":3, "port":1, "event":{"kind":"Counter","data":{"counter_id":1,"value":0}}, "bias": -0.0}',
    ]
    lines = [own, *others]
    ship("numbers", lines)
    pulled = subprocess.run([tool("trace-pull"), "--server", nats.url(), "--board", "numbers"], capture_output=True,
                            text=True, timeout=120)
    check(pulled.returncode == 0 and jq_sorted(lines_of(pulled.stdout), "del(.board, .run, .seq, .host_us)")
          == jq_sorted(lines), "trace-pull gives the records back as they went in (jq -S, -0 kept)",
          pulled.stdout[-600:])
    stored = subprocess.run([tool("trace-store"), "--server", nats.url(), "--clickhouse", clickhouse.url(),
                             "--create-table", "--durable", "numbers", "--until-idle"], capture_output=True,
                            text=True, timeout=300)
    check(stored.returncode == 0, "trace-store --until-idle", stored.stderr[-400:])
    queried = subprocess.run([tool("trace-query"), "--clickhouse", clickhouse.url(), "--board", "numbers"],
                             capture_output=True, text=True, timeout=120)
    check(queried.returncode == 0 and jq_sorted(lines_of(queried.stdout)) == jq_sorted(lines_of(pulled.stdout)),
          "trace-query gives the records trace-pull gives (jq -S, -0 kept)",
          f"{queried.stderr[-300:]}\nquery: {queried.stdout[-600:]}\npull:  {pulled.stdout[-600:]}")
    check(lines_of(queried.stdout)[:1] == lines_of(pulled.stdout)[:1],
          "a tracepipe record comes back from the store byte for byte",
          f"query: {lines_of(queried.stdout)[:1]}\npull:  {lines_of(pulled.stdout)[:1]}")


def slow_insert():
    """ClickHouse stores an insert but answers after --clickhouse-timeout."""
    rows = [text_record(i, f"slow {i}") for i in range(100)]
    ship("slow", rows)
    proxy = engines.TcpProxy(clickhouse.http_port)
    proxy.hold_replies_after(b"INSERT")
    started = time.monotonic()
    given_up = subprocess.run([tool("trace-store"), "--server", nats.url(), "--clickhouse",
                               f"http://127.0.0.1:{proxy.port}", "--clickhouse-timeout", "1000", "--give-up-after",
                               "6", "--durable", "slow", "--until-idle", "--stats"],
                              capture_output=True, text=True, timeout=300)
    took = time.monotonic() - started
    attempts = given_up.stderr.count("insert of ")
    check(given_up.returncode == 8 and "giving up" in given_up.stderr and "attempt 2" in given_up.stderr,
          f"an insert answered too late every time: given up after {attempts} attempts in {took:.1f} s, exit 8",
          f"exit {given_up.returncode}: {given_up.stderr[-800:]}")
    consumer = consumer_detail("slow")
    check(consumer is not None and consumer["ack_floor"]["stream_seq"] == 0,
          "nothing acknowledged that was not known stored", consumer)
    copies = int(clickhouse.query("SELECT count() FROM trace WHERE board = 'slow'"))
    check(copies >= 100 and copies % 100 == 0, f"ClickHouse stored each timed-out attempt: {copies // 100} copies "
          "(count() without FINAL)", copies)
    proxy.hold_replies_after(None)
    proxy.close()
    stored = subprocess.run([tool("trace-store"), "--server", nats.url(), "--clickhouse", clickhouse.url(),
                             "--durable", "slow", "--until-idle"], capture_output=True, text=True, timeout=300)
    check(stored.returncode == 0, "a later trace-store takes the messages again", stored.stderr[-400:])
    once = clickhouse.query("SELECT count(), uniqExact(board, run, seq) FROM trace FINAL WHERE board = 'slow'")
    check(once.split() == ["100", "100"], "under FINAL each record once", once)
    queried = subprocess.run([tool("trace-query"), "--clickhouse", clickhouse.url(), "--board", "slow"],
                             capture_output=True, text=True, timeout=120)
    check(jq_sorted(lines_of(queried.stdout), "del(.board, .run, .seq, .host_us)") == jq_sorted(rows),
          "trace-query gives each record once", queried.stdout[-300:])


def stream_last_seq():
    for account in nats.jsz("streams=true").get("account_details", []):
        for stream in account.get("stream_detail", []):
            if stream["name"] == "TRACE":
                return stream["state"]["last_seq"]
    return None


def burst_while_an_insert_is_slow():
    """1100 chunks of 250 kB (small records: 100k rows are 62 of them) in the stream; the store's
    inserts answered late (a proxy holds ClickHouse's replies, within --clickhouse-timeout): it
    waits with its second batch while the server still sends what its fetch asked for."""
    count = 1_700_000
    shipped = subprocess.run([tool("trace-ship"), "--board", "burst", "--run", "r1", "--server", nats.url(),
                              "--create-stream", "--chunk-bytes", "250000", "--wait", "always", "--stats"],
                             input="".join(text_record(i) + "\n" for i in range(count)), capture_output=True,
                             text=True, timeout=600)
    stats = engines.stats_of(shipped.stderr)
    check(shipped.returncode == 0 and stats and stats["acknowledged"] == count,
          f"shipped {count} records in chunks of 250 kB", shipped.stderr[-300:])
    proxy = engines.TcpProxy(clickhouse.http_port)
    proxy.hold_replies_after(b"INSERT")
    store = subprocess.Popen([tool("trace-store"), "--server", nats.url(), "--clickhouse",
                              f"http://127.0.0.1:{proxy.port}", "--clickhouse-timeout", "300000", "--create-table",
                              "--durable", "burst", "--until-idle", "--stats", "-v"], stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True)
    err = StderrLines(store)
    delivered = wait_settled(lambda: ((consumer_detail("burst") or {}).get("delivered") or {}).get("consumer_seq"),
                             "the server has sent what the store's fetches asked for", quiet_s=3)
    check(delivered and store.poll() is None, f"the store waits on its held insert; {delivered} messages sent to it",
          str(err)[-300:])
    proxy.hold_replies_after(None)
    started = time.monotonic()
    rc = store.wait(timeout=600)
    err.thread.join(timeout=10)
    proxy.close()
    consumer = consumer_detail("burst")
    check(rc == 0 and "dropped" not in str(err), f"trace-store --until-idle ended {time.monotonic() - started:.1f} s "
          "after the replies came (no message dropped by its NATS client)", f"exit {rc}: {str(err)[-600:]}")
    check(consumer["delivered"]["consumer_seq"] == consumer["delivered"]["stream_seq"] == stream_last_seq() and
          consumer["num_ack_pending"] == 0, "the server delivered each message once (none sent again after the "
          "ack wait), all acknowledged", consumer)
    once = clickhouse.query("SELECT count(), uniqExact(board, run, seq) FROM trace FINAL WHERE board = 'burst'")
    check(once.split() == [str(count)] * 2, "under FINAL each record once", once)


nats = engines.single_node(os.path.join(work, "nats"))
clickhouse = engines.ClickHouse(os.path.join(work, "clickhouse")).start()
try:
    for case in sys.argv[3:] or ["durable_still_bound", "numbers_round_trip", "slow_insert",
                                    "burst_while_an_insert_is_slow"]:
        try:
            globals()[case]()
        except (AssertionError, KeyError, TypeError) as error:
            check(False, case, repr(error))
finally:
    nats.kill()
    clickhouse.kill()
sys.exit(check.summary())
