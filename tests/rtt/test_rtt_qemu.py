#!/usr/bin/env python3
"""rtt-capture and sysview-decode against SEGGER's own target code on QEMU: the rig firmware
(tests/rtt/fw: SEGGER_RTT.c, SEGGER_RTT_printf.c and SEGGER_SYSVIEW.c from ../shared, unmodified)
on a Cortex-M3 (lm3s6965evb), a Cortex-M0 (microbit) and an RV32 (virt), read through QEMU's
gdbstub (which answers only a halted target: rtt-capture halts it for each read). gdb-multiarch reads the
firmware's ground truth back independently.
- --list: names, sizes and modes as SEGGER_RTT_Init and the rig configured them; the block
  found by --elf, by a scan of RAM (the scan reading around the end of the M0's 16 KiB), and
  waited for at a wrong --address (exit 3, what is wrong said);
- channel 0: printf over RTT (BLOCK_IF_FIFO_FULL), every line once, in order, byte count
  equal to what SEGGER_RTT_printf stored; a down-channel round trip (--send "ping" comes back
  as "echo: ping"); channel 2 in NO_BLOCK_SKIP overflowed on purpose: "buffer full" reported,
  an Overflow record, exactly the bytes SEGGER_RTT_Write accepted;
- channel 1: a SystemView recording started by rtt-capture's start command: every record
  equals what the calls in the firmware's log (SysTick and a nested IRQ from their handlers,
  a stretch that overflows on purpose) say, with exact timestamps; the stop command reaches
  the target;
- a target reset mid-capture (QEMU's system_reset): the re-initialised block is noticed and
  read again; SIGTERM: exit 143, the target runs on; the server killed mid-capture: exit 7;
- through a relay (gdb_relay.py) that acts while the target is halted for a poll: SIGHUP,
  SIGQUIT, SIGINT and SIGTERM then end rtt-capture with 128+N after it resumed the target;
  the reader of its output gone then (SIGPIPE's case): exit 0, the target resumed; the RdOff
  write answered E01: exit 6, the bytes of that read written out first; a stop signal in
  the middle of --scan 0:4G: the target left running (QEMU's monitor says so) (Cortex-M3);
- the target runs after every exit.
Usage: test_rtt_qemu.py RTT_CAPTURE SYSVIEW_DECODE SHARED_DIR WORK_DIR"""
import json
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import threading
import time

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "support"))
sys.path.insert(0, os.path.join(here, "..", "sysview"))
from checks import Checks  # noqa: E402
from segger_model import expected_records, records_as_tuples  # noqa: E402
from gdb_relay import GdbRelay  # noqa: E402
from waits import WaitTimeout, wait_until  # noqa: E402

rtt_capture, sysview_decode, shared, work = sys.argv[1:5]
segger = os.path.join(shared, "reference", "segger")
if not os.path.isdir(segger):
    print(f"skipped: {segger} not found")
    sys.exit(77)
missing = [t for t in ("qemu-system-arm", "arm-none-eabi-gcc", "qemu-system-riscv32", "riscv64-unknown-elf-gcc",
                       "gdb-multiarch") if not shutil.which(t)]
if missing:
    print(f"FAIL missing {', '.join(missing)}: run scripts/install-deps")
    sys.exit(1)
check = Checks(show_passes=True)
os.makedirs(work, exist_ok=True)
subprocess.run([os.path.join(here, "fw", "build.sh"), segger, work], check=True)

