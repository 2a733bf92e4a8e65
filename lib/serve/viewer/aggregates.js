// The aggregates every view draws from, updated per record as records arrive.
import { $, CONSOLE_LINES, MAX_BARS_PER_LANE, MAX_SERIES_POINTS, MAX_TICKS, TABLE_ROWS } from './config.js';
import { ring, ringRecords } from './ring.js';
import { live, state, visible } from './state.js';
import { idName } from './names.js';
import { freshStacks, stacksRecord } from './stacks.js';
import { freshPairs, pairsRecord } from './pairs.js';

export function freshAggregates() {
  return {
    console: [],       // newest visible Text records (bounded)
    all: [],           // arrival numbers of the newest visible records of any kind (bounded)
    lanes: new Map(),  // timeline: key -> {key, label, kind, order, bars: [[start, end]], dropped}
    running: null,
    openIsr: new Map(),
    idleSince: null,
    first: null,
    last: null,
    markerTicks: [],
    consoleTicks: [],
    markers: [],
    counters: new Map(),  // id -> {points: [[t, v]], stride, skip, last, min, max}
    exceptions: new Map(),  // name -> {enter, exit, resume}
    recentExceptions: [],
    pc: new Map(),  // function (with symbols: trace-serve or itm-decode --elf), else the PC -> samples
    pcTotal: 0,
    pcSleeping: 0,
    stacks: freshStacks(),  // the flame graph's: PC samples as task;function with their times
    pairs: freshPairs(),    // the Durations tab's marker pairs (MarkStart/MarkStop)
  };
}

// trace-serve's statistics (trace-top's snapshot records, --top-interval): kept apart from the
// trace's records (not in the ring, the views, the search or the exports); a summary starts a
// snapshot.
export const TOP_KINDS = new Set(['TopSummary', 'TopFunction', 'TopHandler', 'TopTask']);

export function addStatistics(kind, data, clock, timestamp) {
  state.statisticsRecords++;
  if (kind === 'TopSummary') live.statistics = { summary: data, functions: [], handlers: [], tasks: [], clock, timestamp };
  else if (live.statistics) ({ TopFunction: live.statistics.functions, TopHandler: live.statistics.handlers, TopTask: live.statistics.tasks })[kind].push(data);
  if (['statistics', 'load', 'durations'].includes(state.activeTab)) state.dirty = true;
}

function pushBounded(list, item, limit) {
  list.push(item);
  if (list.length > limit * 1.25) list.splice(0, list.length - limit);
}

// A lane by key; `named`: the label comes from the record itself (a name it carries), which
// wins over the port map's and over "task N".
function lane(key, label, kind, order, named = false) {
  let entry = live.agg.lanes.get(key);
  if (!entry) {
    entry = { key, label, kind, order, named, bars: [] };
    live.agg.lanes.set(key, entry);
  } else if (named && !entry.named) {
    entry.label = label;
    entry.named = true;
  }
  return entry;
}

function addBar(entry, start, end) {
  pushBounded(entry.bars, [start, end], MAX_BARS_PER_LANE);
}

function taskLabel(port, id, data) {
  const carried = data.to_name || data.to_thread;
  return { label: carried || idName(port, id) || `task ${id}`, named: Boolean(carried) };
}

