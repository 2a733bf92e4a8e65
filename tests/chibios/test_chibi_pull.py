#!/usr/bin/env python3
"""chibi-pull against the ChibiOS shell emulator on a real pseudo-terminal.

Property test: random schedules (threads created, switching, exiting, some not logged) ->
the emulator's shell output -> chibi-pull's reconstruction must equal the emulator's ground
truth. Also: every command and format, the seed document's example, unknown command,
disabled feature, no prompt (timeout), a port that disappears mid-command, a busy port,
save/load round trip, the SVG (structure, and rendered to PNG as an artifact), watch mode.
Usage: test_chibi_pull.py CHIBI_PULL ARTIFACT_DIR"""
import csv
import io
import json
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from checks import Checks  # noqa: E402
from waits import LineCollector, WaitTimeout, wait_open, wait_until  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
EMULATOR = os.path.join(HERE, "shell_emulator.py")
tool = sys.argv[1]
artifacts = sys.argv[2]
os.makedirs(artifacts, exist_ok=True)
work = tempfile.mkdtemp(prefix="chibi-pull-test-")
check = Checks(show_passes=False)




class Emulator:
    def __init__(self, *args):
        self.link = os.path.join(work, f"tty{time.monotonic_ns()}")
        self.truth_file = self.link + ".json"
        self.process = subprocess.Popen([sys.executable, EMULATOR, "--link", self.link, "--truth", self.truth_file, *args],
                                        stdout=subprocess.PIPE, text=True)
        line = self.process.stdout.readline()
        assert line.startswith("ready"), line
        with open(self.truth_file) as f:
            self.truth = json.load(f)

    def stop(self):
        self.process.terminate()
        self.process.wait()


def run(*args, timeout=30):
    return subprocess.run([tool, *args], capture_output=True, text=True, timeout=timeout)


def records(output):
    return [json.loads(line) for line in output.splitlines() if line]


def close(a, b):
    return abs(a - b) < 1e-5


# ---- property test ----------------------------------------------------------------------
def reconstruction(label, emulator_args, tool_args=()):
    """chibi-pull's timeline of the emulated firmware against its ground truth: equal when the
    firmware's lists agree with its log; else the warning that says why no reader can be."""
    emulator = Emulator(*emulator_args)
    truth = emulator.truth
    result = run("--port", emulator.link, *tool_args, "timeline", "--format", "csv")
    emulator_records = run("--port", emulator.link, *tool_args, "timeline")
    emulator.stop()
    if result.returncode != 0:
        check(False, f"{label}: chibi-pull failed: {result.stderr}")
        return None
    if not truth["numbers_fit"]:
        check("keep numbers up to 63" in result.stderr,
              f"{label}: thread numbers past 63 are accepted, with the warning that records cannot tell them apart")
        return result
    if not truth["consistent"]:
        # The firmware's own lists went wrong (its expiry bugs): no reader can be right, and
        # chibi-pull must say so.
        check("out of step" in result.stderr or "deleted list is full" in result.stderr,
              f"{label}: the firmware's deleted list disagrees with its log "
              f"({truth['exits_in_log']} exits, {truth['deleted_listed']} listed): chibi-pull warns")
        return result
    check("out of step" not in result.stderr, f"{label}: lists that agree give no such warning ({result.stderr[:200]})")
    runs = {}
    for row in csv.DictReader(io.StringIO(result.stdout)):
        runs.setdefault(int(row["thread"]) - 1, []).append([float(row["start_tick"]), float(row["end_tick"])])
    order = truth["creation_order"]
    ok = True
    for index, name in enumerate(order):
        want = truth["runs"].get(name, []) if truth["logged"][name] else []
        got = runs.get(index, [])
        if len(want) != len(got) or not all(close(w[0], g[0]) and close(w[1], g[1]) for w, g in zip(want, got)):
            ok = False
            print(f"  {label}: thread {index + 1} ({name}): want {want[:4]}... got {got[:4]}...")
            break
    check(ok, f"{label}: every logged thread's runs equal the ground truth ({len(order)} threads, "
              f"{truth['records']} records)")
    recs = records(emulator_records.stdout)
    exits = {r["event"]["data"]["thread"]: r for r in recs if r["event"]["kind"] == "ThreadExit"}
    want_exits = {order.index(name) + 1 for name in truth["exits"]}
    check(set(exits) == want_exits, f"{label}: exits {sorted(exits)} == {sorted(want_exits)}")
    switches = [r for r in recs if r["event"]["kind"] == "TaskSwitch"]
    check(all(r["event"]["data"]["to_task"] == 0 or r["event"]["data"]["to_name"] for r in switches) and
          all(r["source"] == "chibios" and r["clock"] == "us" for r in recs),
          f"{label}: TaskSwitch records carry thread names")
    marks_ok = True
    for index, name in enumerate(order):
        if truth["logged"][name]:
            continue
        want = sorted(truth["ins"].get(name, []))
        got = sorted(r["timestamp"] / 1000.0 for r in switches if r["event"]["data"]["to_task"] == index + 1)
        if len(want) != len(got) or any(abs(w - g) > 1e-3 for w, g in zip(want, got)):
            marks_ok = False
            print(f"  {label}: IN marks of {name} (not logged): want {want[:5]} got {got[:5]}")
    check(marks_ok, f"{label}: threads not logged get exactly their IN marks")
    return result


