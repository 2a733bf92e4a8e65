#!/usr/bin/env python3
"""The ClickHouse side of the fleet attacked as a lab would meet it (issue 43): poison records
published by hand as trace-ship chunks (a value ClickHouse refuses, values the record schema
refuses, members inside `event` beside kind/data), rows in the store that are not the store's,
a ClickHouse that accepts and never answers (or stops mid-body), a 100 MB HTTP 500 body, a reply
cut short, and a table name that needs quoting. clickhouse-client and jq are the independent
readers; a hostile HTTP peer is a Python socket.

Usage: test_fleet_clickhouse_attacks.py BUILD_TOOLS_DIR PROJECT_ROOT"""
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
FLEET = os.path.join(HERE, "..", "fleet")
sys.path.insert(0, os.path.join(HERE, "..", "support"))
sys.path.insert(0, FLEET)
from checks import Checks  # noqa: E402
from waits import wait_until  # noqa: E402
import engines  # noqa: E402

TOOLS, ROOT = sys.argv[1], sys.argv[2]
check = Checks()
engines.require_tools()
work = tempfile.mkdtemp(prefix="tp-fleet-ch-attacks-")
U64_MAX = 18446744073709551615


def tool(name):
    return os.path.join(TOOLS, name)


PUBLISH = """
import { connect, headers } from 'nats';
const chunks = JSON.parse(await new Promise((resolve) => {
  let text = ''; process.stdin.on('data', (d) => { text += d; }); process.stdin.on('end', () => resolve(text));
}));
const nc = await connect({ servers: process.argv[1] });
const js = nc.jetstream();
for (const c of chunks) {
  const h = headers();
  for (const [k, v] of Object.entries(c.headers)) h.set(k, v);
  await js.publish(c.subject, new TextEncoder().encode(c.body), { headers: h });
}
await nc.drain();
"""


def publish(board, run, records, first_seq, per_chunk=None):
    """Chunks as trace-ship publishes them (subject, headers, stamped lines), by the npm client:
    one of all the records, or of per_chunk records each."""
    per_chunk = per_chunk or len(records)
    chunks = [{"subject": f"trace.{board}", "body": "".join(line + "\n" for line in records[at:at + per_chunk]),
               "headers": {"Nats-Msg-Id": f"{board}.{run}.{first_seq + at}", "Tp-Board": board, "Tp-Run": run,
                           "Tp-First-Seq": str(first_seq + at),
                           "Tp-Last-Seq": str(first_seq + min(at + per_chunk, len(records)) - 1)}}
              for at in range(0, len(records), per_chunk)]
    result = subprocess.run(["node", "--input-type=module", "-e", PUBLISH, nats.url()], cwd=FLEET,
                            input=json.dumps(chunks), capture_output=True, text=True, timeout=120)
    check(result.returncode == 0, f"published {len(chunks)} chunks of {board} {run} by hand", result.stderr[-400:])


def stamped(record, board, run, seq, host_us=1795000000000000):
    record = dict(record)
    record.update({"board": board, "run": run, "seq": seq, "host_us": host_us})
    return json.dumps(record, separators=(",", ":"))


def text(message, timestamp=1):
    return {"timestamp": timestamp, "port": 0, "event": {"kind": "Text", "data": {"message": message}},
            "source": "itm", "clock": "cycles"}


def store(*extra, timeout=120):
    """trace-store --until-idle; None when it did not end within the timeout (then killed)."""
    process = subprocess.Popen([tool("trace-store"), "--server", nats.url(), "--clickhouse", clickhouse.url(),
                                "--until-idle", "--stats", *extra], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True)
    try:
        _, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        _, err = process.communicate()
        return None, err, None
    return process.returncode, err, engines.stats_of(err)


def seqs_stored(table, board):
    """The seqs of a board in a table, by clickhouse-client (None when the table is not there)."""
    try:
        text_ = clickhouse.query(f"SELECT seq FROM `{table}` FINAL WHERE board = '{board}' ORDER BY seq")
    except AssertionError as error:
        return str(error)
    return [int(s) for s in text_.split()]


def query(*args, url=None, timeout=120):
    return subprocess.run([tool("trace-query"), "--clickhouse", url or clickhouse.url(), *args], capture_output=True,
                          text=True, timeout=timeout)


def lines_of(text_):
    """NDJSON lines (str.splitlines would also split at U+2028 inside a string)."""
    return text_.split("\n")[:-1] if text_.endswith("\n") else text_.split("\n")


