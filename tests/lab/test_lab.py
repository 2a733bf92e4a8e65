#!/usr/bin/env python3
"""trace-lab (issue 45) against real nats-server and clickhouse-server, with boards shipped by
real trace-ship and stored by real trace-store (tests/lab/lab_stack.py): /api/boards' counts
equal clickhouse-client's per board (the losing board's Loss among them); /api/search equal to
what went in (hostile needles too: quotes, backslashes, %, _, *, >, NUL, invalid UTF-8,
unicode) and paged without a row twice or missing; a stored /ws view byte for byte
trace-query's output, a run's too; a live view gets records shipped after it opened, and
its viewers share one trace-pull; hostile parameters are 400 with ClickHouse never asked
(its own query counter); a viewer that stops reading stalls only its own view, with the
server's memory bounded; the token and Origin rules on the APIs.

Usage: test_lab.py BUILD_TOOLS_DIR PROJECT_ROOT"""
import json
import os
import subprocess
import sys
import time
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "support"))
sys.path.insert(0, HERE)
from checks import Checks  # noqa: E402
from waits import wait_until  # noqa: E402
from lab_stack import LabStack, LOSING, FAULTING, text_line  # noqa: E402

TOOLS, ROOT = sys.argv[1], sys.argv[2]
check = Checks()
VIEW = os.path.join(HERE, "ws_view.mjs")
HOSTILE_MESSAGES = ["it's a quote", 'double " quote', "back\\slash", "100% done", "snake_case here", "star * star",
                    "arrow > here", "unicode: µs, 板, 🙂", "tab\tinside", "dash-d"]
NEEDLES = ["'", '"', "\\", "%", "_", "*", ">", "板", "🙂", "\t", "a' OR '1'='1", "\\'", "%_%", "nothing-like-this"]


def ch_rows(sql):
    return [line.split("\t") for line in stack.clickhouse.query(sql).splitlines() if line]


def ws_url(query):
    return f"ws://127.0.0.1:{stack.lab_port}/ws?{query}"


def view(query, *args, timeout=300):
    result = subprocess.run(["node", VIEW, ws_url(query), *args], capture_output=True, timeout=timeout)
    summary = json.loads(result.stderr.decode().strip().splitlines()[-1]) if result.stderr.strip() else {}
    return result.returncode, result.stdout.decode(), summary


def trace_query(*args):
    result = subprocess.run([stack.tool("trace-query"), "--clickhouse", stack.clickhouse.url(), *args],
                            capture_output=True, timeout=300)
    check(result.returncode == 0, f"trace-query {' '.join(args)}: exit 0", result.stderr[-300:])
    return result.stdout.decode()


def queries_run():
    """ClickHouse's own count of queries (this one included)."""
    return int(ch_rows("SELECT value FROM system.events WHERE event = 'Query'")[0][0])


def children(name):
    pids = []
    for pid in os.listdir("/proc"):
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            with open(f"/proc/{pid}/comm") as f:
                comm = f.read().strip()
        except OSError:
            continue
        if int(fields[1]) == stack.lab.proc.pid and comm == name:
            pids.append(int(pid))
    return pids


def rss_kb(pid):
    with open(f"/proc/{pid}/status") as f:
        return int(next(line for line in f if line.startswith("VmRSS")).split()[1])


def unexplained_gaps():
    """Per board, the seqs missing within each run's span that no Loss record's range covers,
    counted here from every row clickhouse-client gives (not by ClickHouse)."""
    runs = {}
    for board, run, seq, kind, first, last in ch_rows(
            "SELECT board, run, seq, kind, visitParamExtractUInt(data, 'first_seq'), "
            "visitParamExtractUInt(data, 'last_seq') FROM trace FINAL"):
        entry = runs.setdefault((board, run), [set(), set()])
        entry[0].add(int(seq))
        if kind == "Loss":
            entry[1].update(range(int(first), int(last) + 1))
    gaps = {}
    for (board, _), (seqs, told) in runs.items():
        missing = set(range(min(seqs), max(seqs) + 1)) - seqs - told
        gaps[board] = gaps.get(board, 0) + len(missing)
    return gaps


