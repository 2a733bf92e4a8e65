#!/usr/bin/env python3
"""The fleet benchmark (issue "The fleet", Speed and memory): trace-ship against a plain cnats
async publisher (cnats-publish.c: 256 in flight, 64 KiB messages) on the same records into an
R3 hub and into a local R1 stream; trace-ship's RSS with the server away; trace-store against
the same rows POSTed in 10k-row batches over one connection and clickhouse-client's native
insert; board-to-browser latency (trace-ship -> leaf -> hub -> trace-pull -> trace-serve ->
a WebSocket client) at 10k records/s. Every figure comes from one run on this machine, the
servers sharing its cores with the clients: read ratios.
Usage: scripts/bench/fleet.py BUILD_DIR [RECORDS_MAX_BYTES]"""
import http.client
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import threading
import time

root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(root, "tests", "fleet"))
import engines  # noqa: E402

build = sys.argv[1]
max_bytes = sys.argv[2] if len(sys.argv) > 2 else "26M"
tools = os.path.join(build, "tools")
work = tempfile.mkdtemp(prefix="tp-bench-fleet-")
publisher = os.path.join(work, "cnats-publish")
subprocess.run(["gcc", "-O2", "-o", publisher, os.path.join(root, "scripts/bench/cnats-publish.c"), "-lnats"],
               check=True)


def timed(argv, stdin_path=None, env=None):
    """Wall seconds, CPU seconds (user+sys) and peak RSS (KB) of a command and its children."""
    os.sync()  # the runs before this one left their stores' pages dirty: each starts with none
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    with open(stdin_path or os.devnull) as stdin:
        result = subprocess.run(argv, stdin=stdin, capture_output=True, text=True, env=env)
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if result.returncode != 0:
        raise SystemExit(f"{argv[0]}: exit {result.returncode}: {result.stderr[-500:]}")
    return wall, cpu, after.ru_maxrss, result


def make_stream(url, name, subjects, replicas):
    script = f"""
import('nats').then(async ({{ connect }}) => {{
  const nc = await connect({{ servers: '{url}' }});
  const jsm = await nc.jetstreamManager();
  await jsm.streams.add({{ name: '{name}', subjects: ['{subjects}'], num_replicas: {replicas},
                          duplicate_window: 600 * 1e9 }});
  await nc.close();
}});"""
    subprocess.run(["node", "-e", script], check=True, cwd=os.path.join(root, "tests", "fleet"))


