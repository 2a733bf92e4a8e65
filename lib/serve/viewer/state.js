// The viewer's state: what arrived, what is shown, what the filters hide.
import { ring } from './ring.js';

export const state = {
  total: 0,            // records received since the page opened
  portNames: {},
  portIdNames: {},     // port -> {id: name} from the port map's "names" (TaskIsr ids, marker ids)
  cpuHz: null,
  paused: false,
  dirty: true,
  search: '',
  hiddenPorts: new Set(),
  hiddenKinds: new Set(),
  seenPorts: new Set(),
  seenKinds: new Set(),
  stats: null,
  finalStats: null,
  started: false,
  batched: false,      // the server speaks the batched form to this page
  scannedBatches: 0,   // batched messages whose lengths did not add up (scanned instead)
  statisticsRecords: 0,  // trace-top snapshot records received (kept out of the ring)
  view: { start: 0, end: 0, follow: true },
  drawn: { bars: 0, points: 0 },
  activeTab: 'console',
  clock: null,
  newest: null,        // timestamp of the newest record
  oldest: null,        // timestamp of the oldest record (since the page opened or Clear)
  // A host time to centre the Timeline on and mark (trace-lab's &mark=): `us` it, `t` the target
  // time of the record nearest to it (host_us), `auto` until the user moves the range; `record`
  // ({run, seq}, &mark_run/&mark_seq): the record that is the mark when it comes.
  mark: { us: null, t: null, distance: Infinity, auto: true, record: null },
  get count() { return ring.count; },
};

// `text`: the record's text, or a function that cuts it (only a search needs it).
export function visible(port, kind, text) {
  if (state.hiddenPorts.has(port) || state.hiddenKinds.has(kind)) return false;
  if (!state.search) return true;
  return (typeof text === 'function' ? text() : text).toLowerCase().includes(state.search);
}

// What more than one module replaces whole: the aggregates (rebuilt when a filter changes)
// and the newest trace-top snapshot.
export const live = {
  agg: null,
  statistics: null,  // the newest snapshot: {summary, functions, handlers, tasks, clock}
};
