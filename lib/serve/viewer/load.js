// The CPU load tab: each task's and idle's share of the CPU per interval as a stacked area,
// each handler's as a line, over the Timeline's time range (zooming either zooms both).
// The figures are trace-top's own (trace-serve --top-interval sends each task's, idle's and
// handler's time per interval of one grid with its snapshot), so this chart and trace-top
// always agree: a task's time includes the interrupts that preempted it, a handler's is its
// own time without the handlers that preempted it, as trace-top counts them.
import { $ } from './config.js';
import { live, state } from './state.js';
import { formatSpan, formatTime } from './time.js';
import { AXIS_HEIGHT, COLOURS, fitCanvas } from './canvas.js';
import { LABEL_WIDTH, RIGHT_MARGIN, drawTimeAxis } from './timeline.js';
import { attachTimeZoom, settleView } from './zoom.js';
import { tagNext } from './svg.js';
import { attachSvgExport } from './export.js';

const MIN_INTERVAL_PX = 4;  // the interval doubles until it is at least this wide
const IDLE_COLOUR = '#3a4450';
let loadLayout = null;       // what the last draw showed, for hover and for tests

function taskLabel(t) {
  return t.task == null ? 'idle' : (t.name ?? `task ${t.task}`);
}

// The series of the newest snapshot: tasks first (stacked), idle on top, then handlers.
function loadSeries(top) {
  const series = [];
  const tasks = top.tasks.filter((t) => t.load);
  for (const t of [...tasks.filter((x) => x.task != null), ...tasks.filter((x) => x.task == null)]) {
    series.push({ label: taskLabel(t), kind: t.task == null ? 'idle' : 'task', total: t.time, source: t });
  }
  for (const h of top.handlers.filter((x) => x.load)) {
    series.push({ label: `${h.source} ${h.name ?? h.number}`, kind: 'handler', total: h.total, source: h });
  }
  return series;
}

// The grid's bins summed into intervals of `width` * 2^shift, from interval `low` on.
function intervalsOf(source, shift, low, count) {
  const sums = new Float64Array(count);
  const factor = 2 ** shift;
  source.load.forEach((time, i) => {
    const at = Math.floor((source.load_first + i) / factor) - low;
    if (at >= 0 && at < count) sums[at] += time;
  });
  return sums;
}

// The coarsest grid needed: intervals at least MIN_INTERVAL_PX wide in the view.
function chooseIntervals(width, view, plotWidth) {
  const wanted = (view.end - view.start) / Math.max(1, plotWidth / MIN_INTERVAL_PX);
  const shift = Math.max(0, Math.ceil(Math.log2(wanted / width)));
  const interval = width * 2 ** shift;
  const low = Math.floor(view.start / interval);
  const high = Math.max(low, Math.ceil(view.end / interval) - 1);
  return { shift, interval, low, count: high - low + 1 };
}

function drawEmpty(context, text) {
  context.fillStyle = '#8a96a3';
  context.font = '12px system-ui, sans-serif';
  context.fillText(text, 12, 20);
}

function plotFrame(width, height, view, grid) {
  const plotWidth = width - LABEL_WIDTH - RIGHT_MARGIN;
  const plotHeight = height - AXIS_HEIGHT - 8;
  const x = (t) => LABEL_WIDTH + ((t - view.start) / (view.end - view.start)) * plotWidth;
  const y = (share) => 4 + plotHeight * (1 - Math.min(1, share));
  return { plotWidth, plotHeight, x, y, grid };
}

// A series' share of each interval: its time over the part of the interval the trace covers.
function shares(sums, frame, span) {
  const { interval, low } = frame.grid;
  return Array.from(sums, (time, i) => {
    const from = Math.max(span.start, (low + i) * interval);
    const to = Math.min(span.end, (low + i + 1) * interval);
    return to > from ? time / (to - from) : 0;
  });
}

