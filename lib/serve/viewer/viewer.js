// tracepipe web viewer: a Callisto protocol client with console, timeline, markers,
// counters, exceptions and PC-sample views. No dependencies; served by trace-serve.
'use strict';

const HISTORY = 200000;        // records kept for the views and for export
const CONSOLE_LINES = 2000;    // lines rendered in the console
const TABLE_ROWS = 500;        // rows rendered in tables
const $ = (id) => document.getElementById(id);

// ---- state ---------------------------------------------------------------------------

const state = {
  records: new Array(HISTORY), // ring buffer of {timestamp, port, kind, data, clock, json}
  head: 0,                     // index of the next write
  count: 0,
  total: 0,
  portNames: {},
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
  view: { start: 0, end: 0, follow: true },
  drawn: { bars: 0, points: 0 },
  activeTab: 'console',
  clock: null,
};

// Newest first, for views that show only the latest few.
function* newestRecords() {
  for (let i = 1; i <= state.count; i++) yield state.records[(state.head - i + HISTORY) % HISTORY];
}

function* records() {
  const first = (state.head - state.count + HISTORY) % HISTORY;
  for (let i = 0; i < state.count; i++) yield state.records[(first + i) % HISTORY];
}

function addRecord(record) {
  state.records[state.head] = record;
  state.head = (state.head + 1) % HISTORY;
  if (state.count < HISTORY) state.count++;
  state.total++;
  if (!state.seenPorts.has(record.port)) { state.seenPorts.add(record.port); rebuildPortFilters(); }
  if (record.clock) state.clock = record.clock;
  if (!state.seenKinds.has(record.kind)) { state.seenKinds.add(record.kind); rebuildKindFilters(); }
  state.dirty = true;
}

function visible(record) {
  if (state.hiddenPorts.has(record.port) || state.hiddenKinds.has(record.kind)) return false;
  return !state.search || record.json.toLowerCase().includes(state.search);
}

// The record exactly as the server sent it: the message is {"type":"Event","data":RECORD}.
function recordText(message) {
  const prefix = '{"type":"Event","data":';
  return message.startsWith(prefix) ? message.slice(prefix.length, -1) : JSON.stringify(JSON.parse(message).data);
}

// ---- connection ----------------------------------------------------------------------

let socket = null;
let retryMs = 500;

function connect() {
  const params = new URLSearchParams(location.search);
  const token = params.get('token');
  const url = `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/ws` +
              (token ? `?token=${encodeURIComponent(token)}` : '');
  socket = new WebSocket(url);
  setConnection('connecting…', '');
  state.started = false;
  socket.onopen = () => { retryMs = 500; };
  socket.onmessage = (event) => onMessage(JSON.parse(event.data), token, event.data);
  socket.onclose = () => {
    setConnection('disconnected: retrying', 'bad');
    setTimeout(connect, retryMs);
    retryMs = Math.min(retryMs * 2, 10000);
  };
}

function send(message) {
  if (socket && socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(message));
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
      for (const [port, config] of Object.entries(message.data.ports_map || {})) state.portNames[port] = config.name;
      state.cpuHz = message.data.cpu_hz || null;
      rebuildPortFilters();
      break;
    case 'Event': {
      const d = message.data;
      addRecord({ timestamp: d.timestamp, port: d.port, kind: d.event.kind, data: d.event.data || {},
                  clock: d.clock || null, json: recordText(text) });
      break;
    }
    case 'Itm': {
      const d = message.data;
      for (const frame of d.frames) {
        addRecord({ timestamp: frame.timestamp ?? d.timestamp, port: frame.port, kind: 'Itm',
                    data: { data: frame.data }, clock: null, json: JSON.stringify(frame) });
      }
      break;
    }
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
  input.addEventListener('change', () => { onChange(input.checked); state.dirty = true; });
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
    state.head = 0; state.count = 0; state.dirty = true;
    state.view = { start: 0, end: 0, follow: true };
  });
  $('search').addEventListener('input', (e) => { state.search = e.target.value.toLowerCase(); state.dirty = true; });
  $('export-ndjson').addEventListener('click', () => download('records.ndjson', exportNdjson(), 'application/x-ndjson'));
  $('export-csv').addEventListener('click', () => download('records.csv', exportCsv(), 'text/csv'));
  setupTimelineInput();
}

// ---- export --------------------------------------------------------------------------