def check_boards():
    answer = stack.get_json("/api/boards?window=86400")
    boards = {b["board"]: b for b in answer["boards"]}
    expected = {row[0]: row for row in ch_rows(
        "SELECT board, count(), countIf(kind = 'Exception'), countIf(kind = 'Overflow'), "
        "sumIf(visitParamExtractUInt(data, 'records'), kind = 'Loss') FROM trace FINAL GROUP BY board ORDER BY board")}
    check(sorted(boards) == sorted(expected), "/api/boards lists every stored board", (sorted(boards), sorted(expected)))
    wrong = [(name, b["records"], b["exceptions"], b["overflows"], b["lost"], expected[name][1:])
             for name, b in boards.items() if name in expected and
             [str(b["records"]), str(b["exceptions"]), str(b["overflows"]), str(b["lost"])] != expected[name][1:]]
    check(not wrong, "/api/boards: records, exceptions, overflows and lost equal clickhouse-client's per board", wrong)
    check(boards.get(LOSING, {}).get("lost", 0) == 1 and boards[LOSING]["gaps"] == 0,
          f"{LOSING} shows its Loss (1 record too large) once: lost 1, no unexplained gap", boards.get(LOSING))
    gaps = unexplained_gaps()
    check({name: b["gaps"] for name, b in boards.items()} == {name: gaps.get(name, 0) for name in boards},
          "/api/boards: gaps are the seqs missing that no Loss record tells of, as counted from clickhouse-client's "
          "rows", ({name: b["gaps"] for name, b in boards.items()}, gaps))
    check("watchdog" in (boards.get(FAULTING, {}).get("last_text") or ""), f"{FAULTING}'s last Text line is shown",
          boards.get(FAULTING))
    globbed = stack.get_json("/api/boards?boards=rack3-b0%3F&window=86400")
    check(sorted(b["board"] for b in globbed["boards"]) == sorted(n for n in expected if n.startswith("rack3-b0")),
          "/api/boards?boards=rack3-b0? selects by glob", [b["board"] for b in globbed["boards"]])


def search_all(query):
    hits, cursor, pages = [], None, 0
    while pages < 1000:
        page = stack.get_json(f"/api/search?{query}" + (f"&before={urllib.parse.quote(cursor)}" if cursor else ""))
        hits += page["hits"]
        pages += 1
        cursor = page["next"]
        if cursor is None:
            break
    return hits, pages


def check_search():
    hits, pages = search_all("kind=Overflow&limit=7")
    expected = ch_rows("SELECT board, run, seq FROM trace FINAL WHERE kind = 'Overflow' "
                       "ORDER BY host_us DESC, board DESC, run DESC, seq DESC")
    got = [[h["board"], h["run"], str(h["seq"])] for h in hits]
    check(got == expected and pages > 2, f"search kind=Overflow, pages of 7: {len(got)} hits in {pages} pages, "
          "equal to clickhouse-client's, newest first, none twice or missing", (len(got), len(expected)))
    stored = {(r[0], r[1], r[2]): r[3] for r in ch_rows("SELECT board, run, toString(seq), host_us FROM trace FINAL "
                                                        "WHERE kind = 'Overflow'")}
    check(all(str(h["host_us"]) == stored.get((h["board"], h["run"], str(h["seq"]))) and
              json.loads(h["line"])["event"]["kind"] == "Overflow" for h in hits),
          "each hit's line is its stored record (kind, host_us)")
    watchdog = stack.get_json("/api/search?text=watchdog")
    check([h["board"] for h in watchdog["hits"]] == [FAULTING], "search text=watchdog finds the faulting board's line",
          watchdog)
    shipped = stack.shipped["hostile"]
    for needle in NEEDLES:
        answer = stack.get_json("/api/search?limit=500&boards=hostile&text=" + urllib.parse.quote(needle))
        want = sorted(json.loads(line)["event"]["data"]["message"] for line in shipped
                      if needle in json.loads(line)["event"]["data"]["message"])
        got = sorted(json.loads(h["line"])["event"]["data"]["message"] for h in answer["hits"])
        check(got == want, f"search text={needle!r}: exactly the Text lines that contain it ({len(want)})", (got, want))


