#!/usr/bin/env python3
"""eko-collect against real GDB servers: QEMU's gdbstub running the rig firmware
(tests/eko/fw, cross-built here: Cortex-M3 32-bit LE, AArch64 64-bit LE, ARMv7 BE8
32-bit BE) and GNU gdbserver running the same firmware natively (run-length-encoded
replies, no-ack mode). gdb-multiarch in batch mode is the independent reader.
- the CSV equals the firmware's deterministic sequence, every entry once, no log lost;
- CSV equals gdb's read of the same halted memory (--no-clear);
- symbols and addresses mixed; ELF word size / endianness detection; flag contradictions;
- in_use held -> skipped and counted, data still complete; NULL tracers (QEMU -S);
  an unmapped address (E14); all tracers unreadable -> exit 6;
- the server killed mid-run -> exit 7, CSV intact; SIGTERM while the target is halted
  -> exit 143 and the target runs on; the target runs on after every exit;
- --format ndjson through trace-csv --preset ekotrace gives the same rows.
Usage: test_eko_collect.py EKO_COLLECT TRACE_CSV WORK_DIR"""
import csv
import io
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from checks import Checks  # noqa: E402
from waits import WaitTimeout, wait_until  # noqa: E402

tool, trace_csv, work = sys.argv[1], sys.argv[2], sys.argv[3]
here = os.path.dirname(os.path.abspath(__file__))
check = Checks(show_passes=True)

TARGETS = {  # name: (qemu command, elf, word size, endianness)
    "cm3": (["qemu-system-arm", "-M", "lm3s6965evb", "-cpu", "cortex-m3"], "fw-cm3.elf", 4, "little"),
    "a64": (["qemu-system-aarch64", "-M", "virt", "-cpu", "cortex-a53"], "fw-a64.elf", 8, "little"),
    "armbe": (["qemu-system-arm", "-M", "virt", "-cpu", "cortex-a15"], "fw-armbe.elf", 4, "big"),
}




def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_listening(port, proc, seconds=60):
    # Never probe with connect(): every connection pauses the VM (QEMU's gdbstub).
    deadline = time.time() + seconds
    while time.time() < deadline:
        if proc.poll() is not None:
            return False
        if f":{port} " in subprocess.run(["ss", "-ltnH"], capture_output=True, text=True).stdout:
            return True
        time.sleep(0.05)
    return False


class Qemu:
    def __init__(self, target, halted=False):
        command, elf, self.word, self.endian = TARGETS[target]
        self.elf = os.path.join(work, elf)
        self.port = free_port()
        self.log = open(os.path.join(work, f"qemu-{target}.log"), "w")
        args = command + ["-nographic", "-kernel", self.elf, "-gdb", f"tcp:127.0.0.1:{self.port}"]
        if target != "cm3":
            args += ["-nic", "none"]  # virt's default NIC wants a ROM Debian ships only with recommends
        self.proc = subprocess.Popen(args + (["-S"] if halted else []), stdin=subprocess.DEVNULL, stdout=self.log,
                                     stderr=subprocess.STDOUT)
        if not wait_listening(self.port, self.proc):
            raise RuntimeError(f"QEMU for {target} did not start: {open(self.log.name).read()}")
        self.server = f"127.0.0.1:{self.port}"

    def gdb(self, *commands, leave="detach"):
        """gdb-multiarch in batch mode; returns the values printed ($N = value), in order."""
        args = ["gdb-multiarch", "-batch", "-nx", "-ex", "set confirm off", "-ex", f"target remote {self.server}"]
        for c in commands:
            args += ["-ex", c]
        args += ["-ex", leave, self.elf]
        out = subprocess.run(args, capture_output=True, text=True, timeout=60).stdout
        return re.findall(r"^\$\d+ = (.*)$", out, re.M) + re.findall(r"^0x[0-9a-f]+ <logs(?:\+\d+)?>:(.*)$", out, re.M)

    def value(self, expression):
        return int(self.gdb(f"print/d {expression}")[0])

    def running(self):
        first = self.value("g_counter")
        time.sleep(0.3)
        return self.value("g_counter") > first

    def stop(self):
        self.proc.kill()
        self.proc.wait()
        self.log.close()


def collect(*args, timeout=120):
    return subprocess.run([tool, *args], capture_output=True, text=True, timeout=timeout)