# Random schedules on the firmware as it is (its expiry bugs included): small logs, logs that
# overflow the ring, exits beyond it.
for seed in range(1, 21):
    reconstruction(f"seed {seed}", ["--seed", str(seed), "--ticks", str(200 + 37 * seed), "--threads", str(3 + seed % 5),
                                    "--exits", str(seed % 7)])
# A ring of 300 that overflows many times with exits in it: without the expiry bugs the lists
# agree and the runs are right; with them (the firmware as it is) the lists mostly do not,
# and chibi-pull says so.
for seed in range(21, 26):
    for fixed in (True, False):
        reconstruction(f"seed {seed}, ring of 300{', fixed expiry' if fixed else ''}",
                       ["--seed", str(seed), "--ticks", "1500", "--threads", "20", "--exits", "200", "--log-size", "300",
                        *(["--fixed-expiry"] if fixed else [])])
# Ticks since boot across 20-bit wraps: the first record's wrap period is taken as the first.
for seed in range(26, 29):
    reconstruction(f"seed {seed}, started at tick 5000000", ["--seed", str(seed), "--ticks", "700", "--start-time", "5000000",
                                                              "--fixed-expiry"])
reconstruction("a log across a 20-bit wrap", ["--seed", "29", "--ticks", "600", "--start-time", str((1 << 20) - 300),
                                                          "--fixed-expiry"])
# A 16-bit system time wraps at 65536: right with --time-bits 16; read as 20 bits, a hint.
reconstruction("16-bit system time", ["--seed", "30", "--ticks", "600", "--start-time", "65300", "--systime-bits", "16",
                                      "--fixed-expiry"], ("--time-bits", "16"))
emulator = Emulator("--seed", "30", "--ticks", "600", "--start-time", "65300", "--systime-bits", "16", "--fixed-expiry")
as20 = run("--port", emulator.link, "timeline", "--format", "csv")
emulator.stop()
check(as20.returncode == 0 and "--time-bits 16" in as20.stderr, f"a 16-bit time read as 20 bits: the hint ({as20.stderr[:200]})")
# The trigger and its stop: the firmware logs half a ring more, then nothing.
for seed in range(31, 34):
    reconstruction(f"seed {seed}, triggered", ["--seed", str(seed), "--ticks", "1200", "--log-size", "400", "--trigger",
                                               "--fixed-expiry"])
# A trigger past 2^31 ticks is printed negative by chprintf's %d: taken modulo 2^32.
emulator = Emulator("--seed", "34", "--ticks", "300", "--start-time", str(3_000_000_000), "--trigger", "--fixed-expiry")
stamps_text = run("--port", emulator.link, "timestamps", "--format", "text")
triggered = run("--port", emulator.link, "timeline", "--format", "text")
trigger_set = records(run("--port", emulator.link, "trigger").stdout)
emulator.stop()
check(stamps_text.returncode == 0 and f"triggered at {emulator.truth['trigger_time']}" in stamps_text.stdout,
      f"a negative 'Triggered at' is read modulo 2^32 ({emulator.truth['trigger_time']}: {stamps_text.stdout[:60]!r})")
check(triggered.returncode == 0 and "trigger at" in triggered.stdout, f"the timeline places that trigger ({triggered.stderr[:200]})")
check(trigger_set and trigger_set[0]["event"]["data"]["tick"] == emulator.truth["trigger_time"],
      "the trigger command's negative time, modulo 2^32")
