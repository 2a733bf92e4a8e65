#!/usr/bin/env python3
"""trace-ship attacked as a lab would (issue 43): its --state journal's disk fills under it, the
journal is /dev/zero, a FIFO, a directory or huge, a journal from yesterday meets a new file,
a journal cut inside its run id or of an older version, streams that keep almost nothing, odd
credentials (a '"' or '\\' in the password, an empty or world-readable file, a directory), a
missing --tls-ca, a second stop signal during the drain, a 8 MB line that is not JSON,
--run "". Against a real nats-server; what the stream holds is read back by the official NATS
JavaScript client (tests/fleet/fleet_stream_tool.mjs) and compared, record body by record body,
with the lines written into trace-ship.

Usage: test_fleet_ship_attacks.py BUILD_TOOLS_DIR"""
import json
import os
import signal
import stat
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

TOOLS = sys.argv[1]
SHIP = os.path.join(TOOLS, "trace-ship")
STREAM_TOOL = os.path.join(FLEET, "fleet_stream_tool.mjs")
check = Checks()
engines.require_tools()
work = tempfile.mkdtemp(prefix="tp-ship-attacks-")
FLEET_FIELDS = ("board", "run", "seq", "host_us")


def record(i, tag="a"):
    return json.dumps({"timestamp": i, "port": 0, "event": {"kind": "Text", "data": {"message": f"{tag} {i} " + "x" * 40}},
                       "source": "itm", "clock": "us"}, separators=(",", ":"))


def write_records(path, count, tag="a", start=0):
    lines = [record(i, tag) for i in range(start, start + count)]
    with open(path, "a") as f:
        f.write("".join(line + "\n" for line in lines))
    return lines


MEMORY_BOUND_KB = 2 << 20  # 2 GiB: far above a journal's read, far below the machine


