#!/usr/bin/env python3
"""trace-ship and trace-pull against a real nats-server (one node), every record accounted for
by an independent reader (the official NATS JavaScript client, read_stream.mjs): the plain
path, bad input, a record over the server's max payload, wrong credentials, TLS on one side
only, streams that would lose or double silently, SIGKILL and a restart on the same input
(--state), the server away for longer than the buffer (Loss records with exact ranges),
SIGTERM.

Usage: test_fleet_ship.py BUILD_TOOLS_DIR PROJECT_ROOT"""
import json
import os
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
import waits  # noqa: E402
from waits import wait_until  # noqa: E402
import engines  # noqa: E402

TOOLS, ROOT = sys.argv[1], sys.argv[2]
SHIP, PULL = os.path.join(TOOLS, "trace-ship"), os.path.join(TOOLS, "trace-pull")
check = Checks()
engines.require_tools()
work = tempfile.mkdtemp(prefix="tp-fleet-ship-")


def tool(name):
    return os.path.join(TOOLS, name)


def simulated_records(path, seed, max_bytes="2M"):
    """Records of the simulated target: swo-capture --simulate | itm-decode (our producer; the
    reader that checks them is not ours)."""
    capture = subprocess.Popen([tool("swo-capture"), "--simulate", "--rate", "0", "--seed", str(seed), "--max-bytes",
                                max_bytes], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    with open(path, "w") as out:
        subprocess.run([tool("itm-decode")], stdin=capture.stdout, stdout=out, check=True)
    capture.wait()
    with open(path) as f:
        return f.read().splitlines()


def ship(args, input_path=None, stdin=None, timeout=120):
    argv = [SHIP, "--stats", *args] + ([input_path] if input_path else [])
    return subprocess.run(argv, input=stdin, capture_output=True, text=True, timeout=timeout)


def run_of(account, board):
    runs = {key: value for key, value in account["runs"].items() if key.split(" ")[0] == board}
    return runs


def exact(account, board, expected_records, what):
    """The run of board holds every seq once, and (read with inputs) every line that went in."""
    runs = run_of(account, board)
    check(len(runs) == 1, f"{what}: one run of {board} in the stream", list(runs))
    if not runs:
        return None
    run = next(iter(runs.values()))
    check(run["records"] == expected_records and run["max_seq"] == expected_records - 1,
          f"{what}: every seq 0..{expected_records - 1} is in the stream", run)
    check(run["doubled"] == 0, f"{what}: no record stored twice", run["doubled"])
    check(run["missing"] == [], f"{what}: none missing", run["missing"][:5])
    problems = engines.body_problems(run)
    check(not problems, f"{what}: the records stored are the lines that went in, in order, each once", problems)
    return run


server = engines.single_node(os.path.join(work, "n1"), extra="max_payload: 262144")
url = server.url()
try:
    # --- The plain path: every record once, in order, the records unchanged but for the stamp.
    records_path = os.path.join(work, "records.ndjson")
    records = simulated_records(records_path, seed=3)
    result = ship(["--board", "b1", "--server", url, "--create-stream", "--run", "r1"], records_path)
    stats = engines.stats_of(result.stderr)
    check(result.returncode == 0 and stats and stats["acknowledged"] == len(records),
          f"trace-ship acknowledged all {len(records)} records", result.stderr[-800:])
    account = engines.read_stream(url, "TRACE", inputs={"b1": records})
    run = exact(account, "b1", len(records), "plain")
    check(run is not None and run["out_of_order"] == 0 and run["losses"] == [], "plain: in order, no Loss", run)
    pulled = subprocess.run([PULL, "--server", url, "--board", "b1", "--stats"], capture_output=True, text=True,
                            timeout=120)
    lines = pulled.stdout.splitlines()
    parsed = [json.loads(line) for line in lines]
    check([r["seq"] for r in parsed] == list(range(len(records))), "trace-pull: seq 0.. in order", len(lines))
    stamp_ok = all(line.startswith(original[:-1] + ',"board":"b1","run":"r1","seq":') for line, original in
                   zip(lines, records))
    check(stamp_ok and len(lines) == len(records), "trace-pull: each record as shipped, with the fleet fields last")
    now_us = time.time() * 1e6
    check(all(abs(r["host_us"] - now_us) < 600e6 for r in parsed), "host_us is microseconds since 1970 (now)")
    sample = os.path.join(work, "stamped.ndjson")
    with open(sample, "w") as f:
        f.write("\n".join(lines[:20000]) + "\n")
    schema = subprocess.run(["node", os.path.join(ROOT, "tests/schema/validate_file.mjs"), ROOT, sample],
                            capture_output=True, text=True)
    check(schema.returncode == 0, "stamped records are valid against record.schema.json (ajv)", schema.stdout[-500:])

    # --- Bad input: counted, reported, not shipped, not numbered.
    good = records[:1000]
    mixed = list(good)
    junk = ["not json", '{"timestamp":1}', '{"timestamp":5,"frames":[]}', '[1,2,3]',
            '{"timestamp":1,"port":0,"event":{"kind":"IdleEnter"},"board":"x","run":"y","seq":1,"host_us":2}']
    for i, line in enumerate(junk):
        mixed.insert(100 * (i + 1), line)
    result = ship(["--board", "bad", "--server", url], stdin="\n".join(mixed) + "\n")
    stats = engines.stats_of(result.stderr)
    check(result.returncode == 0 and stats["bad_lines"] == len(junk) and stats["acknowledged"] == len(good),
          f"bad input: {len(junk)} lines counted, {len(good)} records shipped", result.stderr[-800:])
    check(result.stderr.count("not shipped") == len(junk) and "line 101:" in result.stderr,
          "bad input: each bad line reported with its number", result.stderr[-800:])
    check("trace-ship is the one that stamps" in result.stderr, "bad input: a line stamped already is refused")
    exact(engines.read_stream(url, "TRACE", inputs={"bad": good}), "bad", len(good), "bad input")

    # --- A record over the server's max payload (256 KiB here): numbered, not shipped, told.
    big = json.dumps({"timestamp": 7, "port": 0, "event": {"kind": "Text", "data": {"message": "x" * 300000}}})
    lines_in = records[:500] + [big] + records[500:1000]
    result = ship(["--board", "big", "--server", url], stdin="\n".join(lines_in) + "\n")
    stats = engines.stats_of(result.stderr)
    check(result.returncode == 0 and stats["lost_too_large"] == 1, "too large: counted", result.stderr[-500:])
    run = next(iter(run_of(engines.read_stream(url, "TRACE", inputs={"big": lines_in}), "big").values()), None)
    check(run is not None and run["losses"] == [[500, 500, "too_large"]] and run["missing"] == [[500, 500]] and
          run["records"] == 1001 and run["doubled"] == 0,
          "too large: seq 500 missing and told by a Loss record (too_large), the rest all there", run)
    problems = engines.body_problems(run, expected_lost=1)
    check(not problems and run["input"]["lost_ranges"] == [[500, 500]],
          "too large: every other line that went in is stored, in order; the big one (line 501) is the one lost",
          problems or run["input"])

    # --- Streams that would lose or double silently are refused; usage errors are clear.
    made = subprocess.run(["node", "-e", f"""
import('nats').then(async ({{ connect }}) => {{
  const nc = await connect({{ servers: '{url}' }});
  const jsm = await nc.jetstreamManager();
  await jsm.streams.add({{ name: 'SHORT', subjects: ['short.>'], duplicate_window: 10 * 1e9 }});
  await jsm.streams.add({{ name: 'QUEUE', subjects: ['queue.>'], retention: 'workqueue' }});
  await nc.close();
}});"""], capture_output=True, text=True, cwd=HERE)
    check(made.returncode == 0, "test streams made by the official client", made.stderr[-300:])
    for stream, prefix, why in (("SHORT", "short", "duplicate window is 10 s"),
                                ("QUEUE", "queue", "work-queue or interest")):
        result = ship(["--board", "x", "--server", url, "--stream", stream, "--subject-prefix", prefix],
                      stdin=records[0] + "\n")
        check(result.returncode == 9 and why in result.stderr, f"stream {stream} refused ({why}), exit 9",
              f"{result.returncode} {result.stderr[-300:]}")
    result = ship(["--board", "x", "--server", url, "--stream", "NOPE"], stdin=records[0] + "\n")
    check(result.returncode == 3 and "--create-stream" in result.stderr, "no stream: exit 3, says --create-stream",
          result.stderr[-300:])
    result = ship(["--board", "rack.3", "--server", url], stdin="")
    check(result.returncode == 2 and "board" in result.stderr, "a board that is not a subject token: exit 2",
          result.stderr[-300:])
    dead = engines.free_port()
    result = ship(["--board", "x", "--server", f"nats://127.0.0.1:{dead}"], stdin="")
    check(result.returncode == 3 and "nats-server running" in result.stderr, "no server: exit 3 with what to do",
          result.stderr[-300:])

    # --- SIGKILL mid-stream, restarted on the same input with the same journal: the overlap is
    # deduplicated (the same chunks with the same ids), nothing lost or doubled.
    state = os.path.join(work, "b-kill.journal")
    source = records_path
    feeder_lines = records[:]
    first = subprocess.Popen([SHIP, "--board", "killed", "--server", url, "--state", state, "--chunk-bytes", "8192"],
                             stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)

    def feed():
        try:
            for i in range(0, len(feeder_lines), 200):
                first.stdin.write("\n".join(feeder_lines[i:i + 200]) + "\n")
                first.stdin.flush()
                time.sleep(0.002)  # pace: a live capture's rate, so the kill finds chunks in flight
        except (BrokenPipeError, ValueError, OSError):
            pass

    feeder = threading.Thread(target=feed, daemon=True)
    feeder.start()

    def acked_in_journal():
        try:
            with open(state) as f:
                return max([int(l.split()[1]) for l in f if l.startswith("acked ")] or [0])
        except OSError:
            return 0

    # The kill lands mid-run: the shipper still runs, with a quarter of the input acknowledged
    # and records still to come (a shipper that ended early must not stand in for a killed one).
    wait_until(lambda: acked_in_journal() > len(records) // 4, "the journal shows a quarter acknowledged",
               lambda: f"acked {acked_in_journal()}, exit {first.poll()}")
    alive_at_kill = first.poll() is None
    first.kill()
    first.wait()
    feeder.join(10)
    acked_before = acked_in_journal()
    at_kill = run_of(engines.read_stream(url, "TRACE", settled=False), "killed")
    stored_at_kill = next(iter(at_kill.values()), {"records": 0, "max_seq": -1})
    check(alive_at_kill and first.returncode == -signal.SIGKILL and
          0 < acked_before + 1 <= stored_at_kill["records"] < len(records),
          "SIGKILL landed mid-run: the shipper was running, some but not all records stored, as many as the journal "
          "says acknowledged at least", f"alive {alive_at_kill}, exit {first.returncode}, journal acked through "
          f"{acked_before}, stored {stored_at_kill['records']} of {len(records)}")
    second = ship(["--board", "killed", "--server", url, "--state", state, "--chunk-bytes", "8192"], source)
    stats = engines.stats_of(second.stderr)
    check(second.returncode == 0 and stats and stats["skipped"] == acked_before + 1 and "resuming run" in second.stderr,
          f"restart: the run resumed after seq {acked_before}, those records skipped", second.stderr[-600:])
    check(stats is not None and stats["seqs"] == len(records),
          "restart: the seqs are the first run's (same input, same numbers)", stats)
    run = exact(engines.read_stream(url, "TRACE", inputs={"killed": records}), "killed", len(records),
                "SIGKILL and restart")
    # What the server stored past the journal's last acknowledgement comes again from the
    # restart, and the server (its PubAck) says it had it: those chunks are the duplicates.
    stored_past_journal = stored_at_kill["max_seq"] > acked_before
    check(stats is not None and (stats["duplicates"] > 0) == stored_past_journal,
          "restart: the server dropped as duplicates exactly when it had stored chunks past the journal",
          f"stored through seq {stored_at_kill['max_seq']}, journal through {acked_before}, "
          f"duplicates {stats and stats['duplicates']}")
    print(f"     (resume: {stats and stats['duplicates']} chunks the server had already, dropped by Nats-Msg-Id)")

    # --- The server away for longer than the buffer: Loss records with the exact ranges lost,
    # nothing else lost; the input never waited (--wait never, as from a live capture).
    proc = subprocess.Popen([SHIP, "--board", "away", "--server", url, "--buffer", "262144", "--chunk-bytes", "16384",
                             "--wait", "never", "--ack-timeout", "1000", "--stats"],
                            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    sent = {"lines": 0}
    stop_feed = threading.Event()

    def feed_live():
        for line in records:
            if stop_feed.is_set():
                break
            proc.stdin.write(line + "\n")
            sent["lines"] += 1
            if sent["lines"] % 100 == 0:
                proc.stdin.flush()
                time.sleep(0.01)  # pace: about 10k records/s, a busy SWO line

    live = threading.Thread(target=feed_live, daemon=True)
    live.start()
    wait_until(lambda: sent["lines"] > 20000, "20k records fed before the server goes")
    server.kill()
    at_kill = sent["lines"]
    wait_until(lambda: sent["lines"] > at_kill + 20000 or not live.is_alive(),
               "20k more records fed while the server is away (over the 256 KiB buffer)")
    server.start()
    fed_at_restart = sent["lines"]
    # The shipper is back once the server's own count of connections says so.
    wait_until(lambda: server.varz()["connections"] >= 1 or proc.poll() is not None,
               "trace-ship reconnected to the restarted server")
    fed_at_reconnect = sent["lines"]
    live.join(120)
    out, err = proc.communicate(timeout=180)
    stats = engines.stats_of(err)
    check(fed_at_restart - at_kill > 20000 and sent["lines"] == len(records),
          "away: the server was away while 20k records were fed, and every record was fed",
          f"{fed_at_restart - at_kill} while away, {sent['lines']} of {len(records)} fed")
    check(proc.returncode == 0 and stats and stats["lost_buffer_full"] > 0,
          "away: the shipper lost records to its full buffer, said so, and ended well",
          f"{proc.returncode} {err[-800:]}")
    run = next(iter(run_of(engines.read_stream(url, "TRACE", inputs={"away": records}), "away").values()), None)
    check(run is not None, "away: the run is in the stream")
    told = sorted([first, last] for first, last, reason in (run or {"losses": []})["losses"] if reason == "buffer_full")
    lost = sum(last - first + 1 for first, last in told)
    check(run is not None and told == run["missing"] and stats and lost == stats["lost_buffer_full"],
          f"away: the seqs missing are exactly the Loss records' ranges ({lost} seqs)",
          f"missing {run and run['missing'][:6]} told {told[:6]} lost {stats and stats['lost_buffer_full']}")
    # Against what went in: every line fed is stored or lies in a told range, and the lines lost
    # are those read while the server was away, give or take what the buffer holds.
    body = (run or {}).get("input", {"lost": -1, "lost_ranges": []})
    problems = engines.body_problems(run, expected_lost=body["lost"])
    check(run is not None and run["doubled"] == 0 and not problems and 0 < body["lost"] <= lost,
          "away: nothing doubled; every line fed is stored, in order, or lost inside a told range",
          problems or body)
    per_buffer = 262144 // min(len(line) + 1 for line in records) + 1
    window = [at_kill - per_buffer, fed_at_reconnect + per_buffer]
    outside = [r for r in body["lost_ranges"] if r[0] < window[0] or r[1] > window[1]]
    check(run is not None and not outside and body["lost"] <= window[1] - window[0],
          "away: only lines read while the server was away were lost (a buffer's worth either side)",
          f"lost input lines {body['lost_ranges'][:6]}, away from line {at_kill} to {fed_at_reconnect}, "
          f"a buffer holds {per_buffer}")
    if stats:
        print(f"     (away: {stats['records']} records, {body['lost']} lines lost, {lost} seqs in {len(told)} ranges, "
              f"peak buffer {stats['peak_buffer_bytes']} bytes, {stats['retries']} resends)")

    # The Loss records of both reasons, as trace-pull writes them, against the schema (ajv).
    losses = [line for board in ("big", "away") for line in
              subprocess.run([PULL, "--server", url, "--board", board], capture_output=True, text=True,
                             timeout=120).stdout.splitlines() if '"kind":"Loss"' in line]
    loss_file = os.path.join(work, "losses.ndjson")
    with open(loss_file, "w") as f:
        f.write("\n".join(losses) + "\n")
    schema = subprocess.run(["node", os.path.join(ROOT, "tests/schema/validate_file.mjs"), ROOT, loss_file],
                            capture_output=True, text=True)
    reasons = {json.loads(line)["event"]["data"]["reason"] for line in losses}
    check(schema.returncode == 0 and reasons == {"too_large", "buffer_full"},
          "Loss records (too_large, buffer_full) are valid against record.schema.json (ajv)",
          f"{reasons} {schema.stdout[-400:]}")

    # --- SIGTERM: flush, wait for acks, report, exit 143.
    proc = subprocess.Popen([SHIP, "--board", "term", "--server", url, "--stats"], stdin=subprocess.PIPE,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    written = records[:3000]
    proc.stdin.write("\n".join(written) + "\n")
    proc.stdin.flush()
    wait_until(lambda: any(s["name"] == "TRACE" and s["state"]["messages"] > 0
                           for a in server.jsz("streams=true").get("account_details", [])
                           for s in a.get("stream_detail", [])), "the first messages stored")
    wait_until(lambda: run_of(engines.read_stream(url, "TRACE", settled=False), "term"), "term's records in the stream")
    # Every line written has left the pipe: trace-ship has read all 3000 before the signal.
    wait_until(lambda: waits.pipe_queued(proc.stdin.fileno()) == 0, "trace-ship read the pipe empty",
               lambda: f"{waits.pipe_queued(proc.stdin.fileno())} bytes queued")
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    stats = engines.stats_of(err)
    check(proc.returncode == 143 and stats and stats["unacknowledged"] == 0,
          "SIGTERM: exit 143 after every record read was acknowledged", f"{proc.returncode} {err[-500:]}")
    run = next(iter(run_of(engines.read_stream(url, "TRACE", inputs={"term": written}), "term").values()), None)
    check(run is not None and stats and run["records"] == stats["acknowledged"] == len(written),
          f"SIGTERM: all {len(written)} lines read were acknowledged and are stored", f"{run} {stats}")
    problems = engines.body_problems(run)
    check(not problems, f"SIGTERM: the {len(written)} records stored are the lines written, in order", problems)
finally:
    server.kill()

# --- Credentials and TLS: from files, clear errors and exit codes.
auth = engines.NatsNode(os.path.join(work, "auth"), "auth", extra='authorization { user: lab, password: "s3cret" }')
auth.write_config()
auth.start()
try:
    good_creds = os.path.join(work, "good.creds")
    bad_creds = os.path.join(work, "bad.creds")
    with open(good_creds, "w") as f:
        f.write("lab:s3cret\n")
    with open(bad_creds, "w") as f:
        f.write("lab:wrong\n")
    result = ship(["--board", "a", "--server", auth.url(), "--creds", bad_creds, "--create-stream"], stdin="")
    check(result.returncode == 4 and "credentials" in result.stderr, "wrong credentials: exit 4, names --creds",
          f"{result.returncode} {result.stderr[-300:]}")
    result = ship(["--board", "a", "--server", auth.url(), "--creds", good_creds, "--create-stream"],
                  stdin="\n".join(records[:100]) + "\n")
    check(result.returncode == 0 and engines.stats_of(result.stderr)["acknowledged"] == 100,
          "right credentials from the file: shipped", result.stderr[-300:])
finally:
    auth.kill()

tls_dir = os.path.join(work, "tls")
os.makedirs(tls_dir)
openssl = [
    ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=test-ca", "-keyout",
     "ca.key", "-out", "ca.pem"],
    ["openssl", "req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1", "-keyout", "server.key", "-out",
     "server.csr"],
    ["sh", "-c", "printf 'subjectAltName=IP:127.0.0.1\\n' > san.ext && openssl x509 -req -in server.csr -CA ca.pem "
     "-CAkey ca.key -CAcreateserial -days 2 -extfile san.ext -out server.pem"],
    ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=other-ca", "-keyout",
     "other.key", "-out", "other.pem"],
]
for command in openssl:
    subprocess.run(command, cwd=tls_dir, check=True, capture_output=True)
secure = engines.NatsNode(os.path.join(work, "secure"), "secure",
                          extra=f'tls {{ cert_file: "{tls_dir}/server.pem", key_file: "{tls_dir}/server.key" }}')
secure.write_config()
secure.start()
plain = engines.single_node(os.path.join(work, "plain"))
try:
    result = ship(["--board", "t", "--server", secure.url(), "--create-stream"], stdin="")
    check(result.returncode == 9 and "--tls-ca" in result.stderr, "TLS server, no --tls-ca: exit 9, says --tls-ca",
          f"{result.returncode} {result.stderr[-300:]}")
    result = ship(["--board", "t", "--server", secure.url(), "--tls-ca", f"{tls_dir}/other.pem", "--create-stream"],
                  stdin="")
    check(result.returncode == 9 and "CA" in result.stderr, "TLS with the wrong CA: exit 9",
          f"{result.returncode} {result.stderr[-300:]}")
    result = ship(["--board", "t", "--server", plain.url(), "--tls-ca", f"{tls_dir}/ca.pem", "--create-stream"],
                  stdin="")
    check(result.returncode == 9 and "TLS" in result.stderr, "--tls-ca against a plain server: exit 9",
          f"{result.returncode} {result.stderr[-300:]}")
    result = ship(["--board", "t", "--server", secure.url(), "--tls-ca", f"{tls_dir}/ca.pem", "--create-stream"],
                  stdin="\n".join(records[:100]) + "\n")
    check(result.returncode == 0 and engines.stats_of(result.stderr)["acknowledged"] == 100,
          "TLS with the right CA: shipped", result.stderr[-300:])
finally:
    secure.kill()
    plain.kill()

subprocess.run(["rm", "-rf", work])
sys.exit(check.summary())
