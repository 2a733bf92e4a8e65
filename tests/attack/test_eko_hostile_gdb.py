#!/usr/bin/env python3
"""eko-collect against hostile and broken GDB servers (issue 15): a fake server on loopback
that floods console output, stop replies or bad checksums, never acknowledges, NAKs every
packet, closes mid-packet, answers E to everything, sends a packet that never ends, or
replies with terminal escape sequences. Each case must end within --timeout plus a margin
with a clear message and its documented exit code, with bounded memory (peak RSS from
wait4), and with the target released (`D` or `c` seen by the server) wherever the server
still listens. SIGTERM and SIGINT during a flood end the tool within a second with 143/130,
after it sent `D`.
Usage: test_eko_hostile_gdb.py EKO_COLLECT"""
import os
import signal
import socket
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from checks import Checks  # noqa: E402
from waits import wait_until  # noqa: E402

tool = sys.argv[1]
check = Checks(show_passes=True)

TIMEOUT_S = 1.0
MARGIN_S = 1.5  # start-up and scheduling on a busy machine
BOUND_S = 2 * TIMEOUT_S + MARGIN_S  # the failing exchange, then releasing the target (its own --timeout)
RSS_BOUND_KB = 64 * 1024
SANITIZED = os.environ.get("TRACEPIPE_SANITIZED") == "1"  # shadow memory and quarantine: RSS means nothing


def frame(payload, checksum=None):
    body = payload.encode("latin-1") if isinstance(payload, str) else payload
    cs = sum(body) % 256 if checksum is None else checksum
    return b"$" + body + b"#" + f"{cs:02x}".encode()


