#!/usr/bin/env python3
"""Writes Text records at a steady rate, each stamped with "sent_us" (CLOCK_REALTIME
microseconds) for latency measurement, then one "__end__" record.
Usage: pace-records.py RATE SECONDS"""
import sys
import time

rate = int(sys.argv[1])
seconds = float(sys.argv[2])
out = sys.stdout
batch = max(1, rate // 1000)  # one write per millisecond
interval = batch / rate
count = int(rate * seconds)
start = time.monotonic()
i = 0
while i < count:
    target = start + (i / rate)
    delay = target - time.monotonic()
    if delay > 0:
        time.sleep(delay)
    now = time.time_ns() // 1000
    lines = []
    for _ in range(batch):
        lines.append('{"timestamp":%d,"port":0,"event":{"kind":"Text","data":{"message":"tick %d"}},"source":"sim","sent_us":%d}\n' % (i, i, now))
        i += 1
    out.write("".join(lines))
    out.flush()
now = time.time_ns() // 1000
out.write('{"timestamp":%d,"port":0,"event":{"kind":"Text","data":{"message":"__end__"}},"sent_us":%d}\n' % (i, now))
out.flush()
time.sleep(1)