// Each interval's rectangle filled on its own: one path of hundreds of rectangles standing
// side by side is scan-converted whole, every edge on every row (in the bench's software
// raster 150 ms a frame for the whole range; fillRect is a rectangle's fast path). Their
// sides are on whole pixels, so neighbours meet without an anti-aliased seam.
function drawStack(context, frame, stacked) {
  const { interval, low, count } = frame.grid;
  const base = new Float64Array(count);
  stacked.forEach((s, index) => {
    context.fillStyle = s.kind === 'idle' ? IDLE_COLOUR : COLOURS[index % COLOURS.length];
    for (let i = 0; i < count; i++) {
      const top = frame.y(base[i] + s.shares[i]);
      const height = frame.y(base[i]) - top;
      base[i] += s.shares[i];
      if (height <= 0) continue;
      const x0 = Math.round(frame.x((low + i) * interval));
      tagNext(context, { series: s.label, kind: s.kind, interval: i });
      context.fillRect(x0, top, Math.max(1, Math.round(frame.x((low + i + 1) * interval)) - x0), height);
    }
  });
}

function drawLines(context, frame, lines, colourOffset) {
  const { interval, low, count } = frame.grid;
  context.lineWidth = 1.5;
  lines.forEach((s, index) => {
    context.strokeStyle = COLOURS[(colourOffset + index) % COLOURS.length];
    context.setLineDash([4, 2]);
    context.beginPath();
    for (let i = 0; i < count; i++) {
      const mid = frame.x((low + i + 0.5) * interval);
      if (i === 0) context.moveTo(mid, frame.y(s.shares[i])); else context.lineTo(mid, frame.y(s.shares[i]));
    }
    tagNext(context, { series: s.label, kind: s.kind });
    context.stroke();
  });
  context.setLineDash([]);
  context.lineWidth = 1;
}

function drawLabels(context, frame, series) {
  context.font = '12px system-ui, sans-serif';
  context.fillStyle = '#8a96a3';
  for (const share of [0, 0.5, 1]) context.fillText(`${share * 100}%`, LABEL_WIDTH - 40, frame.y(share) + 4);
  // The legend is made again only when its series change: a DOM change each frame makes the
  // next one lay the page out again.
  const legend = $('load-legend');
  const key = series.map((s) => `${s.kind} ${s.label}`).join('\n');
  if (legend.dataset.key === key) return;
  legend.dataset.key = key;
  legend.replaceChildren(...series.map((s, index) => {
    const tag = document.createElement('span');
    tag.style.color = s.kind === 'idle' ? '#8a96a3' : COLOURS[index % COLOURS.length];
    tag.textContent = `${s.kind === 'handler' ? '┄ ' : '■ '}${s.label}`;
    return tag;
  }));
}

// Following live with no new snapshot part, the chart's intervals are those drawn already:
// the render loop then draws it again a second after its last draw, not sooner (each draw costs
// the page a canvas commit, and at 200k records/s the page's main thread is the budget); at
// once when a snapshot part comes, the user moves the range or the canvas changes size. An
// explicit render draws.
const LIVE_REDRAW_MS = 1000;
let lastDraw = null;

function drawKey(canvas) {
  return { statistics: live.statistics, parts: state.statisticsRecords, view: state.view, follow: state.view.follow,
           width: canvas.clientWidth, height: canvas.clientHeight };
}

export function loadUnchanged() {
  const key = drawKey($('load'));
  return lastDraw !== null && key.follow && performance.now() - lastDraw.at < LIVE_REDRAW_MS &&
    Object.keys(key).every((k) => lastDraw.key[k] === key[k]);
}

