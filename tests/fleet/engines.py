"""The real engines the fleet tests run against, started as plain processes in a temporary
directory on free loopback ports and stopped by their pid: nats-server (one node, a 3-node
JetStream cluster, a leaf node with its own JetStream domain) and clickhouse-server; and a
loopback TCP proxy that can hold or cut a link. Every wait is on what the engine reports (its
log line, its port, its HTTP answer) with a deadline."""
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "support"))
from waits import wait_until  # noqa: E402

NATS_SERVER = os.environ.get("NATS_SERVER", "nats-server")
CLICKHOUSE_SERVER = os.environ.get("CLICKHOUSE_SERVER", "/usr/sbin/clickhouse-server")
CLICKHOUSE_CLIENT = os.environ.get("CLICKHOUSE_CLIENT", "clickhouse-client")


def require_tools():
    """A missing engine is a failure (install-deps installs them), never a skip."""
    missing = [tool for tool in (NATS_SERVER, CLICKHOUSE_SERVER, CLICKHOUSE_CLIENT, "node")
               if subprocess.run(["sh", "-c", f"command -v {tool}"], capture_output=True).returncode != 0]
    if missing:
        print(f"FAIL missing {', '.join(missing)}: run scripts/install-deps")
        sys.exit(1)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def port_open(port):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


