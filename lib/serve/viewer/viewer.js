// tracepipe web viewer: a Callisto protocol client with console, timeline, markers,
// counters, exceptions and PC-sample views. No dependencies; served by trace-serve.
//
// Built to keep up with a live target: it asks trace-serve for the batched form (the
// "tracepipe.batch" subprotocol: many records per message, an extension a Callisto client
// never sees), holds a million records in a columnar ring, and keeps every view's
// aggregates (timeline bars, exception counts, PC shares, counter series) up to date as
// records arrive, so a redraw never rescans the buffer. Only a change of filters or search
// rebuilds them, once.
'use strict';

const HISTORY = 1000000;         // records kept for export and for rebuilding the views
const CONSOLE_LINES = 10000;     // lines kept for the console and the records view (drawn: those in view)
const TABLE_ROWS = 500;          // rows rendered in tables
const MAX_BARS_PER_LANE = 50000; // timeline bars kept per lane (oldest dropped first)
const MAX_SERIES_POINTS = 4000;  // counter points kept per series (evenly thinned)
const MAX_TICKS = 50000;         // marker and console ticks kept for the time axis
const BATCH_PROTOCOL = 'tracepipe.batch';
const $ = (id) => document.getElementById(id);

// ---- the record ring (columnar: a million records in little memory) -------------------

// A record's exact text is not cut out on arrival: the ring keeps the message it came in
// and where in it the record lies, so holding a million records adds no object per record
// for the garbage collector to trace; the text is cut when a view or an export needs it.
const CLOCKS = [null, 'cycles', 'ns', 'us', 'ticks', 'none'];
const ring = {
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

function ringText(at) {
  return ring.message[at].slice(ring.start[at], ring.start[at] + ring.length[at]);
}

// The ring slot of the record that arrived as number `seq` (state.total before it), or -1
// once it is no longer held.
function ringSlot(seq) {
  return seq >= state.total - ring.count ? seq % HISTORY : -1;
}
const kindNames = [];
const kindIndex = new Map();
function kindId(name) {
  let id = kindIndex.get(name);
  if (id === undefined) {
    id = kindNames.length;
    kindNames.push(name);
    kindIndex.set(name, id);
  }
  return id;
}

// Oldest first.
function* ringRecords() {
  const first = (ring.head - ring.count + HISTORY) % HISTORY;
  for (let i = 0; i < ring.count; i++) {
    const at = (first + i) % HISTORY;
    yield { timestamp: ring.time[at], port: ring.port[at], kind: kindNames[ring.kind[at]], clock: CLOCKS[ring.clock[at]],
            json: ringText(at) };
  }
}

// ---- state ---------------------------------------------------------------------------

const state = {
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
  get count() { return ring.count; },
};

// `text`: the record's text, or a function that cuts it (only a search needs it).
function visible(port, kind, text) {
  if (state.hiddenPorts.has(port) || state.hiddenKinds.has(kind)) return false;
  if (!state.search) return true;
  return (typeof text === 'function' ? text() : text).toLowerCase().includes(state.search);
}

// ---- aggregates, updated per record --------------------------------------------------

let agg = null;

function freshAggregates() {
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
  };
}

// trace-serve's statistics (trace-top's snapshot records, --top-interval): kept apart from the
// trace's records (not in the ring, the views, the search or the exports); a summary starts a
// snapshot.
const TOP_KINDS = new Set(['TopSummary', 'TopFunction', 'TopHandler', 'TopTask']);
let statistics = null;  // the newest snapshot: {summary, functions, handlers, tasks, clock}

function addStatistics(kind, data, clock) {
  state.statisticsRecords++;
  if (kind === 'TopSummary') statistics = { summary: data, functions: [], handlers: [], tasks: [], clock };
  else if (statistics) ({ TopFunction: statistics.functions, TopHandler: statistics.handlers, TopTask: statistics.tasks })[kind].push(data);
  if (state.activeTab === 'statistics') state.dirty = true;
}

function pushBounded(list, item, limit) {
  list.push(item);
  if (list.length > limit * 1.25) list.splice(0, list.length - limit);
}

function idName(port, id) {
  const names = state.portIdNames[port];
  return names ? names[id] : undefined;
}