# name: (QEMU command, RAM to scan, interrupts recorded)
MACHINES = {
    "cm3": (["qemu-system-arm", "-M", "lm3s6965evb", "-cpu", "cortex-m3"], "0x20000000:64K", True),
    "m0": (["qemu-system-arm", "-M", "microbit"], "0x20000000:64K", True),
    "rv32": (["qemu-system-riscv32", "-M", "virt", "-bios", "none"], "0x80000000:256K", False),
}
RIG_LINES = 200
RIG_BURST = 1000
TASK_NAMES = ["Main", "Sensor", "Comms"]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Qemu:
    def __init__(self, name):
        self.elf = os.path.join(work, f"rig-{name}.elf")
        self.port = free_port()
        self.monitor = os.path.join(work, f"monitor-{name}-{self.port}.sock")
        self.log = open(os.path.join(work, f"qemu-{name}.log"), "w")
        self.proc = subprocess.Popen([*MACHINES[name][0], "-display", "none", "-serial", "null",
                                      "-monitor", f"unix:{self.monitor},server,nowait", "-kernel", self.elf,
                                      "-gdb", f"tcp:127.0.0.1:{self.port}"],
                                     stdin=subprocess.DEVNULL, stdout=self.log, stderr=subprocess.STDOUT)
        # Never probe the gdbstub with connect(): a connection stops the VM.
        wait_until(lambda: f":{self.port} " in subprocess.run(["ss", "-ltnH"], capture_output=True,
                                                                text=True).stdout or self.proc.poll() is not None,
                   f"QEMU {name} listening")
        if self.proc.poll() is not None:
            raise RuntimeError(open(self.log.name).read())
        self.server = f"127.0.0.1:{self.port}"

    def gdb(self, *commands):
        args = ["gdb-multiarch", "-batch", "-nx", "-ex", "set confirm off", "-ex", f"target remote {self.server}"]
        for c in commands:
            args += ["-ex", c]
        args += ["-ex", "detach", self.elf]
        out = subprocess.run(args, capture_output=True, text=True, timeout=60).stdout
        return re.findall(r"^\$\d+ = (.*)$", out, re.M)

    def value(self, expression):
        return int(self.gdb(f"print/d {expression}")[0])

    def running(self):
        """QEMU's monitor says the VM runs (asked first: gdb's own detach below resumes it, so
        the counter alone would prove nothing), and the firmware's counter moves."""
        if self.vm_status() != "running":
            return False
        first = self.value("rig_ticks")
        try:
            wait_until(lambda: self.value("rig_ticks") > first, "rig_ticks advancing")
            return True
        except WaitTimeout:
            return False

    def monitor_command(self, command):
        """QEMU's monitor: `command`, answered by its next prompt; what it printed."""
        with socket.socket(socket.AF_UNIX) as s:
            s.settimeout(30)
            s.connect(self.monitor)
            seen = b""
            while seen.count(b"(qemu)") < 1:
                seen += s.recv(4096)
            s.sendall(command.encode() + b"\n")
            while seen.count(b"(qemu)") < 2:
                seen += s.recv(4096)
            return seen.decode(errors="replace")

    def reset(self):
        self.monitor_command("system_reset")

    def vm_status(self):
        """QEMU's own word on the CPU: "running" or "paused" (its monitor's info status)."""
        found = re.search(r"VM status: (\w+)", self.monitor_command("info status"))
        return found.group(1) if found else "unknown"

    def stop(self):
        self.proc.kill()
        self.proc.wait()
        self.log.close()


def capture(q, *args, timeout=120):
    return subprocess.run([rtt_capture, "-g", q.server, *args], capture_output=True, timeout=timeout)


def ndjson(data):
    return [json.loads(line) for line in data.decode().splitlines()]


