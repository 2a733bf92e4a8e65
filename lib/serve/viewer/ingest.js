// Ingest: Event and batched Events messages into the ring and the aggregates.
import { HISTORY } from './config.js';
import { CLOCKS, kindId, ring, ringText } from './ring.js';
import { state, visible } from './state.js';
import { TOP_KINDS, addStatistics, aggregate } from './aggregates.js';

// The functions that take a message's records in. `seen.port()` and `seen.kind()`: called when
// a record shows a port or a kind for the first time (main.js rebuilds the filters).
export function createIngest(seen) {
  // `message`, `start`, `length`: where the record's exact text is (see the ring).
  // `hostUs`: the fleet's host_us (trace-lab's records), else undefined; `id`: their {run, seq}.
  function addRecord(t, port, kind, clock, message, start, length, data, hostUs, id) {
    const at = ring.head;
    ring.time[at] = t;
    ring.port[at] = port;
    ring.kind[at] = kindId(kind);
    ring.clock[at] = Math.max(0, CLOCKS.indexOf(clock));
    ring.message[at] = message;
    ring.start[at] = start;
    ring.length[at] = length;
    ring.head = (at + 1) % HISTORY;
    if (ring.count < HISTORY) ring.count++;
    const seq = state.total++;
    if (state.newest === null || t > state.newest) state.newest = t;
    if (Number.isFinite(t) && (state.oldest === null || t < state.oldest)) state.oldest = t;
    if (clock) state.clock = clock;
    if (!state.seenPorts.has(port)) { state.seenPorts.add(port); seen.port(); }
    if (!state.seenKinds.has(kind)) { state.seenKinds.add(kind); seen.kind(); }
    if (hostUs !== undefined) noteMark(t, hostUs, id);
    if (visible(port, kind, () => ringText(at))) aggregate(t, port, kind, clock, data, seq, hostUs);
    state.dirty = true;
  }

  // A record (an Event's data) whose exact text is message[start, start + length).
  function addEventRecord(record, message, start, length) {
    if (record.source === 'trace-top' && TOP_KINDS.has(record.event.kind)) {
      addStatistics(record.event.kind, record.event.data || {}, record.clock || null, record.timestamp);
      return;
    }
    addRecord(record.timestamp, record.port, record.event.kind, record.clock || null, message, start, length,
              record.event.data || {}, record.host_us, record);
  }

  function addFramesLine(line) {
    for (const frame of line.frames) {
      const text = JSON.stringify(frame);
      addRecord(frame.timestamp ?? line.timestamp, frame.port, 'Itm', null, text, 0, text.length, { data: frame.data });
    }
  }

  // A single Event: the message is {"type":"Event","data":RECORD}; the record's exact text.
  function addEventMessage(message, text) {
    const prefix = '{"type":"Event","data":';
    if (text.startsWith(prefix)) addEventRecord(message.data, text, prefix.length, text.length - prefix.length - 1);
    else {
      const record = JSON.stringify(message.data);
      addEventRecord(message.data, record, 0, record.length);
    }
  }

  // A batched Events message (below): each item a record or an Itm frames line.
  function addEventsMessage(message, text) {
    const starts = recordStarts(text, message);
    message.data.forEach((line, i) => (line.frames ? addFramesLine(line)
                                                   : addEventRecord(line, text, starts[i], message.lengths[i])));
  }

  return { addEventMessage, addEventsMessage, addFramesLine };
}

// The record nearest to the mark in host time gives the mark's target time; the mark's own
// record (its run and seq) is nearer than any.
function noteMark(t, hostUs, id) {
  const mark = state.mark;
  if (mark.us === null) return;
  const exact = mark.record !== null && id.seq === mark.record.seq && id.run === mark.record.run;
  const distance = exact ? -1 : Math.abs(hostUs - mark.us);
  if (distance >= mark.distance) return;
  mark.distance = distance;
  mark.t = t;
}

// The batched form: {"type":"Events","lengths":[N, ...],"data":[RECORD or FRAMES LINE, ...]}
// with each item's length in UTF-16 units, so the records' exact texts (which the export
// promises) are found without scanning the message. Where the lengths do not add up, the
// message is scanned instead.
function recordStarts(message, parsed) {
  const marker = '],"data":[';
  let at = message.indexOf(marker) + marker.length;
  const starts = new Array(parsed.lengths.length);
  for (let i = 0; i < parsed.lengths.length; i++) {
    starts[i] = at;
    at += parsed.lengths[i] + 1;
  }
  return at === message.length - 1 ? starts : scanRecordStarts(message, parsed);
}

function scanRecordStarts(message, parsed) {
  state.scannedBatches++;
  const starts = [];
  parsed.lengths = [];
  let depth = 0;
  let start = -1;
  let inString = false;
  for (let i = message.indexOf('"data":[') + 8; i < message.length - 2; i++) {
    const c = message.charCodeAt(i);
    if (inString) {
      if (c === 92) i++;               // backslash: skip the escaped character
      else if (c === 34) inString = false;
      continue;
    }
    if (c === 34) { inString = true; continue; }
    if (c === 123 || c === 91) { if (depth++ === 0) start = i; continue; }
    if ((c === 125 || c === 93) && --depth === 0) {
      starts.push(start);
      parsed.lengths.push(i + 1 - start);
    }
  }
  return starts;
}