// Lanes from TaskSwitch (a task runs until the next switch), IsrEnter/IsrExit and
// IdleEnter/IdleExit; ChibiOS thread switches from chibi-pull carry names.
function timelineRecord(t, port, kind, data) {
  if (kind === 'TaskSwitch') {
    const to = data.to_task;
    const running = live.agg.running;
    if (running) addBar(live.agg.lanes.get(`task:${running.id}`), running.since, t);
    const { label, named } = taskLabel(port, to, data);
    lane(`task:${to}`, label, 'task', 1, named);
    live.agg.running = { id: to, since: t };
  } else if (kind === 'IsrEnter') {
    live.agg.openIsr.set(data.isr_id, t);
    lane(`isr:${data.isr_id}`, data.name || idName(port, data.isr_id) || `ISR ${data.isr_id}`, 'ISR', 0, Boolean(data.name));
  } else if (kind === 'IsrExit') {
    const since = live.agg.openIsr.get(data.isr_id);
    if (since === undefined) return;
    addBar(lane(`isr:${data.isr_id}`, idName(port, data.isr_id) || `ISR ${data.isr_id}`, 'ISR', 0), since, t);
    live.agg.openIsr.delete(data.isr_id);
  } else if (kind === 'IdleEnter') {
    live.agg.idleSince = t;
  } else if (kind === 'IdleExit') {
    if (live.agg.idleSince !== null) addBar(lane('idle', 'idle', 'idle', 2), live.agg.idleSince, t);
    live.agg.idleSince = null;
  } else {
    return;
  }
  if (live.agg.first === null) live.agg.first = t;
  live.agg.last = t;
}

function counterRecord(t, data) {
  let series = live.agg.counters.get(data.counter_id);
  if (!series) {
    series = { points: [], stride: 1, skip: 0, last: data.value, min: data.value, max: data.value };
    live.agg.counters.set(data.counter_id, series);
  }
  series.last = data.value;
  series.min = Math.min(series.min, data.value);
  series.max = Math.max(series.max, data.value);
  if (series.skip > 0) { series.skip--; return; }
  series.points.push([t, data.value]);
  series.skip = series.stride - 1;
  if (series.points.length >= MAX_SERIES_POINTS) {
    // Evenly thinned: every other point goes, and from now on one in twice as many is kept.
    series.points = series.points.filter((_, i) => i % 2 === 0);
    series.stride *= 2;
    series.skip = series.stride - 1;
  }
}

export function aggregate(t, port, kind, clock, data, seq, hostUs) {
  pushBounded(live.agg.all, seq, CONSOLE_LINES);
  const record = { timestamp: t, port, kind, clock, data, hostUs };
  stacksRecord(live.agg.stacks, t, kind, data);
  pairsRecord(live.agg.pairs, t, port, kind, data);
  switch (kind) {
    case 'Text':
      pushBounded(live.agg.console, record, CONSOLE_LINES);
      pushBounded(live.agg.consoleTicks, t, MAX_TICKS);
      break;
    case 'Marker':
      pushBounded(live.agg.markers, record, TABLE_ROWS);
      pushBounded(live.agg.markerTicks, t, MAX_TICKS);
      break;
    case 'Counter':
      counterRecord(t, data);
      break;
    case 'Exception': {
      const key = data.handler || data.name || `#${data.number}`;
      let entry = live.agg.exceptions.get(key);
      if (!entry) { entry = { enter: 0, exit: 0, resume: 0 }; live.agg.exceptions.set(key, entry); }
      if (data.action in entry) entry[data.action]++;
      pushBounded(live.agg.recentExceptions, record, TABLE_ROWS);
      break;
    }
    case 'PcSample': {
      live.agg.pcTotal++;
      if (data.sleep) { live.agg.pcSleeping++; break; }
      const key = data.function || `0x${Number(data.pc).toString(16).padStart(8, '0')}`;
      live.agg.pc.set(key, (live.agg.pc.get(key) || 0) + 1);
      break;
    }
    default:
      timelineRecord(t, port, kind, data);
  }
}

// A filter, the search or Clear changed what counts: the aggregates are rebuilt once from
// the ring (parsing each record again).
export function rebuildAggregates() {
  live.agg = freshAggregates();
  let seq = state.total - ring.count;
  for (const r of ringRecords()) {
    if (visible(r.port, r.kind, r.json)) {
      const parsed = JSON.parse(r.json);
      const data = parsed.event ? (parsed.event.data || {}) : { data: parsed.data };  // an Itm frame otherwise
      aggregate(r.timestamp, r.port, r.kind, r.clock, data, seq, parsed.host_us);
    }
    seq++;
  }
  state.dirty = true;
}
