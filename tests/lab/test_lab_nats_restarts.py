#!/usr/bin/env python3
"""trace-lab survives nats-server killed and restarted many times while boards ship (issue 45,
follow-up 1): once, killing it ended trace-lab with `malloc(): unaligned fastbin chunk
detected`. The boards' monitor gives up on a connection whose requests time out and makes a
new one; cnats then still called the old connection's callbacks from threads its close does
not join (the async-callback thread, the thread re-creating an ordered consumer), into the
link's freed event sink (lib/nats/nats_link.cpp, EventSinks).

Each round SIGKILLs nats-server while a board ships, proves the outage (trace-lab's log says
the link went), restarts it on the same port and store, and waits for /api/boards to answer
with the board live again, its last chunk seen after the restart. Short outages (the
connection reconnects) and long ones (the monitor gives up on its connection: its warning is
the event waited for) alternate. trace-lab must be running at the end, its log free of
sanitizer and allocator reports.

Usage: test_lab_nats_restarts.py BUILD_TOOLS_DIR [TRACE_LAB]   (TRACE_LAB: another build's,
an ASan one for instance; LAB_NATS_ROUNDS rounds, default 6)"""
import os
import sys
import threading
import time
import urllib.error

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "support"))
sys.path.insert(0, HERE)
from checks import Checks  # noqa: E402
from waits import wait_until  # noqa: E402
from lab_stack import LabStack, text_line  # noqa: E402

TOOLS = sys.argv[1]
ROUNDS = int(os.environ.get("LAB_NATS_ROUNDS", "6"))
BOARD = "rack3-b00"
GAVE_UP = "NATS, for the boards' live figures:"
REPORTS = ("AddressSanitizer", "malloc():", "free():", "double free", "corrupted", "Segmentation", "Aborted")
check = Checks()


def feed(proc, stop):
    """A board that goes on printing: a line every 20 ms until told to stop."""
    n = 0
    while not stop.is_set():
        n += 1
        try:
            proc.stdin.write(text_line(n, f"tick {n}") + "\n")
            proc.stdin.flush()
        except (BrokenPipeError, ValueError):
            return
        stop.wait(0.02)  # pace: the board's rate


def live_after(since_us):
    """The board's live figures when /api/boards answers with it live and seen after since_us."""
    time.sleep(0.25)  # pace: the polling interval of the waits on it (each asks ClickHouse)
    try:
        answer = stack.get_json("/api/boards")
    except (urllib.error.URLError, OSError):
        return None
    for row in answer["boards"]:
        if row["board"] == BOARD and row["live"] and (row["last_seen_us"] or 0) > since_us:
            return row
    return None


def one_round(number, long_outage):
    mark = len(stack.lab.log())
    stack.nats.kill()
    check(not stack.nats.running(), f"round {number}: nats-server killed")
    # The outage, proven by trace-lab itself: a long one lasts until the monitor gives up on its
    # connection (the crash's window), a short one until the link says it went.
    said = GAVE_UP if long_outage else "disconnected from the NATS server"
    wait_until(lambda: said in stack.lab.log()[mark:] or not stack.lab.running(),
               f"round {number}: trace-lab's log says '{said}'", lambda: stack.lab.log()[-400:], timeout=240)
    check(stack.lab.running(), f"round {number}: trace-lab runs through the outage", stack.lab.log()[-1500:])
    restarted_us = int(time.time() * 1e6)
    stack.nats.start()
    wait_until(lambda: live_after(restarted_us) or not stack.lab.running(),
               f"round {number}: /api/boards answers with {BOARD} live again", lambda: stack.lab.log()[-400:],
               timeout=180)
    check(stack.lab.running() and live_after(restarted_us) is not None,
          f"round {number} ({'long' if long_outage else 'short'} outage): /api/boards answers, {BOARD} live "
          "again", stack.lab.log()[-1500:])


stack = LabStack(TOOLS)
if len(sys.argv) > 2:
    stack.lab_binary = sys.argv[2]
stop = threading.Event()
try:
    stack.start(boards=2, records="40K")
    shipper = stack.ship_live(BOARD)
    feeder = threading.Thread(target=feed, args=(shipper, stop), daemon=True)
    feeder.start()
    wait_until(lambda: live_after(0), f"{BOARD} live before the first kill", lambda: stack.lab.log()[-400:])
    for n in range(1, ROUNDS + 1):
        one_round(n, long_outage=n % 2 == 0)
        if not stack.lab.running():
            break
    log = stack.lab.log()
    check(stack.lab.running(), f"trace-lab still running after {ROUNDS} kills of nats-server", log[-2000:])
    check(log.count(GAVE_UP) >= ROUNDS // 2, "the monitor gave up on its connection in every long outage",
          log.count(GAVE_UP))
    reports = [r for r in REPORTS if r in log]
    check(not reports, "no sanitizer or allocator report in trace-lab's log", reports)
    check(stack.get("/api/boards")[0] == 200, "/api/boards answers 200 at the end")
except Exception as error:  # a wait that ran out: one failure with what was seen
    check(False, "the scenario", repr(error))
finally:
    stop.set()
    stack.stop()
sys.exit(check.summary())