def jq_sorted(lines):
    """Each line as jq -S -c writes it (key order normalised), by jq, not by us."""
    result = subprocess.run(["jq", "-S", "-c", "."], input="".join(line + "\n" for line in lines),
                            capture_output=True, text=True, timeout=60)
    check(result.returncode == 0, "jq reads every line", result.stderr[-300:])
    return lines_of(result.stdout)


def poison_is_skipped():
    """Defects 4 and 8: values ClickHouse or the schema refuse are reported and skipped; the rest
    of the batch is stored, --until-idle ends."""
    good = {0: text("a"), 1: text("b"), 2: text("b2"), 4: text("c"),
            8: {"timestamp": 2, "port": 1, "event": {"kind": "Text", "data": {"message": "d"}, "note": "kept"},
                "source": "itm"}}
    poison = {3: {"host_us": U64_MAX}, 5: {"port": 70000}, 6: {"clock": 5}, 7: {"time_exact": "yes"},
              9: {"source": ""}}
    lines = []
    for seq in range(10):
        if seq in good:
            lines.append(stamped(good[seq], "p", "r1", seq))
        else:
            record = text("poison")
            record.update({k: v for k, v in poison[seq].items() if k != "host_us"})
            lines.append(stamped(record, "p", "r1", seq, poison[seq].get("host_us", 1795000000000000)))
    # Lines that are no record at all (no board, run or seq of their own), past the 10 reported.
    publish("p", "r1", lines + ["not json"] * 6, 0)
    publish("p", "r2", [stamped(text("alone"), "p", "r2", 0, U64_MAX)], 0)
    code, err, stats = store("--create-table")
    check(code == 0, "trace-store --until-idle ends (exit 0) with poison in its batch", err[-800:])
    check(seqs_stored("trace", "p") == sorted(good), "clickhouse-client: every good record of the chunk, once",
          seqs_stored("trace", "p"))
    for seq, why in ((3, "2105-12-31"), (5, "port"), (6, "clock"), (7, "time_exact"), (9, "source")):
        check(f"board p run r1 seq {seq}: " in err and why in err.split(f"board p run r1 seq {seq}: ", 1)[1][:300],
              f"the refused record seq {seq} is reported with its reason ({why})", err[-1500:])
    # The rows: the good ones and the stream's first record (board init).
    check(stats is not None and stats["bad_lines"] == 12 and stats["rows"] == len(good) + 1,
          "--stats counts the 12 refused lines and the stored rows", stats)
    check("12 lines not stored" in err, "the end says how many lines were not stored", err[-500:])
    check('a line on trace.p (message "p.r1.0") is not a stamped record (not a JSON object' in err,
          "a line that is no record is reported with its message's id (board, run, first seq)", err[-1500:])
    check(err.count("is not a stamped record") == 10 and "(further bad lines are only counted: --stats)" in err,
          "10 bad lines reported, the 10th says the rest are only counted", err[-1500:])
    kept = clickhouse.query("SELECT extra FROM trace FINAL WHERE board = 'p' AND seq = 8 FORMAT JSONEachRow")
    check(kept.strip() and json.loads(json.loads(kept)["extra"] or "null") == {"event": {"note": "kept"}},
          "a member of event beside kind/data is stored (extra's \"event\")", kept)


def refused_by_clickhouse():
    """Defect 4 where only ClickHouse knows: a table whose kind column is an Enum refuses a kind
    it does not list. The batch is split until the refused row is alone; the others are stored."""
    clickhouse.query("CREATE TABLE narrow (board String, run String, seq UInt64, host_us UInt64, day Date, "
                     "timestamp UInt64, clock String, port UInt16, source String, time_exact UInt8, "
                     "kind Enum8('Text' = 1), data String, extra String) ENGINE = ReplacingMergeTree() "
                     "PARTITION BY day ORDER BY (board, run, seq)")
    lines = [stamped(text(f"m{seq}"), "n", "r1", seq) for seq in range(40)]
    counter = {"timestamp": 1, "port": 0, "event": {"kind": "Counter", "data": {"counter_id": 1, "value": 2}},
               "source": "itm"}
    lines[17] = stamped(counter, "n", "r1", 17)
    lines[31] = stamped(counter, "n", "r1", 31)
    publish("n", "r1", lines[:20], 0)
    publish("n", "r1", lines[20:], 20)
    code, err, stats = store("--table", "narrow", "--durable", "narrow")
    check(code == 0, "trace-store --until-idle ends when ClickHouse refuses rows of its batch", err[-800:])
    expected = [s for s in range(40) if s not in (17, 31)]
    check(seqs_stored("narrow", "n") == expected, "clickhouse-client: the 38 rows ClickHouse takes, each once",
          seqs_stored("narrow", "n"))
    check("board n run r1 seq 17: ClickHouse refused the row" in err and "Unknown element" in err and
          "board n run r1 seq 31: " in err, "each refused row is reported with ClickHouse's reason", err[-1500:])
    check(stats is not None and stats["refused_rows"] == 2 and stats["failed_inserts"] == 0,
          "--stats: 2 refused rows, no insert retried", stats)