# The ChibiOS_3.1 branch answers "Trigger set at T", without a name.
emulator = Emulator("--seed", "36", "--ticks", "200", "--firmware-3-1")
old_trigger = run("--port", emulator.link, "trigger")
emulator.stop()
check(old_trigger.returncode == 0 and records(old_trigger.stdout)[0]["event"]["data"]["name"] == "",
      f"the 3.1 firmware's 'Trigger set at T' is read ({old_trigger.stderr[:200]})")
# More than 63 threads: threads_list numbers them past 63 (a uint16); the log cannot.
reconstruction("70 threads", ["--seed", "35", "--ticks", "300", "--threads", "70", "--exits", "0"])


# ---- the seed document's example -------------------------------------------------------
seed_list = """Thread number  1 : Prio =  64, Log = Yes, Name = main
Thread number  2 : Prio =   1, Log = Yes, Name = idle
Thread number  3 : Prio =  74, Log = Yes, Name = usb_lld_pump
Thread number  4 : Prio =  64, Log = Yes, Name = NONAME
Thread number  5 : Prio =  64, Log = Yes, Name = shell
Deleted threads: 
Thread number  9 : Prio =  64, Log = Yes, Name = Thd19
Thread number  8 : Prio =  64, Log = Yes, Name = Thd18
Thread number  9 : Prio =  64, Log = Yes, Name = Thd20
Thread number  5 : Prio =  64, Log = Yes, Name = Exited dynamic thread
Thread number  5 : Prio =  64, Log = Yes, Name = Thd16
Thread number  5 : Prio =  64, Log = Yes, Name = Thd17
Thread number  6 : Prio =  64, Log = Yes, Name = Thd21
Thread number  6 : Prio =  64, Log = Yes, Name = Exited dynamic thread
Thread number  6 : Prio =  64, Log = Yes, Name = Thd16"""
seed_stamps = """From  8 to  9 at    1581
From  9 to  9 at    1581
From  0 to  2 at    1581
From  2 to 10 at    1591
From 10 to  2 at    1601
From  2 to  5 at    1630"""
saved = os.path.join(work, "seed.txt")
with open(saved, "w") as f:
    f.write("Saved position\n0\n100\n0\n14\nthreads_list\n" + seed_list + "\nch> \nthreads_timestamps\n" + seed_stamps + "\nch> ")
result = run("timeline", "--load", saved)
recs = records(result.stdout)
check(result.returncode == 0, f"--load of the seed example: {result.stderr}")
expected_order = ["main", "idle", "usb_lld_pump", "NONAME", "Exited dynamic thread", "Thd16", "Thd17", "Thd18", "Thd19",
                  "shell", "Thd20", "Thd21", "Exited dynamic thread", "Thd16"]
named = {}
for r in recs:
    d = r["event"]["data"]
    if r["event"]["kind"] == "TaskSwitch":
        named[d["from_task"]] = d.get("from_name")
        named[d["to_task"]] = d.get("to_name")
    else:
        named[d["thread"]] = d.get("name")
check(named.get(9) == "Thd19" and recs[1]["event"]["kind"] == "ThreadExit", "the seed: thread 9 (Thd19) exits at 1581")
check(named.get(11) == "Thd20" and named.get(8) == "Thd18",
      "the seed: after Thd19's exit, number 10 in the log is Thd20 (thread 11 in creation order)")
check(recs[2]["event"]["data"]["from_task"] == 0 and recs[2]["event"]["data"]["to_name"] == "idle",
      "the seed: From 0 (no longer listed) to idle")
check([r["timestamp"] for r in recs[:3]] == [1581000, 1581333, 1581667],
      "the seed: three switches in tick 1581 spread over it, in microseconds since boot")
check(recs[3]["event"]["data"]["to_name"] == "Thd20" and recs[3]["tick"] == 1591 and recs[3]["timestamp"] == 1591000,
      "the seed: Thd20 entered at tick 1591 (absolute, as the firmware and its other logs count)")
text = run("timeline", "--load", saved, "--format", "text").stdout
order_in_text = {int(m.group(1)): m.group(2).strip() for m in re.finditer(r"^\s*(\d+) (.{24})", text, re.M)}
check([order_in_text.get(i + 1) for i in range(14)] == expected_order, f"the seed's creation order is reproduced: {order_in_text}")