def check_hostile_parameters():
    mb = "a" * (1 << 20)
    bad = ["/api/boards?boards=%27", "/api/boards?boards=a%20b", "/api/boards?boards=rack3-%25", "/api/boards?boards=a%3E",
           "/api/boards?window=-1", "/api/boards?window=99999999999", "/api/boards?window=1&window=2",
           "/api/boards?boards=" + "a" * 65, "/api/runs", "/api/runs?board=a%00b", "/api/runs?board=%E6%9D%BF",
           "/api/runs?board=x%27%3B%20DROP%20TABLE%20trace", "/api/search?kind=Bogus", "/api/search?kind=Text%27",
           "/api/search?from=yesterday", "/api/search?from=2026-02-30T00:00:00Z", "/api/search?limit=0",
           "/api/search?limit=501", "/api/search?before=1.a.b", "/api/search?before=1.a%27.b.2",
           "/api/search?text=" + "x" * 4097, "/api/search?from=10&to=5", "/api/search?boards=%FF%FE"]
    before = queries_run()
    statuses = [(path[:80], *stack.get(path)) for path in bad]
    refused = [(p, s, b[:100]) for p, s, b in statuses if s != 400 or b"error" not in b]
    check(not refused, f"{len(bad)} hostile API parameters: each 400 with an error naming it", refused)
    status, _ = stack.get("/api/search?text=" + mb)
    check(status in (400, 431), "a 1 MB search text is refused", status)
    status, _ = stack.get("/api/boards?boards=" + mb)
    check(status in (400, 431), "a 1 MB glob is refused", status)
    after = queries_run()
    check(after - before == 1, "ClickHouse never saw one of them (its query counter moved by the reading only)",
          after - before)
    # A view refused for its parameters: the upgrade accepted, then an Error naming the
    # parameter and why (what a browser can read), then a close the viewer does not retry on.
    for query, parameter in [("board=%27", "board"), ("board=a*", "board"), ("board=b&from=x&to=y", "from"),
                             ("board=b", "live"), ("board=b&live=1&from=1&to=2", "live"), ("board=b&run=a%27b", "run"),
                             ("board=b&from=5&to=1", "to"), ("board=b&live=1&since=soon", "since")]:
        code, _, summary = view(query, "--seconds", "60")
        errors = summary.get("errors") or [{}]
        check(code == 0 and summary.get("why") == "closed" and summary.get("closed", {}).get("code") == 1008 and
              len(errors) == 1 and errors[0].get("code") == "INVALID_PARAMETERS" and
              errors[0].get("message", "").startswith(parameter + ": "),
              f"/ws?{query}: an Error '{parameter}: why', then closed (1008)", summary)


def check_stored_views():
    rows = ch_rows("SELECT min(host_us), max(host_us) FROM trace FINAL WHERE board = 'rack3-b01'")
    first, last = int(rows[0][0]), int(rows[0][1])
    middle = (first + last) // 2
    for lo, hi in ((first, last + 1), (first + 1, middle)):
        code, lines, summary = view(f"board=rack3-b01&from={lo}&to={hi}")
        expected = trace_query("--board", "rack3-b01", "--since", iso(lo), "--until", iso(hi))
        check(code == 0 and summary.get("why") == "final" and lines == expected and lines,
              f"stored view [{lo}, {hi}) of rack3-b01: byte for byte trace-query's {expected.count(chr(10))} records",
              (summary, lines.count("\n"), expected.count("\n")))
        check(summary.get("snapshots", 0) > 0, f"stored view [{lo}, {hi}): trace-top's snapshots came with it "
              "(the viewer's CPU load and Durations charts)", summary)
    code, lines, summary = view("board=rack3-b03&run=r1")
    expected = trace_query("--board", "rack3-b03", "--run", "r1")
    check(code == 0 and lines == expected and lines, f"stored run view: byte for byte trace-query --run's "
          f"{expected.count(chr(10))} records", (summary, lines.count("\n"), expected.count("\n")))


def iso(us):
    import datetime
    return datetime.datetime.fromtimestamp(us // 1_000_000, datetime.timezone.utc).strftime(
        "%Y-%m-%dT%H:%M:%S") + f".{us % 1_000_000:06d}Z"