class FakeServer(threading.Thread):
    """One connection. Parses the client's packets, answers like a minimal stub until the
    first memory read, then behaves as `mode` says. Records every packet it received."""

    def __init__(self, mode):
        super().__init__(daemon=True)
        self.mode = mode
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.received = []
        self.reading = threading.Event()  # the client asked for memory
        self.flooding = threading.Event()
        self.closed = threading.Event()
        self.lock = threading.Lock()
        self.sent = 0  # bytes the client has taken (sendall returns once the kernel has them)

    def send(self, conn, data):
        with self.lock:
            conn.sendall(data)
            self.sent += len(data)

    def flood(self, conn, unit):
        chunk = unit * max(1, 65536 // len(unit))
        try:
            while not self.closed.is_set():
                self.send(conn, chunk)
                # Still a flood (tens of MB/s), but this Python server must go on reading what
                # the tool sends (acks, then D): on a loaded machine an unpaced flood starved
                # its reader, the tool's socket filled and its D could not get out.
                time.sleep(0.001)  # pace: see above
        except OSError:
            pass

    def answer(self, conn, payload):
        mode = self.mode
        if mode == "errors":
            return self.send(conn, frame("E01"))
        if payload.startswith("qSupported"):
            reply = "PacketSize=1000" + (";\x1b]0;pwned\x07\x1b[2J" if mode == "escapes" else "")
            return self.send(conn, frame(reply))
        if payload == "?":
            return self.send(conn, frame("S05"))
        if payload in ("D", "c") or payload.startswith("D;"):
            return self.send(conn, frame("OK")) if payload != "c" else None
        if payload.startswith("m"):
            self.reading.set()
            if mode == "escapes":
                return self.send(conn, frame("\x1b]0;pwned\x07\x1b[2J"))
            if mode == "close_mid_packet":
                self.send(conn, b"$0102")
                conn.shutdown(socket.SHUT_RDWR)
                return None
            if mode == "endless_packet":
                return threading.Thread(target=self.flood, args=(conn, b"$" + b"A" * 4096), daemon=True).start()
            if mode == "drip":
                def drip():
                    try:
                        while not self.closed.is_set():
                            self.send(conn, b"0")
                            time.sleep(0.05)  # pace: the drip is the scenario
                    except OSError:
                        pass
                self.send(conn, b"$")
                return threading.Thread(target=drip, daemon=True).start()
            units = {"console_flood": frame("O" + "41" * 60), "stop_flood": frame("T05thread:p01.01;"),
                     "bad_checksums": frame("00000000", checksum=0)}
            if mode in units and not self.flooding.is_set():
                self.flooding.set()
                return threading.Thread(target=self.flood, args=(conn, units[mode]), daemon=True).start()
            return None
        return self.send(conn, frame(""))

    def run(self):
        conn, _ = self.listener.accept()
        if self.mode == "never_ack":
            threading.Thread(target=self.flood, args=(conn, frame("S05")), daemon=True).start()
        buffer = b""
        try:
            while data := conn.recv(65536):
                buffer += data
                while buffer:
                    if buffer[0:1] in (b"+", b"-", b"\x03"):
                        if buffer[0:1] == b"\x03":
                            self.received.append("^C")
                        buffer = buffer[1:].lstrip(b"+-")
                        continue
                    start = buffer.find(b"$")
                    end = buffer.find(b"#", start)
                    if start < 0 or end < 0 or len(buffer) < end + 3:
                        break
                    payload = buffer[start + 1:end].decode("latin-1")
                    buffer = buffer[end + 3:]
                    self.received.append(payload)
                    if self.mode == "nak_forever":
                        self.send(conn, b"-")
                        continue
                    if self.mode != "never_ack":
                        self.send(conn, b"+")
                        self.answer(conn, payload)
        except OSError:
            pass
        finally:
            self.closed.set()
            conn.close()

    def released(self):
        """Waits (the server may still be parsing what the tool sent) for a D or c."""
        try:
            wait_until(lambda: any(p in ("D", "c") or p.startswith("D;") for p in self.received) or self.closed.is_set(),
                       "the server reads what the tool sent", timeout=10)
        except AssertionError:
            return False
        return any(p in ("D", "c") or p.startswith("D;") for p in self.received)


def run_tool(server, extra=(), timeout=TIMEOUT_S, signal_after_read=None):
    """Runs eko-collect against the server; returns (exit code, stderr, seconds, peak RSS kB,
    seconds from the signal to the exit)."""
    command = [tool, "-g", f"127.0.0.1:{server.port}", "--timeout", str(timeout), "--polls", "1", "-o", os.devnull,
               *extra, "0x20000000"]
    started = time.monotonic()
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    stderr = []
    reader = threading.Thread(target=lambda: stderr.append(proc.stderr.read()), daemon=True)
    reader.start()
    signalled = None
    if signal_after_read is not None:
        # Mid-read: the tool has taken 8 MB of the flood (more than any socket buffers hold).
        wait_until(lambda: server.sent >= 8 << 20 or proc.poll() is not None, "the tool reads the flood",
                   lambda: f"{server.sent} bytes sent, exit {proc.poll()}")
        signalled = time.monotonic()
        proc.send_signal(signal_after_read)
    watchdog = threading.Timer(30, proc.kill)  # a hang is a failure (exit -9), not a stuck suite
    watchdog.start()
    _, status, usage = os.wait4(proc.pid, 0)
    watchdog.cancel()
    ended = time.monotonic()
    proc.returncode = os.waitstatus_to_exitcode(status)
    reader.join(10)
    text = (stderr[0] if stderr else b"").decode("utf-8", "replace")
    return (proc.returncode, text, ended - started, usage.ru_maxrss,
            None if signalled is None else ended - signalled)


CASES = [  # mode, expected exit code, words the message must contain
    ("never_ack", 7, "without acknowledging"),
    ("console_flood", 8, "no complete reply"),
    ("stop_flood", 8, "no complete reply"),
    ("bad_checksums", 8, "no complete reply"),
    ("nak_forever", 7, "refused a packet"),
    ("close_mid_packet", 7, "closed the connection"),
    ("errors", 6, "no tracer could be read"),
    ("endless_packet", 8, "no complete reply"),
    ("drip", 8, "no complete reply"),
    ("escapes", 7, "malformed reply"),
]


def hostile_cases():
    for mode, code, words in CASES:
        server = FakeServer(mode)
        server.start()
        rc, err, seconds, rss, _ = run_tool(server)
        check(rc == code and words in err, f"{mode}: exit {code} with a clear message", f"exit {rc}: {err[-400:]}")
        check(seconds < BOUND_S, f"{mode}: ends in {seconds:.2f} s (bound {BOUND_S:.1f} s with --timeout {TIMEOUT_S})")
        check(SANITIZED or rss < RSS_BOUND_KB, f"{mode}: peak RSS {rss // 1024} MB (bound {RSS_BOUND_KB // 1024} MB)")
        check("\x1b" not in err and "\x07" not in err, f"{mode}: no terminal control characters on stderr", repr(err))
        if mode in ("console_flood", "stop_flood", "bad_checksums", "errors", "drip", "escapes"):
            check(server.released(), f"{mode}: the target is released (D or c sent)", server.received[-5:])


def signals_during_flood():
    for signo, code in ((signal.SIGTERM, 143), (signal.SIGINT, 130)):
        server = FakeServer("console_flood")
        server.start()
        rc, err, _, rss, after = run_tool(server, timeout=30, signal_after_read=signo)
        name = signal.Signals(signo).name
        check(rc == code, f"{name} during a console flood -> exit {code}", f"exit {rc}: {err[-300:]}")
        check(after is not None and after < 1.0, f"{name} during a flood: ends {after:.2f} s after the signal (< 1 s)")
        check(server.released(), f"{name} during a flood: D sent before leaving", server.received[-5:])
        check(SANITIZED or rss < RSS_BOUND_KB, f"{name} during a flood: peak RSS {rss // 1024} MB")


def main():
    hostile_cases()
    signals_during_flood()
    return check.summary()


if __name__ == "__main__":
    sys.exit(main())
