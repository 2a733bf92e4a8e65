#!/usr/bin/env python3
"""A ChibiOS threads_utilities shell on a pseudo-terminal, for chibi-pull's tests.

It behaves as the ChibiOS shell does (docs/design.md "Peers and their protocols"): banner and "ch> " prompt, echo of printable
characters, CR ends a line (echoed as CR LF), LF and other controls ignored, "<cmd> ?" for
unknown commands, "Usage: <cmd>" for arguments, the exact output formats of every command,
the disabled-feature answer, trigger and run mode, the 64-deletion limit.

Behind the shell runs a simulated target: a random but seeded schedule of threads (static
and dynamic, logged or not, created and exiting) whose context switches are logged by a model
of the firmware's threads_utilities.c (class Firmware): the ring buffer of --log-size records
(20-bit times of a 32- or 16-bit system time, 6-bit numbers by position in the registry, out
== in for an exit, 0 for a thread no longer listed), the 63-entry deleted list with its expiry
and its bugs (--fixed-expiry without them), the trigger and its stop, the pause while
printing, a signed trigger time, thread numbers of 64 and more. The ground truth (who really
ran when, and whether the firmware's lists still agree with its log) is written as JSON for
the test to compare chibi-pull's reconstruction with.

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

HANDLED_THREADS_LEN = 63  # threads_utilities.c: MAX_HANDLED_THREADS - 1 deleted entries
TIME_MASK = 0xFFFFF       # a record keeps 20 bits of the system time
NUMBER_MASK = 0x3F        # and 6 bits of each thread number


class Thread:
    def __init__(self, name, prio, logged, dynamic):
        self.name = name
        self.prio = prio
        self.logged = logged
        self.dynamic = dynamic


class Firmware:
    """The logging of threads_utilities.c (ChibiOS_18.2 branch), statement by statement: the
    ring of THREADS_TIMESTAMPS_LOG_SIZE records, the deleted list of 63 entries with its
    expiry, the trigger and its stop, the pause while printing. Its bugs are kept (switch
    them off with fixed_expiry): the expiry check runs on every context switch while the ring
    is full, logged or not, so one exit record can expire several entries and the uint8
    count can underflow; removeThread overwrites a record without the check. Each ring slot
    also holds what really happened there (the ground truth)."""

    def __init__(self, log_size, systime_bits, fixed_expiry):
        self.size = log_size
        self.systime_mask = (1 << systime_bits) - 1
        self.fixed_expiry = fixed_expiry
        self.log = [0] * log_size
        self.truth = [None] * log_size  # (tick, out Thread, in Thread, exit)
        self.fill_pos = 0
        self.full = False
        self.pause = False
        self.triggered = False
        self.trigger_time = 0
        self.trigger_name = None
        self.fill_remaining = 0
        self.removed = [None] * HANDLED_THREADS_LEN  # (number, Thread)
        self.removed_pos = 0
        self.next_to_delete = 0
        self.removed_count = 0  # a uint8

    def continue_to_fill(self):
        return self.fill_remaining > 0 if self.triggered else not self.pause

    def increments_fill_pos(self):
        self.fill_pos += 1
        if self.fill_pos >= self.size:
            self.fill_pos = 0
            self.full = True
        if self.triggered:
            self.fill_remaining -= 1

    def write(self, tick, out_number, in_number, truth):
        time = tick & self.systime_mask
        self.log[self.fill_pos] = ((time & TIME_MASK) << 12) | ((out_number & NUMBER_MASK) << 6) | (in_number & NUMBER_MASK)
        self.truth[self.fill_pos] = truth
        self.increments_fill_pos()

    def expire_if_exit_at_fill_pos(self):
        entry = self.log[self.fill_pos]
        if ((entry >> 6) & NUMBER_MASK) == (entry & NUMBER_MASK):
            self.next_to_delete = (self.next_to_delete + 1) % HANDLED_THREADS_LEN
            self.removed_count = (self.removed_count - 1) & 0xFF

    @staticmethod
    def number(alive, thread):
        """The thread's place in the registry walk, as a uint8 counter (0: not found)."""
        return (alive.index(thread) + 1) & 0xFF if thread in alive else 0

    def context_switch(self, tick, alive, out_thread, in_thread):  # fillThreadsTimestamps
        if not self.continue_to_fill():
            return
        logged = (in_thread is not None and in_thread.logged) or (out_thread is not None and out_thread.logged)
        if self.full and (logged or not self.fixed_expiry):
            self.expire_if_exit_at_fill_pos()
        if logged:
            self.write(tick, self.number(alive, out_thread), self.number(alive, in_thread), (tick, out_thread, in_thread, False))

    def thread_exit(self, tick, alive, thread):  # removeThread (the exit hook): no fill check
        number = self.number(alive, thread)
        if self.removed_count < HANDLED_THREADS_LEN:
            if self.full and self.fixed_expiry:
                self.expire_if_exit_at_fill_pos()
            self.write(tick, number, number, (tick, thread, thread, True))
            self.removed[self.removed_pos] = (number, thread)
            self.removed_pos = (self.removed_pos + 1) % HANDLED_THREADS_LEN
            self.removed_count += 1

    def set_trigger(self, tick, name):  # setTriggerTimestamps
        if self.triggered:
            return
        self.triggered = True
        self.trigger_time = tick & self.systime_mask
        self.trigger_name = name
        if not self.full and self.fill_pos <= self.size // 2:
            self.fill_remaining = self.size - self.fill_pos
        else:
            self.fill_remaining = self.size // 2

    def reset_trigger(self):  # resetTriggerTimestamps: only when triggered
        if not self.triggered:
            return
        self.triggered = False
        self.trigger_time = 0
        self.trigger_name = None
        self.fill_remaining = 0
        self.fill_pos = 0
        self.full = False
        self.removed_pos = 0
        self.next_to_delete = 0
        self.removed_count = 0

    def window(self):
        """The ring's records oldest first, as threads_timestamps prints them, with their truth."""
        if self.full:
            order = list(range(self.fill_pos, self.size)) + list(range(0, self.fill_pos))
        else:
            order = list(range(0, self.fill_pos))
        return [(self.log[i], self.truth[i]) for i in order]

    def deleted_entries(self):
        """The deleted list as printed: removed_count entries from next_to_delete (a count
        that underflowed prints 255 of them, round the 63 slots)."""
        out = []
        n = self.next_to_delete
        for _ in range(self.removed_count):
            out.append(self.removed[n])
            n = (n + 1) % HANDLED_THREADS_LEN
        return out