def rig_log(q):
    """The firmware's log of SystemView calls, as segger_model's calls."""
    count = q.value("rig_log_count")
    path = os.path.join(work, "rig-log.bin")
    q.gdb(f"dump binary memory {path} (char*)&rig_log[0] (char*)&rig_log[{count}]")
    with open(path, "rb") as f:
        raw = f.read()
    entries = [struct.unpack_from("<BBHI", raw, 8 * i) for i in range(count)]
    calls = [{"call": "init", "t": 1000, "sys_hz": 1000000, "cpu_hz": 1000000, "ram_base": 0x20000000}]
    started = False
    names = ["", "start_exec", "stop_exec", "isr_enter", "isr_exit", "idle", "mark_start", "mark_stop", "mark",
             "printf", "print", "timer_enter", "timer_exit", "ready", "blocked", "create", "sysdesc", "task_info",
             "start_done"]
    for code, flags, arg, t in entries:
        name = names[code]
        c = {"call": name, "t": t, "sent": bool(flags & 1), "overflow": bool(flags & 2)}
        if name in ("sysdesc", "task_info") and not started:
            calls.append({"call": "start", "t": t})
            started = True
        if name == "sysdesc":
            c = {"call": "sysdesc", "t": t, "text": ["N=tracepipe rig,O=NoOS", "I#15=SysTick,I#16=IRQ0"][arg]}
        elif name == "task_info":
            c = {"call": "task_info", "t": t, "task": 256 * (arg + 1), "name": TASK_NAMES[arg], "prio": 10 + arg,
                 "base": 0x20001000 + 0x400 * arg, "size": 0x400, "used": 64 * (arg + 1)}
        elif name == "start_done":
            c = {"call": "start_done", "t": t}
        elif name in ("start_exec", "ready", "create"):
            c["task"] = 256 * ((arg & 0xFF) + 1)
        elif name == "blocked":
            c["task"], c["cause"] = 256 * ((arg & 0xFF) + 1), arg >> 8
        elif name in ("isr_enter", "isr_exit"):
            c["isr"] = arg
        elif name.startswith("mark"):
            c["id"] = arg
        elif name == "printf":
            c["format"], c["args"] = "value=%u hex=%04X", [arg, arg]
        elif name == "print":
            c["text"], c["level"] = ["plain text", "a warning", "an error"][arg], arg
        elif name == "timer_enter":
            c["timer"] = 0x800
        calls.append(c)
    return calls, q.value("rig_log_lost")


def started_reading(err_path, proc):
    wait_until(lambda: b"RTT control block at" in open(err_path, "rb").read() or proc.poll() is not None,
               "rtt-capture reading", lambda: open(err_path, "rb").read()[-300:])


def left_running(q, relay, what, then=lambda: None):
    """rtt-capture has ended; the relay still holds QEMU's connection (QEMU would resume a
    target whose client went): QEMU itself says the CPU runs, and its counter moves once let go
    (after `then`)."""
    status = q.vm_status()
    relay.release()
    then()
    check(status == "running" and q.running(), what,
          f"QEMU: VM status {status}; rtt-capture's last packets: {relay.sent[-4:]}")


def signals_while_halted(q, name):
    """Each stop signal, sent while the target is halted for a poll (the relay sends it at a
    memory read): rtt-capture ends with 128+N and the target runs."""
    for sig in (signal.SIGHUP, signal.SIGQUIT, signal.SIGINT, signal.SIGTERM):
        relay = GdbRelay(q.port)
        err_path = os.path.join(work, f"signal-{name}-{sig.name}.err")
        with open(err_path, "wb") as err:
            proc = subprocess.Popen([rtt_capture, "-g", f"127.0.0.1:{relay.port}", "--elf", q.elf, "--format",
                                     "ndjson", "-v"], stdout=subprocess.DEVNULL, stderr=err)
        started_reading(err_path, proc)
        relay.arm(lambda: proc.send_signal(sig))
        relay.fired.wait(60)
        code = proc.wait(timeout=30)
        check(relay.fired.is_set() and code == 128 + sig, f"{name}: {sig.name} while the target is halted for a poll:"
              f" exit {128 + sig}", f"exit {code}; {open(err_path, 'rb').read()[-300:]}")
        left_running(q, relay, f"{name}: rtt-capture resumed the target after {sig.name} mid-poll")