// `target`: where to draw (an SVG export's), else the canvas.
export function renderLoad(target = null) {
  const canvas = $('load');
  if (!target) lastDraw = { key: drawKey(canvas), at: performance.now() };
  const { context, width, height } = target ?? fitCanvas(canvas);
  context.clearRect(0, 0, width, height);
  const top = live.statistics;
  const series = top ? loadSeries(top) : [];
  if (series.length === 0) {
    drawEmpty(context, 'No CPU load yet: trace-serve sends it with --top-interval SECONDS (tasks, ISRs, idle).');
    loadLayout = null;
    return;
  }
  const span = { start: top.timestamp - top.summary.span, end: top.timestamp };
  const view = settleView(live.agg.first ?? span.start, Math.max(span.end, state.newest ?? span.end));
  const plotWidth = width - LABEL_WIDTH - RIGHT_MARGIN;
  const frame = plotFrame(width, height, view, chooseIntervals(series[0].source.load_width, view, plotWidth));
  const { shift, low, count } = frame.grid;
  for (const s of series) {
    s.sums = intervalsOf(s.source, shift, low, count);
    s.shares = shares(s.sums, frame, span);
    s.shown = s.sums.reduce((a, b) => a + b, 0);
  }
  const stacked = series.filter((s) => s.kind !== 'handler');
  context.save();
  context.beginPath();
  context.rect(LABEL_WIDTH, 0, plotWidth, height - AXIS_HEIGHT);
  context.clip();
  drawStack(context, frame, stacked);
  drawLines(context, frame, series.filter((s) => s.kind === 'handler'), stacked.length);
  context.restore();
  drawLabels(context, frame, series);
  drawTimeAxis(context, width, height, view, top.clock);
  loadLayout = { frame, series, view: { ...view }, span, clock: top.clock };
  canvas.dataset.view = `${view.start} ${view.end}`;
  canvas.dataset.intervals = String(count);
}

// What the chart shows, for tests and scripts: each series' time in the intervals drawn.
export function loadChartData() {
  if (!loadLayout) return null;
  const { frame, series, view } = loadLayout;
  return { view, interval: frame.grid.interval, intervals: frame.grid.count,
           series: series.map((s) => ({ label: s.label, kind: s.kind, total: s.total, shown: s.shown, sums: [...s.sums] })) };
}

function loadHover(event) {
  const tip = $('load-tip');
  const layout = loadLayout;
  const rect = $('load').getBoundingClientRect();
  const px = event.clientX - rect.left;
  if (!layout || px < LABEL_WIDTH) { tip.hidden = true; return; }
  const { frame, series, view, clock } = layout;
  const t = view.start + ((px - LABEL_WIDTH) / frame.plotWidth) * (view.end - view.start);
  const i = Math.floor(t / frame.grid.interval) - frame.grid.low;
  if (i < 0 || i >= frame.grid.count) { tip.hidden = true; return; }
  const from = (frame.grid.low + i) * frame.grid.interval;
  const lines = series.filter((s) => s.sums[i] > 0)
    .map((s) => `${(100 * s.shares[i]).toFixed(1).padStart(5)}%  ${formatSpan(s.sums[i], clock).padEnd(12)} ${s.label}`);
  tip.textContent = `${formatTime(from, clock)} +${formatSpan(frame.grid.interval, clock)}\n${lines.join('\n')}`;
  tip.hidden = false;
  const panel = tip.parentElement.getBoundingClientRect();
  tip.style.left = `${Math.min(event.clientX - panel.left + 14, panel.width - 320)}px`;
  tip.style.top = `${event.clientY - panel.top + 14}px`;
}

export function setupLoadInput() {
  const canvas = $('load');
  attachTimeZoom(canvas, LABEL_WIDTH, RIGHT_MARGIN);
  attachSvgExport('load', renderLoad);
  canvas.addEventListener('mousemove', loadHover);
  canvas.addEventListener('mouseleave', () => { $('load-tip').hidden = true; });
  $('load-fit').addEventListener('click', () => {
    const top = live.statistics;
    if (top) state.view = { start: top.timestamp - top.summary.span, end: Math.max(top.timestamp, top.timestamp - top.summary.span + 1), follow: false };
    state.dirty = true;
  });
}