class Target:
    def __init__(self, seed, start_time, threads_wanted, exits_wanted, default_log, firmware):
        self.rng = random.Random(seed)
        self.time = start_time
        self.firmware = firmware
        self.alive = []
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
        self.trigger_at = None

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

    def switch_to(self, thread):
        previous = self.current
        self.current = thread
        if previous is not thread:
            self.firmware.context_switch(self.time, self.alive, previous, thread)

    def exit_current(self):
        thread = self.current
        self.firmware.thread_exit(self.time, self.alive, thread)
        self.alive.remove(thread)
        nxt = self.rng.choice(self.alive)
        self.current = nxt
        # The switch away from the exited thread: it is no longer listed (number 0).
        self.firmware.context_switch(self.time, self.alive, thread, nxt)

    def run(self, ticks):
        for _ in range(ticks):
            self.time += 1
            if self.trigger_at is not None and self.time == self.trigger_at:
                self.firmware.set_trigger(self.time, "setTriggerTimestamps")
            for _ in range(self.rng.choice((0, 1, 1, 2, 3))):
                roll = self.rng.random()
                if roll < 0.03 and len(self.alive) < 40:
                    self.create_random()
                elif (roll < 0.06 and self.exits_left > 0 and self.current.name not in ("main", "idle")
                      and len(self.alive) > 3):
                    self.exits_left -= 1
                    self.exit_current()
                else:
                    others = [t for t in self.alive if t is not self.current]
                    self.switch_to(self.rng.choice(others))

    def listed_deleted(self):
        return [entry for entry in self.firmware.deleted_entries()]

    def truth(self):
        """Who ran when, by name, in chibi-pull's time axis: system ticks since boot, the first
        record's wrap period taken as the first (what the log can tell), n records in one tick
        spread as tick + k/n; runs of no length at the log's edges are not runs. Also whether
        the firmware's lists agree with its log (else chibi-pull cannot be right, and must say
        so): the exit records in the ring are the deleted list, and no number has more than 6
        bits."""
        window = [truth for _, truth in self.firmware.window()]
        deleted = [entry[1] if entry else None for entry in self.listed_deleted()]
        exits_in_window = [t[1] for t in window if t[3]]
        numbers_fit = len(self.alive) <= 63 and all(entry[0] <= 63 for entry in self.listed_deleted() if entry)
        consistent = exits_in_window == deleted and numbers_fit and None not in deleted
        listed = [t for t in self.created if t in self.alive or t in deleted]
        trigger_time = self.firmware.trigger_time if self.firmware.triggered else None
        base = {"creation_order": [t.name for t in listed], "consistent": consistent, "numbers_fit": numbers_fit,
                "trigger_time": trigger_time,
                "logged": {t.name: t.logged for t in self.created}, "exits_in_log": len(exits_in_window),
                "deleted_listed": len(deleted), "records": len(window)}
        if not window:
            return {**base, "runs": {}, "exits": {}, "ins": {}, "outs": {}}
        wrap = TIME_MASK + 1 if self.firmware.systime_mask > TIME_MASK else self.firmware.systime_mask + 1
        first_tick = window[0][0]
        first = first_tick - (first_tick & self.firmware.systime_mask) % wrap  # the wraps before the log, unknowable
        times = []
        i = 0
        while i < len(window):
            j = i
            while j < len(window) and window[j][0] == window[i][0]:
                j += 1
            for k in range(i, j):
                times.append(window[k][0] - first + (k - i) / (j - i))
            i = j
        start, end = times[0], times[-1]
        marks, exits, ins, outs = {}, {}, {}, {}
        for t, (tick, out_thread, in_thread, exit_record) in zip(times, window):
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
        return {**base, "runs": runs, "exits": exits, "ins": ins, "outs": outs}


