#!/usr/bin/env python3
"""swo-capture's non-USB sources through its CLI, against real peers:
- the simulated target: `swo-capture --simulate --seed S | itm-decode` reproduces exactly
  the records the simulator reports (--sim-events), for several seeds; determinism,
  pacing, --duration, --max-bytes (whole events) and SIGINT (whole events, 130);
- a serial adapter on a real pseudo-terminal (custom baud rate, busy, missing device);
- a TCP server that disconnects and comes back (--reconnect), refused connections;
- files, with and without --realtime pacing; usage errors.
Usage: test_swo_capture.py SWO_CAPTURE ITM_DECODE"""
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import itm_model  # noqa: E402
from checks import Checks  # noqa: E402
from waits import WaitTimeout, file_size, wait_open, wait_until  # noqa: E402

tool, itm_decode = sys.argv[1], sys.argv[2]
work = tempfile.mkdtemp(prefix="swo-capture-test-")
check = Checks(show_passes=True)




def run(*args, timeout=60, **kwargs):
    return subprocess.run([tool, *args], capture_output=True, timeout=timeout, **kwargs)


def subset(want, got):
    if isinstance(want, dict):
        return isinstance(got, dict) and all(k in got and subset(v, got[k]) for k, v in want.items())
    return want == got


def simulated_events_decode_exactly():
    for seed in (1, 7, 42, 1234):
        events = os.path.join(work, f"events{seed}.ndjson")
        capture = run("--simulate", "--seed", str(seed), "--rate", "0", "--max-bytes", "3M", "--sim-events", events)
        check(capture.returncode == 0 and len(capture.stdout) <= 3 * 1048576, f"simulate seed {seed}: exit 0 within --max-bytes",
              capture.stderr)
        decoded = subprocess.run([itm_decode], input=capture.stdout, capture_output=True, timeout=60)
        got = [json.loads(line) for line in decoded.stdout.splitlines()]
        with open(events) as f:
            want = [json.loads(line) for line in f]
        mismatch = next((i for i, (w, g) in enumerate(zip(want, got)) if not subset(w, g)), None)
        check(len(want) > 10000 and len(got) == len(want) and mismatch is None,
              f"simulate seed {seed}: itm-decode gives exactly the {len(want)} reported events",
              f"{len(got)} vs {len(want)}, first mismatch {mismatch}: "
              f"{want[mismatch] if mismatch is not None else ''} / {got[mismatch] if mismatch is not None else ''}")
        # The independent side: a decoder written from the ARM ARM (tests/swo/itm_model.py), not
        # lib/itm, reads the same bytes: every reported event, every field, in order.
        model = itm_model.decode(capture.stdout)
        differs = next((i for i, (w, m) in enumerate(zip(want, model)) if w != m), None)
        check(len(model) == len(want) and differs is None,
              f"simulate seed {seed}: an independent decoder reads exactly the {len(want)} reported events",
              f"{len(model)} vs {len(want)}, first difference {differs}: "
              f"{want[differs] if differs is not None else ''} / {model[differs] if differs is not None else ''}")
        if seed == 1:  # the comparison can fail: one exception reported as something else is found
            planted = json.loads(json.dumps(want))
            exception = next(r for r in planted if r["event"]["kind"] == "Exception")
            exception["event"]["data"]["action"] = "resume" if exception["event"]["data"]["action"] != "resume" else "exit"
            check(model != planted, "simulate: one exception action reported wrong breaks the comparison")
        kinds = {r["event"]["kind"] for r in want}
        check({"Text", "TaskSwitch", "IsrEnter", "IsrExit", "IdleEnter", "IdleExit", "Marker", "Counter", "Exception",
               "PcSample", "Overflow"} <= kinds, f"simulate seed {seed}: every kind of event occurs", sorted(kinds))
        check(b"Malformed" not in decoded.stdout and decoded.returncode == 0, f"simulate seed {seed}: no malformed packet",
              decoded.stderr)