records_path = os.path.join(work, "records.ndjson")
with open(records_path, "w") as out:
    capture = subprocess.Popen([os.path.join(tools, "swo-capture"), "--simulate", "--rate", "0", "--max-bytes", max_bytes],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    subprocess.run([os.path.join(tools, "itm-decode")], stdin=capture.stdout, stdout=out, check=True)
    capture.wait()
records = sum(1 for _ in open(records_path))
size_mb = os.path.getsize(records_path) / 1e6
print(f"fleet benchmark, {os.cpu_count()} cores; {records} records ({size_mb:.0f} MB of NDJSON) of "
      f"swo-capture --simulate | itm-decode")


def ship_vs_reference(label, url, replicas):
    # Both streams exist before the clock starts (an R3 stream's creation elects a leader).
    make_stream(url, f"REF{replicas}", f"ref{replicas}.>", replicas)
    make_stream(url, f"TRACE{replicas}", f"trace{replicas}.>", replicas)
    make_stream(url, f"STAMPED{replicas}", f"stamped{replicas}.>", replicas)
    wall_ref, cpu_ref, _, result = timed([publisher, url, f"ref{replicas}.x", "65536", "256"], records_path)
    ship = [os.path.join(tools, "trace-ship"), "--board", f"bench{replicas}", "--server", url, "--stream",
            f"TRACE{replicas}", "--subject-prefix", f"trace{replicas}", "--window", "256", "--stats", records_path]
    wall, cpu, _, result = timed(ship)
    stats = engines.stats_of(result.stderr)
    assert stats["acknowledged"] == records, stats
    print(f"{label:34s} trace-ship {records / wall / 1e3:8.0f}k records/s  cnats {records / wall_ref / 1e3:8.0f}k/s  "
          f"ratio {wall_ref / wall:4.2f}x   CPU/record {cpu / records * 1e9:5.0f} ns vs {cpu_ref / records * 1e9:5.0f} ns")
    # The records as stored carry the fleet fields (board, run, seq, host_us): the bytes the
    # servers receive, store and replicate per record grow by that much. The same publisher on
    # those stamped records (as trace-pull reads them back) separates the fields' bytes from
    # trace-ship's own cost.
    stamped_path = os.path.join(work, f"stamped{replicas}.ndjson")
    with open(stamped_path, "w") as out:
        subprocess.run([os.path.join(tools, "trace-pull"), "--server", url, "--stream", f"TRACE{replicas}",
                        "--subject-prefix", f"trace{replicas}"], stdout=out, check=True)
    wall_stamped, cpu_stamped, _, _ = timed([publisher, url, f"stamped{replicas}.x", "65536", "256"], stamped_path)
    grown = os.path.getsize(stamped_path) / os.path.getsize(records_path)
    print(f"{'':34s} cnats on the stamped records ({grown:.2f}x the bytes) {records / wall_stamped / 1e3:8.0f}k/s  "
          f"trace-ship's ratio to it {wall_stamped / wall:4.2f}x   CPU/record {cpu_stamped / records * 1e9:5.0f} ns")


try:
    hub = engines.cluster_of_three(os.path.join(work, "hub"))
    hub_urls = ",".join(n.url() for n in hub)
    ship_vs_reference("into an R3 hub (3 nodes)", hub_urls, 3)
    for node in hub:
        node.kill()
    single = engines.single_node(os.path.join(work, "single"))
    ship_vs_reference("into a local R1 stream", single.url(), 1)

    # RSS with the server present, then away (a pipe, --wait never: the input must not wait).
    def rss_run(server_present):
        node = engines.single_node(os.path.join(work, f"rss{int(server_present)}"))
        argv = ["/usr/bin/time", "-f", "%M", os.path.join(tools, "trace-ship"), "--board", "rss", "--server",
                node.url(), "--create-stream", "--wait", "never", "--drain-timeout", "2000", "--stats"]
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(0.3)  # pace: connected and the stream made before the server goes
        if not server_present:
            node.kill()
        with open(records_path) as f:
            for chunk in iter(lambda: f.read(1 << 20), ""):
                proc.stdin.write(chunk)
        _, err = proc.communicate()
        node.kill()
        stats = engines.stats_of(err)
        return int(err.strip().splitlines()[-1]), stats

    rss_present, _ = rss_run(True)
    rss_away, stats_away = rss_run(False)
    print(f"trace-ship peak RSS: server present {rss_present / 1024:.0f} MiB; server away {rss_away / 1024:.0f} MiB "
          f"(buffer 64 MiB; {stats_away['lost_buffer_full']} records told lost)")

    # trace-store against plain HTTP batches and clickhouse-client, the same rows.
    clickhouse = engines.ClickHouse(os.path.join(work, "clickhouse")).start()
    wall, cpu, _, result = timed([os.path.join(tools, "trace-store"), "--server", single.url(), "--stream", "TRACE1",
                                  "--subject-prefix", "trace1", "--clickhouse", clickhouse.url(), "--create-table",
                                  "--until-idle", "--stats"])
    stored = engines.stats_of(result.stderr)["rows"]
    rows_path = os.path.join(work, "rows.ndjson")
    with open(rows_path, "w") as out:
        subprocess.run([engines.CLICKHOUSE_CLIENT, "--port", str(clickhouse.tcp_port), "-q",
                        "SELECT * FROM trace FORMAT JSONEachRow"], stdout=out, check=True)
    clickhouse.query("CREATE TABLE copy AS trace")
    with open(rows_path, "rb") as f:
        lines = f.readlines()
    connection = http.client.HTTPConnection("127.0.0.1", clickhouse.http_port)
    start = time.monotonic()
    for i in range(0, len(lines), 10000):
        connection.request("POST", "/?query=INSERT%20INTO%20copy%20FORMAT%20JSONEachRow", b"".join(lines[i:i + 10000]))
        response = connection.getresponse()
        response.read()
        assert response.status == 200
    wall_http = time.monotonic() - start
    clickhouse.query("CREATE TABLE copy2 AS trace")
    wall_native, _, _, _ = timed([engines.CLICKHOUSE_CLIENT, "--port", str(clickhouse.tcp_port), "-q",
                                  "INSERT INTO copy2 FORMAT JSONEachRow"], rows_path)
    print(f"trace-store (JetStream -> ClickHouse)  {stored / wall / 1e3:6.0f}k rows/s  HTTP 10k-row POSTs "
          f"{len(lines) / wall_http / 1e3:6.0f}k/s  ratio {wall_http / wall:4.2f}x  clickhouse-client native "
          f"{len(lines) / wall_native / 1e3:6.0f}k/s  (CPU/row {cpu / stored * 1e9:.0f} ns)")
    clickhouse.kill()
    single.kill()

    # Board to browser: trace-ship (10k records/s) -> leaf -> hub -> trace-pull -> trace-serve -> WebSocket.
    hub = engines.cluster_of_three(os.path.join(work, "hub-latency"))
    leaf = engines.NatsNode(os.path.join(work, "leaf"), "rack1", domain="rack1",
                            leaf_remote=f"127.0.0.1:{hub[0].leaf_port}")
    leaf.write_config()
    leaf.start()
    ship = subprocess.Popen([os.path.join(tools, "trace-ship"), "--board", "lat", "--server", leaf.url(),
                             "--create-stream", "--wait", "never"], stdin=subprocess.PIPE, text=True,
                            stderr=subprocess.DEVNULL)
    ship.stdin.write(open(records_path).readline())
    ship.stdin.flush()
    engines.wait_until(lambda: any(s["name"] == "TRACE" for a in leaf.jsz("streams=true").get("account_details", [])
                                   for s in a.get("stream_detail", [])), "the leaf's stream")
    subprocess.run(["node", "-e", f"""
import('nats').then(async ({{ connect }}) => {{
  const nc = await connect({{ servers: '{hub[0].url()}' }});
  const jsm = await nc.jetstreamManager();
  await jsm.streams.add({{ name: 'FLEET', num_replicas: 3, subjects: [],
                          sources: [{{ name: 'TRACE', external: {{ api: '$JS.rack1.API' }} }}] }});
  await nc.close();
}});"""], check=True, cwd=os.path.join(root, "tests", "fleet"))
    serve_log = os.path.join(work, "serve.log")
    view = subprocess.Popen(["bash", "-c", f"'{tools}/trace-pull' --server {hub[0].url()} --stream FLEET --board lat "
                                           f"--new --follow | '{tools}/trace-serve' --listen 127.0.0.1:0 2> '{serve_log}'"],
                            start_new_session=True)
    engines.wait_until(lambda: "serving on" in (open(serve_log).read() if os.path.exists(serve_log) else ""),
                       "trace-serve")
    port = re.search(r"http://[0-9.]+:([0-9]+)", open(serve_log).read()).group(1)
    seconds = 10
    client = subprocess.Popen(["node", os.path.join(root, "scripts/bench/fleet-latency.mjs"), port],
                              stdout=subprocess.PIPE, text=True, cwd=os.path.join(root, "tests", "serve"))
    time.sleep(1)  # pace: the client connected and started before the board does
    lines = open(records_path).read().splitlines()[1:seconds * 10000 + 1]
    start = time.monotonic()
    for i in range(0, len(lines), 100):
        ship.stdin.write("\n".join(lines[i:i + 100]) + "\n")
        ship.stdin.flush()
        ahead = start + (i + 100) / 10000 - time.monotonic()
        if ahead > 0:
            time.sleep(ahead)  # pace: 10k records/s from the board
    out, _ = client.communicate(timeout=120)
    print(f"board to browser at 10k records/s (trace-ship -> leaf -> R3 hub -> trace-pull -> trace-serve -> "
          f"WebSocket): {out.strip()}")
    os.killpg(view.pid, 15)
    ship.stdin.close()
    ship.wait()
    leaf.kill()
    for node in hub:
        node.kill()
finally:
    subprocess.run(["rm", "-rf", work])
