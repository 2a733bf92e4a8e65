// The Durations tab: a handler's durations (its own time per interval, as trace-top counts
// them) or a marker pair's (pairs.js) as a histogram, with min, median, p99 and max marked;
// the worst one is a click away in the Timeline. trace-serve --top-interval sends a
// handler's histogram with its snapshots: 8 buckets per doubling of the duration (exact
// below 16), the bucket numbering below; a marker pair's is made here the same way, its
// median and p99 exact (a handler's: the last duration of the bucket holding them).
import { $ } from './config.js';
import { live, state } from './state.js';
import { formatSpan } from './time.js';
import { AXIS_HEIGHT, COLOURS, fitCanvas, showText } from './canvas.js';
import { tagNext } from './svg.js';
import { attachSvgExport } from './export.js';

const LEFT = 60;
const RIGHT = 20;
const TOP = 40;
const MARKS = [['min', '#7bd88f'], ['p50', '#4aa3ff'], ['p99', '#ffb454'], ['max', '#ff6b6b']];
let durationsLayout = null;

// lib/analysis DurationHistogram's buckets: below 16 one per value, then 8 per doubling.
function bucketOf(value) {
  if (value < 16) return value;
  const exponent = Math.floor(Math.log2(value));
  return 16 + (exponent - 4) * 8 + Math.floor(value / 2 ** (exponent - 3)) % 8;
}
function bucketLow(bucket) {
  if (bucket < 16) return bucket;
  const exponent = Math.floor((bucket - 16) / 8) + 4;
  return (8 + ((bucket - 16) % 8)) * 2 ** (exponent - 3);
}

// What the tab can show: trace-top's handlers (from the snapshot) and the marker pairs the
// viewer pairs itself (pairs.js), in one shape: a histogram, the four marks, the worst.
function handlerEntry(h) {
  return { ...h, key: `${h.source}:${h.number}`, label: `${h.source} ${h.name ?? h.number}` };
}

const pairCache = new Map();  // pair key -> {seen, entry}: computed again when the pair changed
function pairEntry(pair) {
  const seen = `${pair.count} ${pair.durations.length}`;
  const cached = pairCache.get(pair.key);
  if (cached && cached.seen === seen && cached.pair === pair) return cached.entry;
  const sorted = pair.durations.map(([d]) => d).sort((a, b) => a - b);
  const rank = (q) => sorted[Math.max(1, Math.ceil(q * sorted.length)) - 1];
  const worst = pair.durations.reduce((a, b) => (b[0] > a[0] ? b : a));
  const first = bucketOf(sorted[0]);
  const hist = new Array(bucketOf(sorted[sorted.length - 1]) - first + 1).fill(0);
  for (const d of sorted) hist[bucketOf(d) - first]++;
  const entry = { key: `marker:${pair.key}`, label: `marker ${pair.name ?? pair.id} (port ${pair.port})`, count: pair.count,
                  uncertain: pair.uncertain, hist_first: first, hist, min: sorted[0], p50: rank(0.5), p99: rank(0.99),
                  max: sorted[sorted.length - 1], worst_start: worst[1], worst_end: worst[1] + worst[0] };
  pairCache.set(pair.key, { seen, pair, entry });
  return entry;
}

// Everything the select lists (a pair's histogram is made only when it is the one shown).
function choices() {
  const handlers = (live.statistics?.handlers ?? []).filter((h) => h.hist)
    .map((h) => { const entry = handlerEntry(h); return { key: entry.key, label: entry.label, make: () => entry }; });
  const pairs = [...live.agg.pairs.values()].filter((p) => p.durations.length)
    .map((p) => ({ key: `marker:${p.key}`, label: `marker ${p.name ?? p.id} (port ${p.port})`, make: () => pairEntry(p) }));
  return [...handlers, ...pairs];
}

// The entry chosen in the select (its options kept while the list stays the same).
function chosenEntry() {
  const all = choices();
  const select = $('durations-handler');
  const keys = all.map((e) => `${e.key}=${e.label}`).join(',');
  if (select.dataset.keys !== keys) {
    const keep = select.value;
    select.replaceChildren(...all.map((e) => new Option(e.label, e.key)));
    select.dataset.keys = keys;
    if (all.some((e) => e.key === keep)) select.value = keep;
  }
  const chosen = all.find((e) => e.key === select.value) ?? all[0];
  return chosen ? chosen.make() : null;
}

function drawBars(context, h, frame) {
  const max = Math.max(...h.hist);
  context.fillStyle = COLOURS[0];
  h.hist.forEach((count, i) => {
    if (count === 0) return;
    const x0 = frame.x(bucketLow(h.hist_first + i));
    const x1 = frame.x(bucketLow(h.hist_first + i + 1));
    const height = (count / max) * frame.plotHeight;
    tagNext(context, { bucket: h.hist_first + i, count });
    context.fillRect(x0 + 0.5, TOP + frame.plotHeight - height, Math.max(1, x1 - x0 - 1), height);
  });
  context.fillStyle = '#8a96a3';
  context.fillText(String(max), 4, TOP + 10);
  context.fillText('0', 4, TOP + frame.plotHeight);
}

