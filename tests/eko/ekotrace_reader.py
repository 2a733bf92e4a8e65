#!/usr/bin/env python3
"""An ekotrace-style reader of eko-collect's CSV: it rebuilds the causal order the way
ekotrace's util crate does (util/src/lib.rs before the rename to modality-probe), written
from that code's rules, sharing nothing with eko-collect:
- rows are read with the util crate's checks (LogFileLine -> LogEntry): session_id u32,
  an event row has no lc columns, a clock row has both, event ids 1..0x3FFFFFFF;
- each segment's metadata is the clock rows of the segment, grouped as they come
  (itertools group_by on segment_id): its tracer and its logical clock (tracer -> count,
  later entries win); its local clock is the count of its own tracer's entry;
- LCIndex: tracer -> local clock -> segment. Two segments of one tracer with the same local
  clock collide: the util crate keeps the later one and the earlier one's place in the
  causal order is lost. That is what the clear after a report must prevent;
- cross-segment links as find_segment_direct_ancestors: for each clock entry (tracer T,
  count c) the segment of T with the greatest local clock below c is an ancestor (an entry
  of another tracer already in a local ancestor, among the five before, is skipped);
  a clock of a tracer with no segment at all is SegmentMissingOwnClock.
Usage as a program: ekotrace_reader.py FILE.csv  (exit 1 on any collision or error)."""
import csv
import itertools
import sys

MAX_EVENT_ID = 0x3FFFFFFF
U32 = 0xFFFFFFFF


class ReadError(Exception):
    pass


def read_rows(lines):
    """The CSV rows as dicts of ints/None, checked as the util crate's reader checks them."""
    out = []
    for line_number, r in enumerate(csv.DictReader(lines), start=2):
        row = {}
        for key in ("session_id", "segment_id", "segment_index", "tracer_id", "event_id", "event_payload",
                    "lc_tracer_id", "lc_clock"):
            text = r.get(key)
            if text is None:
                raise ReadError(f"line {line_number}: no column {key}")
            value = int(text) if text != "" else None
            if value is not None and not 0 <= value <= U32:
                raise ReadError(f"line {line_number}: {key} {value} is not a u32")
            row[key] = value
        if row["session_id"] is None or row["segment_id"] is None or row["tracer_id"] is None:
            raise ReadError(f"line {line_number}: session_id, segment_id and tracer_id are required")
        if row["event_id"] is not None:
            if row["lc_tracer_id"] is not None or row["lc_clock"] is not None:
                raise ReadError(f"line {line_number}: an event row with lc columns")
            if not 1 <= row["event_id"] <= MAX_EVENT_ID:
                raise ReadError(f"line {line_number}: invalid event id {row['event_id']}")
        elif row["lc_tracer_id"] is None or row["lc_clock"] is None:
            raise ReadError(f"line {line_number}: neither an event nor a whole clock")
        out.append(row)
    return out


def segment_metadata(rows, session_id):
    """segment id -> (tracer id, {tracer: count}), from the clock rows grouped as they come."""
    clocks = (r for r in rows if r["session_id"] == session_id and r["event_id"] is None)
    index = {}
    for segment_id, group in itertools.groupby(clocks, key=lambda r: r["segment_id"]):
        logical_clock, tracer_id = {}, None
        for r in group:
            logical_clock[r["lc_tracer_id"]] = r["lc_clock"]
            tracer_id = r["tracer_id"]
        index[segment_id] = (tracer_id, logical_clock)
    return index


def lc_index(metadata):
    """tracer -> {local clock: segment}, and the collisions [(tracer, clock, earlier, later)]."""
    index, collisions = {}, []
    for segment_id, (tracer_id, logical_clock) in metadata.items():
        local = logical_clock.get(tracer_id)
        if local is None:
            continue
        by_clock = index.setdefault(tracer_id, {})
        if local in by_clock:
            collisions.append((tracer_id, local, by_clock[local], segment_id))
        by_clock[local] = segment_id
    return index, collisions


def direct_ancestors(segment_id, metadata, index):
    tracer_id, logical_clock = metadata[segment_id]
    local = logical_clock[tracer_id]
    own = index[tracer_id]
    local_ancestors = [metadata[own[c]] for c in sorted(own, reverse=True) if max(local - 5, 0) <= c < local]
    ancestors = set()
    for bucket_tracer, bucket_clock in logical_clock.items():
        if bucket_tracer != tracer_id and any(a[1].get(bucket_tracer) == bucket_clock for a in local_ancestors):
            continue
        if bucket_tracer not in index:
            raise ReadError(f"segment {segment_id}: clock of tracer {bucket_tracer}, which has no segment "
                            "(SegmentMissingOwnClock)")
        below = [c for c in index[bucket_tracer] if c < bucket_clock]
        if below:
            ancestors.add(index[bucket_tracer][max(below)])
    return ancestors


def causal_links(rows, session_id):
    """[(before, after)] segment links, the collisions, and the metadata."""
    metadata = segment_metadata(rows, session_id)
    index, collisions = lc_index(metadata)
    links = []
    for segment_id, (tracer_id, logical_clock) in metadata.items():
        if tracer_id in logical_clock:
            links += [(before, segment_id) for before in direct_ancestors(segment_id, metadata, index)]
    return links, collisions, metadata


def is_acyclic(links):
    successors, indegree = {}, {}
    for before, after in links:
        successors.setdefault(before, []).append(after)
        indegree[after] = indegree.get(after, 0) + 1
        indegree.setdefault(before, 0)
    ready = [n for n, d in indegree.items() if d == 0]
    seen = 0
    while ready:
        node = ready.pop()
        seen += 1
        for after in successors.get(node, []):
            indegree[after] -= 1
            if indegree[after] == 0:
                ready.append(after)
    return seen == len(indegree)


def main(path):
    with open(path, newline="") as f:
        rows = read_rows(f)
    failed = False
    for session_id in sorted({r["session_id"] for r in rows}):
        links, collisions, metadata = causal_links(rows, session_id)
        print(f"session {session_id}: {len(metadata)} segments with clocks, {len(links)} causal links, "
              f"{len(collisions)} collisions")
        for tracer_id, clock, earlier, later in collisions[:10]:
            print(f"  tracer {tracer_id} local clock {clock}: segment {later} hides segment {earlier}")
        if not is_acyclic(links):
            print("  the causal links have a cycle")
            failed = True
        failed = failed or bool(collisions)
    return 1 if failed else 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    try:
        sys.exit(main(sys.argv[1]))
    except ReadError as e:
        sys.exit(f"ekotrace_reader: {e}")
