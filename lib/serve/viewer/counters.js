// The Counters tab: small multiples, each on its own scale.
import { $ } from './config.js';
import { live, state } from './state.js';
import { formatCount, formatSpan } from './time.js';
import { AXIS_HEIGHT, COLOURS, fitCanvas } from './canvas.js';

export function renderCounters() {
  const canvas = $('counters');
  const { context, width, height } = fitCanvas(canvas);
  context.clearRect(0, 0, width, height);
  const legend = $('counter-legend');
  legend.replaceChildren();
  const series = [...live.agg.counters.entries()].sort((a, b) => a[0] - b[0]);
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
