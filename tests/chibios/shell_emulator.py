#!/usr/bin/env python3
"""A ChibiOS threads_utilities shell on a pseudo-terminal, for chibi-pull's tests.

It behaves as the notes (chibios-shell.md) say: banner and "ch> " prompt, echo of printable
characters, CR ends a line (echoed as CR LF), LF and other controls ignored, "<cmd> ?" for
unknown commands, "Usage: <cmd>" for arguments, the exact output formats of every command,
the disabled-feature answer, trigger and run mode, the 64-deletion limit.

Behind the shell runs a simulated target: a random but seeded schedule of threads (static
and dynamic, logged or not, created and exiting) whose context switches are logged as the
firmware does (20-bit times, numbers by position in the alive list, out == in for an exit,
0 for a thread no longer listed). The ground truth (who really ran when) is written as JSON
for the test to compare chibi-pull's reconstruction with.

Usage: shell_emulator.py --link PATH [--seed N] [--ticks N] [--truth FILE] [options]
The slave side of the pty is symlinked at PATH; the emulator exits when told by SIGTERM.
"""
import argparse
import json
import os
import pty
import random
import select
import signal
import sys
import termios
import tty

MAX_DELETED = 64


class Thread:
    def __init__(self, name, prio, logged, dynamic):
        self.name = name
        self.prio = prio
        self.logged = logged
        self.dynamic = dynamic


class Target:
    def __init__(self, seed, ticks, start_time, threads_wanted, exits_wanted, default_log):
        self.rng = random.Random(seed)
        self.time = start_time
        self.alive = []
        self.deleted = []  # (number, name, prio, logged) in deletion order
        self.records = []  # (time, out, in) as logged
        self.truth_records = []  # (tick, out Thread or None, in Thread or None, exit)
        self.trigger = None
        self.created = []  # every thread in creation order
        self.default_log = default_log
        self.counter = 0
        self.current = None
        for name, prio in (("main", 64), ("idle", 1)):
            self.create(name, prio, logged=True, dynamic=False)
        self.current = self.alive[0]
        for _ in range(threads_wanted):
            self.create_random()
        self.exits_left = exits_wanted
        self.run(ticks)

    def create(self, name, prio, logged, dynamic):
        thread = Thread(name, prio, logged, dynamic)
        self.alive.append(thread)
        self.created.append(thread)
        return thread

    def create_random(self):
        self.counter += 1
        logged = self.rng.random() < 0.8 if self.default_log else self.rng.random() < 0.3
        dynamic = self.rng.random() < 0.4
        return self.create(f"Thd{self.counter}", self.rng.choice((10, 64, 64, 74, 100)), logged, dynamic)

    def number(self, thread):
        return self.alive.index(thread) + 1

    def log(self, out_thread, in_thread, exit_record=False):
        if not ((out_thread and out_thread.logged) or (in_thread and in_thread.logged)):
            return
        out_number = self.number(out_thread) if out_thread in self.alive else 0
        in_number = self.number(in_thread) if in_thread in self.alive else 0
        self.records.append((self.time & 0xFFFFFFFF, out_number, in_number))
        self.truth_records.append((self.time, out_thread, in_thread, exit_record))

    def switch_to(self, thread):
        previous = self.current
        self.current = thread
        if previous is not thread:
            self.log(previous, thread)

    def exit_current(self):
        thread = self.current
        if len(self.deleted) < MAX_DELETED:
            # Every exit is logged, logged thread or not: the numbers of the threads after it
            # shift, and the log must say so.
            number = self.number(thread)
            self.records.append((self.time & 0xFFFFFFFF, number, number))
            self.truth_records.append((self.time, thread, thread, True))
            name = "Exited dynamic thread" if thread.dynamic else thread.name
            self.deleted.append((self.number(thread), name, thread.prio, thread.logged))
        self.alive.remove(thread)
        others = [t for t in self.alive]
        nxt = self.rng.choice(others)
        self.current = None
        # The switch away from the exited thread: it is no longer listed (number 0).
        if thread.logged or nxt.logged:
            self.records.append((self.time & 0xFFFFFFFF, 0, self.number(nxt)))
            self.truth_records.append((self.time, thread, nxt, False))
        self.current = nxt

    def run(self, ticks):
        for _ in range(ticks):
            self.time += 1
            for _ in range(self.rng.choice((0, 1, 1, 2, 3))):
                roll = self.rng.random()
                if roll < 0.03 and len(self.alive) < 60:
                    self.create_random()
                elif (roll < 0.06 and self.exits_left > 0 and self.current.name not in ("main", "idle")
                      and len(self.alive) > 3):
                    self.exits_left -= 1
                    self.exit_current()
                else:
                    others = [t for t in self.alive if t is not self.current]
                    self.switch_to(self.rng.choice(others))

    def advance(self, ticks):
        self.run(ticks)

    def truth(self):
        """Who ran when, by name, in chibi-pull's time axis: system ticks since boot, the first
        record's 20-bit wrap period taken as the first (what the log can tell), n records in
        one tick spread as tick + k/n. Runs of no length at the log's edges are not runs."""
        if not self.truth_records:
            return {"creation_order": [], "runs": {}, "exits": {}, "ins": {}, "outs": {}}
        first = self.truth_records[0][0] & ~0xFFFFF  # the wraps before the log, unknowable
        times = []
        i = 0
        while i < len(self.truth_records):
            j = i
            while j < len(self.truth_records) and self.truth_records[j][0] == self.truth_records[i][0]:
                j += 1
            for k in range(i, j):
                times.append(self.truth_records[k][0] - first + (k - i) / (j - i))
            i = j
        start, end = times[0], times[-1]
        marks = {}
        exits = {}
        ins, outs = {}, {}
        for t, (tick, out_thread, in_thread, exit_record) in zip(times, self.truth_records):
            if exit_record:
                marks.setdefault(out_thread.name, []).append((t, False))
                outs.setdefault(out_thread.name, []).append(t)
                exits[out_thread.name] = t
                continue
            if out_thread is not None:
                marks.setdefault(out_thread.name, []).append((t, False))
                outs.setdefault(out_thread.name, []).append(t)
            if in_thread is not None:
                marks.setdefault(in_thread.name, []).append((t, True))
                ins.setdefault(in_thread.name, []).append(t)
        runs = {}
        by_name = {t.name: t for t in self.created}
        for name, events in marks.items():
            if not by_name[name].logged:
                continue
            result, open_at, first_mark = [], None, True
            for t, is_in in events:
                if is_in:
                    if open_at is None:
                        open_at = t
                elif open_at is not None:
                    result.append([open_at, t])
                    open_at = None
                elif first_mark and t > start:
                    result.append([start, t])
                first_mark = False
            if open_at is not None and open_at < end:
                result.append([open_at, end])
            runs[name] = result
        listed = [t for t in self.created if t in self.alive or any(d[1] in (t.name, "Exited dynamic thread") for d in self.deleted)]
        return {"creation_order": [t.name for t in self.created], "runs": runs, "exits": exits, "ins": ins,
                "outs": outs, "logged": {t.name: t.logged for t in self.created},
                "dynamic": {t.name: t.dynamic for t in self.created}, "listed": len(listed)}


