// Export of the records held, as NDJSON or CSV, and of a view's canvas as PNG or SVG.
import { $ } from './config.js';
import { ringRecords } from './ring.js';
import { visible } from './state.js';
import { SvgContext } from './svg.js';

export function exportNdjson() {
  const lines = [];
  for (const r of ringRecords()) if (visible(r.port, r.kind, r.json)) lines.push(r.json);
  return lines.length ? `${lines.join('\n')}\n` : '';
}

function csvCell(value) {
  if (value === undefined || value === null) return '';
  const text = typeof value === 'object' ? JSON.stringify(value) : String(value);
  return /[",\n\r]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function exportCsv() {
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

function downloadBlob(name, blob) {
  const link = document.createElement('a');
  link.href = URL.createObjectURL(blob);
  link.download = name;
  link.click();
  setTimeout(() => URL.revokeObjectURL(link.href), 1000);
}

export function download(name, text, type) {
  downloadBlob(name, new Blob([text], { type }));
}

// The canvas as drawn, at its pixel size, on the page's background (the canvas itself is
// transparent where nothing is drawn; light text on it would not show in another viewer).
export function exportPng(canvas, name) {
  const copy = document.createElement('canvas');
  copy.width = canvas.width;
  copy.height = canvas.height;
  const context = copy.getContext('2d');
  context.fillStyle = getComputedStyle(canvas).backgroundColor;
  context.fillRect(0, 0, copy.width, copy.height);
  context.drawImage(canvas, 0, 0);
  copy.toBlob((blob) => downloadBlob(name, blob), 'image/png');
}

// The view drawn again by `draw` (its render function, given a drawing target) into an SVG
// document at the canvas's size: vector elements from the chart's data, not its pixels.
export function svgOf(canvas, draw) {
  const svg = new SvgContext(canvas.clientWidth, canvas.clientHeight, getComputedStyle(canvas).backgroundColor);
  draw({ context: svg, width: canvas.clientWidth, height: canvas.clientHeight });
  return svg.document();
}

// The button with data-svg="ID" saves the canvas ID as ID.svg.
export function attachSvgExport(id, draw) {
  const button = document.querySelector(`button[data-svg="${id}"]`);
  button.addEventListener('click', () => download(`${id}.svg`, svgOf($(id), draw), 'image/svg+xml'));
}