function exportNdjson() {
  const lines = [];
  for (const r of records()) if (visible(r)) lines.push(r.json);
  return lines.length ? `${lines.join('\n')}\n` : '';
}

function csvCell(value) {
  if (value === undefined || value === null) return '';
  const text = typeof value === 'object' ? JSON.stringify(value) : String(value);
  return /[",\n\r]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

function exportCsv() {
  const fields = new Set();
  for (const r of records()) if (visible(r)) for (const key of Object.keys(r.data)) fields.add(key);
  const columns = [...fields];
  const rows = [['timestamp', 'port', 'kind', ...columns].join(',')];
  for (const r of records()) {
    if (!visible(r)) continue;
    rows.push([r.timestamp, r.port, r.kind, ...columns.map((c) => r.data[c])].map(csvCell).join(','));
  }
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

function formatTime(t, clock) {
  if (clock === 'cycles' && state.cpuHz) return `${(t / state.cpuHz).toFixed(6)} s`;
  if (clock === 'us') return `${(t / 1e6).toFixed(6)} s`;
  if (clock === 'ns') return `${(t / 1e9).toFixed(6)} s`;
  return String(t);
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

function renderLog(box, select, lineText) {
  const shown = [];
  for (const r of newestRecords()) {
    if (select(r) && visible(r)) shown.push(r);
    if (shown.length === CONSOLE_LINES) break;
  }
  shown.reverse();
  const fragment = document.createDocumentFragment();
  for (const r of shown) {
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
    fragment.append(line);
  }
  const atBottom = box.parentElement.scrollTop + box.parentElement.clientHeight >= box.parentElement.scrollHeight - 30;
  box.replaceChildren(fragment);
  if (atBottom) box.parentElement.scrollTop = box.parentElement.scrollHeight;
}

// ---- timeline ------------------------------------------------------------------------

// Lanes from TaskSwitch (a task runs until the next switch), IsrEnter/IsrExit and
// IdleEnter/IdleExit; ChibiOS thread switches from chibi-pull carry names.
function buildTimeline() {
  const lanes = new Map();  // key -> {label, order, bars: [[start, end]]}
  const lane = (key, label, order) => {
    if (!lanes.has(key)) lanes.set(key, { label: label || key, order, bars: [] });
    return lanes.get(key);
  };
  let running = null;
  const openIsr = new Map();
  let idleSince = null;
  let first = null;
  let last = null;
  for (const r of records()) {
    if (!visible(r)) continue;
    const t = r.timestamp;
    if (r.kind === 'TaskSwitch') {
      const to = r.data.to_task;
      const toName = r.data.to_name || r.data.to_thread || `task ${to}`;
      if (running) lane(`task:${running.id}`, running.name, 1).bars.push([running.since, t]);
      running = { id: to, name: toName, since: t };
      lane(`task:${to}`, toName, 1);
    } else if (r.kind === 'IsrEnter') {
      openIsr.set(r.data.isr_id, t);
      lane(`isr:${r.data.isr_id}`, r.data.name || `ISR ${r.data.isr_id}`, 0);
    } else if (r.kind === 'IsrExit') {
      const since = openIsr.get(r.data.isr_id);
      if (since !== undefined) {
        lane(`isr:${r.data.isr_id}`, null, 0).bars.push([since, t]);
        openIsr.delete(r.data.isr_id);
      }
    } else if (r.kind === 'IdleEnter') {
      idleSince = t;
    } else if (r.kind === 'IdleExit') {
      if (idleSince !== null) lane('idle', 'idle', 2).bars.push([idleSince, t]);
      idleSince = null;
    } else {
      continue;
    }
    if (first === null) first = t;
    last = t;
  }
  if (running && last !== null) lane(`task:${running.id}`, running.name, 1).bars.push([running.since, last]);
  const sorted = [...lanes.values()].sort((a, b) => a.order - b.order || a.label.localeCompare(b.label, undefined, { numeric: true }));
  return { lanes: sorted, first, last };
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

const COLOURS = ['#4aa3ff', '#7bd88f', '#ffb454', '#ff6b6b', '#c792ea', '#5ccfe6', '#ffd580', '#f29e74'];

function renderTimeline() {
  const canvas = $('timeline');
  const { context, width, height } = fitCanvas(canvas);
  context.clearRect(0, 0, width, height);
  const { lanes, first, last } = buildTimeline();
  let bars = 0;
  if (first === null) {
    context.fillStyle = '#8a96a3';
    context.fillText('No TaskSwitch, IsrEnter/IsrExit or Idle records yet.', 12, 20);
  } else {
    const view = state.view;
    if (view.follow || view.end <= view.start) {
      const span = view.end > view.start ? view.end - view.start : Math.max(1, last - first);
      view.end = last;
      view.start = Math.max(first, last - span);
      if (view.start === view.end) view.start = view.end - 1;
    }
    const labelWidth = 130;
    const laneHeight = Math.max(12, Math.min(28, (height - 24) / Math.max(1, lanes.length)));
    const scale = (width - labelWidth - 8) / (view.end - view.start);
    context.font = '12px system-ui, sans-serif';
    lanes.forEach((entry, index) => {
      const y = 4 + index * laneHeight;
      context.fillStyle = '#d8dee6';
      context.fillText(entry.label, 6, y + laneHeight * 0.7, labelWidth - 10);
      context.fillStyle = COLOURS[index % COLOURS.length];
      for (const [start, end] of entry.bars) {
        if (end < view.start || start > view.end) continue;
        const x0 = labelWidth + Math.max(0, (start - view.start) * scale);
        const x1 = labelWidth + Math.min(width - labelWidth, (end - view.start) * scale);
        context.fillRect(x0, y + 2, Math.max(1, x1 - x0), laneHeight - 4);
        bars++;
      }
    });
    const clock = state.clock;
    drawTimeAxis(context, labelWidth, width, height, view, clock);
    $('timeline-range').textContent = `${formatTime(view.start, clock)} – ${formatTime(view.end, clock)}${view.follow ? ' (live)' : ''}`;
  }
  state.drawn.bars = bars;
  canvas.dataset.bars = String(bars);
}

function drawTimeAxis(context, left, width, height, view, clock) {
  const ticks = 8;
  context.strokeStyle = '#2a313a';
  context.fillStyle = '#8a96a3';
  context.font = '11px system-ui, sans-serif';
  for (let i = 0; i <= ticks; i++) {
    const x = left + ((width - left - 8) * i) / ticks;
    context.beginPath();
    context.moveTo(x, 0);
    context.lineTo(x, height - 16);
    context.stroke();
    const t = view.start + ((view.end - view.start) * i) / ticks;
    const label = formatTime(Math.round(t), clock);
    context.fillText(label, Math.min(x - 20, width - 90), height - 4);
  }
}

function setupTimelineInput() {
  const canvas = $('timeline');
  canvas.addEventListener('wheel', (event) => {
    event.preventDefault();
    const view = state.view;
    const rect = canvas.getBoundingClientRect();
    const fraction = Math.min(1, Math.max(0, (event.clientX - rect.left - 130) / (rect.width - 138)));
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
    const perPixel = (drag.end - drag.start) / Math.max(1, canvas.clientWidth - 138);
    const shift = (drag.x - event.clientX) * perPixel;
    state.view.start = drag.start + shift;
    state.view.end = drag.end + shift;
    state.view.follow = false;
    state.dirty = true;
  });
  canvas.addEventListener('dblclick', () => {
    // Follow live, showing the latest twentieth of what is buffered.
    const { first, last } = buildTimeline();
    if (first !== null) state.view = { start: last - Math.max(1, (last - first) / 20), end: last, follow: true };
    state.dirty = true;
  });
  $('timeline-fit').addEventListener('click', () => {
    const { first, last } = buildTimeline();
    if (first !== null) state.view = { start: first, end: Math.max(last, first + 1), follow: false };
    state.dirty = true;
  });
}

// ---- counters ------------------------------------------------------------------------

function renderCounters() {
  const canvas = $('counters');
  const { context, width, height } = fitCanvas(canvas);
  context.clearRect(0, 0, width, height);
  const series = new Map();
  let tMin = Infinity; let tMax = -Infinity; let vMin = Infinity; let vMax = -Infinity;
  for (const r of records()) {
    if (r.kind !== 'Counter' || !visible(r)) continue;
    const id = r.data.counter_id;
    if (!series.has(id)) series.set(id, []);
    series.get(id).push([r.timestamp, r.data.value]);
    tMin = Math.min(tMin, r.timestamp); tMax = Math.max(tMax, r.timestamp);
    vMin = Math.min(vMin, r.data.value); vMax = Math.max(vMax, r.data.value);
  }
  let points = 0;
  const legend = $('counter-legend');
  legend.replaceChildren();
  if (series.size === 0) {
    context.fillStyle = '#8a96a3';
    context.fillText('No Counter records yet.', 12, 20);
  } else {
    const x = (t) => 50 + ((t - tMin) / Math.max(1, tMax - tMin)) * (width - 60);
    const y = (v) => height - 20 - ((v - vMin) / Math.max(1, vMax - vMin)) * (height - 40);
    context.fillStyle = '#8a96a3';
    context.fillText(String(vMax), 4, 14);
    context.fillText(String(vMin), 4, height - 20);
    [...series.entries()].sort((a, b) => a[0] - b[0]).forEach(([id, values], index) => {
      const colour = COLOURS[index % COLOURS.length];
      const tag = document.createElement('span');
      tag.style.color = colour;
      tag.textContent = `counter ${id}: ${values[values.length - 1][1]}`;
      legend.append(tag);
      const step = Math.max(1, Math.floor(values.length / 4000));  // bounded drawing work
      context.strokeStyle = colour;
      context.fillStyle = colour;
      context.beginPath();
      for (let i = 0; i < values.length; i += step) {
        const [t, v] = values[i];
        if (i === 0) context.moveTo(x(t), y(v)); else context.lineTo(x(t), y(v));
      }
      context.stroke();
      for (let i = 0; i < values.length; i += step) {
        context.fillRect(x(values[i][0]) - 1.5, y(values[i][1]) - 1.5, 3, 3);
        points++;
      }
    });
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
  const chosen = [];
  for (const r of newestRecords()) {
    if (r.kind === 'Marker' && visible(r)) chosen.push(r);
    if (chosen.length === TABLE_ROWS) break;
  }
  $('markers').tBodies[0].replaceChildren(...chosen.map((r) =>
    row([formatTime(r.timestamp, r.clock), portLabel(r.port), r.data.id, r.data.name ?? ''])));
}

function renderExceptions() {
  const counts = new Map();
  const recent = [];
  for (const r of records()) {
    if (r.kind !== 'Exception' || !visible(r)) continue;
    const key = r.data.name || `#${r.data.number}`;
    if (!counts.has(key)) counts.set(key, { enter: 0, exit: 0, return: 0 });
    const entry = counts.get(key);
    if (r.data.action in entry) entry[r.data.action]++;
    recent.push(r);
  }
  $('exception-counts').tBodies[0].replaceChildren(...[...counts.entries()]
    .sort((a, b) => b[1].enter - a[1].enter).map(([name, c]) => row([name, c.enter, c.exit, c.return])));
  $('exception-recent').tBodies[0].replaceChildren(...recent.slice(-TABLE_ROWS).reverse().map((r) =>
    row([formatTime(r.timestamp, r.clock), r.data.number, r.data.name ?? '', r.data.action])));
}

function renderPcSamples() {
  const counts = new Map();
  let total = 0; let sleeping = 0;
  for (const r of records()) {
    if (r.kind !== 'PcSample' || !visible(r)) continue;
    total++;
    if (r.data.sleep) { sleeping++; continue; }
    counts.set(r.data.pc, (counts.get(r.data.pc) || 0) + 1);
  }
  $('pc-summary').textContent = `${total} samples, ${sleeping} while sleeping`;
  const top = [...counts.entries()].sort((a, b) => b[1] - a[1]).slice(0, 50);
  const max = top.length ? top[0][1] : 1;
  $('pc-top').tBodies[0].replaceChildren(...top.map(([pc, n]) => {
    const bar = document.createElement('span');
    bar.className = 'bar';
    bar.style.width = `${Math.round((200 * n) / max)}px`;
    return row([`0x${Number(pc).toString(16).padStart(8, '0')}`, n, `${((100 * n) / total).toFixed(1)}%`, bar]);
  }));
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
  $('stat-buffered').textContent = `${state.count}`;
}

const RENDERERS = {
  console: () => renderLog($('console'), (r) => r.kind === 'Text', (r) => r.data.message),
  timeline: renderTimeline,
  markers: renderMarkers,
  counters: renderCounters,
  exceptions: renderExceptions,
  pcsamples: renderPcSamples,
  records: () => renderLog($('records'), () => true, (r) => r.json),
};

let lastRender = 0;
function frame(now) {
  renderStats();
  // Views redraw at most 10 times a second whatever the event rate: one batch per frame.
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

setupControls();
connect();
requestAnimationFrame(frame);
