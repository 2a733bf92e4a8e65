#!/usr/bin/env python3
"""Independent ITM stream generator for the decoder benchmark (issue 20): written from the
ARMv7-M Architecture Reference Manual (appendix D4, ITM and DWT packets), the CoreSight TPIU
formatter and the Callisto port map (docs/design.md "Peers and their protocols"). It shares no
code with lib/itm (neither its encoder nor tests/tools/itm-synth), so the decoder's fast paths
were not shaped for it.

Mixes (each what some firmware really sends):
  rtos-printf  console lines in random 1/2/4-byte writes on port 0 interleaved with ports 4-7,
               TaskIsr records (port 1) split into 1/2/4-byte writes, 4-byte markers (port 2),
               counters as three 4-byte writes (port 3), exceptions, PC samples, local
               timestamps before ~15% of packets (1-byte and multi-byte forms), a sync every
               ~30 packets: printf-over-ITM firmware with an RTOS tracer
  text         text only, ports 0 and 4-7, random write sizes, rare timestamps
  dwt          DWT-heavy: exception entry/exit/resume, PC samples every few cycles (sleep
               samples too), event counter packets, a timestamp before most packets
  taskisr      RTOS-heavy: task switches, ISR enter/exit and idle records in every split
  tpiu         rtos-printf inside TPIU 16-byte frames (ID 1, a full-frame sync every 64 frames)

Usage: itm-mixes.py MIX SIZE_BYTES SEED > FILE"""
import random
import sys

WORDS = ("sensor", "adc", "ready", "temp=", "21.5C", "ok", "tick", "rx", "tx", "len=", "0x3f", "err", "retry",
         "state", "->", "IDLE", "RUN", "spi", "i2c", "dma", "done", "t=", "1024", "us", "[wifi]", "connected")


class Stream:
    def __init__(self, seed):
        self.r = random.Random(seed)
        self.out = bytearray()
        self.packets = 0

    # ARMv7-M D4.2.8: instrumentation packet header = port[4:0] << 3 | SS (1 -> 1, 2 -> 2, 3 -> 4 bytes).
    def write(self, port, data):
        size_code = {1: 1, 2: 2, 4: 3}[len(data)]
        self.out.append((port << 3) | size_code)
        self.out += data
        self.packets += 1

    def writes(self, port, data, sizes=(1, 2, 4)):
        """data as the firmware writes it: a random sequence of 1/2/4-byte writes."""
        i = 0
        while i < len(data):
            left = len(data) - i
            size = self.r.choice([s for s in sizes if s <= left])
            self.write(port, data[i:i + size])
            i += size

    # D4.2.4: local timestamp. LTS2 (one byte, 0TTT0000) for 1..6, else LTS1 (11TT0000 + up to 4
    # bytes of 7 bits, bit 7 = continuation).
    def timestamp(self, delta, tc=0):
        if 1 <= delta <= 6 and tc == 0:
            self.out.append(delta << 4)
        else:
            self.out.append(0xC0 | (tc << 4))
            delta &= (1 << 28) - 1
            while True:
                byte = delta & 0x7F
                delta >>= 7
                if delta:
                    self.out.append(byte | 0x80)
                else:
                    self.out.append(byte)
                    break
        self.packets += 1

    def sync(self):  # D4.2.1: at least 47 zero bits then a one
        self.out += b"\x00\x00\x00\x00\x00\x80"
        self.packets += 1

    # D4.3.2: exception trace, discriminator 1, 2 bytes: number[8:0], function[13:12] (1 entry, 2 exit, 3 return).
    def exception(self, number, function):
        value = number | (function << 12)
        self.out += bytes((0x0E, value & 0xFF, value >> 8))
        self.packets += 1

    # D4.3.3: periodic PC sample, discriminator 2: 4 bytes, or 1 zero byte while sleeping.
    def pc_sample(self, pc):
        if pc is None:
            self.out += b"\x15\x00"
        else:
            self.out.append(0x17)
            self.out += pc.to_bytes(4, "little")
        self.packets += 1

    def event_counter(self, bits):  # D4.3.1: discriminator 0, 1 byte
        self.out += bytes((0x05, bits))
        self.packets += 1

    def maybe_timestamp(self, share):
        if self.r.random() < share:
            self.timestamp(self.r.choice((self.r.randint(1, 6), self.r.randint(7, 5000), self.r.randint(5000, 1 << 21))),
                           self.r.choice((0, 0, 0, 1)))

    def line(self):
        words = [self.r.choice(WORDS) for _ in range(self.r.randint(2, 12))]
        return (" ".join(words) + "\n").encode()


def taskisr_record(r):
    kind = r.choice((1, 1, 2, 3, 4, 5))
    a = r.randint(0, 15) if kind == 1 else r.randint(0, 90)
    b = r.randint(0, 15) if kind == 1 else 0
    return bytes((kind,)) + a.to_bytes(4, "little") + b.to_bytes(4, "little")