def simulated_determinism_and_limits():
    fast = run("--simulate", "--seed", "9", "--rate", "0", "--max-bytes", "300K").stdout
    paced = run("--simulate", "--seed", "9", "--rate", "3000000", "--max-bytes", "300K").stdout
    other = run("--simulate", "--seed", "10", "--rate", "0", "--max-bytes", "300K").stdout
    check(fast == paced and len(fast) > 290000, "simulate: same seed, same bytes, whatever the pacing")
    check(fast != other, "simulate: another seed, another stream")
    start = time.monotonic()
    paced = run("--simulate", "--rate", "100000", "--duration", "1s", "-v")
    elapsed = time.monotonic() - start
    check(paced.returncode == 0 and 0.9 <= elapsed < 3 and 80000 <= len(paced.stdout) <= 125000,
          "simulate: --rate 100000 --duration 1s gives about 100 kB in about 1 s", f"{len(paced.stdout)} bytes, {elapsed:.2f} s")
    check(b"simulated" in paced.stderr and b"events:" in paced.stderr, "simulate -v reports the events generated",
          paced.stderr)
    # A rate below one event per 100 ms (the pacing's catch-up): whole events still go, at the
    # rate (300 bytes at 100 bytes/s in about 3 s; the deadline fails a source that stalls).
    start = time.monotonic()
    slow = run("--simulate", "--seed", "9", "--rate", "100", "--max-bytes", "300", timeout=30)
    elapsed = time.monotonic() - start
    check(slow.returncode == 0 and slow.stdout == fast[:len(slow.stdout)] and 200 <= len(slow.stdout) <= 300 and elapsed >= 1.5,
          "simulate: --rate 100 sends whole events larger than its catch-up, at the rate", f"{len(slow.stdout)} bytes, {elapsed:.2f} s")
    events = os.path.join(work, "sigint.ndjson")
    process = subprocess.Popen([tool, "--simulate", "--rate", "200000", "--sim-events", events], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)
    # Stopped once it has generated a good part of a stream (its event log grows as it goes).
    try:
        wait_until(lambda: file_size(events) > 20000, "the simulator writes events", lambda: f"{file_size(events)} bytes")
    except WaitTimeout as e:
        check(False, "simulate: events are generated", str(e))
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=10)
    decoded = subprocess.run([itm_decode], input=out, capture_output=True, timeout=60)
    with open(events) as f:
        want = [json.loads(line) for line in f]
    got = [json.loads(line) for line in decoded.stdout.splitlines()]
    check(process.returncode == 130 and len(want) > 100 and len(got) == len(want) and b"Malformed" not in decoded.stdout,
          "simulate: SIGINT -> 130, everything generated written, whole events only", f"{process.returncode} {len(got)} {len(want)} {err}")


