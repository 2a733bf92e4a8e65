"""Waits on what the system itself shows (a file's size, an open file descriptor, output
lines) with generous deadlines, instead of fixed sleeps: a loaded machine is slow, and a
wait that runs out raises with what was seen, so the test fails loudly."""
import fcntl
import os
import termios
import threading
import time

DEADLINE_S = 60


class WaitTimeout(AssertionError):
    pass


def wait_until(condition, what, seen=lambda: "", timeout=DEADLINE_S):
    """Polls condition() until true; raises WaitTimeout naming what was seen at the end."""
    until = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > until:
            raise WaitTimeout(f"{what}: not within {timeout} s (seen: {seen()})")
        time.sleep(0.02)  # pace: the polling interval of a wait with a deadline


def wait_settled(read, what, quiet_s=2.0, timeout=DEADLINE_S):
    """read()'s value once it has stayed the same for quiet_s (what is on its way has landed);
    raises WaitTimeout, naming the last values seen, when it keeps moving past the deadline."""
    value, since = read(), time.monotonic()
    seen = [value]

    def quiet():
        nonlocal value, since
        now = read()
        if now != value:
            value, since = now, time.monotonic()
            seen.append(now)
        return time.monotonic() - since >= quiet_s

    wait_until(quiet, what, lambda: f"values {seen[-8:]}", timeout=timeout)
    return value


def file_size(path):
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def holds_open(pid, path):
    """True when process pid has path open (its /proc/PID/fd links)."""
    target = os.path.realpath(path)
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                if os.path.realpath(f"/proc/{pid}/fd/{fd}") == target:
                    return True
            except OSError:
                continue
    except OSError:
        return False
    return False


def wait_open(process, path, what, timeout=DEADLINE_S):
    """Waits until the child has path open (and is still running)."""
    wait_until(lambda: process.poll() is not None or holds_open(process.pid, path), what,
               lambda: f"exit {process.poll()}", timeout)
    if process.poll() is not None:
        raise WaitTimeout(f"{what}: the process exited with {process.returncode} first")


F_GETPIPE_SZ = 1032  # fcntl(2), Linux


def pipe_queued(fd):
    """Bytes waiting in the pipe whose read end is fd (FIONREAD)."""
    return int.from_bytes(fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0"), "little")


def wait_pipe_full(process, read_end, what, timeout=DEADLINE_S):
    """Waits until the pipe whose read end is read_end holds its size less two pages (the
    writer is then blocked on it, or would be), while the process runs."""
    wait_until(lambda: process.poll() is not None or
               pipe_queued(read_end) >= fcntl.fcntl(read_end, F_GETPIPE_SZ) - 2 * 4096, what,
               lambda: f"{pipe_queued(read_end)} bytes queued, exit {process.poll()}", timeout)
    if process.poll() is not None:
        raise WaitTimeout(f"{what}: the process exited with {process.returncode} first")


class LineCollector:
    """Reads a text stream's lines on a thread, so a test can wait for a count of them."""

    def __init__(self, stream):
        self.lines = []
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self._thread.start()

    def _read(self, stream):
        for line in stream:
            with self._lock:
                self.lines.append(line)

    def snapshot(self):
        with self._lock:
            return list(self.lines)

    def finish(self, timeout=DEADLINE_S):
        self._thread.join(timeout)
        return self.snapshot()