def other_column_types():
    """A table made by hand that cannot hold the records as they are: ClickHouse 18.16 would wrap
    seq 2^33 in a UInt32 to 0 (one record replacing another under FINAL); a port in a UInt8 is
    fine (0-255, the schema says); a column missing or no table at all fails every insert (retried forever). trace-store says
    so at the start, exit 1 (3: no table), and stores nothing."""
    clickhouse.query("CREATE TABLE other (board String, run String, seq UInt32, host_us UInt64, day Date, "
                     "timestamp UInt64, clock String, port UInt8, source String, time_exact UInt8, kind String, "
                     "data String, extra String) ENGINE = ReplacingMergeTree() PARTITION BY day ORDER BY (board, run, seq)")
    clickhouse.query("CREATE TABLE no_extra (board String, run String, seq UInt64, host_us UInt64, day Date, "
                     "timestamp UInt64, clock String, port UInt16, source String, time_exact UInt8, kind String, "
                     "data String) ENGINE = ReplacingMergeTree() PARTITION BY day ORDER BY (board, run, seq)")
    publish("oth", "r1", [stamped(text("first"), "oth", "r1", 0), stamped(text("wraps"), "oth", "r1", 1 << 33)], 0)
    for table, code_wanted, said in (("other", 1, "(column seq is UInt32)"),
                                     ("no_extra", 1, "no column extra"), ("absent", 3, "no table default.absent")):
        code, err, _ = store("--table", table, "--durable", f"d_{table}", timeout=60)
        check(code == code_wanted and said in err, f"a table {table}: exit {code_wanted} at the start, said",
              f"{code} {err[-600:]}")
    check(clickhouse.query("SELECT count() FROM other").strip() == "0", "nothing stored in a table that alters values")
    # ClickHouse away at the start (no --create-table): waited for, as an insert would be.
    err_path = os.path.join(work, "store-waits.err")
    with open(err_path, "w") as err_file:
        process = subprocess.Popen([tool("trace-store"), "--server", nats.url(), "--clickhouse",
                                    f"http://127.0.0.1:{engines.free_port()}", "--durable", "d_away"],
                                   stdout=subprocess.DEVNULL, stderr=err_file)
    wait_until(lambda: "waiting for it" in open(err_path).read(), "trace-store says it waits for ClickHouse")
    check(process.poll() is None, "ClickHouse away at the start: trace-store waits for it", open(err_path).read())
    process.send_signal(signal.SIGTERM)
    check(process.wait(timeout=30) == 143, "and a SIGTERM ends the wait, exit 143", open(err_path).read()[-300:])

def round_trip():
    """Defect 8: what trace-store keeps comes back as trace-pull gives it (equal after jq -S)."""
    records = [
        {"timestamp": 1, "port": 2, "event": {"kind": "Text", "data": {"message": "tab\t nl\n q\" é \u2028"},
                                              "note": "beside", "n": [1, {"a": None}]}, "source": "itm"},
        {"timestamp": 2, "port": 0, "event": {"kind": "IdleEnter", "why": True}, "tick": 3, "peer": "x"},
        {"timestamp": 3, "port": 255, "event": {"kind": "Vendor", "data": {"x": {"y": [1.5, -2, "z"]}}},
         "clock": "us", "time_exact": False, "source": "sim"},
        {"timestamp": U64_MAX, "port": 1, "event": {"kind": "Counter", "data": {"counter_id": 1, "value": U64_MAX}}},
    ]
    lines = [stamped(r, "rt", "r1", seq) for seq, r in enumerate(records)]
    publish("rt", "r1", lines, 0)
    code, err, _ = store("--durable", "rt")
    check(code == 0, "trace-store of the round-trip records", err[-500:])
    pulled = subprocess.run([tool("trace-pull"), "--server", nats.url(), "--board", "rt"], capture_output=True,
                            text=True, timeout=120)
    queried = query("--board", "rt")
    check(queried.returncode == 0 and len(lines_of(queried.stdout)) == len(records),
          "trace-query gives every record back", queried.stderr[-500:])
    check(jq_sorted(lines_of(queried.stdout)) == jq_sorted(lines),
          "trace-query's records equal what went in (jq -S)", queried.stdout[-800:])
    check(pulled.returncode == 0 and jq_sorted(lines_of(pulled.stdout)) == jq_sorted(lines_of(queried.stdout)),
          "trace-pull and trace-query give the same records (jq -S)", pulled.stderr[-300:])