def serial_pty():
    master, slave = os.openpty()
    path = os.ttyname(slave)
    data = bytes(run("--simulate", "--seed", "3", "--rate", "0", "--max-bytes", "200K").stdout)
    process = subprocess.Popen([tool, "--serial", path, "--baud", "1234567", "--max-bytes", str(len(data)), "-v"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    wait_open(process, path, "swo-capture opens the serial port")
    busy = run("--serial", path, "--duration", "200ms", "--log-format", "json")
    check(busy.returncode == 5 and b"PROBE_IN_USE" in busy.stderr, "serial: a port in use -> exit 5, PROBE_IN_USE", busy.stderr)
    not_tty = run("--serial", "/dev/null", "--duration", "200ms")
    check(not_tty.returncode == 2 and b"not a serial port" in not_tty.stderr,
          "serial: a path that is not a terminal -> exit 2, 'not a serial port' (not 'in use')", not_tty.stderr)
    for i in range(0, len(data), 4096):
        os.write(master, data[i:i + 4096])
        time.sleep(0.001)  # pace: the pty's small buffer, fed as a serial line would
    out, err = process.communicate(timeout=30)
    check(process.returncode == 0 and out == data, "serial: every byte through a pseudo-terminal at 1234567 bit/s",
          f"{len(out)} of {len(data)}; {err}")
    check(b"1234567 bit/s" in err, "serial: the rate is reported", err)
    os.close(master)
    os.close(slave)
    missing = run("--serial", "/dev/ttyNOPE0", "--log-format", "json")
    check(missing.returncode == 3 and b"/dev/ttyNOPE0" in missing.stderr, "serial: a missing device -> exit 3", missing.stderr)


class FlakyServer:
    """Serves `chunks` to successive connections, closing each; then waits."""

    def __init__(self, chunks, down_for=0.0):
        self.listener = socket.socket()
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(4)
        self.port = self.listener.getsockname()[1]
        self.chunks = chunks
        self.down_for = down_for
        self.connections = 0
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self):
        for i, chunk in enumerate(self.chunks):
            connection, _ = self.listener.accept()
            self.connections += 1
            connection.sendall(chunk)
            time.sleep(0.2)  # pace: the peer holds the connection open a while (the scenario)
            connection.close()
            if i == 0 and self.down_for:  # refuse connections for a while
                self.listener.close()
                time.sleep(self.down_for)  # pace: the peer is down this long (the scenario)
                self.listener = socket.socket()
                self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                self.listener.bind(("127.0.0.1", self.port))
                self.listener.listen(4)


def tcp():
    data = bytes(run("--simulate", "--seed", "5", "--rate", "0", "--max-bytes", "300K").stdout)
    a, b = data[:120000], data[120000:]
    server = FlakyServer([a, b], down_for=1.0)
    r = run("--tcp", f"127.0.0.1:{server.port}", "--reconnect", "--max-bytes", str(len(data)), "-v", timeout=30)
    check(r.returncode == 0 and r.stdout == data, "tcp: a server that disconnects and comes back: every byte, in order",
          f"{len(r.stdout)} of {len(data)}; {r.stderr}")
    check(b"reconnected" in r.stderr and b"1 reconnects" in r.stderr, "tcp: the reconnect is reported", r.stderr)
    server = FlakyServer([a])
    r = run("--tcp", f"localhost:{server.port}", timeout=30)
    check(r.returncode == 0 and r.stdout == a, "tcp: without --reconnect the capture ends with the stream", r.stderr)
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    r = run("--tcp", f"127.0.0.1:{port}", "--log-format", "json")
    check(r.returncode == 3 and b"PROBE_NOT_FOUND" in r.stderr and b"refused" in r.stderr,
          "tcp: nothing listening -> exit 3 with a hint", r.stderr)
    r = run("--tcp", "nonsense")
    check(r.returncode == 2, "tcp: a malformed endpoint -> usage error", r.stderr)


def files_and_usage():
    path = os.path.join(work, "capture.swo")
    data = bytes(run("--simulate", "--seed", "11", "--rate", "0", "--max-bytes", "100K").stdout)
    with open(path, "wb") as f:
        f.write(data)
    r = run("--file", path)
    check(r.returncode == 0 and r.stdout == data, "file: copied exactly")
    start = time.monotonic()
    r = run("--file", path, "--realtime", "--rate", "200000")
    elapsed = time.monotonic() - start
    check(r.returncode == 0 and r.stdout == data and 0.4 <= elapsed < 2.0, "file --realtime --rate 200000: 100 kB in about 0.5 s",
          f"{elapsed:.2f} s")
    out = os.path.join(work, "copy.swo")
    r = run("--file", path, "--max-bytes", "10K", "-o", out)
    with open(out, "rb") as f:
        check(r.returncode == 0 and f.read() == data[:10240], "file --max-bytes 10K -o FILE")
    r = run("--file", os.path.join(work, "missing.swo"))
    check(r.returncode == 3, "file: missing -> exit 3", r.stderr)
    check(run().returncode == 2, "no source -> usage error")
    check(run("--simulate", "--file", path).returncode == 2, "two sources -> usage error")
    check(run("--simulate", "--duration", "soon").returncode == 2, "a bad --duration -> usage error")
    r = run("--list")
    check(r.returncode == 0, "--list without probes exits 0", r.stderr)
    head = subprocess.run(f"'{tool}' --simulate --rate 0 | head -c 1000 > /dev/null; echo ${{PIPESTATUS[0]}}", shell=True,
                          capture_output=True, text=True, executable="/bin/bash", timeout=30)
    check(head.stdout.strip() == "0", "a reader that goes away ends the capture quietly with 0", head.stdout + head.stderr)


simulated_events_decode_exactly()
simulated_determinism_and_limits()
serial_pty()
tcp()
files_and_usage()
sys.exit(check.summary())