# ---- commands and formats --------------------------------------------------------------
emulator = Emulator("--seed", "5", "--ticks", "400", "--trigger")
uc = run("--port", emulator.link, "uc", "--format", "csv")
rows = list(csv.reader(io.StringIO(uc.stdout)))
check(rows[1] == ["main", "5.05"] and rows[2] == ["idle", "12.00"] and rows[3] == ["Thd1", "0.07"],
      f"uc parses unpadded percentages (5.5% is 5.05%): {rows[1:4]}")
check(["(critical thd)", "1.05"] in rows and ["(critical isr)", "0.42"] in rows, "uc critical thd/isr")
stat = records(run("--port", emulator.link, "stat").stdout)
check(stat[0]["event"]["data"]["stack_size"] is None and stat[1]["event"]["data"]["stack_size"] == 576,
      "stat: main's ??? is null, others parsed")
lst = records(run("--port", emulator.link, "list").stdout)
check(lst[0]["event"]["data"]["name"] == "main" and all(r["event"]["kind"] == "ThreadInfo" for r in lst), "list records")
stamps = run("--port", emulator.link, "timestamps", "--format", "csv").stdout.splitlines()
check(stamps[0] == "out,in,time" and len(stamps) > 10, "timestamps as CSV")
svg_file = os.path.join(artifacts, "chibi-pull-timeline.svg")
save_file = os.path.join(work, "saved.txt")
live = run("--port", emulator.link, "timeline", "--svg", svg_file, "--save", save_file)
check(live.returncode == 0, f"timeline with --svg and --save: {live.stderr}")
loaded = run("timeline", "--load", save_file)
# A consistency check (our save read back by our load); the file against the original script's
# format is checked just below.
check(loaded.stdout == live.stdout and loaded.stdout, "save/load round trip gives the same records")
# The view as the original script reads it: absolute ticks on x (the log's first and last
# record), 10 units per thread row on y.
with open(save_file) as f:
    view = f.read().splitlines()[1:5]
stamp_times = [int(line.split(" at ")[1]) for line in run("--port", emulator.link, "timestamps", "--format", "text")
               .stdout.splitlines() if line.startswith("from")]
rows_listed = len([l for l in open(save_file).read().splitlines() if l.startswith("Thread number")])
check(float(view[0]) == stamp_times[0] and float(view[1]) >= stamp_times[-1] and float(view[2]) == 0 and
      float(view[3]) == 10 * (rows_listed + 1),
      f"--save: the view in the original's units ({view}; records {stamp_times[0]}..{stamp_times[-1]}, {rows_listed} rows)")
streamed_csv = run("timeline", "--load", save_file, "--format", "csv").stdout.splitlines()
whole_csv = run("timeline", "--load", save_file, "--format", "csv", "--svg", os.path.join(work, "x.svg")).stdout.splitlines()
check(streamed_csv[0] == whole_csv[0] and sorted(streamed_csv) == sorted(whole_csv) and len(whole_csv) > 10,
      "the streaming --load path gives the same runs as the whole-timeline path")
trigger = records(run("--port", emulator.link, "trigger").stdout)
check(trigger[0]["event"]["data"]["name"] == "setTriggerTimestamps", "trigger: an earlier trigger's name is kept")
run_mode = run("--port", emulator.link, "run")
check(run_mode.returncode == 0 and "run mode" in run_mode.stderr, "run mode")
after = run("--port", emulator.link, "timestamps", "--format", "csv").stdout.splitlines()
check(after == ["out,in,time"], "run mode cleared the log")
emulator.stop()

# ---- the SVG ---------------------------------------------------------------------------
tree = ET.parse(svg_file)
ns = {"s": "http://www.w3.org/2000/svg"}
rows_svg = tree.getroot().findall(".//s:g[@class='row']", ns)
with open(save_file) as f:
    saved_text = f.read()
listed = len([l for l in saved_text.splitlines() if l.startswith("Thread number")])
check(len(rows_svg) == listed, f"SVG: a row per thread ({len(rows_svg)} == {listed})")
run_rects = tree.getroot().findall(".//s:rect[@class='run']", ns)
csv_runs = run("timeline", "--load", save_file, "--format", "csv").stdout.splitlines()[1:]
check(len(run_rects) == len(csv_runs), f"SVG: a bar per run ({len(run_rects)} == {len(csv_runs)})")
check(tree.getroot().find(".//s:line[@class='trigger']", ns) is not None, "SVG: the trigger line")
exits = tree.getroot().findall(".//s:line[@class='exit']", ns)
check(len(exits) >= 1, f"SVG: exit markers ({len(exits)})")
check(tree.getroot().findall(".//s:rect[@class='in']", ns) and tree.getroot().findall(".//s:rect[@class='out']", ns),
      "SVG: IN and OUT ticks of threads not logged")