def stop_during_scan(q, name):
    """A stop signal in a long scan (--scan 0:4G: a million reads through the gdbstub, the
    target let run between its 4 KiB pieces): wherever it lands (a read cut short, a `c` or
    0x03 unanswered), 128+N and the target left running (before: a `D` after a cut read or an
    unanswered `c` reached a running QEMU, which halted and dropped it: 'VM status: paused')."""
    for sig in (signal.SIGINT, signal.SIGHUP, signal.SIGTERM):
        relay = GdbRelay(q.port)
        proc = subprocess.Popen([rtt_capture, "-g", f"127.0.0.1:{relay.port}", "--scan", "0:4G", "--list"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        wait_until(lambda: len(relay.sent) > 300 or proc.poll() is not None, "the scan under way")
        proc.send_signal(sig)
        code = proc.wait(timeout=30)
        check(code == 128 + sig, f"{name}: {sig.name} during --scan 0:4G: exit {128 + sig}",
              f"exit {code}; {proc.stderr.read()[-300:]}")
        left_running(q, relay, f"{name}: the target left running after {sig.name} during a scan")


def reader_gone_while_halted(q, name):
    """The pipe rtt-capture writes to closed while the target is halted for a poll, data
    flowing (the rig's flood): exit 0 (the reader went away), the target runs."""
    relay = GdbRelay(q.port)
    err_path = os.path.join(work, f"pipe-{name}.err")
    read_end, write_end = os.pipe()
    with open(err_path, "wb") as err:
        proc = subprocess.Popen([rtt_capture, "-g", f"127.0.0.1:{relay.port}", "--elf", q.elf, "--format", "ndjson",
                                 "--send", "flood\n", "-v"], stdout=write_end, stderr=err)
    os.close(write_end)
    os.set_blocking(read_end, False)

    def flood_seen():
        try:
            return b"flood" in os.read(read_end, 65536) or proc.poll() is not None
        except BlockingIOError:
            return False

    wait_until(flood_seen, "flood lines coming")
    lock = threading.Lock()
    closed = []

    def close_reader():
        with lock:
            os.close(read_end)
            closed.append(True)

    def drained_until_closed():  # the pipe kept from filling until the relay closes it
        with lock:
            if not closed:
                try:
                    os.read(read_end, 65536)
                except BlockingIOError:
                    pass
        return bool(closed) or proc.poll() is not None

    relay.arm(close_reader)
    wait_until(drained_until_closed, "the reader closed mid-poll")
    code = proc.wait(timeout=30)
    check(relay.fired.is_set() and code == 0, f"{name}: the output's reader gone mid-poll: exit 0",
          f"exit {code}; {open(err_path, 'rb').read()[-300:]}")
    # The flood waits for room in SEGGER_RTT_Write with interrupts masked (SEGGER_RTT_LOCK), so
    # the counter moves again only once the rest of it is read.
    left_running(q, relay, f"{name}: rtt-capture resumed the target after its output's reader went away mid-poll",
                 lambda: capture(q, "--elf", q.elf, "--idle-exit", "2s", timeout=300))


def rdoff_refused(q, name):
    """The GDB server answers E01 to the RdOff write of channel 0's first read ("rig boot"):
    exit 6, the line written out all the same, the target runs."""
    relay = GdbRelay(q.port)
    rdoff = q.value("(unsigned)&_SEGGER_RTT.aUp[0].RdOff") & 0xFFFFFFFF  # print/d is signed
    relay.refuse_write_at = f"M{rdoff:x},".encode()
    result = subprocess.run([rtt_capture, "-g", f"127.0.0.1:{relay.port}", "--elf", q.elf, "--format", "ndjson",
                             "--idle-exit", "2s"], capture_output=True, timeout=120)
    lines = [r["event"]["data"].get("message") for r in ndjson(result.stdout)]
    check(relay.refused.is_set() and result.returncode == 6 and lines == ["rig boot"] and b"E01" in result.stderr,
          f"{name}: the RdOff write refused (E01): exit 6, the bytes of that read written out first",
          f"exit {result.returncode}, {lines}; {result.stderr.decode()[-300:]}")
    left_running(q, relay, f"{name}: rtt-capture resumed the target after the refused RdOff write")


def test_machine(name):
    q = Qemu(name)
    try:
        listing = capture(q, "--elf", q.elf, "--list")
        text = listing.stdout.decode()
        check(listing.returncode == 0 and re.search(r'up +0 +"Terminal" +1024 bytes +NO_BLOCK_SKIP', text)
              and re.search(r'up +1 +"SysView" +1024 bytes', text) and re.search(r'up +2 +"Skip" +256 bytes', text)
              and re.search(r'down +1 +"SysView" +8 bytes', text), f"{name}: --list shows the rig's channels", text)
        scanned = capture(q, "--scan", MACHINES[name][1], "--list")
        check(scanned.returncode == 0 and scanned.stdout.decode().splitlines()[0] == text.splitlines()[0],
              f"{name}: a scan of RAM finds the same block as --elf", scanned.stderr.decode())
        ram = int(MACHINES[name][1].split(":")[0], 16)
        wrong = capture(q, "--address", hex(ram + 0x10), "--wait", "1s", "--list")
        check(wrong.returncode == 3 and b"no valid RTT control block" in wrong.stderr and b"SEGGER RTT" in wrong.stderr,
              f"{name}: a wrong --address: exit 3, what is wrong said", wrong.stderr.decode())

        rdoff_refused(q, name)  # "rig boot" stays waiting: the next capture reads it

        # Channel 0 and 2: text, the echo, the overflow on purpose.
        result = capture(q, "--elf", q.elf, "--format", "ndjson", "--channel", "0,2", "--send", "text\nping\n",
                         "--idle-exit", "2s", "--stats")
        records = ndjson(result.stdout)
        lines = [r["event"]["data"]["message"] for r in records if r["port"] == 0 and r["event"]["kind"] == "Text"]
        want = ["rig boot"] + [f"line {i} of the rig: {i * i}" for i in range(RIG_LINES)] + ["echo: ping"]
        check(result.returncode == 0 and lines == want, f"{name}: channel 0: every printf line once, in order, "
              "then the echo of what was sent down", f"{len(lines)} lines; {result.stderr.decode()[-600:]}")
        text_bytes = q.value("rig_text_bytes")
        received = sum(len(line) + 1 for line in lines)
        check(received == text_bytes + len("rig boot\n"), f"{name}: channel 0 bytes = what SEGGER_RTT_printf stored",
              f"{received} vs {text_bytes} + 9")
        skip = sum(len(r["event"]["data"]["message"]) for r in records if r["port"] == 2 and r["event"]["kind"] == "Text")
        accepted = q.value("rig_skip_accepted")
        check(skip == accepted and 0 < accepted < RIG_BURST,
              f"{name}: channel 2 (NO_BLOCK_SKIP): exactly the {accepted} of {RIG_BURST} bytes SEGGER_RTT_Write took",
              f"{skip} received")
        check(re.search(rb"channel 2: buffer full at read \d+ \(\d+ of 256 bytes, NO_BLOCK_SKIP\)", result.stderr)
              and any(r["port"] == 2 and r["event"]["kind"] == "Overflow" for r in records),
              f"{name}: the full ring is reported (warning and Overflow record)", result.stderr.decode()[-600:])
        check(q.running(), f"{name}: the target runs after rtt-capture ended")

        # Channel 1: SystemView, started and stopped by rtt-capture.
        stream = os.path.join(work, f"sysview-{name}.bin")
        with open(stream, "wb") as out:
            result = subprocess.run([rtt_capture, "-g", q.server, "--elf", q.elf, "--channel", "1", "--idle-exit", "2s",
                                     "--stats"], stdout=out, stderr=subprocess.PIPE, timeout=180)
        check(result.returncode == 0 and b"sending the start command" in result.stderr,
              f"{name}: rtt-capture starts the SystemView recording", result.stderr.decode()[-600:])
        try:
            wait_until(lambda: q.value("rig_sysview_stopped") == 1, f"{name}: the target takes the stop command")
            stopped = True
        except WaitTimeout as e:
            stopped = str(e)
        check(stopped is True, f"{name}: SystemView's stop command reached the target (SEGGER_SYSVIEW_IsStarted() is 0)",
              stopped)
        calls, lost = rig_log(q)
        decoded = subprocess.run([sysview_decode, "--ticks", "--stats", stream], capture_output=True)
        got = records_as_tuples(ndjson(decoded.stdout))
        expected = expected_records(calls, {15: "SysTick", 16: "IRQ0"})
        difference = next((f"record {i}: expected {a}, got {b}" for i, (a, b) in enumerate(zip(expected, got))
                           if a != b), f"{len(expected)} expected, {len(got)} decoded")
        check(lost == 0 and got == expected, f"{name}: every SystemView record as the firmware's calls say "
              f"({len(expected)} records, exact timestamps)", difference)
        kinds = {kind for _, kind, _ in got}
        wanted = {"TaskSwitch", "Overflow", "Text", "Marker", "TimerEnter", "IdleEnter", "TaskState"}
        if MACHINES[name][2]:
            wanted |= {"IsrEnter", "IsrExit"}
        check(wanted <= kinds, f"{name}: task switches, an overflow on purpose"
              + (", ISRs from real handlers" if MACHINES[name][2] else ""), sorted(kinds))
        check(q.running(), f"{name}: the target runs after the SystemView capture")

        # A reset mid-capture, then SIGTERM.
        log_path = os.path.join(work, f"reset-{name}.err")
        out_path = os.path.join(work, f"reset-{name}.ndjson")
        with open(out_path, "wb") as out, open(log_path, "wb") as err:
            proc = subprocess.Popen([rtt_capture, "-g", q.server, "--elf", q.elf, "--format", "ndjson",
                                     "--line-timeout", "50", "-v"], stdout=out, stderr=err)
        try:
            wait_until(lambda: b"RTT control block at" in open(log_path, "rb").read() or proc.poll() is not None,
                       "rtt-capture reading", lambda: open(log_path, "rb").read()[-300:])
            q.reset()  # channel 0 was read empty before: its next line is the new boot's
            wait_until(lambda: b"initialised again" in open(log_path, "rb").read() or proc.poll() is not None,
                       "the re-initialisation noticed", lambda: open(log_path, "rb").read()[-300:])
            wait_until(lambda: b'"rig boot"' in open(out_path, "rb").read() or proc.poll() is not None,
                       "the boot line after the reset")
            check(proc.poll() is None and b'"rig boot"' in open(out_path, "rb").read(),
                  f"{name}: a target reset mid-capture is reported, the new block found and read (its boot line)",
                  open(log_path, "rb").read()[-300:])
        except WaitTimeout as e:
            check(False, f"{name}: a target reset mid-capture", str(e))
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=30)
        check(code == 143, f"{name}: SIGTERM: exit 143", code)
        check(q.running(), f"{name}: the target runs after SIGTERM")

        if name == "cm3":
            signals_while_halted(q, name)
            stop_during_scan(q, name)
            reader_gone_while_halted(q, name)

        # The GDB server gone mid-capture.
        gone_err = os.path.join(work, f"gone-{name}.err")
        with open(gone_err, "wb") as err:
            proc = subprocess.Popen([rtt_capture, "-g", q.server, "--elf", q.elf, "--format", "ndjson", "-v"],
                                    stdout=subprocess.DEVNULL, stderr=err)
        wait_until(lambda: b"RTT control block at" in open(gone_err, "rb").read() or proc.poll() is not None,
                   "rtt-capture reading before the server goes")
        q.proc.kill()
        code = proc.wait(timeout=60)
        check(code == 7, f"{name}: the GDB server gone mid-capture: exit 7, said", open(gone_err, "rb").read()[-300:])
    finally:
        q.stop()


for machine in MACHINES:
    test_machine(machine)

no_server = subprocess.run([rtt_capture, "-g", f"127.0.0.1:{free_port()}", "--list"], capture_output=True)
check(no_server.returncode == 3, "no GDB server: exit 3", no_server.stderr.decode())
sys.exit(check.summary())
