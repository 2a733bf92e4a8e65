// The record ring: a million records in little memory, columnar.
import { HISTORY } from './config.js';

// A record's exact text is not cut out on arrival: the ring keeps the message it came in
// and where in it the record lies, so holding a million records adds no object per record
// for the garbage collector to trace; the text is cut when a view or an export needs it.
export const CLOCKS = [null, 'cycles', 'ns', 'us', 'ticks', 'none'];
export const ring = {
  time: new Float64Array(HISTORY),
  port: new Uint16Array(HISTORY),
  kind: new Uint8Array(HISTORY),
  clock: new Uint8Array(HISTORY),
  message: new Array(HISTORY),  // the text the record is in (shared by a batch's records)
  start: new Uint32Array(HISTORY),
  length: new Uint32Array(HISTORY),
  head: 0,
  count: 0,
};

export function ringText(at) {
  return ring.message[at].slice(ring.start[at], ring.start[at] + ring.length[at]);
}

// The ring slot of the record that arrived as number `seq` of `total` so far (state.total),
// or -1 once it is no longer held.
export function ringSlot(seq, total) {
  return seq >= total - ring.count ? seq % HISTORY : -1;
}
const kindNames = [];
const kindIndex = new Map();
export function kindId(name) {
  let id = kindIndex.get(name);
  if (id === undefined) {
    id = kindNames.length;
    kindNames.push(name);
    kindIndex.set(name, id);
  }
  return id;
}

// Oldest first.
export function* ringRecords() {
  const first = (ring.head - ring.count + HISTORY) % HISTORY;
  for (let i = 0; i < ring.count; i++) {
    const at = (first + i) % HISTORY;
    yield { timestamp: ring.time[at], port: ring.port[at], kind: kindNames[ring.kind[at]], clock: CLOCKS[ring.clock[at]],
            json: ringText(at) };
  }
}