class Process:
    """A server process with its log file; stopped by pid."""

    def __init__(self, name, argv, log_path):
        self.name, self.argv, self.log_path = name, argv, log_path
        self.proc = None

    def start(self):
        log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(self.argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        log.close()
        return self

    def log(self):
        try:
            with open(self.log_path, errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def kill(self, sig=signal.SIGKILL):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(sig)
            self.proc.wait(timeout=60)

    def running(self):
        return self.proc is not None and self.proc.poll() is None


class NatsNode(Process):
    """One nats-server with JetStream, from a config file it writes."""

    def __init__(self, directory, name, extra="", domain=None, cluster=None, leaf_listen=None, leaf_remote=None,
                 leaf_advertise=None):
        os.makedirs(directory, exist_ok=True)
        self.directory = directory
        self.port = free_port()
        self.http_port = free_port()
        self.cluster_port = free_port() if cluster is not None else None
        self.leaf_port = free_port() if leaf_listen else None
        self.config_path = os.path.join(directory, f"{name}.conf")
        self.server_name = name
        self.domain = domain
        self.extra = extra
        self.cluster = cluster
        self.leaf_remote = leaf_remote
        self.leaf_advertise = leaf_advertise
        super().__init__(name, [NATS_SERVER, "-c", self.config_path], os.path.join(directory, f"{name}.log"))

    def url(self):
        return f"nats://127.0.0.1:{self.port}"

    def write_config(self, routes=()):
        lines = [f"server_name: {self.server_name}", f"listen: 127.0.0.1:{self.port}", f"http: 127.0.0.1:{self.http_port}",
                 "jetstream {", f"  store_dir: \"{os.path.join(self.directory, self.server_name + '-js')}\""]
        if self.domain:
            lines.append(f"  domain: {self.domain}")
        lines.append("}")
        if self.cluster is not None:
            lines += ["cluster {", f"  name: {self.cluster}", f"  listen: 127.0.0.1:{self.cluster_port}",
                      "  no_advertise: true",
                      "  routes: [" + ", ".join(f"nats-route://127.0.0.1:{p}" for p in routes) + "]", "}"]
        if self.leaf_port:
            lines += ["leafnodes {", f"  listen: 127.0.0.1:{self.leaf_port}"]
            if self.leaf_advertise:
                # The trap of the fleet note: without it, a leaf learns the hub's other leaf
                # ports and goes around the proxy, and the "partition" cuts nothing.
                lines.append(f"  advertise: \"{self.leaf_advertise}\"")
            lines.append("}")
        if self.leaf_remote:
            lines += ["leafnodes {", "  reconnect: 1",
                      f"  remotes: [ {{ urls: [\"nats-leaf://{self.leaf_remote}\"] }} ]", "}"]
        lines.append(self.extra)
        with open(self.config_path, "w") as f:
            f.write("\n".join(lines) + "\n")

    def start(self, wait=True):
        mark = len(self.log())
        super().start()
        if wait:
            wait_until(lambda: "Server is ready" in self.log()[mark:] or not self.running(),
                       f"{self.name} ready", lambda: self.log()[-500:], timeout=60)
            if not self.running():
                raise AssertionError(f"{self.name} exited: {self.log()[-1000:]}")
        return self

    def jsz(self, query="streams=true&consumers=true"):
        with urllib.request.urlopen(f"http://127.0.0.1:{self.http_port}/jsz?{query}", timeout=5) as r:
            return json.loads(r.read())

    def varz(self):
        with urllib.request.urlopen(f"http://127.0.0.1:{self.http_port}/varz", timeout=5) as r:
            return json.loads(r.read())

    def leaf_connections(self):
        """The node's leaf connections, from its own monitoring; monitoring that cannot be read
        fails the test (a check that reads 0 then would pass on nothing)."""
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.http_port}/leafz", timeout=5) as r:
                return len(json.loads(r.read()).get("leafs") or [])
        except OSError as error:
            raise AssertionError(f"{self.name}: /leafz cannot be read: {error}") from error

    def stream_messages(self, stream):
        """The messages the node's monitoring says `stream` holds; fails the test when the
        monitoring cannot be read or does not list the stream."""
        try:
            details = self.jsz("streams=true").get("account_details", [])
        except OSError as error:
            raise AssertionError(f"{self.name}: /jsz cannot be read: {error}") from error
        for account in details:
            for s in account.get("stream_detail", []):
                if s["name"] == stream:
                    return s["state"]["messages"]
        raise AssertionError(f"{self.name}: /jsz does not list the stream {stream}")


def single_node(directory, extra=""):
    node = NatsNode(directory, "n1", extra=extra)
    node.write_config()
    return node.start()


def cluster_of_three(directory, domain="hub", before_start=None):
    """Three JetStream nodes in one cluster, each with a leafnodes port; before_start(nodes) may
    change their settings (a leaf proxy's advertise) before the configs are written."""
    nodes = [NatsNode(directory, f"hub{i}", domain=domain, cluster="hub", leaf_listen=True) for i in (1, 2, 3)]
    if before_start:
        before_start(nodes)
    for node in nodes:
        node.write_config(routes=[n.cluster_port for n in nodes if n is not node])
    for node in nodes:
        node.start(wait=False)
    for node in nodes:
        wait_until(lambda: "Server is ready" in node.log() or not node.running(), f"{node.name} ready",
                   lambda: node.log()[-500:], timeout=60)
    # JetStream is usable once every node knows the meta group's leader.
    wait_until(lambda: len({meta_leader(n) for n in nodes} - {None}) == 1 and all(meta_leader(n) for n in nodes),
               "every node knows the JetStream meta leader", lambda: str([meta_leader(n) for n in nodes]),
               timeout=60)
    return nodes


def meta_leader(node):
    try:
        return node.jsz("").get("meta_cluster", {}).get("leader")
    except OSError:
        return None


def stream_leader(nodes, stream):
    for node in nodes:
        if not node.running():
            continue
        try:
            for account in node.jsz("streams=true").get("account_details", []):
                for s in account.get("stream_detail", []):
                    if s.get("name") == stream and s.get("cluster", {}).get("leader"):
                        return s["cluster"]["leader"]
        except OSError:
            continue
    return None


class TcpProxy:
    """A loopback proxy for a link: passes bytes, holds them (the link stalls, connections
    stay up) or cuts it (connections closed, new ones closed at once)."""

    def __init__(self, target_port):
        self.target_port = target_port
        self.listener = socket.socket()
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(16)
        self.port = self.listener.getsockname()[1]
        self.mode = "pass"
        self.cond = threading.Condition()
        self.connections = []
        self.accepted = 0
        self.reply_marker = None
        threading.Thread(target=self._accept, daemon=True).start()

    def hold_replies_after(self, marker):
        """From a connection's request holding marker (bytes) on, the peer's replies on that
        connection are held (the request passes: the peer does the work, its answer is late);
        None releases them."""
        with self.cond:
            self.reply_marker = marker
            self.cond.notify_all()

    def set_mode(self, mode):
        with self.cond:
            self.mode = mode
            if mode == "cut":
                for a, b in self.connections:
                    for s in (a, b):
                        try:
                            s.shutdown(socket.SHUT_RDWR)
                        except OSError:
                            pass
                        s.close()
                self.connections = []
            self.cond.notify_all()

    def _accept(self):
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            with self.cond:
                if self.mode == "cut":
                    client.close()
                    continue
            try:
                upstream = socket.create_connection(("127.0.0.1", self.target_port), timeout=5)
                upstream.settimeout(None)
            except OSError:
                client.close()
                continue
            with self.cond:
                self.accepted += 1
                self.connections.append((client, upstream))
            marked = {"seen": False}
            for a, b, replies in ((client, upstream, False), (upstream, client, True)):
                threading.Thread(target=self._pump, args=(a, b, replies, marked), daemon=True).start()

    def _pump(self, source, sink, replies=False, marked=None):
        while True:
            try:
                data = source.recv(65536)
            except OSError:
                data = b""
            if not data:
                break
            with self.cond:
                if not replies and self.reply_marker and self.reply_marker in data:
                    marked["seen"] = True
                while self.mode == "hold" or (replies and marked["seen"] and self.reply_marker):
                    self.cond.wait()
                if self.mode == "cut":
                    break
            try:
                sink.sendall(data)
            except OSError:
                break
        for s in (source, sink):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def close(self):
        self.listener.close()
        self.set_mode("cut")


class RawNats:
    """A NATS client of a few lines of the protocol: CONNECT, HPUB, SUB, PING/PONG."""

    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=30)
        self.reader = self.sock.makefile("rb")
        info = self.reader.readline()
        assert info.startswith(b"INFO "), info
        self.sock.sendall(b'CONNECT {"verbose":false,"pedantic":false,"headers":true,"protocol":1}\r\n')
        self.flush()

    def publish(self, subject, headers, body):
        head = b"NATS/1.0\r\n" + b"".join(f"{k}: {v}\r\n".encode() for k, v in headers.items()) + b"\r\n"
        self.sock.sendall(f"HPUB {subject} {len(head)} {len(head) + len(body)}\r\n".encode() + head + body + b"\r\n")

    def subscribe(self, subject, sid=1):
        """Interest in subject (what the server sends for it is not read)."""
        self.sock.sendall(f"SUB {subject} {sid}\r\n".encode())
        self.flush()

    def flush(self):
        self.sock.sendall(b"PING\r\n")
        line = self.reader.readline()
        assert line.startswith(b"PONG"), line

    def close(self):
        """Closes the connection (the reader's file holds the socket open until closed too)."""
        self.reader.close()
        self.sock.close()


