#!/usr/bin/env python3
"""The real trace-lab stack (tests/lab/lab_stack.py) driven by the pages' browser test
(tests/lab/test_lab_stack.mjs) over stdin/stdout: it starts the stack with BOARDS simulated
boards (rack3-b02 losing a too-large record, rack3-b05 faulting) and one more, AWAY, that loses
records to a full --buffer while the NATS server is away; then prints one JSON line (the
addresses, the ClickHouse native port, what each board's trace-ship said) and answers each
command line with one JSON line:

  kill nats | start nats | kill clickhouse | start clickhouse | stop

Usage: lab_web_stack.py TOOLS_DIR BOARDS"""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "support"))
sys.path.insert(0, os.path.join(HERE, "..", "fleet"))
from waits import wait_until  # noqa: E402
import engines  # noqa: E402
from lab_stack import LabStack, simulated_records  # noqa: E402

AWAY = "rack4-away"
AWAY_BUFFER = 65536


def ship_while_away(stack, board, lines):
    """trace-ship with a small --buffer that never waits: the server goes after the first
    lines and comes back after the rest, so the buffer overflows (Loss records, buffer_full)."""
    proc = subprocess.Popen([stack.tool("trace-ship"), "--board", board, "--run", "r1", "--server", stack.nats.url(),
                             "--create-stream", "--buffer", str(AWAY_BUFFER), "--chunk-bytes", "16384", "--wait",
                             "never", "--ack-timeout", "1000", "--stats"],
                            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    half = len(lines) // 4
    proc.stdin.write("\n".join(lines[:half]) + "\n")
    proc.stdin.flush()
    wait_until(lambda: stack.nats.varz()["in_msgs"] > 0, "the first chunks of the losing board reach the server")
    stack.nats.kill()
    proc.stdin.write("\n".join(lines[half:]) + "\n")  # read whole by trace-ship: it never waits
    proc.stdin.flush()
    stack.nats.start()
    proc.stdin.close()
    err = proc.stderr.read()
    proc.wait(timeout=300)
    stats = engines.stats_of(err)
    if proc.returncode != 0 or not stats or stats["lost_buffer_full"] == 0:
        raise AssertionError(f"trace-ship {board} did not lose to its buffer: {proc.returncode} {err[-600:]}")
    stack.shipped.setdefault(board, []).extend(lines)
    return stats


class WebStack(LabStack):
    """LabStack with the away board shipped before the store first runs."""

    away_stats = None

    def store_until_idle(self, create=False):
        if create:
            self.away_stats = ship_while_away(self, AWAY, simulated_records(self.tools, 999, "400K"))
        return super().store_until_idle(create=create)


def serve_commands(stack):
    servers = {"nats": lambda: stack.nats, "clickhouse": lambda: stack.clickhouse}
    for line in sys.stdin:
        words = line.split()
        if words == ["stop"]:
            break
        if len(words) != 2 or words[0] not in ("kill", "start") or words[1] not in servers:
            print(json.dumps({"error": f"not a command: {line.strip()}"}), flush=True)
            continue
        server = servers[words[1]]()
        if words[0] == "kill":
            server.kill()
        else:
            server.start()
        print(json.dumps({"done": line.strip()}), flush=True)


def main():
    stack = WebStack(sys.argv[1])
    try:
        stack.start(boards=int(sys.argv[2]), records="150K")
        print(json.dumps({"lab": stack.url("/"), "nats": stack.nats.url(), "clickhouse": stack.clickhouse.url(),
                          "clickhouse_tcp": stack.clickhouse.tcp_port, "work": stack.work, "away": AWAY,
                          "away_stats": stack.away_stats, "boards": sorted(stack.shipped)}), flush=True)
        serve_commands(stack)
    except Exception as e:  # the test reads why on stdout
        print(json.dumps({"error": f"{type(e).__name__}: {e}"}), flush=True)
        raise
    finally:
        stack.stop()


if __name__ == "__main__":
    main()
