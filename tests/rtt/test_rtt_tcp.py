#!/usr/bin/env python3
"""rtt-capture --tcp against a real socket, as OpenOCD's `rtt server`, J-Link's port 19021 and
probe-rs serve a channel: a plain byte stream both ways.
- every byte arrives, in order, raw and as Text records (lines split across TCP segments);
- --send and --stdin reach the server; --sysview on sends SystemView's start command (1) first
  and the stop command (2) at the end;
- the server closing the connection: exit 7, what came before it written;
- nothing listening: exit 3.
Usage: test_rtt_tcp.py RTT_CAPTURE"""
import json
import os
import socket
import subprocess
import sys
import threading

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from checks import Checks  # noqa: E402

tool = sys.argv[1]
check = Checks(show_passes=True)
LINES = [f"tcp line {i}: {'x' * (i % 50)}\n".encode() for i in range(2000)]


class Server:
    """Accepts one connection, sends `payload` in odd-sized pieces, records what comes back;
    `close` ends the connection after sending, else it waits for the client to close."""

    def __init__(self, payload, close=False):
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(1)
        self.port = self.listener.getsockname()[1]
        self.payload, self.close, self.received = payload, close, b""
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self):
        conn, _ = self.listener.accept()
        with conn:
            for at in range(0, len(self.payload), 777):
                conn.sendall(self.payload[at:at + 777])
            if self.close:
                conn.shutdown(socket.SHUT_RDWR)
                return
            while True:
                data = conn.recv(4096)
                if not data:
                    return
                self.received += data

    def join(self):
        self.thread.join(timeout=60)
        self.listener.close()


payload = b"".join(LINES)
server = Server(payload)
raw = subprocess.run([tool, "--tcp", f"127.0.0.1:{server.port}", "--send", "hi\n", "--idle-exit", "1s"],
                     capture_output=True, timeout=120)
server.join()
check(raw.returncode == 0 and raw.stdout == payload, "raw: every byte, in order", raw.stderr.decode())
check(server.received == b"hi\n", "--send reached the server", server.received)

server = Server(payload)
records = subprocess.run([tool, "--tcp", f"127.0.0.1:{server.port}", "--format", "ndjson", "--channel", "3",
                          "--stdin", "--idle-exit", "1s", "--sysview", "on"], input=b"from stdin\n",
                         capture_output=True, timeout=120)
server.join()
parsed = [json.loads(line) for line in records.stdout.decode().splitlines()]
messages = [r["event"]["data"]["message"].encode() + b"\n" for r in parsed]
check(records.returncode == 0 and messages == LINES and all(r["port"] == 3 and r["source"] == "rtt" for r in parsed),
      "ndjson: a Text record per line, port = --channel, lines split across segments joined", records.stderr.decode())
check(server.received == b"\x01from stdin\n\x02", "--sysview on: start first, stop last; --stdin in between",
      server.received)

server = Server(payload[:5000], close=True)
closed = subprocess.run([tool, "--tcp", f"127.0.0.1:{server.port}"], capture_output=True, timeout=120)
server.join()
check(closed.returncode == 7 and closed.stdout == payload[:5000] and b"closed the connection" in closed.stderr,
      "the server closing: exit 7, everything before it written", closed.stderr.decode())

with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
nothing = subprocess.run([tool, "--tcp", f"127.0.0.1:{port}"], capture_output=True, timeout=60)
check(nothing.returncode == 3 and b"rtt server start" in nothing.stderr, "nothing listening: exit 3 with a hint",
      nothing.stderr.decode())
sys.exit(check.summary())