def rss_kb(pid):
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def ship(args, input_path=None, stdin=None, timeout=120, limit_memory=False):
    """trace-ship's CompletedProcess; with limit_memory, a tool that reads without bound is
    killed once its RSS passes MEMORY_BOUND_KB (watched in /proc, not by RLIMIT_AS, which the
    sanitizers' shadow memory cannot live under) and its case fails."""
    argv = [SHIP, "--stats", *args] + ([input_path] if input_path else [])
    process = subprocess.Popen(argv, stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    peak = [0]
    if limit_memory:
        def watch():
            while process.poll() is None:
                peak[0] = max(peak[0], rss_kb(process.pid))
                if peak[0] > MEMORY_BOUND_KB:
                    process.kill()
                    return
                time.sleep(0.02)  # pace: the polling interval of the memory watch
        threading.Thread(target=watch, daemon=True).start()
    try:
        out, err = process.communicate(input=stdin, timeout=timeout)
    except subprocess.TimeoutExpired:  # a hang is a failure of its case, not of the whole test
        process.kill()
        out, err = process.communicate()
        return subprocess.CompletedProcess(argv, None, out, f"(killed after {timeout} s) {err}")
    if peak[0] > MEMORY_BOUND_KB:
        err = f"(killed at {peak[0] // 1024} MiB RSS) {err}"
    return subprocess.CompletedProcess(argv, process.returncode, out, err)


def stream_tool(url, *args, timeout=120):
    result = subprocess.run(["node", STREAM_TOOL, url, *args], capture_output=True, text=True, timeout=timeout)
    if result.returncode != 0:
        raise AssertionError(f"fleet_stream_tool {args[0]}: {result.stderr.strip()[-800:]}")
    return result.stdout


def stored(url, stream, board):
    """The records of `board` the stream holds, read back by the JavaScript client: by run, the
    list of (seq, the record without its fleet fields)."""
    runs = {}
    for line in stream_tool(url, "records", stream).splitlines():
        rec = json.loads(line)
        if rec.get("board") != board:
            continue
        body = json.dumps({k: v for k, v in rec.items() if k not in FLEET_FIELDS}, separators=(",", ":"))
        runs.setdefault(rec["run"], []).append((rec["seq"], body))
    return runs


def exactly(url, stream, board, lines, what):
    """The stream holds `lines` for `board`, in one run, each once, seq i = line i."""
    runs = stored(url, stream, board)
    check(len(runs) == 1, f"{what}: one run of {board}", list(runs))
    got = sorted(next(iter(runs.values()))) if runs else []
    check(len(got) == len(lines), f"{what}: {len(lines)} records stored once each", len(got))
    check([seq for seq, _ in got] == list(range(len(lines))), f"{what}: seqs 0..{len(lines) - 1}, none twice",
          [seq for seq, _ in got][:10])
    same = all(body == json.dumps(json.loads(line), separators=(",", ":")) for (_, body), line in zip(got, lines))
    check(same, f"{what}: every record's body is the line written", got[:2])


def peak_rss_kb(result_usage):
    return result_usage.ru_maxrss


server = engines.single_node(os.path.join(work, "n1"), extra="max_payload: 262144")
url = server.url()
mounted = None
try:
    # --- 3: the journal's disk fills under a live trace-ship. A 16 KiB tmpfs holds the journal;
    # the input is cut into small chunks, so the journal's lines outgrow it within the run.
    disk = os.path.join(work, "tiny")
    os.makedirs(disk)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16k", "tmpfs", disk], check=True)
    mounted = disk
    journal = os.path.join(disk, "b3.journal")
    full_input = os.path.join(work, "full.ndjson")
    full_lines = write_records(full_input, 12000, tag="full")
    def full_disk_args(state):
        return ["--board", "b3", "--server", url, "--create-stream", "--state", state, "--chunk-bytes", "1024",
                "--window", "4"]
    first = ship(full_disk_args(journal), full_input, timeout=300)
    check(first.returncode == 7, "full disk: trace-ship ends with exit 7 (I/O error), not an abort",
          (first.returncode, first.stderr[-1500:]))
    check("No space left on device" in first.stderr and "journal" in first.stderr,
          "full disk: the fault happened and is named (ENOSPC on the journal)", first.stderr[-800:])
    check("terminate called" not in first.stderr, "full disk: no std::terminate", first.stderr[-300:])
    check("stopped reading the input after seq" in first.stderr and "resume" in first.stderr,
          "full disk: says where it stopped and what a resume does", first.stderr[-800:])
    with open(journal, "rb") as f:
        text = f.read()
    check(text.endswith(b"\n"), "full disk: the journal ends with a whole line", text[-80:])
    first_stats = engines.stats_of(first.stderr)
    check(first_stats is not None and 0 < first_stats["acknowledged"] < len(full_lines),
          "full disk: the run stopped part way (the fault landed mid-run)", first_stats)
    subprocess.run(["umount", disk], check=True)  # room again: a bigger disk for the same journal
    mounted = None
    os.makedirs(disk, exist_ok=True)
    with open(os.path.join(work, "journal.saved"), "wb") as f:
        f.write(text)
    journal = os.path.join(work, "b3.journal")
    with open(journal, "wb") as f:
        f.write(text)
    again = ship(full_disk_args(journal), full_input, timeout=300)
    check(again.returncode == 0, "full disk: resumed with the journal on the same input, it ends (exit 0)",
          (again.returncode, again.stderr[-800:]))
    exactly(url, "TRACE", "b3", full_lines, "full disk then resume")

    # --- 3: journals that cannot be journals are refused unread, at once, in bounded memory.
    fifo = os.path.join(work, "j.fifo")
    os.mkfifo(fifo)
    huge = os.path.join(work, "huge.journal")
    with open(huge, "wb") as f:
        f.truncate(200 << 20)  # sparse: 200 MiB that take no disk
    for what, path, code in (("/dev/zero", "/dev/zero", 2), ("a FIFO", fifo, 2), ("a directory", work, 2),
                             ("a 200 MiB file", huge, 6)):
        started = time.monotonic()
        result = ship(["--board", "b4", "--server", url, "--state", path], os.devnull, timeout=60, limit_memory=True)
        took = time.monotonic() - started
        check(result.returncode == code, f"--state {what}: exit {code}", (result.returncode, result.stderr[-400:]))
        check("internal error" not in result.stderr and path in result.stderr,
              f"--state {what}: a clear message naming it", result.stderr[-300:])
        check(took < 20, f"--state {what}: refused at once", took)

    # --- 6: a journal from yesterday meets a new file.
    journal = os.path.join(work, "b6.journal")
    yesterday = os.path.join(work, "yesterday.ndjson")
    yesterday_lines = write_records(yesterday, 1000, tag="yesterday")
    base = ["--board", "b6", "--server", url, "--state", journal]
    result = ship(base, yesterday)
    check(result.returncode == 0, "stale journal: yesterday's run ships", result.stderr[-400:])
    for what, count in (("a shorter new file", 500), ("a longer new file", 1500)):
        today = os.path.join(work, f"today-{count}.ndjson")
        write_records(today, count, tag="today")
        result = ship(base, today)
        check(result.returncode == 6, f"stale journal, {what}: refused (exit 6)", (result.returncode, result.stderr[-400:]))
        check("not the one the journal recorded" in result.stderr, f"stale journal, {what}: says why",
              result.stderr[-400:])
    with open(yesterday) as f:
        piped = ship(base, stdin=f.read())
    check(piped.returncode == 0 and engines.stats_of(piped.stderr)["skipped"] == 1000,
          "stale journal: the same bytes again through a pipe resume (all skipped)", piped.stderr[-400:])
    with open(os.path.join(work, "today-500.ndjson")) as f:
        piped = ship(base, stdin=f.read())
    check(piped.returncode == 6, "stale journal: other bytes through a pipe are refused", piped.stderr[-400:])
    grown = yesterday_lines + write_records(yesterday, 200, tag="yesterday", start=1000)
    result = ship(base, yesterday)
    check(result.returncode == 0, "stale journal: the same file grown resumes", result.stderr[-400:])
    exactly(url, "TRACE", "b6", grown, "stale journals refused, the grown file resumed")

    # --- 6: SIGHUP (not a stop signal: the process just ends) mid-run on a pipe, then the
    # resume from the whole file: the prefix the pipe carried is the same bytes, so it resumes.
    journal = os.path.join(work, "hup.journal")
    hup_input = os.path.join(work, "hup.ndjson")
    hup_lines = write_records(hup_input, 6000, tag="hup")
    reader_end, writer_end = os.pipe()
    hup = subprocess.Popen([SHIP, "--board", "bhup", "--server", url, "--state", journal, "--chunk-bytes", "2048"],
                           stdin=reader_end, stderr=subprocess.PIPE, text=True)
    os.close(reader_end)
    os.write(writer_end, "".join(line + "\n" for line in hup_lines[:3000]).encode())
    wait_until(lambda: any(l.startswith("acked ") for l in open(journal).read().splitlines()) if os.path.exists(journal)
               else False, "the shipper's first acknowledged seq journaled")
    hup.send_signal(signal.SIGHUP)
    code = hup.wait(timeout=60)
    os.close(writer_end)
    check(code == -signal.SIGHUP, "SIGHUP mid-run: the shipper ended by it (the fault landed)", code)
    result = ship(["--board", "bhup", "--server", url, "--state", journal], hup_input)
    check(result.returncode == 0, "SIGHUP mid-run: resumed from the whole file", result.stderr[-400:])
    exactly(url, "TRACE", "bhup", hup_lines, "SIGHUP then resume")
    again = ship(["--board", "bhup", "--server", url, "--state", journal], hup_input)
    check(again.returncode == 0 and engines.stats_of(again.stderr)["skipped"] == len(hup_lines),
          "the cron job's second run on the same file: nothing to do, exit 0", again.stderr[-300:])

    # --- Two trace-ships on one --state: the second is refused (exit 5) while the first runs.
    # Before the lock, the second resumed the first's run from its journal (no seq acknowledged
    # yet), shipped its own input under the first's message ids, and JetStream dropped every
    # record of the first as a duplicate: both ended 0, the first's records nowhere.
    journal = os.path.join(work, "two.journal")
    first_input = os.path.join(work, "two-first.ndjson")
    first_lines = write_records(first_input, 3000, tag="first")
    second_input = os.path.join(work, "two-second.ndjson")
    write_records(second_input, 3000, tag="second")
    reader_end, writer_end = os.pipe()
    holder = subprocess.Popen([SHIP, "--board", "btwo", "--server", url, "--create-stream", "--state", journal], stdin=reader_end,
                              stderr=subprocess.PIPE, text=True)
    os.close(reader_end)
    try:
        wait_until(lambda: holder.poll() is not None or os.path.exists(journal) and "\nrun " in open(journal).read(),
                   "the first shipper's journal written")
        second = ship(["--board", "btwo", "--server", url, "--state", journal], second_input)
        check(second.returncode == 5 and "another trace-ship" in second.stderr,
              "a second trace-ship on the same --state: refused (exit 5, busy)", (second.returncode, second.stderr[-400:]))
        check(holder.poll() is None, "two on one journal: the first still runs (the refusal was while it held it)")
        os.write(writer_end, "".join(line + "\n" for line in first_lines).encode())
    finally:
        os.close(writer_end)
    code = holder.wait(timeout=120)
    check(code == 0, "two on one journal: the first ships its input", (code, holder.stderr.read()[-400:]))
    exactly(url, "TRACE", "btwo", first_lines, "two trace-ships on one journal")
    again = ship(["--board", "btwo", "--server", url, "--state", journal], first_input)
    check(again.returncode == 0 and engines.stats_of(again.stderr)["skipped"] == len(first_lines),
          "two on one journal: once the first ended, the journal is free (the next run resumes it)",
          (again.returncode, again.stderr[-300:]))

    # --- 6: a journal cut inside its run id, a version-1 journal, a garbled line.
    for what, text in (("cut inside its run id", "tracepipe-ship-journal 2\nboard b6\nrun 20261127T1010"),
                       ("of version 1", "tracepipe-ship-journal 1\nboard b6\nrun r1\nacked 999\n"),
                       ("with a garbled line", "tracepipe-ship-journal 2\nboard b6\nrun r1\nacked 9 x\nchunk 1 2\n")):
        bad = os.path.join(work, "bad.journal")
        with open(bad, "w") as f:
            f.write(text)
        result = ship(["--board", "b6", "--server", url, "--state", bad], yesterday)
        check(result.returncode == 6, f"a journal {what}: refused (exit 6)", (result.returncode, result.stderr[-300:]))

    # --- 7: streams that keep almost nothing. First what nats-server does with one: it
    # acknowledges every publish and keeps one message.
    probe = json.loads(stream_tool(url, "create", "KEEP1", "keep1.>", json.dumps({"max_msgs_per_subject": 1})))
    check(probe.get("max_msgs_per_subject") == 1, "a stream of max_msgs_per_subject 1 exists", probe)
    held = json.loads(stream_tool(url, "probe", "KEEP1", "keep1.x", "5"))
    check(held == {"acked": 5, "held": 1}, "nats-server acknowledges 5 and keeps 1 (why it must be refused)", held)
    for n, (what, config) in enumerate((("max_msgs_per_subject 1", {"max_msgs_per_subject": 1}),
                                        ("max_msgs 1", {"max_msgs": 1}),
                                        ("max_msgs 1, discard new", {"max_msgs": 1, "discard": "new"}),
                                        ("max_bytes 10000", {"max_bytes": 10000}),
                                        ("max_age 60 s", {"max_age": 60, "duplicate_window": 60}))):
        name, prefix = f"SMALL{n}", f"small{n}"
        stream_tool(url, "create", name, f"{prefix}.>", json.dumps(config))
        result = ship(["--board", "b7", "--server", url, "--stream", name, "--subject-prefix", prefix], full_input)
        check(result.returncode == 9, f"a stream with {what}: refused (exit 9)", (result.returncode, result.stderr[-300:]))
        check(json.loads(stream_tool(url, "probe", name, f"{prefix}.none", "0"))["held"] == 0,
              f"a stream with {what}: nothing shipped to it")
    for what, option in (("--max-age 60", ["--max-age", "60", "--duplicate-window", "60"]),
                         ("--max-bytes 10000", ["--max-bytes", "10000"])):
        result = ship(["--board", "b7", "--server", url, "--stream", "NEWSMALL", "--subject-prefix", "newsmall",
                       "--create-stream", *option], full_input)
        check(result.returncode == 2, f"--create-stream {what}: a usage error before creating anything",
              (result.returncode, result.stderr[-300:]))
    big = json.dumps({"max_msgs_per_subject": 100000, "max_bytes": 1 << 30, "max_age": 86400})
    stream_tool(url, "create", "ROOMY", "roomy.>", big)
    result = ship(["--board", "b7", "--server", url, "--stream", "ROOMY", "--subject-prefix", "roomy"], full_input)
    check(result.returncode == 0, "a stream with ample limits is taken", result.stderr[-300:])

    # --- A stream deleted and recreated with max_msgs_per_subject 1 under a running shipper.
    # Before, every record was acknowledged (exit 0) while the stream kept one chunk: the
    # shipper checked the stream once, at its start. Now it checks it again every few seconds
    # and stops, exit 9, naming the change.
    stream_tool(url, "create", "LIVE", "live.>", json.dumps({"max_msgs_per_subject": 100000}))
    reader_end, writer_end = os.pipe()
    live = subprocess.Popen([SHIP, "--board", "blive", "--server", url, "--stream", "LIVE", "--subject-prefix",
                             "live", "--stats"], stdin=reader_end, stderr=subprocess.PIPE, text=True)
    os.close(reader_end)
    try:
        os.write(writer_end, "".join(record(i, "live") + "\n" for i in range(100)).encode())
        wait_until(lambda: live.poll() is not None or
                   json.loads(stream_tool(url, "probe", "LIVE", "live.none", "0"))["held"] > 0,
                   "the shipper's first records stored in LIVE")
        stream_tool(url, "recreate", "LIVE", "live.>", json.dumps({"max_msgs_per_subject": 1}))
        check(live.poll() is None, "stream recreated: the shipper still runs (the change happened under it)")
        feed_until = time.monotonic() + 30  # deadline: the check comes within seconds; one that never stops fails
        i = 100
        while live.poll() is None and time.monotonic() < feed_until:
            os.write(writer_end, "".join(record(n, "live") + "\n" for n in range(i, i + 50)).encode())
            i += 50
            time.sleep(0.2)  # pace: a live capture's records, a few chunks a second
    except BrokenPipeError:
        pass
    finally:
        os.close(writer_end)
    code = live.wait(timeout=60)
    err = live.stderr.read()
    check(code == 9 and "changed under trace-ship" in err and "messages per subject" in err,
          "a stream recreated with max_msgs_per_subject 1 under a shipper: it stops, exit 9, naming it",
          (code, err[-500:]))

    # --- 15: credentials. A server whose password holds '"' and '\'.
    password = 'p"a\\ss'
    auth_dir = os.path.join(work, "auth")
    conf_password = password.replace("\\", "\\\\").replace('"', '\\"')
    auth = engines.single_node(auth_dir, extra=f'authorization {{ user: "u", password: "{conf_password}" }}')
    auth_url = auth.url()
    login = json.loads(stream_tool(auth_url, "login", "u", password))
    check(login.get("ok") is True, "the JavaScript client logs in with the password (the server has it)")
    creds = os.path.join(work, "u.creds")
    with open(creds, "w") as f:
        f.write(f"u:{password}\n")
    os.chmod(creds, 0o600)
    small_input = os.path.join(work, "small.ndjson")
    small_lines = write_records(small_input, 20, tag="creds")
    auth_args = ["--board", "b15", "--server", auth_url, "--creds", creds, "--create-stream"]
    result = ship(auth_args, small_input)
    check(result.returncode == 0, "a password with '\"' and '\\' works", (result.returncode, result.stderr[-400:]))
    check("readable by others" not in result.stderr, "a 0600 creds file: no warning", result.stderr[-300:])
    os.chmod(creds, 0o644)
    result = ship(auth_args, small_input)
    check(result.returncode == 0 and "readable by others" in result.stderr, "a world-readable creds file: a warning",
          (result.returncode, result.stderr[-300:]))
    empty = os.path.join(work, "empty.creds")
    open(empty, "w").close()
    for what, path, code in (("an empty creds file", empty, 6), ("a directory as --creds", work, 2),
                             ("a missing creds file", os.path.join(work, "none.creds"), 3)):
        result = ship(["--board", "b15", "--server", auth_url, "--creds", path], small_input)
        check(result.returncode == code and "internal error" not in result.stderr, f"{what}: exit {code}",
              (result.returncode, result.stderr[-300:]))
    result = ship(["--board", "b15", "--server", url, "--tls-ca", "/nonexistent"], small_input)
    check(result.returncode == 3, "--tls-ca /nonexistent: exit 3 (not found)", (result.returncode, result.stderr[-300:]))
    auth.kill(signal.SIGTERM)

    # --- 16: --run "" and a long line that is not JSON.
    result = ship(["--board", "b16", "--server", url, "--run", ""], small_input)
    check(result.returncode == 2, '--run "": a usage error', (result.returncode, result.stderr[-300:]))
    long_input = os.path.join(work, "long.ndjson")
    with open(long_input, "w") as f:
        f.write(record(0, "long") + "\n" + "x" * (8 << 20) + "\n" + "{" + "y" * (8 << 20) + "\n" + record(1, "long") + "\n")
    result = ship(["--board", "b16", "--server", url], long_input)
    stats = engines.stats_of(result.stderr)
    check(result.returncode == 0 and stats and stats["bad_lines"] == 1 and stats["lost_too_large"] == 1,
          "an 8 MB line not starting with '{' is a bad line; one starting with '{' is a record too large",
          (result.returncode, stats, result.stderr[-300:]))

    # --- 16: a second SIGTERM cuts the drain short. The server is frozen (SIGSTOP), so
    # nothing is acknowledged and the drain would wait its 30 s.
    feeder_r, feeder_w = os.pipe()
    shipper = subprocess.Popen([SHIP, "--board", "b16s", "--server", url, "--stats"], stdin=feeder_r,
                               stderr=subprocess.PIPE, text=True)
    os.close(feeder_r)
    os.write(feeder_w, "".join(record(i, "s") + "\n" for i in range(50)).encode())
    wait_until(lambda: json.loads(stream_tool(url, "probe", "TRACE", "trace.none", "0"))["held"] > 0 or
               shipper.poll() is not None, "the shipper's first records stored")
    server.proc.send_signal(signal.SIGSTOP)
    try:
        os.write(feeder_w, "".join(record(i, "s") + "\n" for i in range(50, 100)).encode())
        time.sleep(0.5)  # must-not-happen: the shipper ending before its stop signal (it holds unacknowledged chunks)
        check(shipper.poll() is None, "second signal: the shipper still runs with chunks in flight")
        shipper.send_signal(signal.SIGTERM)
        time.sleep(1.0)  # must-not-happen: the drain ending before its 30 s (the server is frozen)
        check(shipper.poll() is None, "second signal: after the first, the shipper drains")
        second_at = time.monotonic()
        shipper.send_signal(signal.SIGTERM)
        code = shipper.wait(timeout=60)
        took = time.monotonic() - second_at
        err = shipper.stderr.read()
        check(code == 143 and took < 10, "second signal: the drain is cut short (exit 143 within seconds)", (code, took))
        check("cut short" in err and "not acknowledged" in err, "second signal: says what was left unacknowledged",
              err[-600:])
    finally:
        server.proc.send_signal(signal.SIGCONT)
        os.close(feeder_w)
        if shipper.poll() is None:
            shipper.kill()
            shipper.wait()
finally:
    if mounted:
        subprocess.run(["umount", mounted])
    server.kill(signal.SIGTERM)
sys.exit(check.summary())
