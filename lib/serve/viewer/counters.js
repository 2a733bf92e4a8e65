// The Counters tab: small multiples, each a line over time on its own scale; over all the
// counters' time, or (the toolbar's "Timeline's range") over the Timeline's, zooming and
// panning with it; hover: each counter's value at that time.
import { $ } from './config.js';
import { live, state } from './state.js';
import { formatCount, formatSpan, formatTime } from './time.js';
import { AXIS_HEIGHT, COLOURS, fitCanvas, showText } from './canvas.js';
import { attachTimeZoom, settleView } from './zoom.js';
import { tagNext } from './svg.js';
import { attachSvgExport } from './export.js';

const LEFT = 90;
const RIGHT = 10;
// A point's marker is drawn when a series' points in the range are at least this far apart on
// average; denser, the line alone shows them (thousands of 3 px squares a draw were most of
// the tab's draw at 200k records/s). An SVG export has every point's marker: it is the data.
const MARKER_SPACING_PX = 6;
let countersLayout = null;

// The first point at or after `t` and the first after it (points are in arrival order, which
// is time order). Two searches, not one with `t + epsilon`: a timestamp past about 10^7 plus 1e-9
// is the same number.
function firstWhere(points, t, before) {
  let low = 0;
  let high = points.length;
  while (low < high) {
    const mid = (low + high) >> 1;
    if (before(points[mid][0], t)) low = mid + 1; else high = mid;
  }
  return low;
}
const firstAtOrAfter = (points, t) => firstWhere(points, t, (a, b) => a < b);
const firstAfter = (points, t) => firstWhere(points, t, (a, b) => a <= b);

// The time range drawn: all the counters' points, or the Timeline's range.
function countersRange(series) {
  let tMin = Infinity;
  let tMax = -Infinity;
  for (const [, s] of series) {
    if (s.points.length === 0) continue;
    tMin = Math.min(tMin, s.points[0][0]);
    tMax = Math.max(tMax, s.points[s.points.length - 1][0]);
  }
  if (!$('counters-follow').checked) return { start: tMin, end: tMax };
  const view = settleView(Math.min(tMin, live.agg.first ?? tMin), Math.max(tMax, state.newest ?? tMax));
  return { start: view.start, end: view.end };
}

// Each counter's last value, in its colour: the legend's spans are made again only when the
// counters change (a DOM change each frame makes the browser lay the page out again).
function counterLegend(series) {
  const legend = $('counter-legend');
  const key = series.map(([id]) => id).join(',');
  if (legend.dataset.key !== key) {
    legend.dataset.key = key;
    legend.replaceChildren(...series.map((_, index) => {
      const tag = document.createElement('span');
      tag.style.color = COLOURS[index % COLOURS.length];
      return tag;
    }));
  }
  series.forEach(([id, s], index) => showText(legend.children[index], `counter ${id}: ${s.last}`));
}

// `target`: where to draw (an SVG export's), else the canvas.
export function renderCounters(target = null) {
  const canvas = $('counters');
  const { context, width, height } = target ?? fitCanvas(canvas);
  context.clearRect(0, 0, width, height);
  const series = [...live.agg.counters.entries()].sort((a, b) => a[0] - b[0]);
  counterLegend(series);
  let points = 0;
  if (series.length === 0) {
    context.fillStyle = '#8a96a3';
    context.font = '12px system-ui, sans-serif';
    context.fillText('No Counter records yet.', 12, 20);
    countersLayout = null;
  } else {
    const { start: tMin, end: tMax } = countersRange(series);
    const left = LEFT;
    const panelHeight = (height - AXIS_HEIGHT) / series.length;
    const x = (t) => left + ((t - tMin) / Math.max(1, tMax - tMin)) * (width - left - RIGHT);
    countersLayout = { series, tMin, tMax, width };
    context.font = '11px system-ui, sans-serif';
    series.forEach(([id, s], index) => {
      const colour = COLOURS[index % COLOURS.length];
      const top = index * panelHeight;
      const y = (v) => top + panelHeight - 8 - ((v - s.min) / Math.max(1e-12, s.max - s.min)) * (panelHeight - 20);
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
      // The points in the range, and the line on to the ones just outside it.
      const from = Math.max(0, firstAtOrAfter(s.points, tMin) - 1);
      const to = Math.min(s.points.length, firstAfter(s.points, tMax) + 1);
      context.save();
      context.beginPath();
      context.rect(left, top, width - left - RIGHT, panelHeight);
      context.clip();
      context.beginPath();
      for (let i = from; i < to; i++) {
        const [t, v] = s.points[i];
        if (i === from) context.moveTo(x(t), y(v)); else context.lineTo(x(t), y(v));
      }
      tagNext(context, { counter: id });
      context.stroke();
      const inRange = firstAfter(s.points, tMax) - firstAtOrAfter(s.points, tMin);
      points += inRange;
      if (target || inRange * MARKER_SPACING_PX <= width - left - RIGHT) {
        for (let i = from; i < to; i++) {
          const [t, v] = s.points[i];
          if (t < tMin || t > tMax) continue;
          tagNext(context, { counter: id, time: t, value: v });
          context.fillRect(x(t) - 1.5, y(v) - 1.5, 3, 3);
        }
      }
      context.restore();
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

// Each counter's value at the time under the mouse: its last point at or before it.
function countersHover(event) {
  const tip = $('counters-tip');
  const layout = countersLayout;
  const px = event.clientX - $('counters').getBoundingClientRect().left;
  if (!layout || px < LEFT) { tip.hidden = true; return; }
  const t = layout.tMin + ((px - LEFT) / (layout.width - LEFT - RIGHT)) * (layout.tMax - layout.tMin);
  const lines = layout.series.map(([id, s]) => {
    const at = firstAfter(s.points, t) - 1;
    return at < 0 ? null : `counter ${id}: ${s.points[at][1]}`;
  }).filter(Boolean);
  tip.textContent = `${formatTime(t, state.clock)}\n${lines.join('\n')}`;
  tip.dataset.time = String(t);  // the exact time the values are of, for tests and scripts
  tip.hidden = false;
  const panel = tip.parentElement.getBoundingClientRect();
  tip.style.left = `${Math.min(event.clientX - panel.left + 14, panel.width - 240)}px`;
  tip.style.top = `${event.clientY - panel.top + 14}px`;
}

export function setupCountersInput() {
  const canvas = $('counters');
  // Zoom and pan move the Timeline's range: only while the counters follow it.
  attachTimeZoom(canvas, LEFT, RIGHT, () => $('counters-follow').checked);
  canvas.addEventListener('mousemove', countersHover);
  attachSvgExport('counters', renderCounters);
  canvas.addEventListener('mouseleave', () => { $('counters-tip').hidden = true; });
  $('counters-follow').addEventListener('change', () => { state.dirty = true; });
}
