"""A Palm Reporter protocol sender written from the spec alone (not from palm-recv's code):
the Palm Reporter protocol v1 (docs/design.md "Peers and their protocols"). Big-endian; header: major, minor, u32 total size;
parameters: opcode u8, length u16, data."""
import struct

TEXT, TEXT_LINE, BINARY = 0, 1, 2


def param(opcode, data=b""):
    return struct.pack(">BH", opcode, len(data)) + data


def attributes(module, kind):
    return param(1, struct.pack(">HHB", module, 0, kind))


def message(parts, module=0x0100, kind=TEXT, indent=None, pid=None, tid=None, timestamp=None,
            extra=(), version=(1, 0), end=True, total_delta=0):
    """parts: bytes, or a list of (kind, bytes) where each kind change repeats the attributes."""
    body = b""
    if isinstance(parts, (bytes, bytearray)):
        body += attributes(module, kind) + param(5, bytes(parts))
    else:
        current = None
        for part_kind, data in parts:
            if part_kind != current:
                body += attributes(module, part_kind)
                current = part_kind
            body += param(5, data)
    if indent is not None:
        body += param(2, struct.pack(">B", indent))
    if pid is not None:
        body += param(3, struct.pack(">I", pid))
    if tid is not None:
        body += param(4, struct.pack(">I", tid))
    if timestamp is not None:
        body += param(6, struct.pack(">I", timestamp))
    for opcode, data in extra:
        body += param(opcode, data)
    if end:
        body += param(0)
    total = 6 + len(body) + total_delta
    return struct.pack(">BBI", version[0], version[1], total) + body


def raw_message(body, version=(1, 0), total=None):
    """A message around an arbitrary parameter body (for malformed cases)."""
    return struct.pack(">BBI", version[0], version[1], 6 + len(body) if total is None else total) + body