def hostile_rows():
    """Defect 9: rows that are not the store's are reported (board run seq), left out, exit 6."""
    clickhouse.query("CREATE TABLE hostile AS trace")
    good = ("g", "r", 0, '{"message":"fine"}', "")
    rows = [good, ("h", "r", 1, "not json", ""), ("h", "r", 2, '{"message":"x"} trailing', ""),
            ("h", "r", 3, '{"message":"x"}', '{"a":1}{"b":2}'), ("h", "r", 4, '{"message":"x"}', '{"board":"z"}'),
            ("h", "r", 5, '{"message":"x"}', '{"seq":1}'), ("h", "r", 6, '{"message":"x"}', '{"timestamp":7}'),
            ("h", "r", 7, "", "")]
    values = ", ".join(f"('{b}', '{r}', {s}, 5, '1970-01-01', 1, 'cycles', 0, 'itm', 1, 'Text', "
                       f"'{d.replace(chr(39), chr(92) + chr(39))}', '{e}')" for b, r, s, d, e in rows)
    clickhouse.query(f"INSERT INTO hostile VALUES {values}")
    result = query("--table", "hostile")
    check(result.returncode == 6, "trace-query exits 6 (bad input) on rows that are not the store's",
          f"{result.returncode} {result.stderr[-800:]}")
    out = result.stdout.splitlines()
    check(len(out) == 1 and json.loads(out[0])["board"] == "g", "only the good row is written", out)
    check(len(jq_sorted(out)) == len(out), "what is written is NDJSON (jq reads each line)")
    for seq in range(1, 8):
        check(f"board h run r seq {seq}: " in result.stderr, f"the bad row seq {seq} is named", result.stderr[-1500:])


class HostileHttp:
    """A peer on a free loopback port that answers each connection with `serve(conn)`."""

    def __init__(self, serve):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.accepted = 0
        self.conns = []
        self.serve = serve
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.accepted += 1
            self.conns.append(conn)
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn):
        try:
            conn.recv(65536)
            self.serve(conn)
        except OSError:
            pass

    def url(self):
        return f"http://127.0.0.1:{self.port}"

    def close(self):
        self.sock.close()
        for conn in self.conns:
            conn.close()


