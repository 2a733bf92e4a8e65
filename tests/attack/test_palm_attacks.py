#!/usr/bin/env python3
"""palm-recv under attack (issue 15), on loopback: a declared size of 2 GB; 1000 connections
that send all but the last byte of a 1 MiB message and stall (cut off after --message-timeout, memory bounded, refused past
--max-connections); connection churn (5000 connects and closes); and a good sender beside
all of them that loses nothing, in order. Peak RSS from /proc is checked against the bound
the man page states: max-connections x (max-message-size + 64 KiB) plus the process.
Messages are built from the protocol document (tests/palm/palm_sender.py).
Usage: test_palm_attacks.py PALM_RECV"""
import json
import os
import re
import resource
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "support"))
sys.path.insert(0, os.path.join(here, "..", "palm"))
from checks import Checks  # noqa: E402
from palm_sender import message  # noqa: E402
from waits import wait_until  # noqa: E402

BIN = sys.argv[1]
check = Checks(show_passes=True)
SANITIZED = os.environ.get("TRACEPIPE_SANITIZED") == "1"
MAX_CONNECTIONS = 256
MAX_MESSAGE = 1 << 20
BASE_RSS_KB = 32 * 1024  # the process without any sender
BOUND_KB = BASE_RSS_KB + MAX_CONNECTIONS * (MAX_MESSAGE + 64 * 1024) // 1024


def rss_kb(pid, field="VmHWM"):
    """The process's memory from /proc: a process gone or a field missing is an error, not 0
    (which any memory bound would pass)."""
    with open(f"/proc/{pid}/status") as status:
        match = re.search(rf"{field}:\s+(\d+)", status.read())
    if match is None:
        raise AssertionError(f"/proc/{pid}/status has no {field}")
    return int(match.group(1))


def raise_fd_limit():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 8192), hard))


raise_fd_limit()
err = tempfile.NamedTemporaryFile(mode="w+", delete=False)
proc = subprocess.Popen([BIN, "--listen", "127.0.0.1:0", "--max-connections", str(MAX_CONNECTIONS),
                         "--message-timeout", "2s", "--stats"], stdout=subprocess.PIPE, stderr=err, text=True)
wait_until(lambda: "listening on" in open(err.name).read() or proc.poll() is not None, "palm-recv listens")
port = int(re.search(r"listening on 127\.0\.0\.1:(\d+)", open(err.name).read()).group(1))
lines = []
threading.Thread(target=lambda: [lines.append(line) for line in proc.stdout], daemon=True).start()


def stderr_text():
    return open(err.name).read()


# The good sender: 2000 messages over the whole run, one every few milliseconds.
good_count = 2000
good_done = threading.Event()


def good_sender():
    s = socket.create_connection(("127.0.0.1", port))
    for i in range(good_count):
        s.sendall(message(f"good {i}".encode()))
        time.sleep(0.004)  # pace: a well-behaved sender's rate beside the attackers
    s.close()
    good_done.set()


threading.Thread(target=good_sender, daemon=True).start()

# --- a declared size of 2 GB: refused at the header, connection closed at once
s = socket.create_connection(("127.0.0.1", port))
s.sendall(struct.pack(">BBI", 1, 0, 2 << 30) + b"\x01" * 100)
s.settimeout(10)
try:
    closed = s.recv(1) == b""
except ConnectionResetError:
    closed = True
s.close()
check(closed and "over the limit" in stderr_text(), "a declared size of 2 GB: refused at its header, connection closed")

# --- 1000 connections that each send all but the last byte of a 1 MiB message, then stall
# (the case: 1.1 GB held before). Past --max-connections they are closed at once.
stallers = []
almost_whole = struct.pack(">BBI", 1, 0, MAX_MESSAGE) + b"\x01" * (MAX_MESSAGE - 7)
cut = 0
for _ in range(1000):
    c = socket.create_connection(("127.0.0.1", port))
    c.settimeout(10)
    try:
        c.sendall(almost_whole)
        stallers.append(c)
    except (BrokenPipeError, ConnectionResetError):
        cut += 1  # refused past --max-connections while sending
        c.close()
peak_during = rss_kb(proc.pid, "VmRSS")
# Each held one must be closed by the server after --message-timeout 2s: recv waits for it
# (10 s each at most); a recv that times out is a connection left open, not a cut one.
for c in stallers:
    try:
        cut += c.recv(1) == b""
    except ConnectionResetError:
        cut += 1
    except socket.timeout:
        pass
    c.close()
err_text = stderr_text()
check(cut == 1000, f"every staller's connection is closed: refused past --max-connections or cut after --message-timeout ({cut} of 1000)")
check("(1 refused so far)" in err_text, "the first connection past --max-connections is refused and said")
check("still incomplete" in err_text, "stalled ones are reported as still incomplete after --message-timeout")

# --- churn: 5000 connects and closes, some sending half a header
for i in range(5000):
    c = socket.create_connection(("127.0.0.1", port))
    if i % 3 == 0:
        c.sendall(b"\x01\x00\x00")
    c.close()

wait_until(good_done.is_set, "the good sender is done", timeout=120)
wait_until(lambda: sum(1 for line in lines if '"good ' in line) >= good_count or proc.poll() is not None,
           "every good message arrives", lambda: f"{sum(1 for line in lines if chr(34) + 'good ' in line)} arrived",
           timeout=60)
good = [json.loads(line)["event"]["data"]["message"] for line in lines if '"good ' in line]
check(good == [f"good {i}" for i in range(good_count)], f"the good sender lost nothing, in order ({len(good)} of {good_count})")
peak = rss_kb(proc.pid)
check(SANITIZED or peak < BOUND_KB,
      f"peak RSS {peak // 1024} MB (during the stall {peak_during // 1024} MB) within the stated bound of "
      f"{BOUND_KB // 1024} MB (max-connections x (max-message-size + 64 KiB) + {BASE_RSS_KB // 1024} MB)")
fds = len(os.listdir(f"/proc/{proc.pid}/fd"))
check(fds < 20, f"no descriptor leaked after the churn ({fds} open)")
proc.terminate()
code = proc.wait(30)
stats = stderr_text()
check(code == 143, f"SIGTERM -> 143 ({code})")
refused = re.search(r"\((\d+) refused past --max-connections\)", stats)
check(refused is not None and int(refused.group(1)) >= 1000 - MAX_CONNECTIONS,
      f"--stats counts the stallers refused past --max-connections (at least {1000 - MAX_CONNECTIONS}: "
      f"{refused.group(1) if refused else 'none'})")
print(re.findall(r"\d+ connections .*", stats)[-1:] if re.findall(r"\d+ connections .*", stats) else stats[-300:])
sys.exit(check.summary())
