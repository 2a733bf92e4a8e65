"""An ITM/DWT decoder written from the ARMv7-M Architecture Reference Manual (appendix D4,
"Debug ITM and DWT Packet Protocol") and the Callisto standard port map, sharing nothing with
lib/itm or lib/ports: the independent side that checks what swo-capture's simulated target says
it sent (--sim-events) against the bytes it did send.

decode(data) -> the records, in stream order, each as itm-decode shapes its record minus
what names add: {"timestamp", "port", "event": {"kind", "data"?}, "source", "clock": "cycles"}.
Times: a record takes the time of the first local timestamp after it (D4.2.4; prescaler 1),
a Text line the time after its first character."""
import struct

TEXT_PORTS = {0, 4, 5, 6, 7}   # the standard map: 0 Console and 4-7 User are Text
TASK_ISR_PORT, MARKER_PORT, COUNTER_PORT = 1, 2, 3
ACTIONS = {1: "enter", 2: "exit", 3: "resume"}  # D4.3.2, the exception packet's function


class Model:
    def __init__(self):
        self.time = 0
        self.pending = []  # records waiting for the next local timestamp
        self.out = []
        self.text = {}     # port -> characters of the line being written
        self.fixed = {TASK_ISR_PORT: b"", MARKER_PORT: b"", COUNTER_PORT: b""}

    def record(self, port, kind, data=None, source="itm"):
        event = {"kind": kind}
        if data is not None:
            event["data"] = data
        self.pending.append({"port": port, "event": event, "source": source})

    def timestamp(self, delta):
        self.time += delta
        for r in self.pending:
            self.out.append({"timestamp": self.time, **r, "clock": "cycles"})
        self.pending = []

    def stimulus(self, port, payload):
        if port in TEXT_PORTS:
            for byte in payload:
                if byte == 0x0A:
                    self.record(port, "Text", {"message": bytes(self.text.pop(port, b"")).decode("latin-1")})
                else:
                    self.text[port] = self.text.get(port, b"") + bytes([byte])
            return
        size = {TASK_ISR_PORT: 9, MARKER_PORT: 4, COUNTER_PORT: 12}[port]
        self.fixed[port] += payload
        while len(self.fixed[port]) >= size:
            body, self.fixed[port] = self.fixed[port][:size], self.fixed[port][size:]
            if port == MARKER_PORT:
                self.record(port, "Marker", {"id": struct.unpack("<I", body)[0]})
            elif port == COUNTER_PORT:
                counter_id, value = struct.unpack("<IQ", body)
                self.record(port, "Counter", {"counter_id": counter_id, "value": value})
            else:
                kind, a, b = struct.unpack("<BII", body)
                if kind == 1:
                    self.record(port, "TaskSwitch", {"from_task": a, "to_task": b})
                elif kind == 2:
                    self.record(port, "IsrEnter", {"isr_id": a})
                elif kind == 3:
                    self.record(port, "IsrExit", {"isr_id": a})
                elif kind == 4:
                    self.record(port, "IdleEnter")
                else:
                    self.record(port, "IdleExit")


def decode(data):
    m = Model()
    i = 0
    while i < len(data):
        header = data[i]
        if header == 0x00:  # D4.2.1 synchronization: zeros up to the 0x80 that ends them
            while i < len(data) and data[i] == 0x00:
                i += 1
            i += 1
            continue
        if header == 0x70:  # D4.2.3 overflow
            m.record(0, "Overflow", {})
            i += 1
            continue
        if (header & 0x0F) == 0x00:  # D4.2.4 local timestamp: LTS2 (0b0ddd0000) or LTS1 (0b11TT0000)
            if (header & 0x80) == 0:
                m.timestamp((header >> 4) & 0x07)
                i += 1
                continue
            value, shift = 0, 0
            i += 1
            while True:
                byte = data[i]
                value |= (byte & 0x7F) << shift
                shift += 7
                i += 1
                if (byte & 0x80) == 0:
                    break
            m.timestamp(value)
            continue
        size = {1: 1, 2: 2, 3: 4}[header & 0x03]
        payload = data[i + 1:i + 1 + size]
        i += 1 + size
        address = header >> 3
        if (header & 0x04) == 0:  # D4.2.8 instrumentation (software source), the standard map's ports
            m.stimulus(address, payload)
        elif address == 1:  # D4.3.2 exception trace
            number = payload[0] | ((payload[1] & 0x01) << 8)
            m.record(0, "Exception", {"number": number, "action": ACTIONS.get((payload[1] >> 4) & 0x03, "reserved")}, "dwt")
        elif address == 2:  # D4.3.3 periodic PC sample: one zero byte while sleeping
            sleeping = size == 1
            pc = 0 if sleeping else struct.unpack("<I", payload)[0]
            m.record(0, "PcSample", {"pc": pc, "sleep": sleeping}, "dwt")
        else:
            raise ValueError(f"byte {i}: a hardware packet the simulator does not send (discriminator {address})")
    return m.out