function drawMarks(context, h, frame, clock) {
  context.font = '11px system-ui, sans-serif';
  MARKS.forEach(([name, colour], i) => {
    const at = frame.x(h[name]);
    context.strokeStyle = colour;
    context.beginPath();
    context.moveTo(at, TOP - 4);
    context.lineTo(at, TOP + frame.plotHeight);
    context.stroke();
    context.fillStyle = colour;
    const label = `${name === 'p50' ? 'median' : name} ${formatSpan(h[name], clock)}${name === 'max' ? ' (click: show it)' : ''}`;
    const width = context.measureText(label).width;
    context.fillText(label, Math.min(Math.max(LEFT, at - width / 2), frame.width - width - 2), 12 + (i % 2) * 14);
  });
}

// A log axis: the durations from the first bucket's start to the last one's end.
function durationFrame(h, width, height) {
  const low = Math.max(1, bucketLow(h.hist_first));
  const high = bucketLow(h.hist_first + h.hist.length);
  const plotWidth = width - LEFT - RIGHT;
  const x = (v) => LEFT + ((Math.log(Math.max(v, low)) - Math.log(low)) / (Math.log(high) - Math.log(low) || 1)) * plotWidth;
  return { x, width, plotWidth, plotHeight: height - TOP - AXIS_HEIGHT, low, high };
}

function drawAxis(context, frame, height, clock) {
  context.fillStyle = '#8a96a3';
  const ticks = Math.max(2, Math.min(8, Math.floor(frame.plotWidth / 140)));
  for (let i = 0; i <= ticks; i++) {
    const value = frame.low * (frame.high / frame.low) ** (i / ticks);
    const label = formatSpan(value, clock);
    const width = context.measureText(label).width;
    context.fillText(label, Math.min(Math.max(LEFT, frame.x(value) - width / 2), frame.width - width - 2), height - 8);
  }
}

// `target`: where to draw (an SVG export's), else the canvas.
export function renderDurations(target = null) {
  const canvas = $('durations');
  const { context, width, height } = target ?? fitCanvas(canvas);
  context.clearRect(0, 0, width, height);
  const h = chosenEntry();
  const clock = live.statistics?.clock ?? state.clock;
  durationsLayout = null;
  if (!h) {
    context.fillStyle = '#8a96a3';
    context.font = '12px system-ui, sans-serif';
    context.fillText('No durations yet: handlers with trace-serve --top-interval SECONDS, marker pairs from MarkStart/MarkStop.', 12, 20);
    return;
  }
  const frame = durationFrame(h, width, height);
  context.font = '11px system-ui, sans-serif';
  drawBars(context, h, frame);
  drawMarks(context, h, frame, clock);
  drawAxis(context, frame, height, clock);
  showText($('durations-summary'), `${h.hist.reduce((a, b) => a + b, 0)} certain of ${h.count} intervals` +
    (h.uncertain ? ` (${h.uncertain} spanned a loss: left out)` : '') + `; the worst from ${formatSpan(h.worst_start, clock)}`);
  durationsLayout = { handler: h, frame };
}

// What the chart shows, for tests and scripts.
export function durationsChartData() {
  if (!durationsLayout) return null;
  const h = durationsLayout.handler;
  return { key: h.key, label: h.label, count: h.count, uncertain: h.uncertain, histogram: h.hist.reduce((a, b) => a + b, 0),
           min: h.min, p50: h.p50, p99: h.p99, max: h.max, worstStart: h.worst_start, worstEnd: h.worst_end,
           hist: [...h.hist], histFirst: h.hist_first, maxX: durationsLayout.frame.x(h.max) };
}

// The Timeline, zoomed on the worst interval with as much again on each side.
function showWorst() {
  const h = durationsLayout?.handler;
  if (!h) return;
  const pad = Math.max(1, h.worst_end - h.worst_start);
  state.view = { start: h.worst_start - pad, end: h.worst_end + pad, follow: false };
  document.querySelector('#tabs button[data-tab="timeline"]').click();
}

export function setupDurationsInput() {
  $('durations-handler').addEventListener('change', () => { state.dirty = true; });
  $('durations-worst').addEventListener('click', showWorst);
  attachSvgExport('durations', renderDurations);
  $('durations').addEventListener('click', (event) => {
    const layout = durationsLayout;
    if (!layout) return;
    const x = event.clientX - $('durations').getBoundingClientRect().left;
    // The max line, or the bar that holds it.
    const bucket = bucketOf(layout.handler.max);
    if (Math.abs(x - layout.frame.x(layout.handler.max)) <= 6 ||
        (x >= layout.frame.x(bucketLow(bucket)) && x <= layout.frame.x(bucketLow(bucket + 1)))) showWorst();
  });
}