def run_measured(argv, timeout):
    """Runs argv; its exit status, stderr, the seconds it took and its peak RSS in KiB."""
    started = time.monotonic()
    with open(os.path.join(work, "stderr"), "w+") as err:
        process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err)
        while True:
            pid, status, usage = os.wait4(process.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > started + timeout:
                process.kill()
                _, status, usage = os.wait4(process.pid, 0)
                break
            time.sleep(0.05)  # pace: polling the child's end (with its rusage) against the deadline
        process.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        return process.returncode, err.read(), time.monotonic() - started, usage.ru_maxrss


def silent_peers():
    """Defect 5: a server that accepts and never answers, or stops mid-body: exit 8."""
    silent = HostileHttp(lambda conn: threading.Event().wait())
    code, err, took, _ = run_measured([tool("trace-query"), "--clickhouse", silent.url()], timeout=90)
    check(code == 8 and "no answer within 30000 ms" in err and 29 < took < 80,
          "a silent server: trace-query gives up after the default 30 s, exit 8", f"{code} {took:.1f}s {err[-300:]}")
    code, err, took, _ = run_measured([tool("trace-query"), "--clickhouse", silent.url(), "--clickhouse-timeout",
                                       "1000"], timeout=60)
    check(code == 8 and took < 30, "--clickhouse-timeout 1000: exit 8 after about a second", f"{code} {took:.1f}s")

    # A connect that is never accepted: the listen queue is full, the SYN is dropped.
    backlog = socket.socket()
    backlog.bind(("127.0.0.1", 0))
    backlog.listen(0)
    fillers = []
    for _ in range(8):
        filler = socket.socket()
        filler.setblocking(False)
        filler.connect_ex(backlog.getsockname())
        fillers.append(filler)
    code, err, took, _ = run_measured([tool("trace-query"), "--clickhouse",
                                       f"http://127.0.0.1:{backlog.getsockname()[1]}", "--clickhouse-timeout", "1000"],
                                      timeout=60)
    check(code == 8 and "connecting" in err and took < 30, "a connect never accepted: exit 8 after the timeout",
          f"{code} {took:.1f}s {err[-300:]}")
    for s in [backlog, *fillers]:
        s.close()

    def headers_then_silence(conn):
        conn.sendall(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
        row = b"b\tr\t0\t5\t1970-01-01\t1\tcycles\t0\titm\t1\tText\t{\"message\":\"x\"}\t\n"
        conn.sendall(b"%x\r\n%s\r\n" % (len(row), row))
        threading.Event().wait()

    stalling = HostileHttp(headers_then_silence)
    result = query("--clickhouse-timeout", "1500", url=stalling.url(), timeout=60)
    check(result.returncode == 8 and result.stdout.count("\n") == 1,
          "a server silent mid-body: the rows before are written, exit 8", f"{result.returncode} {result.stderr}")

    before = silent.accepted
    process = subprocess.Popen([tool("trace-query"), "--clickhouse", silent.url()], stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True)
    wait_until(lambda: silent.accepted > before, "trace-query connected to the silent server")
    process.send_signal(signal.SIGINT)
    try:
        _, err = process.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        err = "still running 10 s after SIGINT"
    check(process.returncode == 130, "SIGINT while waiting: exit 130 at once", f"{process.returncode} {err}")
    silent.close()
    stalling.close()


def huge_and_cut_replies():
    """Defect 15: a 100 MB HTTP 500 body is not printed (nor held) whole; a cut reply is told."""
    # Sent in pieces of 1 MiB: the test itself stays small (a child's ru_maxrss counts what its
    # parent held when it forked).
    piece = b"x" * (1 << 20)
    head = b"Code: 1, e.displayText() = DB::Exception: "

    def huge_error(conn):
        conn.sendall(b"HTTP/1.1 500 Internal Server Error\r\nContent-Length: %d\r\n\r\n" % (len(head) + 100 * len(piece)))
        conn.sendall(head)
        for _ in range(100):
            conn.sendall(piece)
        conn.shutdown(socket.SHUT_WR)

    def huge_error_chunked(conn):  # as ClickHouse sends it
        conn.sendall(b"HTTP/1.1 500 Internal Server Error\r\nTransfer-Encoding: chunked\r\n\r\n")
        conn.sendall(b"%x\r\n%s\r\n" % (len(head), head))
        for _ in range(100):
            conn.sendall(b"%x\r\n%s\r\n" % (len(piece), piece))
        conn.sendall(b"0\r\n\r\n")

    for framing, serve in (("Content-Length", huge_error), ("chunked", huge_error_chunked)):
        server = HostileHttp(serve)
        code, err, took, rss = run_measured([tool("trace-query"), "--clickhouse", server.url()], timeout=120)
        check(code == 1 and len(err) < 8192 and "Code: 1" in err,
              f"a 100 MB error body ({framing}): exit 1, a few KB on stderr", f"{code} {len(err)} bytes {err[:200]}")
        check(rss < 64 * 1024 or os.environ.get("TRACEPIPE_SANITIZED"),
              f"a 100 MB error body ({framing}) is not held in memory", f"{rss} KiB")
        server.close()

    def with_length(conn):
        row = b"b\tr\t0\t5\t1970-01-01\t1\tcycles\t0\titm\t1\tText\t{\"message\":\"x\"}\t\n"
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(row), row))
        conn.close()

    server = HostileHttp(with_length)
    result = query(url=server.url(), timeout=60)
    check(result.returncode == 0 and len(lines_of(result.stdout)) == 1,
          "a reply with a Content-Length (not chunked) is read", result.stderr[-300:])
    server.close()

    def cut(conn):
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\nb\tr\t0")
        conn.close()

    server = HostileHttp(cut)
    result = query(url=server.url(), timeout=60)
    check(result.returncode == 7 and "closed the connection before the end of its reply" in result.stderr and
          "body limit" not in result.stderr, "a reply cut short: exit 7, said so", result.stderr[-300:])
    server.close()

    def error_after_rows(conn):  # ClickHouse 18.16 over HTTP: the status is sent; a later error ends the body
        row = b"b\tr\t0\t5\t1970-01-01\t1\tcycles\t0\titm\t1\tText\t{\"message\":\"x\"}\t\n"
        failure = b"Code: 241, e.displayText() = DB::Exception: Memory limit (for query) exceeded, e.what() = DB::Exception\n"
        conn.sendall(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
        for piece in (row, failure):
            conn.sendall(b"%x\r\n%s\r\n" % (len(piece), piece))
        conn.sendall(b"0\r\n\r\n")
        conn.close()

    server = HostileHttp(error_after_rows)
    result = query(url=server.url(), timeout=60)
    check(result.returncode == 1 and "Code: 241" in result.stderr and "Memory limit" in result.stderr and
          "not the store's" not in result.stderr and len(lines_of(result.stdout)) == 1,
          "ClickHouse's error after the first rows: said as ClickHouse's, exit 1 (not rows 'not the store's')",
          f"{result.returncode} {result.stderr[-400:]}")
    server.close()


def quoted_names():
    """Defect 15: --table a-b passes the name check; it is quoted in every statement."""
    publish("q", "r1", [stamped(text("quoted"), "q", "r1", 0)], 0)
    code, err, stats = store("--table", "a-b", "--durable", "quoted", "--create-table")
    check(code == 0 and stats and stats["rows"] >= 1, "trace-store --table a-b --create-table", err[-500:])
    check(seqs_stored("a-b", "q") == [0], "clickhouse-client: the record in table a-b", seqs_stored("a-b", "q"))
    result = query("--table", "a-b", "--board", "q")
    check(result.returncode == 0 and len(result.stdout.splitlines()) == 1, "trace-query --table a-b",
          result.stderr[-300:])



def consumer_state(durable):
    """(ack pending, pending) of a durable consumer, from nats-server's own monitoring."""
    for account in nats.jsz().get("account_details", []):
        for stream in account.get("stream_detail", []):
            for consumer in stream.get("consumer_detail") or []:
                if consumer["name"] == durable:
                    return consumer["num_ack_pending"], consumer["num_pending"]
    raise AssertionError(f"/jsz does not list the durable {durable}")


def hangup_mid_insert():
    """SIGHUP (a closed terminal) and SIGQUIT while trace-store inserts: like SIGINT, what was
    fetched is inserted and acknowledged, so a rerun with --until-idle does not wait out the
    120 s ack wait for it; every record stored once."""
    total = 60000
    lines = [stamped(text(f"h{seq:06} " + "x" * 120), "hup", "r1", seq) for seq in range(total)]
    publish("hup", "r1", lines, 0, per_chunk=2000)
    for name in ("SIGHUP", "SIGQUIT"):
        table = f"hup_{name}"
        argv = [tool("trace-store"), "--server", nats.url(), "--clickhouse", clickhouse.url(), "--durable", table,
                "--table", table, "--create-table", "--batch-rows", "5000", "--stats"]
        process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        stored_at_signal = []

        def some_stored():
            stored = seqs_stored(table, "hup")
            stored_at_signal[:] = stored if isinstance(stored, list) else []
            return bool(stored_at_signal)

        wait_until(some_stored, f"trace-store inserted rows into {table}")
        process.send_signal(getattr(signal, name))
        try:
            _, err = process.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            process.kill()
            _, err = process.communicate()
        check(len(stored_at_signal) < total, f"{name} landed mid-run ({len(stored_at_signal)} of {total} stored)")
        check(process.returncode == 128 + getattr(signal, name), f"{name}: trace-store stops, exit 128+signal",
              f"{process.returncode} {err[-500:]}")
        check(consumer_state(table)[0] == 0, f"{name}: nothing fetched is left unacknowledged (nats /jsz)",
              consumer_state(table))
        code, err, _ = store("--table", table, "--durable", table, timeout=100)
        check(code == 0 and seqs_stored(table, "hup") == list(range(total)),
              f"{name} then --until-idle: every record stored once", f"{code} {err[-500:]}")



def half_closed_towards(port):
    """Whether a loopback TCP socket connected to `port` is in CLOSE_WAIT (its peer closed it),
    from the kernel's own table."""
    with open("/proc/net/tcp") as table:
        for line in table.readlines()[1:]:
            fields = line.split()
            if int(fields[2].split(":")[1], 16) == port and fields[3] == "08":
                return True
    return False


def idle_keepalive_closed():
    """The keep-alive connection ClickHouse closes after 10 s idle: the next insert goes on a
    new connection at once, not counted as a failed insert, no warning."""
    proxy = engines.TcpProxy(clickhouse.http_port)
    err_path = os.path.join(work, "idle.err")
    with open(err_path, "w") as err_file:
        process = subprocess.Popen([tool("trace-store"), "--server", nats.url(), "--clickhouse",
                                    f"http://127.0.0.1:{proxy.port}", "--durable", "idle", "--stats", "--batch-ms",
                                    "100"], stdout=subprocess.DEVNULL, stderr=err_file)
    publish("idle", "r1", [stamped(text(f"i{seq}"), "idle", "r1", seq) for seq in range(5)], 0)
    wait_until(lambda: seqs_stored("trace", "idle") == list(range(5)), "the first records stored")
    wait_until(lambda: half_closed_towards(proxy.port), "ClickHouse closed the idle connection (CLOSE_WAIT)",
               timeout=90)
    publish("idle", "r1", [stamped(text(f"i{seq}"), "idle", "r1", seq) for seq in range(5, 10)], 5)
    wait_until(lambda: seqs_stored("trace", "idle") == list(range(10)), "the records after the idle time stored")
    process.send_signal(signal.SIGINT)
    code = process.wait(timeout=60)
    err = open(err_path).read()
    stats = engines.stats_of(err)
    # (Its durable reads the whole stream: the poison lines above are warned of; no insert is.)
    check(code == 130 and stats is not None and stats["failed_inserts"] == 0 and "insert of" not in err,
          "an idle connection closed by ClickHouse: no failed insert, no warning", f"{code} {err[-600:]}")
    check(proxy.accepted == 2, "the insert after the idle time went on a new connection", proxy.accepted)
    proxy.close()

def dribbled_headers():
    """--clickhouse-timeout bounds silence: a reply whose headers come a few bytes at a time,
    each piece well within the timeout, is read (it took longer in all than the timeout)."""
    row = b"b\tr\t0\t5\t1970-01-01\t1\tcycles\t0\titm\t1\tText\t{\"message\":\"x\"}\t\n"
    head = (b"HTTP/1.1 200 OK\r\nContent-Type: text/tab-separated-values; charset=UTF-8\r\n"
            b"X-ClickHouse-Server-Display-Name: slow\r\nContent-Length: %d\r\n\r\n" % len(row))

    def dribble(conn):
        for i in range(0, len(head), 4):
            conn.sendall(head[i:i + 4])
            time.sleep(0.1)  # pace: 4 bytes every 100 ms, far within the 1500 ms timeout
        conn.sendall(row)
        conn.close()

    server = HostileHttp(dribble)
    started = time.monotonic()
    result = query("--clickhouse-timeout", "1500", url=server.url(), timeout=60)
    took = time.monotonic() - started
    check(took > 1.5, "the headers took longer in all than --clickhouse-timeout", f"{took:.1f}s")
    check(result.returncode == 0 and len(lines_of(result.stdout)) == 1,
          "headers that keep coming, slowly: read, not 'no answer'", f"{result.returncode} {result.stderr[-300:]}")
    server.close()

nats = engines.single_node(os.path.join(work, "nats"))
clickhouse = engines.ClickHouse(os.path.join(work, "clickhouse")).start()
try:
    create = subprocess.run([tool("trace-ship"), "--board", "init", "--server", nats.url(), "--create-stream"],
                            input=json.dumps(text("first")) + "\n", capture_output=True, text=True, timeout=120)
    check(create.returncode == 0, "trace-ship creates the stream", create.stderr[-300:])
    poison_is_skipped()
    refused_by_clickhouse()
    other_column_types()
    round_trip()
    hostile_rows()
    quoted_names()
    idle_keepalive_closed()
    dribbled_headers()
    silent_peers()
    huge_and_cut_replies()
    hangup_mid_insert()  # last: its records grow this process (a child's ru_maxrss counts it)
finally:
    clickhouse.kill()
    nats.kill()
sys.exit(check.summary())