class ClickHouse(Process):
    """clickhouse-server; `shards` (tcp ports) makes a remote_servers cluster named fleet."""

    def __init__(self, directory, tcp_port=None, shards=()):
        os.makedirs(directory, exist_ok=True)
        self.directory = directory
        self.http_port = free_port()
        self.tcp_port = tcp_port or free_port()
        self.interserver_port = free_port()
        cluster = "".join(f"<shard><replica><host>127.0.0.1</host><port>{port}</port></replica></shard>"
                          for port in shards)
        remote_servers = f"<remote_servers><fleet>{cluster}</fleet></remote_servers>" if shards else ""
        config = os.path.join(directory, "config.xml")
        with open(config, "w") as f:
            f.write(f"""<?xml version="1.0"?>
<yandex>
  <logger><level>warning</level><log>{directory}/server.log</log><errorlog>{directory}/error.log</errorlog></logger>
  <listen_host>127.0.0.1</listen_host>
  <http_port>{self.http_port}</http_port>
  <tcp_port>{self.tcp_port}</tcp_port>
  <interserver_http_port>{self.interserver_port}</interserver_http_port>
  <path>{directory}/data/</path>
  <tmp_path>{directory}/tmp/</tmp_path>
  <user_files_path>{directory}/user_files/</user_files_path>
  <format_schema_path>{directory}/format_schemas/</format_schema_path>
  <users_config>/etc/clickhouse-server/users.xml</users_config>
  <default_profile>default</default_profile>
  <default_database>default</default_database>
  <timezone>UTC</timezone>
  <mark_cache_size>536870912</mark_cache_size>
  {remote_servers}
</yandex>
""")
        super().__init__("clickhouse", [CLICKHOUSE_SERVER, f"--config-file={config}"],
                         os.path.join(directory, "console.log"))

    def url(self):
        return f"http://127.0.0.1:{self.http_port}"

    def answers(self):
        try:
            with urllib.request.urlopen(self.url() + "/", timeout=2) as r:
                return r.read().strip() == b"Ok."
        except OSError:
            return False

    def start(self):
        super().start()
        wait_until(lambda: self.answers() or not self.running(), "clickhouse-server answers Ok.",
                   lambda: self.log()[-500:], timeout=90)
        if not self.running():
            raise AssertionError(f"clickhouse-server exited: {self.log()[-1000:]}")
        return self

    def query(self, sql):
        """The oracle: clickhouse-client, ClickHouse's own client over its native protocol."""
        result = subprocess.run([CLICKHOUSE_CLIENT, "--port", str(self.tcp_port), "-q", sql], capture_output=True,
                                text=True, timeout=120)
        if result.returncode != 0:
            raise AssertionError(f"clickhouse-client: {result.stderr.strip()[:500]}")
        return result.stdout