prios = [int(re.search(r"prio (\d+)", ET.tostring(g, encoding="unicode")).group(1)) for g in rows_svg]
ys = [float(g.find("s:text", ns).get("y")) for g in rows_svg]
by_height = [p for _, p in sorted(zip(ys, prios))]
check(by_height == sorted(by_height, reverse=True), "SVG: rows by priority, highest at the top")
renderer = shutil.which("rsvg-convert")
check(renderer is not None, "rsvg-convert renders the SVG (missing librsvg2-bin: run scripts/install-deps)")
if renderer:
    png = os.path.join(artifacts, "chibi-pull-timeline.png")
    subprocess.run([renderer, "-o", png, svg_file], check=True)
    check(os.path.getsize(png) > 5000, f"SVG rendered to {png}")

# ---- errors ----------------------------------------------------------------------------
emulator = Emulator("--no-utilities")
r = run("--port", emulator.link, "stat")
check(r.returncode == 9 and "does not know" in r.stderr, f"unknown command -> exit 9: {r.stderr.strip()}")
emulator.stop()
emulator = Emulator("--disabled")
r = run("--port", emulator.link, "timestamps")
check(r.returncode == 9 and "disabled" in r.stderr, f"feature disabled -> exit 9: {r.stderr.strip()}")
r = run("--port", emulator.link, "timeline")
check(r.returncode == 9, "timeline without the timestamps feature -> exit 9")
emulator.stop()
emulator = Emulator("--silent")
start = time.monotonic()
r = run("--port", emulator.link, "--timeout", "1", "list")
check(r.returncode == 8 and "no prompt" in r.stderr and time.monotonic() - start < 5,
      f"no prompt -> exit 8 after the timeout: {r.stderr.strip()}")
emulator.stop()
emulator = Emulator("--stall-after", "2", "--ticks", "3000")
start = time.monotonic()
r = run("--port", emulator.link, "--timeout", "1", "timestamps")
took = time.monotonic() - start
check(r.returncode == 8 and took < 5, f"a reply that stops mid-line, the link open: exit {r.returncode} in {took:.1f} s",
      r.stderr[-300:])
emulator.stop()
emulator = Emulator("--die-after", "1", "--ticks", "3000")
r = run("--port", emulator.link, "timestamps")
check(r.returncode == 7 and "went away" in r.stderr, f"port gone mid-command -> exit 7: {r.stderr.strip()}")
emulator.stop()
r = run("--port", os.path.join(work, "nonexistent"), "list")
check(r.returncode == 3, f"missing port -> exit 3: {r.stderr.strip()}")
r = run("--port", "/dev/null", "list")
check(r.returncode == 2 and "not a serial port" in r.stderr, f"a port that is not a terminal -> exit 2: {r.stderr.strip()}")
emulator = Emulator("--noise", "\x01garbage\x07 boot log\r\n")
r = run("--port", emulator.link, "list", "--format", "csv")
check(r.returncode == 0 and r.stdout.startswith("number,name"), "noise and a banner before the prompt are tolerated")
holder = subprocess.Popen([tool, "--port", emulator.link, "watch", "--every", "100ms"], stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL)
wait_open(holder, emulator.link, "the first chibi-pull opens the port")
r = run("--port", emulator.link, "list")
check(r.returncode == 5, f"a port in use by another chibi-pull -> exit 5: {r.stderr.strip()}")
holder.terminate()
holder.wait()
emulator.stop()

# ---- hostile or broken shells: --timeout is a deadline for the whole exchange -----------
class Talker:
    """A pty whose other end writes `chunk` every `every` seconds, and never a prompt; what
    the tool writes to it is kept in `received`."""

    def __init__(self, chunk, every):
        self.master, slave = os.openpty()
        self.path = os.ttyname(slave)
        self.running = True
        self.received = b""
        self.thread = threading.Thread(target=self.talk, args=(chunk, every), daemon=True)
        self.thread.start()
        threading.Thread(target=self.listen, daemon=True).start()

    def listen(self):
        while self.running:
            try:
                self.received += os.read(self.master, 4096)
            except OSError:
                return

    def talk(self, chunk, every):
        while self.running:
            try:
                os.write(self.master, chunk)
            except OSError:
                return
            if every:
                time.sleep(every)  # pace: the peer's, part of the scenario

    def stop(self):
        self.running = False
        self.thread.join(5)


