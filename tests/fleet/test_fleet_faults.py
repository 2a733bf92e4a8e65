#!/usr/bin/env python3
"""trace-ship through the faults of a real NATS deployment (the fleet note's experiments),
every record checked exactly once by the official NATS JavaScript client:
  - SIGKILL the R3 stream leader of a 3-node cluster mid-stream, restart it;
  - SIGKILL all three nodes for seconds, restart them;
  - a leaf node on the rack host, its link to the hub through a loopback proxy (the hub's
    leafnodes advertise the proxy, so the leaf cannot go around it): the link held, then cut;
    the shipper sees no error and the hub's stream (R3, sourcing the leaf's) catches up.
Usage: test_fleet_faults.py BUILD_TOOLS_DIR"""
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
from waits import wait_settled, wait_until  # noqa: E402
import engines  # noqa: E402

TOOLS = sys.argv[1]
SHIP, PULL = os.path.join(TOOLS, "trace-ship"), os.path.join(TOOLS, "trace-pull")
check = Checks()
engines.require_tools()
work = tempfile.mkdtemp(prefix="tp-fleet-faults-")


def simulated_records(seed, max_bytes):
    capture = subprocess.Popen([os.path.join(TOOLS, "swo-capture"), "--simulate", "--rate", "0", "--seed", str(seed),
                                "--max-bytes", max_bytes], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    decoded = subprocess.run([os.path.join(TOOLS, "itm-decode")], stdin=capture.stdout, capture_output=True,
                             text=True, check=True)
    capture.wait()
    return decoded.stdout.splitlines()


class LiveShipper:
    """trace-ship fed at a live capture's pace from a thread (the probe does not wait)."""

    def __init__(self, records, args, per_second):
        self.records = records
        self.err_path = os.path.join(work, f"ship-{time.monotonic_ns()}.err")
        with open(self.err_path, "w") as err:
            self.proc = subprocess.Popen([SHIP, "--stats", "--wait", "never", *args], stdin=subprocess.PIPE,
                                         stdout=subprocess.DEVNULL, stderr=err, text=True)
        self.fed = 0
        self.per_second = per_second
        self.thread = threading.Thread(target=self._feed, daemon=True)
        self.thread.start()

    def _feed(self):
        batch = 100
        start = time.monotonic()
        try:
            for i in range(0, len(self.records), batch):
                self.proc.stdin.write("\n".join(self.records[i:i + batch]) + "\n")
                self.proc.stdin.flush()
                self.fed = i + batch
                ahead = start + self.fed / self.per_second - time.monotonic()
                if ahead > 0:
                    time.sleep(ahead)  # pace: the capture's record rate
        except (BrokenPipeError, OSError):
            pass

    def stderr(self):
        with open(self.err_path) as f:
            return f.read()

    def finish(self):
        self.thread.join(600)
        try:
            self.proc.communicate(timeout=300)
        except subprocess.TimeoutExpired:  # a shipper that never ends fails the check, and is not left behind
            self.proc.kill()
            self.proc.communicate()
            return None, self.stderr() + "\n(trace-ship had not ended 300 s after its input did: killed)", None
        err = self.stderr()
        return self.proc.returncode, err, engines.stats_of(err)


def exact(account, board, expected, what, allow_out_of_order=True):
    runs = {k: v for k, v in account["runs"].items() if k.split(" ")[0] == board}
    run = next(iter(runs.values()), None)
    ok = (len(runs) == 1 and run["records"] == expected and run["max_seq"] == expected - 1 and run["doubled"] == 0 and
          run["missing"] == [] and run["losses"] == [])
    check(ok, f"{what}: {expected} records, each exactly once, none lost", run)
    problems = engines.body_problems(run)
    check(not problems, f"{what}: the records stored are the lines that went in, in order", problems)
    if not allow_out_of_order:
        check(run is not None and run["out_of_order"] == 0, f"{what}: none out of order", run)
    return run


def pulled_in_order(server, stream, board, expected, what, domain=None):
    argv = [PULL, "--server", server, "--stream", stream, "--board", board, "--stats"]
    if domain:
        argv += ["--domain", domain]
    result = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    seqs = [json.loads(line)["seq"] for line in result.stdout.splitlines()]
    check(seqs == list(range(expected)), f"{what}: trace-pull writes seq 0..{expected - 1} in order",
          f"{len(seqs)} {result.stderr[-300:]}")


records = simulated_records(seed=11, max_bytes="3M")
hub = engines.cluster_of_three(os.path.join(work, "hub"))
urls = ",".join(node.url() for node in hub)
try:
    def through_fault(board, extra, wait_before, kill, records_down, restart, what, proven):
        """Ships the records live, does kill() after 20k, restart() after records_down more,
        then checks every seq once in the stream and in order through trace-pull. The kill
        lands mid-run (the shipper running, records still to feed); proven() then shows, from
        the servers' own view, that the fault happened."""
        shipper = LiveShipper(records, ["--board", board, "--server", urls, "--ack-timeout", "2000", *extra],
                              per_second=10000)
        wait_until(lambda: wait_before() and shipper.fed > 20000, f"{what}: 20k records fed",
                   lambda: f"fed {shipper.fed}, exit {shipper.proc.poll()}: {shipper.stderr()[-300:]}")
        running = shipper.proc.poll() is None
        note = kill()
        killed_at = shipper.fed
        check(running and killed_at + records_down < len(records),
              f"{what}: the fault lands mid-run (the shipper running, {len(records) - killed_at} records to come)",
              f"running {running}, fed {killed_at} of {len(records)}")
        wait_until(lambda: shipper.fed > killed_at + records_down or not shipper.thread.is_alive(),
                   f"{what}: {records_down} records while down")
        fed_while_down = shipper.fed - killed_at
        proven()
        restart()
        code, err, stats = shipper.finish()
        check(fed_while_down >= records_down, f"{what}: {records_down} records fed while down", fed_while_down)
        check(code == 0 and stats and stats["unacknowledged"] == 0 and stats["lost_buffer_full"] == 0,
              f"{what}: the shipper acknowledged everything, lost nothing", err[-600:])
        # The shipper went through the fault: chunks it sent were not acknowledged in time, and sent again.
        check(stats is not None and stats["retries"] > 0, f"{what}: the shipper resent what the fault left "
              "unacknowledged", stats)
        account = engines.read_stream(hub[0].url(), "TRACE", inputs={board: records})
        run = exact(account, board, len(records), what)
        pulled_in_order(urls, "TRACE", board, len(records), what)
        if stats and run:
            print(f"     ({what}{note}: {stats['retries']} resends, {stats['duplicates']} dropped by Nats-Msg-Id, "
                  f"{run['out_of_order']} chunks out of order, peak buffer {stats['peak_buffer_bytes']} bytes)")

    # --- The R3 stream leader killed mid-stream and restarted.
    killed = []

    def kill_leader():
        name = engines.stream_leader(hub, "TRACE")
        killed.append(next(node for node in hub if node.server_name == name))
        killed[0].kill()
        return f" ({name})"

    def new_leader():
        # The cluster's own view: another node leads the stream while the old leader is down.
        wait_until(lambda: engines.stream_leader(hub, "TRACE") not in (None, killed[0].server_name),
                   "leader killed: another node leads the stream", lambda: str(engines.stream_leader(hub, "TRACE")))
        check(not killed[0].running(), "leader killed: the old leader is down", killed[0].server_name)

    through_fault("leader", ["--create-stream", "--replicas", "3"], lambda: engines.stream_leader(hub, "TRACE"),
                  kill_leader, 30000, lambda: killed[0].start(), "leader killed", new_leader)

    # --- All three nodes killed for seconds, then restarted.
    def kill_all():
        for node in hub:
            node.kill()
        return ""

    def start_all():
        for node in hub:
            node.start(wait=False)

    def all_down():
        check(not any(node.running() for node in hub) and not any(engines.port_open(node.port) for node in hub),
              "all three killed: no node runs or listens", [node.running() for node in hub])

    through_fault("all3", [], lambda: True, kill_all, 40000, start_all, "all three killed", all_down)
finally:
    for node in hub:
        node.kill()

# --- A rack's leaf node, its link to the hub through a proxy that holds, then cuts.
proxies = []


def behind_proxy(nodes):
    # The trap of the fleet note: every hub node advertises the proxy to leaf nodes, so the
    # leaf cannot learn another way to the hub and go around the cut.
    proxies.append(engines.TcpProxy(nodes[0].leaf_port))
    for node in nodes:
        node.leaf_advertise = f"127.0.0.1:{proxies[0].port}"


hub = engines.cluster_of_three(os.path.join(work, "hub2"), before_start=behind_proxy)
proxy = proxies[0]
leaf = engines.NatsNode(os.path.join(work, "leaf"), "rack3", domain="rack3", leaf_remote=f"127.0.0.1:{proxy.port}")
leaf.write_config()
leaf.start()
try:
    wait_until(lambda: sum(n.leaf_connections() for n in hub) == 1, "the leaf connected to the hub")
    made = subprocess.run(["node", "-e", f"""
import('nats').then(async ({{ connect }}) => {{
  const nc = await connect({{ servers: '{hub[0].url()}' }});
  const jsm = await nc.jetstreamManager();
  await jsm.streams.add({{ name: 'FLEET', num_replicas: 3, subjects: [],
                          sources: [{{ name: 'TRACE', external: {{ api: '$JS.rack3.API' }} }}] }});
  await nc.close();
}});"""], capture_output=True, text=True, cwd=HERE)
    check(made.returncode == 0, "the hub's R3 stream FLEET sources the rack's TRACE (official client)",
          made.stderr[-400:])
    shipper = LiveShipper(records, ["--board", "rack3-b07", "--server", leaf.url(), "--create-stream"],
                          per_second=5000)

    def hub_messages():
        # Every hub node runs here: one whose monitoring cannot be read fails the test.
        return max(node.stream_messages("FLEET") for node in hub)

    def leaf_messages_now():
        return leaf.stream_messages("TRACE")

    wait_until(lambda: hub_messages() > 20, "the hub has the rack's first messages")
    proxy.set_mode("hold")
    # What the proxy had already passed (a pump thread mid-sendall, the hub's socket buffer, a
    # batch the hub is storing and replicating) still lands: wait until the hub's count stops
    # moving, then nothing more may arrive while the link stays held.
    held_at = wait_settled(hub_messages, "the hub stored what had passed the proxy before the hold")
    leaf_at_hold = leaf_messages_now()
    time.sleep(8)  # must-not-happen: the hub gains nothing while every byte of the link is held
    held_end = hub_messages()
    leaf_gain = leaf_messages_now() - leaf_at_hold
    # The hold cut real traffic: the leaf kept storing what the shipper sent, the hub's count froze.
    check(held_end == held_at and leaf_gain > 0, "link held: the leaf gains messages, the hub's count is frozen",
          f"hub {held_at} -> {held_end}, leaf +{leaf_gain}")
    proxy.set_mode("cut")
    cut_at = hub_messages()
    leaf_at_cut = leaf_messages_now()
    accepted_at_cut = proxy.accepted
    time.sleep(20)  # must-not-happen: the leaf finds no way around the cut link (advertise)
    leafs = sum(n.leaf_connections() for n in hub)
    cut_end = hub_messages()
    leaf_gain = leaf_messages_now() - leaf_at_cut
    check(leafs == 0 and cut_end == cut_at and leaf_gain > 0,
          "link cut for 20 s: no leaf connection, the leaf gains messages, the hub's count is frozen",
          f"leafs {leafs}, hub {cut_at} -> {cut_end}, leaf +{leaf_gain}")
    proxy.set_mode("pass")
    code, err, stats = shipper.finish()
    check(code == 0 and stats and stats["retries"] == 0 and stats["unacknowledged"] == 0 and
          stats["lost_buffer_full"] == 0, "the shipper saw no error through the hold and the cut (its leaf is local)",
          err[-600:])
    leaf_messages = engines.read_stream(leaf.url(), "TRACE", inputs={"rack3-b07": records})["stored_messages"]
    reconnected = time.monotonic()
    wait_until(lambda: hub_messages() >= leaf_messages, "the hub caught up with the leaf",
               lambda: f"{hub_messages()} of {leaf_messages}", timeout=180)
    print(f"     (leaf link: the hub caught up {time.monotonic() - reconnected:.1f} s after the shipper ended; "
          f"{proxy.accepted - accepted_at_cut} reconnections, all through the proxy)")
    account = engines.read_stream(hub[0].url(), "FLEET", inputs={"rack3-b07": records})
    exact(account, "rack3-b07", len(records), "leaf link held and cut", allow_out_of_order=False)
    pulled_in_order(hub[0].url(), "FLEET", "rack3-b07", len(records), "leaf link held and cut")
finally:
    leaf.kill()
    proxy.close()
    for node in hub:
        node.kill()

subprocess.run(["rm", "-rf", work])
sys.exit(check.summary())