def check_live_view():
    shipper = stack.ship_live("live-b")
    viewers = [subprocess.Popen(["node", VIEW, ws_url("board=live-b&live=1"), "--records", "300"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(5)]
    wait_until(lambda: len(children("trace-pull")) == 1, "the live view's trace-pull runs",
               lambda: stack.lab.log()[-400:])
    wait_until(lambda: stack.lab.log().count("views /ws?board=live-b&live=1") >= 5, "5 viewers on the live view",
               lambda: stack.lab.log()[-400:])
    check(len(children("trace-pull")) == 1, "5 viewers of one live view share one trace-pull")
    lines = [text_line(i, f"live line {i}") for i in range(300)]
    shipper.stdin.write("\n".join(lines) + "\n")
    shipper.stdin.flush()
    outputs = [v.communicate(timeout=120) for v in viewers]
    got = [[json.loads(line)["event"]["data"]["message"] for line in out.decode().splitlines()] for out, _ in outputs]
    check(all(g == [f"live line {i}" for i in range(300)] for g in got),
          "each live viewer got the 300 records shipped after it opened, in order", [len(g) for g in got])
    wait_until(lambda: not children("trace-pull"), "the live view's trace-pull is gone with its last viewer")
    shipper.stdin.close()
    shipper.wait(timeout=60)


def check_then_live():
    """A stored range going on live: the stored records, then those shipped after, none twice."""
    stored = [text_line(i, f"seam stored {i}") for i in range(200)]
    stack.ship("seam", "s1", stored)
    stack.store_until_idle()
    lo = int(ch_rows("SELECT min(host_us) FROM trace FINAL WHERE board = 'seam'")[0][0])
    hi = int(time.time() * 1e6)
    viewer = subprocess.Popen(["node", VIEW, ws_url(f"board=seam&from={lo}&to={hi}&then=live"), "--records", "400"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    wait_until(lambda: len(children("trace-pull")) == 1, "the view's live part (trace-pull) started",
               lambda: stack.lab.log()[-400:])
    shipper = stack.ship_live("seam", "s2")
    shipper.stdin.write("\n".join(text_line(i, f"seam live {i}") for i in range(200)) + "\n")
    shipper.stdin.close()
    out, err = viewer.communicate(timeout=120)
    got = [json.loads(line)["event"]["data"]["message"] for line in out.decode().splitlines()]
    want = [f"seam stored {i}" for i in range(200)] + [f"seam live {i}" for i in range(200)]
    check(got == want, "then=live: the stored range, then the records shipped after it, none twice or missing",
          (len(got), got[195:205], err[-300:]))
    shipper.wait(timeout=60)
    wait_until(lambda: not children("trace-pull"), "the view's trace-pull is gone with its viewer")


def check_stalled_viewer():
    rows = ch_rows("SELECT min(host_us), max(host_us) FROM trace FINAL")
    lo, hi = int(rows[0][0]), int(rows[0][1]) + 1
    stalled = subprocess.Popen(["node", VIEW, ws_url(f"board=big&from={lo}&to={hi}"), "--stall-after", "50"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_until(lambda: len(children("trace-query")) == 1, "the stalled viewer's trace-query runs")
    stalled_query = children("trace-query")[0]
    baseline = rss_kb(stack.lab.proc.pid)
    code, lines, summary = view("board=rack3-b04&run=r1")
    check(code == 0 and lines == trace_query("--board", "rack3-b04", "--run", "r1"),
          "another stored view completes while one viewer has stopped reading", summary)
    wait_until(lambda: len(children("trace-query")) == 1, "the other view's trace-query is gone with its viewer")
    check(stalled.poll() is None and children("trace-query") == [stalled_query],
          "the stalled view's trace-query waits (paused on its pipe, not killed)")
    peak = rss_kb(stack.lab.proc.pid)
    # Under the sanitizers RSS holds their quarantine of freed memory: the bound is the normal build's.
    check(peak < baseline + 64 * 1024 or os.environ.get("TRACEPIPE_SANITIZED"),
          f"trace-lab's memory bounded with a stalled viewer ({baseline} -> {peak} kB)")
    stalled.kill()
    stalled.wait()
    wait_until(lambda: not children("trace-query"), "its trace-query is killed once the viewer is gone")


def check_token():
    os.makedirs(os.path.join(stack.work, "token"), exist_ok=True)
    token_stack = LabStack(TOOLS, os.path.join(stack.work, "token"))
    token_stack.nats, token_stack.clickhouse = stack.nats, stack.clickhouse
    token_stack.boards_answer_ok = lambda: token_stack.get("/api/boards", {"Authorization": "Bearer s3cret"})[0] == 200
    token_stack.start_lab("--token", "s3cret")
    try:
        check(token_stack.get("/api/boards")[0] == 401, "with --token: /api/boards without it is 401")
        check(token_stack.get("/api/boards?token=s3cret")[0] == 200, "?token= admits")
        check(token_stack.get("/api/boards", {"Authorization": "Bearer s3cret"})[0] == 200, "Bearer admits")
        check(token_stack.get("/api/boards", {"Authorization": "Bearer wrong"})[0] == 401, "a wrong token is 401")
        check(token_stack.get("/api/boards?token=s3cret", {"Origin": "http://evil.example"})[0] == 403,
              "a page of another origin is 403")
        check(token_stack.get("/")[0] == 200 and token_stack.get("/board/")[0] == 200 and
              token_stack.get("/main.js")[0] == 200 and token_stack.get("/viewer.css")[0] == 200,
              "the pages and the viewer's files need no token (they hold no data)")
        check(token_stack.get("/nothing-here?token=s3cret")[0] == 404, "an unknown path is 404")
    finally:
        token_stack.lab.kill()


stack = LabStack(TOOLS)
try:
    stack.start(boards=6)
    hostile = [text_line(i, m) for i, m in enumerate(HOSTILE_MESSAGES)]
    stack.ship("hostile", "h1", hostile)
    big = []
    for seed in range(3):
        big += __import__("lab_stack").simulated_records(TOOLS, 300 + seed, "4M")
    stack.ship("big", "b1", big)
    stack.store_until_idle()
    check_boards()
    check_search()
    check_hostile_parameters()
    check_stored_views()
    check_live_view()
    check_then_live()
    check_stalled_viewer()
    check_token()
except Exception as e:  # noqa: BLE001 - reported as a failure with what was seen
    check(False, "the test ran to its end", f"{type(e).__name__}: {e}\n{stack.lab.log()[-1500:] if stack.lab else ''}")
finally:
    stack.stop()
sys.exit(check.summary())