def signed32(value):
    """A uint32 through chprintf's %d: negative from 2^31 on."""
    return value - (1 << 32) if value >= 1 << 31 else value


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
            self.target.run(self.args.advance)
        out = ""
        for i, t in enumerate(self.target.alive):  # n is a uint16: 64 and up are printed
            log = ("Yes" if t.logged else " No") if not self.args.disabled else " No"
            out += "Thread number %2d : Prio = %3d, Log = %3s, Name = %s\r\n" % ((i + 1) & 0xFFFF, t.prio, log, t.name)
        if self.args.disabled:
            return out
        out += "Deleted threads: \r\n"
        for entry in self.target.listed_deleted():
            if entry is None:  # a slot never written (the count underflowed): the firmware reads junk
                out += "Thread number  0 : Prio =   0, Log =  No, Name = NONAME\r\n"
                continue
            number, t = entry
            name = "Exited dynamic thread" if t.dynamic else t.name
            out += "Thread number %2d : Prio = %3d, Log = %3s, Name = %s\r\n" % (number, t.prio, "Yes" if t.logged else " No", name)
        return out

    def threads_timestamps(self):
        if self.args.disabled:
            return ("The thread timestamps functionality is disabled\r\n"
                    "Please define USE_THREADS_TIMESTAMPS = true in your makefile \r\n")
        firmware = self.target.firmware
        out = ""
        if firmware.triggered:
            out += "Triggered at %7d\r\n" % signed32(firmware.trigger_time)
        for entry, _ in firmware.window():
            out += "From %2d to %2d at %7d\r\n" % ((entry >> 6) & NUMBER_MASK, entry & NUMBER_MASK, entry >> 12)
        return out

    def threads_timestamps_trigger(self):
        firmware = self.target.firmware
        firmware.set_trigger(self.target.time, "Shell command")
        if self.args.firmware_3_1:
            return "Trigger set at %7d\r\n" % signed32(firmware.trigger_time)
        return "Trigger set by %s at %7d\r\n" % (firmware.trigger_name, signed32(firmware.trigger_time))

    def threads_timestamps_run(self):
        self.target.firmware.reset_trigger()
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
    parser.add_argument("--trigger", action="store_true", help="the firmware sets a trigger halfway through the run")
    parser.add_argument("--trigger-at", type=int, help="the firmware sets a trigger at this tick")
    parser.add_argument("--log-size", type=int, default=1000, help="THREADS_TIMESTAMPS_LOG_SIZE")
    parser.add_argument("--systime-bits", type=int, choices=(16, 32), default=32, help="CH_CFG_ST_RESOLUTION")
    parser.add_argument("--fixed-expiry", action="store_true", help="without the firmware's deleted-list expiry bugs")
    parser.add_argument("--firmware-3-1", action="store_true", help='the ChibiOS_3.1 branch: "Trigger set at T"')
    args = parser.parse_args()

    firmware = Firmware(args.log_size, args.systime_bits, args.fixed_expiry)
    target = Target(args.seed, args.start_time, args.threads, args.exits, True, firmware)
    if args.trigger:
        target.trigger_at = args.start_time + args.ticks // 2
    if args.trigger_at is not None:
        target.trigger_at = args.trigger_at
    target.run(args.ticks)
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