// A lane by key; `named`: the label comes from the record itself (a name it carries), which
// wins over the port map's and over "task N".
function lane(key, label, kind, order, named = false) {
  let entry = agg.lanes.get(key);
  if (!entry) {
    entry = { key, label, kind, order, named, bars: [] };
    agg.lanes.set(key, entry);
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
    const running = agg.running;
    if (running) addBar(agg.lanes.get(`task:${running.id}`), running.since, t);
    const { label, named } = taskLabel(port, to, data);
    lane(`task:${to}`, label, 'task', 1, named);
    agg.running = { id: to, since: t };
  } else if (kind === 'IsrEnter') {
    agg.openIsr.set(data.isr_id, t);
    lane(`isr:${data.isr_id}`, data.name || idName(port, data.isr_id) || `ISR ${data.isr_id}`, 'ISR', 0, Boolean(data.name));
  } else if (kind === 'IsrExit') {
    const since = agg.openIsr.get(data.isr_id);
    if (since === undefined) return;
    addBar(lane(`isr:${data.isr_id}`, idName(port, data.isr_id) || `ISR ${data.isr_id}`, 'ISR', 0), since, t);
    agg.openIsr.delete(data.isr_id);
  } else if (kind === 'IdleEnter') {
    agg.idleSince = t;
  } else if (kind === 'IdleExit') {
    if (agg.idleSince !== null) addBar(lane('idle', 'idle', 'idle', 2), agg.idleSince, t);
    agg.idleSince = null;
  } else {
    return;
  }
  if (agg.first === null) agg.first = t;
  agg.last = t;
}