def parse_csv(text):
    rows = list(csv.reader(io.StringIO(text)))
    return rows[0] if rows else [], rows[1:]


def entries(rows, tracer_id):
    """('c', id, count) / ('e', id, payload|None) for one tracer, in order."""
    out = []
    for r in rows:
        if int(r[4]) != tracer_id:
            continue
        if r[5] == "":
            out.append(("c", int(r[7]), int(r[8])))
        else:
            out.append(("e", int(r[5]), int(r[6]) if r[6] else None))
    return out


def step_entry(n):
    if n % 3 == 0:
        return ("e", 100, n)
    return ("e", 1 + n % 5, None)


def model(tracer_id, first_n, count):
    """The firmware's sequence for one tracer from step first_n (tests/eko/fw/tracer.c)."""
    out, n = [], first_n
    while len(out) < count:
        if tracer_id == 2:
            if n % 16 == 0:
                out += [("c", 2, n // 8), ("c", 1, n // 8)]
            elif n % 2 == 0:
                out.append(("c", 2, n // 8) if n % 8 == 0 else step_entry(n))
        else:
            out.append(("c", tracer_id, n // 8) if n % 8 == 0 else step_entry(n))
        n += 1
    return out[:count]


def sequence_complete(rows, tracer_id):
    """Every entry once and in order: the restart clocks each clear writes are dropped
    (they repeat the last count of that clock), the rest must follow the firmware's steps."""
    got = entries(rows, tracer_id)
    # The first event with a payload (its step number) says where the sequence is.
    i = next((k for k, e in enumerate(got) if e[0] == "e" and e[1] == 100), None)
    if i is None:
        return False, f"{len(got)} entries, starting {got[:3]}"
    start_n = got[i][2]
    last_clock, items = {}, []
    for item in got[:i]:
        if item[0] == "c":
            last_clock[item[1]] = item[2]
    for item in got[i:]:
        if item[0] == "c" and last_clock.get(item[1]) == item[2]:
            continue
        if item[0] == "c":
            last_clock[item[1]] = item[2]
        items.append(item)
    want = model(tracer_id, start_n, len(items))
    bad = next((k for k, (a, b) in enumerate(zip(items, want)) if a != b), None)
    return bad is None and len(items) > 50, f"{len(items)} entries from step {start_n}; first difference at {bad}: " \
        f"{items[bad - 2:bad + 3] if bad is not None else ''} vs {want[bad - 2:bad + 3] if bad is not None else ''}"


def address_of(qemu, symbol):
    return qemu.gdb(f"print/x &{symbol}")[0]


def target_run(target):
    q = Qemu(target)
    try:
        t3 = address_of(q, "TRACER_3")
        out = os.path.join(work, f"{target}.csv")
        if os.path.exists(out):
            os.remove(out)
        r = collect("-e", q.elf, "-g", q.server, "-i", "10", "--polls", "150", "--stats", "-v", "-o", out,
                    "TRACER_1", "TRACER_2", t3, "TRACER_16")
        check(r.returncode == 0, f"{target}: 150 polls, exit 0", r.stderr[-2000:])
        bits = q.word * 8
        check(f"target {bits}-bit {q.endian} endian" in r.stderr and f"ELF{bits}" in r.stderr,
              f"{target}: ELF{bits} {q.endian} endian detected from the ELF", r.stderr[:600])
        check("acknowledged mode" in r.stderr, f"{target}: QEMU has no no-ack mode: acknowledged mode used",
              r.stderr[-1500:])
        with open(out) as f:
            header, rows = parse_csv(f.read())
        check(header == ["session_id", "segment_id", "segment_index", "receive_time", "tracer_id", "event_id",
                         "event_payload", "lc_tracer_id", "lc_clock"], f"{target}: ekotrace's CSV header", header)
        for tracer_id in (1, 2, 3, 16):
            ok, detail = sequence_complete(rows, tracer_id)
            check(ok, f"{target}: tracer {tracer_id} (symbols and 0x{t3[2:]} mixed): every entry once, in order",
                  detail)
        check(q.running(), f"{target}: the target runs after eko-collect exits")
        segments = {(r[1]) for r in rows}
        check(all(r[0] == "0" for r in rows) and len(segments) > 100 and
              all(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z", r[3]) for r in rows[:50]),
              f"{target}: session 0, segments numbered, RFC 3339 receive times", rows[:3])
        # The same memory read by gdb and by eko-collect --no-clear, the VM paused between them.
        # Paused outside a step: inside one (in_use set, ~1 time in 16) eko-collect rightly
        # skips the tracer, so then let it run on and pause it again.
        for _ in range(50):
            words = q.gdb("print/d TRACER_1->history->in_use", "print/d TRACER_1->history->compact_log.len",
                          "print/x TRACER_1->history->compact_log.storage_ptr",
                          "x/256wx TRACER_1->history->compact_log.storage_ptr", leave="disconnect")
            if int(words[0]) == 0:
                break
            q.gdb(leave="detach")  # resumes the VM
        words = words[1:]
        length = int(words[0])
        items = [int(w, 16) for line in words[2:] for w in line.split()][:length]
        want, k = [], 0
        while k < len(items):
            if items[k] & 0x80000000:
                want.append(("c", items[k] & 0x7fffffff, items[k + 1]))
                k += 2
            elif items[k] & 0x40000000:
                want.append(("e", items[k] & 0x3fffffff, items[k + 1]))
                k += 2
            else:
                want.append(("e", items[k], None))
                k += 1
        r = collect("-e", q.elf, "-g", q.server, "--no-clear", "--polls", "1", "TRACER_1")
        got = entries(parse_csv(r.stdout)[1], 1)
        check(r.returncode == 0 and got == want and len(want) > 0,
              f"{target}: --no-clear on a halted target = gdb-multiarch's read of the same log ({len(want)} entries)",
              f"{got[:4]} vs {want[:4]} {r.stderr}")
        check(q.running(), f"{target}: a target found halted runs after eko-collect")
        r = collect("-e", q.elf, "-g", q.server, "-w", "64" if bits == 32 else "32", "TRACER_1")
        check(r.returncode == 2 and "contradicts" in r.stderr, f"{target}: --word-size contradicting the ELF -> 2",
              r.stderr)
        layout = collect("-e", q.elf, "--print-layout")
        check(f'"word_size":{q.word}' in layout.stdout, f"{target}: --print-layout shows {bits}-bit offsets",
              layout.stdout)
    finally:
        q.stop()


def in_use_and_errors():
    q = Qemu("cm3")
    try:
        q.gdb("set var g_hold_in_use = 400000")  # the firmware now spends most time inside the tracers
        out = os.path.join(work, "in-use.csv")
        if os.path.exists(out):
            os.remove(out)  # eko-collect appends
        r = collect("-e", q.elf, "-g", q.server, "-i", "10", "--polls", "200", "--stats", "-o", out, "TRACER_1",
                    "0xfffffff0")
        skipped = re.search(r"tracer TRACER_1: \d+ entries in \d+ polls; skipped: (\d+) in use", r.stderr)
        # Tracer 1 is inside a step about 1/16 of the time (16 tracers step in turn): ~5% of 200
        # polls. The USB test has a tracer whose in_use never clears, for the exact count.
        check(r.returncode == 0 and skipped and int(skipped.group(1)) >= 1,
              "in_use held: polls skip the tracer and count it", r.stderr[-1500:])
        with open(out) as f:
            ok, detail = sequence_complete(parse_csv(f.read())[1], 1)
        check(ok, "in_use held: what is read is still complete", detail)
        check("cannot read the tracer reference at 0xfffffff0" in r.stderr and
              re.search(r"tracer 0xfffffff0: 0 entries .* (\d+) unreadable", r.stderr),
              "unmapped address (E14): warned, counted, the other tracer collected", r.stderr[-1500:])
        r = collect("-e", q.elf, "-g", q.server, "0xfffffff0")
        check(r.returncode == 6 and "no tracer could be read" in r.stderr, "only unreadable tracers -> exit 6", r.stderr)
        r = collect("-e", q.elf, "-g", q.server, "NO_SUCH_TRACER")
        check(r.returncode == 3 and "NO_SUCH_TRACER" in r.stderr, "unknown symbol -> exit 3", r.stderr)
        r = collect("-g", q.server, "TRACER_1")
        check(r.returncode == 2 and "--elf" in r.stderr, "symbol without --elf -> usage error", r.stderr)
        r = collect("-e", q.elf, "-g", q.server, "-s", "4294967296", "TRACER_1")
        check(r.returncode == 2 and "session-id" in r.stderr, "a session id past u32 (ekotrace's type) -> usage error",
              r.stderr)
        check(q.running(), "the target runs after the error exits")
    finally:
        q.stop()


def null_tracer():
    q = Qemu("cm3", halted=True)  # -S: nothing ran yet, TRACER_1 is NULL
    try:
        r = collect("-e", q.elf, "-g", q.server, "-i", "20", "--polls", "30", "--stats", "TRACER_1")
        null = re.search(r"skipped: \d+ in use, (\d+) NULL", r.stderr)
        rows = parse_csv(r.stdout)[1]
        check(r.returncode == 0 and null and int(null.group(1)) >= 1 and "NULL" in r.stderr and len(rows) > 0,
              "QEMU -S: a NULL tracer is counted, collection starts once the firmware set it", r.stderr[-800:])
    finally:
        q.stop()


def server_goes_away():
    q = Qemu("cm3")
    out = os.path.join(work, "away.csv")
    if os.path.exists(out):
        os.remove(out)
    proc = subprocess.Popen([tool, "-e", q.elf, "-g", q.server, "-i", "10", "-o", out, "TRACER_1", "TRACER_2"],
                            stderr=subprocess.PIPE, text=True)

    def rows_written():
        try:
            with open(out) as f:
                return f.read().count("\n") - 1
        except OSError:
            return 0
    try:  # killed once it has collected for a while
        wait_until(lambda: rows_written() > 150, "eko-collect writes rows", lambda: f"{rows_written()} rows")
    except WaitTimeout as e:
        check(False, "server killed mid-run: rows before it", str(e))
    q.stop()
    _, err = proc.communicate(timeout=30)
    with open(out) as f:
        text = f.read()
    header, rows = parse_csv(text)
    check(proc.returncode == 7 and ("closed the connection" in err or "connection lost" in err), "server killed mid-run -> exit 7, clear message",
          f"{proc.returncode} {err}")
    check(text.endswith("\n") and len(rows) > 100 and all(len(r) == 9 for r in rows) and
          text.count("session_id") == 1, "server killed mid-run: the CSV holds whole rows only", text[-300:])


class DelayingProxy(threading.Thread):
    """Between eko-collect and QEMU: after the client's interrupt (0x03) the stop reply is
    held back for `hold` seconds, so the target stays halted inside a poll."""

    def __init__(self, server_port, hold):
        super().__init__(daemon=True)
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.server_port, self.hold = server_port, hold
        self.interrupted = threading.Event()

    def run(self):
        client, _ = self.listener.accept()
        server = socket.create_connection(("127.0.0.1", self.server_port))

        def upstream():
            while data := client.recv(65536):
                if b"\x03" in data and not self.interrupted.is_set():
                    self.interrupted.set()
                server.sendall(data)
            server.shutdown(socket.SHUT_WR)

        threading.Thread(target=upstream, daemon=True).start()
        held = False
        while data := server.recv(65536):
            if self.interrupted.is_set() and not held:
                held = True
                time.sleep(self.hold)
            client.sendall(data)
        client.close()


def sigterm_while_halted():
    q = Qemu("cm3")
    try:
        proxy = DelayingProxy(q.port, 1.5)
        proxy.start()
        out = os.path.join(work, "sigterm.csv")
        if os.path.exists(out):
            os.remove(out)
        proc = subprocess.Popen([tool, "-e", q.elf, "-g", f"127.0.0.1:{proxy.port}", "-i", "2000", "-o", out,
                                 "TRACER_1"], stderr=subprocess.PIPE, text=True)
        # The first poll is on the halted target after connecting; the second starts with 0x03.
        got = proxy.interrupted.wait(30)
        time.sleep(0.5)  # QEMU has halted the VM; its stop reply is held by the proxy
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
        check(got and proc.returncode == 143, "SIGTERM while the target is halted -> exit 143", f"{proc.returncode} {err}")
        check(q.running(), "SIGTERM while the target is halted: the target runs afterwards (its counter advances)")
    finally:
        q.stop()


def ndjson_through_trace_csv():
    q = Qemu("cm3")
    try:
        r = collect("-e", q.elf, "-g", q.server, "--format", "ndjson", "--polls", "3", "-i", "10", "TRACER_1")
        lines = r.stdout.splitlines()
        check(r.returncode == 0 and len(lines) > 10 and '"kind":"EkoClock"' in lines[0] and
              '"source":"ekotrace"' in lines[0], "--format ndjson: EkoClock/EkoEvent records", lines[:1])
        schema_dir = os.path.join(here, "..", "schema")
        if shutil.which("node") and os.path.isdir(os.path.join(schema_dir, "node_modules", "ajv")):
            records = os.path.join(work, "eko.ndjson")
            with open(records, "w") as f:
                f.write(r.stdout)
            v = subprocess.run(["node", os.path.join(schema_dir, "validate_file.mjs"), os.path.join(here, "..", ".."),
                                records], capture_output=True, text=True)
            check(v.returncode == 0, "--format ndjson: every record valid under lib/records/record.schema.json",
                  v.stdout)
        else:
            print("skip schema check: node or tests/schema/node_modules missing")
        flat = subprocess.run([trace_csv, "--preset", "ekotrace"], input=r.stdout, capture_output=True, text=True)
        header, rows = parse_csv(flat.stdout)
        check(header[0] == "session_id" and len(rows) == len(lines) and rows[0][7] == "1",
              "--format ndjson | trace-csv --preset ekotrace: ekotrace's columns back", flat.stdout[:300])
    finally:
        q.stop()


def process_runs(pid, seconds=3):
    """True once the process is running or sleeping (not stopped under ptrace): the detach
    that lets it go takes a moment to reach the kernel."""
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            with open(f"/proc/{pid}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except FileNotFoundError:
            return False
        if state in ("R", "S"):
            return True
        time.sleep(0.05)
    return False


def gdbserver_native():
    exe = os.path.join(work, "native-tracer")
    subprocess.run(["gcc", "-O2", "-no-pie", "-I", os.path.join(here, "fw"), "-DIDLE_LOOPS=2000000", "-DHOLD_IN_USE=100",
                    os.path.join(here, "fw", "tracer.c"), os.path.join(here, "native_main.c"), "-o", exe], check=True)
    port = free_port()
    server = subprocess.Popen(["gdbserver", f"127.0.0.1:{port}", exe], stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
    pid = None
    try:
        line = server.stdout.readline()
        pid = int(re.search(r"pid = (\d+)", line).group(1))
        r = collect("-e", exe, "-g", f"127.0.0.1:{port}", "-i", "20", "--polls", "20", "--stats", "-v", "TRACER_1",
                    "TRACER_2")
        rle = re.search(r"(\d+) run-length-encoded replies", r.stderr)
        check(r.returncode == 0 and "no-ack mode" in r.stderr and rle and int(rle.group(1)) > 0,
              "GNU gdbserver: no-ack mode negotiated, run-length-encoded replies decoded", r.stderr[-1200:])
        rows = parse_csv(r.stdout)[1]
        check(len(entries(rows, 1)) > 0 and len(entries(rows, 2)) > 0 and "64-bit little endian" in r.stderr,
              "GNU gdbserver: both tracers collected from the native x86-64 process (ELF64)", r.stderr[-500:])
        check(process_runs(pid), "GNU gdbserver: the process runs on after eko-collect detached")
    finally:
        if pid:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        server.kill()
        server.wait()


def main():
    missing = [t for t in ("qemu-system-arm", "arm-none-eabi-gcc", "gdb-multiarch") if not shutil.which(t)]
    if missing:
        print(f"skipped: {', '.join(missing)} not installed (scripts/install-deps installs them)")
        return 77
    os.makedirs(work, exist_ok=True)
    subprocess.run([os.path.join(here, "fw", "build.sh"), work], check=True)
    for target in TARGETS:
        command, elf = TARGETS[target][0][0], TARGETS[target][1]
        if not shutil.which(command) or not os.path.exists(os.path.join(work, elf)):
            check(False, f"{target}: {command} or its cross compiler is missing")
            continue
        target_run(target)
    in_use_and_errors()
    null_tracer()
    server_goes_away()
    sigterm_while_halted()
    ndjson_through_trace_csv()
    if shutil.which("gdbserver"):
        gdbserver_native()
    else:
        check(False, "gdbserver is not installed")
    return check.summary()


if __name__ == "__main__":
    sys.exit(main())