def taskisr_writes(s, record):
    split = s.r.choice(((4, 4, 1), (1, 4, 4), (2, 2, 4, 1), (1,) * 9, None))
    if split is None:
        s.writes(1, record)
        return
    i = 0
    for size in split:
        s.write(1, record[i:i + size])
        i += size


def rtos_printf(s, size):
    pending = {0: b"", 4: b""}
    pcs = [0x08000000 + 4 * s.r.randint(0, 20000) for _ in range(64)]
    since_sync = 0
    while len(s.out) < size:
        s.maybe_timestamp(0.15)
        choice = s.r.random()
        if choice < 0.45:
            port = s.r.choice((0, 0, 0, 4))
            if not pending[port]:
                pending[port] = s.line()
            take = s.r.randint(1, min(12, len(pending[port])))
            s.writes(port, pending[port][:take])
            pending[port] = pending[port][take:]
        elif choice < 0.65:
            taskisr_writes(s, taskisr_record(s.r))
        elif choice < 0.72:
            s.write(2, s.r.randint(1, 200).to_bytes(4, "little"))
        elif choice < 0.78:
            value = s.r.randint(0, 1 << 40)
            for word in (s.r.randint(0, 7), value & 0xFFFFFFFF, value >> 32):
                s.write(3, word.to_bytes(4, "little"))
        elif choice < 0.88:
            number = s.r.randint(11, 90)
            s.exception(number, 1)
            s.exception(number, 2)
            s.exception(s.r.choice((0, 15)), 3)
        else:
            s.pc_sample(s.r.choice(pcs))
        since_sync += 1
        if since_sync >= s.r.randint(25, 35):
            s.sync()
            since_sync = 0


def text(s, size):
    pending = {port: b"" for port in (0, 4, 5, 6, 7)}
    while len(s.out) < size:
        s.maybe_timestamp(0.02)
        port = s.r.choice((0, 0, 0, 0, 4, 5, 6, 7))
        if not pending[port]:
            pending[port] = s.line()
        take = s.r.randint(1, min(24, len(pending[port])))
        s.writes(port, pending[port][:take])
        pending[port] = pending[port][take:]


def dwt(s, size):
    pcs = [0x08000000 + 2 * s.r.randint(0, 100000) for _ in range(512)]
    nesting = []
    while len(s.out) < size:
        s.maybe_timestamp(0.7)
        choice = s.r.random()
        if choice < 0.5:
            s.pc_sample(None if s.r.random() < 0.1 else s.r.choice(pcs))
        elif choice < 0.8:
            if nesting and (len(nesting) > 3 or s.r.random() < 0.5):
                s.exception(nesting.pop(), 2)
                s.exception(nesting[-1] if nesting else 0, 3)
            else:
                nesting.append(s.r.randint(11, 90))
                s.exception(nesting[-1], 1)
        else:
            s.event_counter(s.r.choice((0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x21)))


def taskisr(s, size):
    while len(s.out) < size:
        s.maybe_timestamp(0.3)
        taskisr_writes(s, taskisr_record(s.r))
        if s.r.random() < 0.03:
            s.sync()


# CoreSight TPIU formatter: 16-byte frames; byte 15 holds bit 0 of the data in even slots
# (bit k for slot 2k), an even slot with bit 0 set is an ID change (ID << 1 | 1), odd slots
# are plain data. A full-frame sync is FF FF FF 7F.
def tpiu(payload):
    out = bytearray()
    i, frames = 0, 0
    while i < len(payload):
        if frames % 64 == 0:
            if frames:
                out += b"\xff\xff\xff\x7f"
            slots = [None] + list(payload[i:i + 14])  # slot 0: ID 1, applying to what follows
            i += 14
        else:
            slots = list(payload[i:i + 15])
            i += 15
        if len(slots) < 15:  # the end: what is left goes to the null source (ID 0), as a TPIU pads
            if len(slots) % 2 == 1:
                slots.append(0x10)  # odd slot: still ITM, a 1-byte local timestamp as filler
            slots.append("null")
            slots += [0] * (15 - len(slots))
        aux = 0
        frame = bytearray(16)
        for k, data in enumerate(slots):
            if k % 2 == 1:
                frame[k] = data
            elif data is None:
                frame[k] = (1 << 1) | 1
            elif data == "null":
                frame[k] = 1
            else:
                frame[k] = data & 0xFE
                aux |= (data & 1) << (k // 2)
        frame[15] = aux
        out += frame
        frames += 1
    return out


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    mix, size, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    s = Stream(seed)
    s.sync()
    generators = {"rtos-printf": rtos_printf, "text": text, "dwt": dwt, "taskisr": taskisr, "tpiu": rtos_printf}
    if mix not in generators:
        sys.exit(f"unknown mix {mix} (known: {', '.join(generators)})")
    generators[mix](s, size)
    data = tpiu(bytes(s.out)) if mix == "tpiu" else s.out
    sys.stdout.buffer.write(data)


if __name__ == "__main__":
    main()
