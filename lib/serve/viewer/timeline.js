// The Timeline tab: tasks, ISRs and idle as bars on a zoomable time axis.
import { $ } from './config.js';
import { live, state } from './state.js';
import { formatSpan, formatTime } from './time.js';
import { AXIS_HEIGHT, COLOURS, fitCanvas } from './canvas.js';
import { attachTimeZoom, settleView } from './zoom.js';
import { attachSvgExport } from './export.js';

export const LABEL_WIDTH = 150;
export const RIGHT_MARGIN = 8;
let timelineLayout = null;  // what the last draw put where, for hover

function sortedLanes() {
  return [...live.agg.lanes.values()].sort((a, b) => a.order - b.order || a.label.localeCompare(b.label, undefined, { numeric: true }));
}

// The newest data the timeline knows of: the running task's bar ends there.
function timelineEnd() {
  if (live.agg.last === null) return null;
  return Math.max(live.agg.last, state.newest ?? live.agg.last);
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
  const running = live.agg.running;
  if (running && entry.key === `task:${running.id}`) {
    const now = timelineEnd();
    if (now !== null && running.since <= end && now >= start) yield [running.since, now];
  }
}

// Until the user moves the range, the mark (a search hit) in the middle of it, with all the
// data on its wider side in view.
function centreOnMark(end) {
  const mark = state.mark;
  if (mark.t === null || !mark.auto) return;
  const half = Math.max(1, mark.t - live.agg.first, end - mark.t);
  state.view = { start: mark.t - half, end: mark.t + half, follow: false };
}

// `target`: where to draw (an SVG export's), else the canvas.
export function renderTimeline(target = null) {
  const canvas = $('timeline');
  const { context, width, height } = target ?? fitCanvas(canvas);
  context.clearRect(0, 0, width, height);
  let bars = 0;
  const end = timelineEnd();
  if (end === null) {
    context.fillStyle = '#8a96a3';
    context.font = '12px system-ui, sans-serif';
    context.fillText('No TaskSwitch, IsrEnter/IsrExit or Idle records yet.', 12, 20);
    timelineLayout = null;
  } else {
    centreOnMark(end);
    const view = settleView(live.agg.first, end);
    const lanes = sortedLanes();
    const plotWidth = width - LABEL_WIDTH - RIGHT_MARGIN;
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
    canvas.dataset.view = `${view.start} ${view.end}`;
    if (state.mark.t !== null) canvas.dataset.mark = String(state.mark.t);
    drawTimeAxis(context, width, height, view, state.clock);
    $('timeline-range').textContent =
      `${formatSpan(view.start, state.clock)} – ${formatSpan(view.end, state.clock)} (${formatSpan(view.end - view.start, state.clock)} shown)` +
      (view.follow ? ' · live' : '');
  }
  state.drawn.bars = bars;
  canvas.dataset.bars = String(bars);
}

// The ticks of `list` (times in order) in [start, end], one per pixel column `x` puts them
// in: a range of a long trace holds tens of thousands of console ticks, and a rectangle for
// each, every frame, made the CPU load chart's frames slow (a long canvas redraw and commit).
function tickColumns(list, start, end, x) {
  let low = 0;
  let high = list.length;
  while (low < high) {
    const mid = (low + high) >> 1;
    if (list[mid] < start) low = mid + 1; else high = mid;
  }
  const columns = [];
  for (let i = low; i < list.length && list[i] <= end; i++) {
    const column = Math.floor(x(list[i]));
    if (column !== columns[columns.length - 1]) columns.push(column);
  }
  return columns;
}

// The time axis under a plot that starts at LABEL_WIDTH, with the console and marker ticks.
export function drawTimeAxis(context, width, height, view, clock) {
  const plotWidth = width - LABEL_WIDTH - RIGHT_MARGIN;
  const axisY = height - AXIS_HEIGHT;
  const x = (t) => LABEL_WIDTH + ((t - view.start) / (view.end - view.start)) * plotWidth;
  // Console (grey) and marker (amber) ticks just above the axis labels.
  context.fillStyle = '#6b7785';
  for (const at of tickColumns(live.agg.consoleTicks, view.start, view.end, x)) context.fillRect(at, axisY + 2, 1, 6);
  context.fillStyle = '#ffb454';
  for (const at of tickColumns(live.agg.markerTicks, view.start, view.end, x)) context.fillRect(at - 1, axisY + 8, 2, 8);
  if (state.mark.t !== null && state.mark.t >= view.start && state.mark.t <= view.end) {
    context.fillStyle = '#ff6b6b';  // the mark (a search hit): a line across the plot
    context.fillRect(x(state.mark.t) - 1, 0, 2, axisY);
  }
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

export function setupTimelineInput() {
  const canvas = $('timeline');
  attachTimeZoom(canvas, LABEL_WIDTH, RIGHT_MARGIN);
  attachSvgExport('timeline', renderTimeline);
  canvas.addEventListener('mousemove', timelineHover);
  canvas.addEventListener('mouseleave', () => { $('timeline-tip').hidden = true; });
  canvas.addEventListener('dblclick', () => {
    // Follow live, showing the latest twentieth of what is buffered.
    const end = timelineEnd();
    if (end !== null) state.view = { start: end - Math.max(1, (end - live.agg.first) / 20), end, follow: true };
    state.mark.auto = false;
    state.dirty = true;
  });
  $('timeline-fit').addEventListener('click', () => {
    const end = timelineEnd();
    if (end !== null) state.view = { start: live.agg.first, end: Math.max(end, live.agg.first + 1), follow: false };
    state.mark.auto = false;
    state.dirty = true;
  });
}