def read_stream(server_url, stream, domain=None, inputs=None, settled=True):
    """Every record of the stream, accounted for by the official NATS JavaScript client.
    inputs ({board or "board run": the lines given to trace-ship}) has each stored record's
    body checked against them (runs[key]["input"], see read_stream.mjs). A line in the stream
    that is not a stamped record fails the read; so does, when the stream is settled (nothing
    being shipped into it), a count of messages read other than the count the server holds."""
    argv = ["node", os.path.join(os.path.dirname(__file__), "read_stream.mjs"), server_url, stream]
    if domain:
        argv += ["--domain", domain]
    with tempfile.TemporaryDirectory(prefix="tp-read-stream-") as work:
        for number, (key, lines) in enumerate((inputs or {}).items()):
            path = os.path.join(work, f"input-{number}.ndjson")
            with open(path, "w") as f:
                f.write("\n".join(lines) + "\n")
            argv += ["--input", f"{key}={path}"]
        result = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    if result.returncode != 0:
        raise AssertionError(f"read_stream.mjs: {result.stderr.strip()[-800:]}")
    account = json.loads(result.stdout)
    if account["bad_lines"] != 0:
        raise AssertionError(f"read_stream.mjs: {account['bad_lines']} lines in {stream} are not stamped records")
    if settled and account["messages"] != account["stored_messages"]:
        raise AssertionError(f"read_stream.mjs: read {account['messages']} messages of {stream}, the server holds "
                             f"{account['stored_messages']}")
    return account


def body_problems(run, expected_lost=0):
    """What is wrong with a run's records against the lines that went in (read_stream with
    inputs): each stored record is an input line, in order, and the input lines not stored are
    exactly expected_lost, each where the stream has a seq missing. An empty list when right."""
    body = run.get("input") if run else None
    if body is None:
        return ["the run was not read against its input"]
    problems = []
    if body["not_in_input"]:
        problems.append(f"records not in the input (or out of its order), seqs {body['not_in_input']}")
    if body["lost"] != expected_lost:
        problems.append(f"{body['lost']} input lines not stored, not {expected_lost} (input lines "
                        f"{body['lost_ranges'][:6]})")
    if body["unaccounted"]:
        problems.append(f"{body['unaccounted']} input lines not stored where no seq is missing")
    if body["matched"] + body["lost"] != body["lines"]:
        problems.append(f"{body['matched']} stored + {body['lost']} lost != {body['lines']} written")
    return problems


def stats_of(stderr_text):
    """The JSON of a tool's `--stats` line."""
    for line in stderr_text.splitlines():
        if ": stats {" in line:
            return json.loads(line.split(": stats ", 1)[1])
    return None