function counterRecord(t, data) {
  let series = agg.counters.get(data.counter_id);
  if (!series) {
    series = { points: [], stride: 1, skip: 0, last: data.value, min: data.value, max: data.value };
    agg.counters.set(data.counter_id, series);
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

function aggregate(t, port, kind, clock, data, seq) {
  pushBounded(agg.all, seq, CONSOLE_LINES);
  const record = { timestamp: t, port, kind, clock, data };
  switch (kind) {
    case 'Text':
      pushBounded(agg.console, record, CONSOLE_LINES);
      pushBounded(agg.consoleTicks, t, MAX_TICKS);
      break;
    case 'Marker':
      pushBounded(agg.markers, record, TABLE_ROWS);
      pushBounded(agg.markerTicks, t, MAX_TICKS);
      break;
    case 'Counter':
      counterRecord(t, data);
      break;
    case 'Exception': {
      const key = data.handler || data.name || `#${data.number}`;
      let entry = agg.exceptions.get(key);
      if (!entry) { entry = { enter: 0, exit: 0, resume: 0 }; agg.exceptions.set(key, entry); }
      if (data.action in entry) entry[data.action]++;
      pushBounded(agg.recentExceptions, record, TABLE_ROWS);
      break;
    }
    case 'PcSample': {
      agg.pcTotal++;
      if (data.sleep) { agg.pcSleeping++; break; }
      const key = data.function || `0x${Number(data.pc).toString(16).padStart(8, '0')}`;
      agg.pc.set(key, (agg.pc.get(key) || 0) + 1);
      break;
    }
    default:
      timelineRecord(t, port, kind, data);
  }
}

// A filter, the search or Clear changed what counts: the aggregates are rebuilt once from
// the ring (parsing each record again).
function rebuildAggregates() {
  agg = freshAggregates();
  let seq = state.total - ring.count;
  for (const r of ringRecords()) {
    if (visible(r.port, r.kind, r.json)) {
      const parsed = JSON.parse(r.json);
      const data = parsed.event ? (parsed.event.data || {}) : { data: parsed.data };  // an Itm frame otherwise
      aggregate(r.timestamp, r.port, r.kind, r.clock, data, seq);
    }
    seq++;
  }
  state.dirty = true;
}

// ---- ingest --------------------------------------------------------------------------

// `message`, `start`, `length`: where the record's exact text is (see the ring).
function addRecord(t, port, kind, clock, message, start, length, data) {
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
  if (clock) state.clock = clock;
  if (!state.seenPorts.has(port)) { state.seenPorts.add(port); rebuildPortFilters(); }
  if (!state.seenKinds.has(kind)) { state.seenKinds.add(kind); rebuildKindFilters(); }
  if (visible(port, kind, () => ringText(at))) aggregate(t, port, kind, clock, data, seq);
  state.dirty = true;
}

// A record (an Event's data) whose exact text is message[start, start + length).
function addEventRecord(record, message, start, length) {
  if (record.source === 'trace-top' && TOP_KINDS.has(record.event.kind)) {
    addStatistics(record.event.kind, record.event.data || {}, record.clock || null);
    return;
  }
  addRecord(record.timestamp, record.port, record.event.kind, record.clock || null, message, start, length,
            record.event.data || {});
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

// ---- connection ----------------------------------------------------------------------

let socket = null;
let retryMs = 500;

function connect() {
  const params = new URLSearchParams(location.search);
  const token = params.get('token');
  const url = `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/ws` +
              (token ? `?token=${encodeURIComponent(token)}` : '');
  socket = new WebSocket(url, [BATCH_PROTOCOL]);
  setConnection('connecting…', '');
  state.started = false;
  socket.onopen = () => {
    retryMs = 500;
    state.batched = socket.protocol === BATCH_PROTOCOL;
  };
  socket.onmessage = (event) => onText(event.data, token);
  socket.onclose = () => {
    setConnection('disconnected: retrying', 'bad');
    setTimeout(connect, retryMs);
    retryMs = Math.min(retryMs * 2, 10000);
  };
}

function send(message) {
  if (socket && socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(message));
}

function onText(text, token) {
  const message = JSON.parse(text);
  if (message.type === 'Events') {
    const starts = recordStarts(text, message);
    message.data.forEach((line, i) => (line.frames ? addFramesLine(line)
                                                   : addEventRecord(line, text, starts[i], message.lengths[i])));
    return;
  }
  onMessage(message, token, text);
}

function onMessage(message, token, text) {
  switch (message.type) {
    case 'Hello':
      send({ type: 'Connect', data: { probe_selector: null, chip: null, token: token || null } });
      break;
    case 'Status':
      $('target').textContent = [message.data.target, message.data.chip, message.data.probe].filter(Boolean).join(' · ');
      if (message.data.connected && !state.started) {
        state.started = true;
        // Every kind, the extended ones too (Exception, PcSample, ...).
        send({ type: 'SetFilter', data: { port_mask: null, event_types: ['*'] } });
        send({ type: 'Start', data: { allow_mask: 0xFFFFFFFF, baud_rate: null } });
      }
      setConnection(message.data.connected ? 'live' : 'not connected', message.data.connected ? 'ok' : 'bad');
      if (!message.data.connected) state.started = false;
      break;
    case 'Meta':
      state.portNames = {};
      state.portIdNames = {};
      for (const [port, config] of Object.entries(message.data.ports_map || {})) {
        state.portNames[port] = config.name;
        if (config.names) state.portIdNames[port] = config.names;
      }
      state.cpuHz = message.data.cpu_hz || null;
      rebuildPortFilters();
      state.dirty = true;
      break;
    case 'Event':
      addEventMessage(message, text);
      break;
    case 'Itm':
      addFramesLine(message.data);
      break;
    case 'Stats':
      state.stats = message.data;
      // The closing Stats of a stream: its totals are final (what was offered, dropped).
      if (message.data.final) state.finalStats = message.data;
      break;
    case 'Error':
      showMessage(`${message.data.code || 'error'}: ${message.data.message}`, true);
      break;
    default:
      break;
  }
}

function setConnection(text, kind) {
  const pill = $('connection');
  pill.textContent = text;
  pill.className = `pill ${kind}`;
}

function showMessage(text, bad) {
  const box = $('messages');
  box.textContent = text;
  box.className = bad ? 'bad' : 'muted';
}

// ---- filters and controls ------------------------------------------------------------

function portLabel(port) {
  return state.portNames[port] ? `${port} ${state.portNames[port]}` : `${port}`;
}

function checkbox(label, checked, onChange, dataset) {
  const wrapper = document.createElement('label');
  const input = document.createElement('input');
  input.type = 'checkbox';
  input.checked = checked;
  Object.assign(input.dataset, dataset);
  input.addEventListener('change', () => { onChange(input.checked); rebuildAggregates(); });
  wrapper.append(input, ` ${label}`);
  return wrapper;
}

function rebuildPortFilters() {
  const box = $('port-filters');
  box.replaceChildren(...[...state.seenPorts].sort((a, b) => a - b).map((port) =>
    checkbox(portLabel(port), !state.hiddenPorts.has(port),
             (on) => (on ? state.hiddenPorts.delete(port) : state.hiddenPorts.add(port)), { port: String(port) })));
}

function rebuildKindFilters() {
  const box = $('kind-filters');
  box.replaceChildren(...[...state.seenKinds].sort().map((kind) =>
    checkbox(kind, !state.hiddenKinds.has(kind),
             (on) => (on ? state.hiddenKinds.delete(kind) : state.hiddenKinds.add(kind)), { kind })));
}

function setupControls() {
  for (const button of document.querySelectorAll('#tabs button[data-tab]')) {
    button.addEventListener('click', () => {
      document.querySelectorAll('#tabs button[data-tab]').forEach((b) => b.classList.toggle('active', b === button));
      document.querySelectorAll('.tab').forEach((t) => t.classList.toggle('active', t.id === `tab-${button.dataset.tab}`));
      state.activeTab = button.dataset.tab;
      state.dirty = true;
    });
  }
  $('pause').addEventListener('click', () => {
    state.paused = !state.paused;
    $('pause').textContent = state.paused ? 'Resume' : 'Pause';
    $('pause').setAttribute('aria-pressed', String(state.paused));
    state.dirty = true;
  });
  $('clear').addEventListener('click', () => {
    ring.head = state.total % HISTORY;  // a record's slot stays its arrival number mod HISTORY
    ring.count = 0;
    state.newest = null;
    state.view = { start: 0, end: 0, follow: true };
    rebuildAggregates();
  });
  let searchTimer = null;
  $('search').addEventListener('input', (e) => {
    clearTimeout(searchTimer);
    searchTimer = setTimeout(() => { state.search = e.target.value.toLowerCase(); rebuildAggregates(); }, 150);
  });
  $('export-ndjson').addEventListener('click', () => download('records.ndjson', exportNdjson(), 'application/x-ndjson'));
  $('export-csv').addEventListener('click', () => download('records.csv', exportCsv(), 'text/csv'));
  for (const tab of ['console', 'records']) {
    // The virtual lists draw the rows scrolled into view at once.
    $(`tab-${tab}`).addEventListener('scroll', () => { if (state.activeTab === tab && !state.paused) RENDERERS[tab](); });
  }
  setupTimelineInput();
}

// ---- export --------------------------------------------------------------------------

function exportNdjson() {
  const lines = [];
  for (const r of ringRecords()) if (visible(r.port, r.kind, r.json)) lines.push(r.json);
  return lines.length ? `${lines.join('\n')}\n` : '';
}

function csvCell(value) {
  if (value === undefined || value === null) return '';
  const text = typeof value === 'object' ? JSON.stringify(value) : String(value);
  return /[",\n\r]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

function exportCsv() {
  const chosen = [];
  const fields = new Set();
  for (const r of ringRecords()) {
    if (!visible(r.port, r.kind, r.json)) continue;
    const parsed = JSON.parse(r.json);
    const data = parsed.event ? (parsed.event.data || {}) : { data: parsed.data };
    for (const key of Object.keys(data)) fields.add(key);
    chosen.push([r, data]);
  }
  const columns = [...fields];
  const rows = [['timestamp', 'port', 'kind', ...columns].join(',')];
  for (const [r, data] of chosen) rows.push([r.timestamp, r.port, r.kind, ...columns.map((c) => data[c])].map(csvCell).join(','));
  return `${rows.join('\n')}\n`;
}

function download(name, text, type) {
  const link = document.createElement('a');
  link.href = URL.createObjectURL(new Blob([text], { type }));
  link.download = name;
  link.click();
  setTimeout(() => URL.revokeObjectURL(link.href), 1000);
}

// ---- time ----------------------------------------------------------------------------

// Seconds in the unit that keeps 3-4 significant digits readable.
function formatSeconds(seconds, digits = 3) {
  const magnitude = Math.abs(seconds);
  if (magnitude >= 1 || magnitude === 0) return `${seconds.toFixed(digits)} s`;
  if (magnitude >= 1e-3) return `${(seconds * 1e3).toFixed(digits)} ms`;
  if (magnitude >= 1e-6) return `${(seconds * 1e6).toFixed(digits)} µs`;
  return `${(seconds * 1e9).toFixed(digits)} ns`;
}

// A count with an SI prefix: 12.35 M.
function formatCount(value) {
  const magnitude = Math.abs(value);
  if (magnitude >= 1e9) return `${(value / 1e9).toFixed(3)} G`;
  if (magnitude >= 1e6) return `${(value / 1e6).toFixed(3)} M`;
  if (magnitude >= 1e4) return `${(value / 1e3).toFixed(2)} k`;
  return String(Math.round(value));
}

// Seconds when the clock allows it (cycles with a known CPU clock, us, ns); else whole
// ticks or cycles.
function toSeconds(t, clock) {
  if (clock === 'cycles' && state.cpuHz) return t / state.cpuHz;
  if (clock === 'us') return t / 1e6;
  if (clock === 'ns') return t / 1e9;
  return null;
}

function formatTime(t, clock) {
  const seconds = toSeconds(t, clock);
  if (seconds !== null) return `${seconds.toFixed(6)} s`;
  return String(Math.round(t));
}

// An axis or a duration: readable units, cycles named as such.
function formatSpan(t, clock) {
  const seconds = toSeconds(t, clock);
  if (seconds !== null) return formatSeconds(seconds);
  return `${formatCount(t)} ${clock === 'cycles' ? 'cycles' : clock === 'ticks' ? 'ticks' : ''}`.trim();
}

// ---- console and records -------------------------------------------------------------

function highlight(element, text) {
  if (!state.search) { element.append(text); return; }
  const lower = text.toLowerCase();
  let at = 0;
  for (let i = lower.indexOf(state.search); i >= 0; i = lower.indexOf(state.search, at)) {
    element.append(text.slice(at, i));
    const mark = document.createElement('mark');
    mark.textContent = text.slice(i, i + state.search.length);
    element.append(mark);
    at = i + state.search.length;
  }
  element.append(text.slice(at));
}

// A virtual list: only the rows in view are in the document (a fixed row height), so a
// redraw costs the same at any rate; at the bottom it follows the newest line.
const ROW_HEIGHT = 18;

function logLine(r, lineText) {
  const line = document.createElement('div');
  line.className = 'line';
  line.dataset.port = String(r.port);
  const time = document.createElement('span');
  time.className = 'time';
  time.textContent = formatTime(r.timestamp, r.clock);
  const port = document.createElement('span');
  port.className = 'port';
  port.textContent = portLabel(r.port);
  line.append(time, port);
  highlight(line, lineText(r));
  return line;
}

// An arrival number of agg.all as a record for the records view (its text cut from the ring).
function heldRecord(seq) {
  const at = ringSlot(seq);
  if (at < 0) return { timestamp: 0, port: 0, clock: null, json: '(no longer held)' };
  return { timestamp: ring.time[at], port: ring.port[at], clock: CLOCKS[ring.clock[at]], json: ringText(at) };
}

// `item`: turns a list entry into the record drawn (the records view keeps arrival numbers).
function renderLog(box, list, lineText, item = (entry) => entry) {
  const scroller = box.parentElement;
  const following = box.dataset.rows === undefined ||
                    scroller.scrollTop + scroller.clientHeight >= Number(box.dataset.rows) * ROW_HEIGHT - ROW_HEIGHT;
  box.style.height = `${list.length * ROW_HEIGHT}px`;
  box.dataset.rows = String(list.length);
  if (following) scroller.scrollTop = scroller.scrollHeight;
  const first = Math.max(0, Math.floor(scroller.scrollTop / ROW_HEIGHT) - 2);
  const last = Math.min(list.length, first + Math.ceil(scroller.clientHeight / ROW_HEIGHT) + 4);
  const fragment = document.createDocumentFragment();
  for (let i = first; i < last; i++) {
    const line = logLine(item(list[i]), lineText);
    line.style.top = `${i * ROW_HEIGHT}px`;
    fragment.append(line);
  }
  box.replaceChildren(fragment);
}

// ---- timeline ------------------------------------------------------------------------

const COLOURS = ['#4aa3ff', '#7bd88f', '#ffb454', '#ff6b6b', '#c792ea', '#5ccfe6', '#ffd580', '#f29e74'];
const LABEL_WIDTH = 150;
const AXIS_HEIGHT = 34;
let timelineLayout = null;  // what the last draw put where, for hover

function sortedLanes() {
  return [...agg.lanes.values()].sort((a, b) => a.order - b.order || a.label.localeCompare(b.label, undefined, { numeric: true }));
}

// The newest data the timeline knows of: the running task's bar ends there.
function timelineEnd() {
  if (agg.last === null) return null;
  return Math.max(agg.last, state.newest ?? agg.last);
}

// The bars of a lane, with the running task's open bar, within [start, end].
function* barsIn(entry, start, end) {
  const bars = entry.bars;
  let low = 0;
  let high = bars.length;
  while (low < high) {  // first bar that ends at or after start (bars are in time order)
    const mid = (low + high) >> 1;
    if (bars[mid][1] < start) low = mid + 1; else high = mid;
  }
  for (let i = low; i < bars.length && bars[i][0] <= end; i++) yield bars[i];
  const running = agg.running;
  if (running && entry.key === `task:${running.id}`) {
    const now = timelineEnd();
    if (now !== null && running.since <= end && now >= start) yield [running.since, now];
  }
}

function fitCanvas(canvas) {
  const ratio = window.devicePixelRatio || 1;
  const width = Math.max(1, Math.floor(canvas.clientWidth * ratio));
  const height = Math.max(1, Math.floor(canvas.clientHeight * ratio));
  if (canvas.width !== width || canvas.height !== height) { canvas.width = width; canvas.height = height; }
  const context = canvas.getContext('2d');
  context.setTransform(ratio, 0, 0, ratio, 0, 0);
  return { context, width: canvas.clientWidth, height: canvas.clientHeight };
}

function renderTimeline() {
  const canvas = $('timeline');
  const { context, width, height } = fitCanvas(canvas);
  context.clearRect(0, 0, width, height);
  let bars = 0;
  const end = timelineEnd();
  if (end === null) {
    context.fillStyle = '#8a96a3';
    context.font = '12px system-ui, sans-serif';
    context.fillText('No TaskSwitch, IsrEnter/IsrExit or Idle records yet.', 12, 20);
    timelineLayout = null;
  } else {
    const first = agg.first;
    const view = state.view;
    if (view.follow || view.end <= view.start) {
      const span = view.end > view.start ? view.end - view.start : Math.max(1, end - first);
      view.end = end;
      view.start = Math.max(first, end - span);
      if (view.start >= view.end) view.start = view.end - 1;
    }
    const lanes = sortedLanes();
    const plotWidth = width - LABEL_WIDTH - 8;
    const plotHeight = height - AXIS_HEIGHT - 4;
    const laneHeight = Math.max(10, Math.min(80, plotHeight / Math.max(1, lanes.length)));
    const scale = plotWidth / (view.end - view.start);
    context.font = '12px system-ui, sans-serif';
    lanes.forEach((entry, index) => {
      const y = 4 + index * laneHeight;
      context.fillStyle = index % 2 ? '#12161b' : '#0f1317';
      context.fillRect(LABEL_WIDTH, y, plotWidth, laneHeight);
      context.fillStyle = '#d8dee6';
      context.fillText(entry.label, 6, y + laneHeight / 2 + 4, LABEL_WIDTH - 10);
      context.fillStyle = COLOURS[index % COLOURS.length];
      // Bars that touch within a pixel are painted as one rectangle: zoomed out, thousands
      // of bars share a few pixels, and painting each would cost more than the rest.
      let runStart = 0;
      let runEnd = -1;
      for (const [start, stop] of barsIn(entry, view.start, view.end)) {
        const x0 = LABEL_WIDTH + Math.max(0, (start - view.start) * scale);
        const x1 = Math.max(x0 + 1, LABEL_WIDTH + Math.min(plotWidth, (stop - view.start) * scale));
        if (x0 <= runEnd + 0.5) {
          runEnd = Math.max(runEnd, x1);
        } else {
          if (runEnd >= 0) context.fillRect(runStart, y + 2, runEnd - runStart, laneHeight - 4);
          runStart = x0;
          runEnd = x1;
        }
        bars++;
      }
      if (runEnd >= 0) context.fillRect(runStart, y + 2, runEnd - runStart, laneHeight - 4);
    });
    timelineLayout = { lanes, laneHeight, scale, view: { ...view }, plotWidth };
    drawTimeAxis(context, width, height, view, state.clock);
    $('timeline-range').textContent =
      `${formatSpan(view.start, state.clock)} – ${formatSpan(view.end, state.clock)} (${formatSpan(view.end - view.start, state.clock)} shown)` +
      (view.follow ? ' · live' : '');
  }
  state.drawn.bars = bars;
  canvas.dataset.bars = String(bars);
}

function ticksIn(list, start, end) {
  let low = 0;
  let high = list.length;
  while (low < high) {
    const mid = (low + high) >> 1;
    if (list[mid] < start) low = mid + 1; else high = mid;
  }
  const out = [];
  for (let i = low; i < list.length && list[i] <= end; i++) out.push(list[i]);
  return out;
}

function drawTimeAxis(context, width, height, view, clock) {
  const plotWidth = width - LABEL_WIDTH - 8;
  const axisY = height - AXIS_HEIGHT;
  const x = (t) => LABEL_WIDTH + ((t - view.start) / (view.end - view.start)) * plotWidth;
  // Console (grey) and marker (amber) ticks just above the axis labels.
  context.fillStyle = '#6b7785';
  for (const t of ticksIn(agg.consoleTicks, view.start, view.end)) context.fillRect(x(t), axisY + 2, 1, 6);
  context.fillStyle = '#ffb454';
  for (const t of ticksIn(agg.markerTicks, view.start, view.end)) context.fillRect(x(t) - 1, axisY + 8, 2, 8);
  const ticks = Math.max(2, Math.min(10, Math.floor(plotWidth / 120)));
  context.strokeStyle = '#2a313a';
  context.fillStyle = '#8a96a3';
  context.font = '11px system-ui, sans-serif';
  for (let i = 0; i <= ticks; i++) {
    const t = view.start + ((view.end - view.start) * i) / ticks;
    const at = x(t);
    context.beginPath();
    context.moveTo(at, 0);
    context.lineTo(at, axisY);
    context.stroke();
    const label = formatSpan(t, clock);
    const textWidth = context.measureText(label).width;
    context.fillText(label, Math.min(Math.max(LABEL_WIDTH, at - textWidth / 2), width - textWidth - 2), height - 4);
  }
}

// What is under the mouse: a bar (its lane's kind and name, start, duration).
function timelineHover(event) {
  const tip = $('timeline-tip');
  const layout = timelineLayout;
  const canvas = $('timeline');
  const rect = canvas.getBoundingClientRect();
  const px = event.clientX - rect.left;
  const py = event.clientY - rect.top;
  if (!layout || px < LABEL_WIDTH) { tip.hidden = true; return; }
  const index = Math.floor((py - 4) / layout.laneHeight);
  const entry = layout.lanes[index];
  if (!entry) { tip.hidden = true; return; }
  const t = layout.view.start + (px - LABEL_WIDTH) / layout.scale;
  const slack = 3 / layout.scale;  // a bar narrower than a pixel is still found
  let found = null;
  for (const bar of barsIn(entry, t - slack, t + slack)) { found = bar; break; }
  if (!found) { tip.hidden = true; return; }
  const clock = state.clock;
  tip.textContent = `${entry.kind}: ${entry.label}\nstart ${formatTime(found[0], clock)}\nduration ${formatSpan(found[1] - found[0], clock)}`;
  tip.hidden = false;
  const panel = tip.parentElement.getBoundingClientRect();  // the tip is placed in the tab
  tip.style.left = `${Math.min(event.clientX - panel.left + 14, panel.width - 240)}px`;
  tip.style.top = `${event.clientY - panel.top + 14}px`;
}

function setupTimelineInput() {
  const canvas = $('timeline');
  canvas.addEventListener('wheel', (event) => {
    event.preventDefault();
    const view = state.view;
    const rect = canvas.getBoundingClientRect();
    const fraction = Math.min(1, Math.max(0, (event.clientX - rect.left - LABEL_WIDTH) / (rect.width - LABEL_WIDTH - 8)));
    const at = view.start + fraction * (view.end - view.start);
    const factor = event.deltaY > 0 ? 1.25 : 0.8;
    view.start = at - (at - view.start) * factor;
    view.end = at + (view.end - at) * factor;
    view.follow = false;
    state.dirty = true;
  }, { passive: false });
  let drag = null;
  canvas.addEventListener('mousedown', (event) => { drag = { x: event.clientX, start: state.view.start, end: state.view.end }; });
  window.addEventListener('mouseup', () => { drag = null; });
  window.addEventListener('mousemove', (event) => {
    if (!drag) return;
    const perPixel = (drag.end - drag.start) / Math.max(1, canvas.clientWidth - LABEL_WIDTH - 8);
    const shift = (drag.x - event.clientX) * perPixel;
    state.view.start = drag.start + shift;
    state.view.end = drag.end + shift;
    state.view.follow = false;
    state.dirty = true;
  });
  canvas.addEventListener('mousemove', timelineHover);
  canvas.addEventListener('mouseleave', () => { $('timeline-tip').hidden = true; });
  canvas.addEventListener('dblclick', () => {
    // Follow live, showing the latest twentieth of what is buffered.
    const end = timelineEnd();
    if (end !== null) state.view = { start: end - Math.max(1, (end - agg.first) / 20), end, follow: true };
    state.dirty = true;
  });
  $('timeline-fit').addEventListener('click', () => {
    const end = timelineEnd();
    if (end !== null) state.view = { start: agg.first, end: Math.max(end, agg.first + 1), follow: false };
    state.dirty = true;
  });
}

// ---- counters: small multiples, each on its own scale --------------------------------

function renderCounters() {
  const canvas = $('counters');
  const { context, width, height } = fitCanvas(canvas);
  context.clearRect(0, 0, width, height);
  const legend = $('counter-legend');
  legend.replaceChildren();
  const series = [...agg.counters.entries()].sort((a, b) => a[0] - b[0]);
  let points = 0;
  if (series.length === 0) {
    context.fillStyle = '#8a96a3';
    context.font = '12px system-ui, sans-serif';
    context.fillText('No Counter records yet.', 12, 20);
  } else {
    let tMin = Infinity;
    let tMax = -Infinity;
    for (const [, s] of series) {
      if (s.points.length === 0) continue;
      tMin = Math.min(tMin, s.points[0][0]);
      tMax = Math.max(tMax, s.points[s.points.length - 1][0]);
    }
    const left = 90;
    const panelHeight = (height - AXIS_HEIGHT) / series.length;
    const x = (t) => left + ((t - tMin) / Math.max(1, tMax - tMin)) * (width - left - 10);
    context.font = '11px system-ui, sans-serif';
    series.forEach(([id, s], index) => {
      const colour = COLOURS[index % COLOURS.length];
      const top = index * panelHeight;
      const y = (v) => top + panelHeight - 8 - ((v - s.min) / Math.max(1e-12, s.max - s.min)) * (panelHeight - 20);
      const tag = document.createElement('span');
      tag.style.color = colour;
      tag.textContent = `counter ${id}: ${s.last}`;
      legend.append(tag);
      context.strokeStyle = '#2a313a';
      context.beginPath();
      context.moveTo(left, top + panelHeight);
      context.lineTo(width - 10, top + panelHeight);
      context.stroke();
      context.fillStyle = colour;
      context.fillText(`counter ${id}`, 4, top + 14);
      context.fillStyle = '#8a96a3';
      if (panelHeight >= 56) {
        context.fillText(formatCount(s.max), 4, top + 28);
        context.fillText(formatCount(s.min), 4, top + panelHeight - 8);
      } else {  // a small panel: the range on one line
        context.fillText(`${formatCount(s.min)}–${formatCount(s.max)}`, 4, top + Math.min(28, panelHeight - 4));
      }
      context.strokeStyle = colour;
      context.fillStyle = colour;
      context.beginPath();
      s.points.forEach(([t, v], i) => (i === 0 ? context.moveTo(x(t), y(v)) : context.lineTo(x(t), y(v))));
      context.stroke();
      for (const [t, v] of s.points) {
        context.fillRect(x(t) - 1.5, y(v) - 1.5, 3, 3);
        points++;
      }
    });
    // The shared time axis.
    context.fillStyle = '#8a96a3';
    const ticks = Math.max(2, Math.min(8, Math.floor((width - left) / 140)));
    for (let i = 0; i <= ticks; i++) {
      const t = tMin + ((tMax - tMin) * i) / ticks;
      const label = formatSpan(t, state.clock);
      const textWidth = context.measureText(label).width;
      context.fillText(label, Math.min(Math.max(left, x(t) - textWidth / 2), width - textWidth - 2), height - 8);
    }
  }
  state.drawn.points = points;
  canvas.dataset.points = String(points);
}

// ---- tables --------------------------------------------------------------------------

function row(cells) {
  const tr = document.createElement('tr');
  for (const cell of cells) {
    const td = document.createElement('td');
    if (cell instanceof Node) td.append(cell); else td.textContent = String(cell);
    tr.append(td);
  }
  return tr;
}

function renderMarkers() {
  const chosen = agg.markers.slice(-TABLE_ROWS).reverse();
  $('markers').tBodies[0].replaceChildren(...chosen.map((r) =>
    row([formatTime(r.timestamp, r.clock), portLabel(r.port), r.data.id, r.data.name ?? idName(r.port, r.data.id) ?? ''])));
}

function renderExceptions() {
  $('exception-counts').tBodies[0].replaceChildren(...[...agg.exceptions.entries()]
    .sort((a, b) => b[1].enter - a[1].enter).map(([name, c]) => row([name, c.enter, c.exit, c.resume])));
  $('exception-recent').tBodies[0].replaceChildren(...agg.recentExceptions.slice(-TABLE_ROWS).reverse().map((r) =>
    row([formatTime(r.timestamp, r.clock), r.data.number, r.data.handler ?? r.data.name ?? '', r.data.action])));
}

function renderPcSamples() {
  const total = agg.pcTotal;
  $('pc-summary').textContent = `${total} samples, ${agg.pcSleeping} while sleeping`;
  const top = [...agg.pc.entries()].sort((a, b) => b[1] - a[1]).slice(0, 50);
  const max = top.length ? top[0][1] : 1;
  $('pc-top').tBodies[0].replaceChildren(...top.map(([place, n]) => {
    const bar = document.createElement('span');
    bar.className = 'bar';
    bar.style.width = `${Math.round((200 * n) / max)}px`;
    return row([place, n, `${((100 * n) / total).toFixed(2)}%`, bar]);
  }));
}

// The Statistics tab: trace-top's tables, from the newest snapshot trace-serve sent.
function percent(share) {
  return `${(100 * share).toFixed(2)}%`;
}

function renderStatistics() {
  const top = statistics;
  if (!top) {
    $('top-summary').textContent = 'No statistics yet: trace-serve sends them with --top-interval SECONDS.';
    return;
  }
  const s = top.summary;
  const time = (value) => (value == null ? '?' : formatSpan(value, top.clock));
  $('top-summary').textContent = `${s.records} records over ${time(s.span)}; ${s.pc_samples} PC samples ` +
    `(${s.sleep_samples} asleep); ${s.overflows} overflows, ${s.uncertain} uncertain intervals`;
  $('top-functions').tBodies[0].replaceChildren(...top.functions.map((f) => row([f.rank, f.function, f.samples,
    percent(f.share)])));
  $('top-handlers').tBodies[0].replaceChildren(...top.handlers.map((h) => row([h.source, h.number, h.name ?? '',
    h.count, percent(h.share), time(h.total), time(h.min), time(Math.round(h.avg)), time(h.max), h.max_nesting,
    h.uncertain])));
  $('top-tasks').tBodies[0].replaceChildren(...top.tasks.map((t) => row([t.task ?? '', t.name ?? `task ${t.task}`,
    percent(t.share), time(t.time), t.uncertain_time ? time(t.uncertain_time) : ''])));
}

// ---- render loop ---------------------------------------------------------------------

function formatRate(value) {
  if (value >= 1e6) return `${(value / 1e6).toFixed(2)}M`;
  if (value >= 1e3) return `${(value / 1e3).toFixed(1)}k`;
  return value.toFixed(0);
}

function renderStats() {
  const s = state.stats;
  if (s) {
    $('stat-events').textContent = formatRate(s.events_per_sec);
    $('stat-bytes').textContent = formatRate(s.bytes_per_sec);
    // Cumulative drops as a share of everything offered to this viewer so far.
    const offered = s.offered_total ?? 0;
    const share = offered > 0 ? (100 * (s.dropped_total ?? 0)) / offered : 0;
    $('stat-drops').textContent = `${s.dropped_total ?? 0} (${share.toFixed(2)}%)`;
    $('stat-cpu').textContent = s.cpu_load == null ? '–' : `${(100 * s.cpu_load).toFixed(1)}%`;
  }
  $('stat-buffered').textContent = `${ring.count}`;
}

const RENDERERS = {
  console: () => renderLog($('console'), agg.console, (r) => r.data.message),
  timeline: renderTimeline,
  markers: renderMarkers,
  counters: renderCounters,
  exceptions: renderExceptions,
  pcsamples: renderPcSamples,
  statistics: renderStatistics,
  records: () => renderLog($('records'), agg.all, (r) => r.json, heldRecord),
};

let lastRender = 0;
function frame(now) {
  renderStats();
  // Views redraw at most 10 times a second whatever the event rate.
  if (state.dirty && !state.paused && now - lastRender > 100) {
    state.dirty = false;
    lastRender = now;
    RENDERERS[state.activeTab]();
  }
  requestAnimationFrame(frame);
}

window.tracepipe = {
  state,
  exportNdjson,
  exportCsv,
  render: () => RENDERERS[state.activeTab](),
};

agg = freshAggregates();
setupControls();
connect();
requestAnimationFrame(frame);