def exits_in(args, seconds):
    start = time.monotonic()
    r = run(*args, timeout=120)
    return r, time.monotonic() - start


talker = Talker(b"tick 12345\r\n", 0.09)
r, took = exits_in(["--port", talker.path, "--timeout", "1", "list"], 5)
check(r.returncode == 8 and took < 5, f"a line every 90 ms and no prompt: --timeout 1 ends it (exit {r.returncode} in {took:.1f} s)",
      r.stderr[-300:])
talker.stop()
talker = Talker(b"\x00garbage without end " * 200, 0)
child = subprocess.Popen([tool, "--port", talker.path, "--timeout", "3", "list"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
err = child.communicate(timeout=120)[1]
peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
check(child.returncode in (6, 8) and peak_kb < 100 * 1024,
      f"endless garbage: a clear error (exit {child.returncode}), memory bounded (peak {peak_kb} kB)", err[-300:])
talker.stop()
talker = Talker(b"", 0.5)
waiting = subprocess.Popen([tool, "--port", talker.path, "--timeout", "60", "list"], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
try:
    wait_open(waiting, talker.path, "chibi-pull opens the port")
    # It writes to the shell (a line end, to draw a prompt) and then waits for the prompt.
    wait_until(lambda: b"\r" in talker.received or waiting.poll() is not None, "chibi-pull asks for a prompt",
               lambda: repr(talker.received[-80:]))
    sent = time.monotonic()
    waiting.send_signal(signal.SIGTERM)
    err = waiting.communicate(timeout=30)[1]
    took = time.monotonic() - sent
    check(waiting.returncode == 143 and took < 1.5, f"SIGTERM while waiting for the prompt: exit {waiting.returncode} in {took:.2f} s",
          err[-300:])
except WaitTimeout as e:
    check(False, "SIGTERM while waiting for the prompt", str(e))
talker.stop()

# ---- watch -----------------------------------------------------------------------------
emulator = Emulator("--seed", "9", "--ticks", "100", "--advance", "50", "--exits", "0")
watch = subprocess.Popen([tool, "--port", emulator.link, "watch", "--every", "200ms"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
watched = LineCollector(watch.stdout)
try:
    # Until the emulated clock has moved on past tick 150 in what watch wrote.
    wait_until(lambda: len(watched.snapshot()) > 100 and max(r["tick"] for r in records("".join(watched.snapshot()))) > 150,
               "watch streams records", lambda: f"{len(watched.snapshot())} lines")
except WaitTimeout as e:
    check(False, "watch streams new records", str(e))
watch.send_signal(signal.SIGTERM)
watch.wait(timeout=30)
out = "".join(watched.finish())
err = watch.stderr.read()
emulator.stop()
recs = records(out)
ticks = [r["tick"] for r in recs]
check(watch.returncode == 143, f"watch stops on SIGTERM with 143 ({watch.returncode}) {err.strip()}")
check(len(recs) > 100 and ticks == sorted(ticks) and max(ticks) > 150,
      f"watch streams new records only, in order ({len(recs)} records, ticks up to {max(ticks) if ticks else None})")
stamps_seen = [(r["timestamp"], r["event"]["data"].get("from_task"), r["event"]["data"].get("to_task")) for r in recs]
check(len(stamps_seen) == len(set(stamps_seen)), "watch emits no record twice")

# `watch | head`: once head has what it wants, watch ends even when no new switch arrives
# (the emulated target does not advance: nothing more will ever be written).
emulator = Emulator("--seed", "9", "--ticks", "100", "--exits", "0")
start = time.monotonic()
piped = subprocess.run(["bash", "-c", f"'{tool}' --port '{emulator.link}' watch --every 100ms | head -3; echo \"${{PIPESTATUS[0]}}\""],
                       capture_output=True, text=True, timeout=60)
took = time.monotonic() - start
lines = piped.stdout.splitlines()
check(len(lines) == 4 and lines[-1] == "0" and took < 10 and piped.stderr == "",
      f"watch | head -3 with no new switches: watch ends quietly with 0 ({lines[-1:]}, {took:.1f} s)", piped.stderr[-300:])
emulator.stop()

shutil.rmtree(work, ignore_errors=True)
sys.exit(check.summary())