class Shell:
    def __init__(self, target, args):
        self.target = target
        self.args = args
        self.commands = 0

    def reply(self, line):
        parts = line.split()
        if not parts:
            return ""
        command, arguments = parts[0], parts[1:]
        utilities = ("threads_stat", "threads_uc", "threads_list", "threads_timestamps",
                     "threads_timestamps_trigger", "threads_timestamps_run")
        if command not in utilities or (self.args.no_utilities and command in utilities):
            return f"{command} ?\r\n"
        if arguments and command not in ("threads_stat", "threads_uc"):
            return f"Usage: {command}\r\n"
        return getattr(self, command)()

    def threads_stat(self):
        out = "\r\n     begin        end   size   used    % prio     state         name\r\n" + "-" * 68 + "\r\n"
        address = 0x20000400
        for i, t in enumerate(self.target.alive):
            state = "CURRENT" if t is self.target.current else self.target.rng.choice(("READY", "WTSEM", "SLEEPING"))
            if i == 0:
                out += "0x%08x 0x%08x %6s %6s %3s%% %4d %9s %12s\r\n" % (address, address + 0x400, "???", "???", "???", t.prio, state, t.name)
            else:
                size, used = 512 + 64 * i, 100 + 13 * i
                out += "0x%08x 0x%08x %6u %6u %3u%% %4d %9s %12s\r\n" % (address, address + size, size, used, used * 100 // size, t.prio, state, t.name)
            address += 0x800
        return out + "\r\n"

    def threads_uc(self):
        out = ""
        shares = [505, 1200, 7, 0, 3050]  # 5.05%, 12.00%, 0.07%, 0.00%, 30.50%
        for i, t in enumerate(self.target.alive):
            tmp = shares[i % len(shares)]
            out += "%25s          %u.%u%%\r\n" % (t.name, tmp // 100, tmp % 100)
        return out + "\r\n            critical thd:%u.%u%%   critical isr:%u.%u%%\r\n\r\n" % (1, 5, 0, 42)

    def threads_list(self):
        if self.args.advance:
            self.target.advance(self.args.advance)
        out = ""
        for i, t in enumerate(self.target.alive):
            log = ("Yes" if t.logged else " No") if not self.args.disabled else " No"
            out += "Thread number %2d : Prio = %3d, Log = %3s, Name = %s\r\n" % (i + 1, t.prio, log, t.name)
        if self.args.disabled:
            return out
        out += "Deleted threads: \r\n"
        for number, name, prio, logged in self.target.deleted:
            out += "Thread number %2d : Prio = %3d, Log = %3s, Name = %s\r\n" % (number, prio, "Yes" if logged else " No", name)
        return out

    def threads_timestamps(self):
        if self.args.disabled:
            return ("The thread timestamps functionality is disabled\r\n"
                    "Please define USE_THREADS_TIMESTAMPS = true in your makefile \r\n")
        out = ""
        if self.target.trigger:
            out += "Triggered at %7d\r\n" % self.target.trigger[1]
        for time, out_number, in_number in self.target.records:
            out += "From %2d to %2d at %7d\r\n" % (out_number, in_number, time & 0xFFFFF)
        return out

    def threads_timestamps_trigger(self):
        if not self.target.trigger:
            self.target.trigger = ("Shell command", self.target.time)
        return "Trigger set by %s at %7d\r\n" % self.target.trigger

    def threads_timestamps_run(self):
        self.target.trigger = None
        self.target.records.clear()
        self.target.truth_records.clear()
        self.target.deleted.clear()
        return "Run mode\r\n"


def serve(master, shell, args):
    os.write(master, (args.noise or "").encode() + b"\r\nChibiOS/RT Shell\r\nch> ")
    line = ""
    while True:
        ready, _, _ = select.select([master], [], [], 0.5)
        if not ready:
            continue
        try:
            data = os.read(master, 4096)
        except OSError:
            return
        for byte in data:
            char = chr(byte)
            if char == "\r":
                os.write(master, b"\r\n")
                shell.commands += 1
                text = shell.reply(line)
                line = ""
                if args.die_after and shell.commands >= args.die_after:
                    os.write(master, text[: len(text) // 2].encode())
                    os.close(master)
                    return
                if args.stall_after and shell.commands >= args.stall_after:
                    os.write(master, text[: len(text) // 2].encode())  # mid-line, and the link stays up
                    continue
                if args.silent and shell.commands > 1:
                    os.write(master, text.encode())
                    continue
                # The reply in pieces, as a USB CDC link delivers it.
                payload = (text + "ch> ").encode()
                for i in range(0, len(payload), 512):
                    os.write(master, payload[i:i + 512])
            elif " " <= char <= "~":
                line += char
                os.write(master, char.encode())


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--link", required=True)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--ticks", type=int, default=300)
    parser.add_argument("--threads", type=int, default=6)
    parser.add_argument("--exits", type=int, default=4)
    parser.add_argument("--start-time", type=int, default=1000)
    parser.add_argument("--truth")
    parser.add_argument("--advance", type=int, default=0, help="ticks the target runs before each threads_list")
    parser.add_argument("--disabled", action="store_true", help="firmware without USE_THREADS_TIMESTAMPS")
    parser.add_argument("--no-utilities", action="store_true", help="firmware without THREADS_UTILITIES_SHELL_CMD")
    parser.add_argument("--die-after", type=int, default=0, help="vanish in the middle of the Nth command's reply")
    parser.add_argument("--stall-after", type=int, default=0,
                        help="stop in the middle of the Nth command's reply, the link kept open")
    parser.add_argument("--silent", action="store_true", help="never send the prompt after a command")
    parser.add_argument("--noise", default="", help="bytes sent before the banner")
    parser.add_argument("--trigger", action="store_true", help="set a trigger before serving")
    args = parser.parse_args()

    target = Target(args.seed, args.ticks, args.start_time, args.threads, args.exits, default_log=True)
    if args.trigger:
        target.trigger = ("setTriggerTimestamps", target.time - args.ticks // 2)
    if args.truth:
        with open(args.truth, "w") as f:
            json.dump(target.truth(), f)
    master, slave = pty.openpty()
    tty.setraw(slave)
    attrs = termios.tcgetattr(slave)
    termios.tcsetattr(slave, termios.TCSANOW, attrs)
    path = os.ttyname(slave)
    if os.path.lexists(args.link):
        os.unlink(args.link)
    os.symlink(path, args.link)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    sys.stdout.write(f"ready {path}\n")
    sys.stdout.flush()
    try:
        serve(master, Shell(target, args), args)
    finally:
        if os.path.lexists(args.link):
            os.unlink(args.link)


if __name__ == "__main__":
    main()
