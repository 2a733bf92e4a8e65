#!/usr/bin/env python3
"""The reference for scripts/bench/sysview.sh: a SystemView decoder as people write one in an
afternoon (the framing of SEGGER_SYSVIEW.c's "Packet format" comment: varints, fixed and sized
packets, the timestamp deltas), writing one JSON line per packet. Not a tracepipe tool.
Usage: sysview_reference.py FILE > out.ndjson"""
import json
import sys

FIXED = ["", "U", "U", "", "U", "", "U", "UU", "U", "UUS", "", "", "U", "UU", "S", "U", "U", "", "", "U", "",
         "UUUU", "UUS", "UU"]


def main():
    data = open(sys.argv[1], "rb").read()
    out = sys.stdout
    at, time, zeros = 0, 0, 0
    while at < len(data) and zeros < 10:  # the first sync
        zeros = zeros + 1 if data[at] == 0 else 0
        at += 1

    def varint():
        nonlocal at
        value, shift = 0, 0
        while True:
            byte = data[at]
            at += 1
            value |= (byte & 0x7F) << shift
            shift += 7
            if byte < 0x80:
                return value

    def string():
        nonlocal at
        length = data[at]
        at += 1
        if length == 255:
            length = (data[at] << 8) | data[at + 1]
            at += 2
        text = data[at:at + length].decode("latin-1")
        at += length
        return text

    try:
        while at < len(data):
            event = varint()
            fields = []
            if event < 24:
                for kind in FIXED[event]:
                    fields.append(varint() if kind == "U" else string())
            else:
                length = varint()
                fields.append(list(data[at:at + length]))
                at += length
            time += varint()
            if event != 0:
                out.write(json.dumps({"timestamp": time, "event": event, "fields": fields}) + "\n")
    except IndexError:
        pass


main()
