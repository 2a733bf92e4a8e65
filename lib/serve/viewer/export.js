// Export of the records held, as NDJSON or CSV.
import { $ } from './config.js';
import { ringRecords } from './ring.js';
import { visible } from './state.js';

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

export function download(name, text, type) {
  const link = document.createElement('a');
  link.href = URL.createObjectURL(new Blob([text], { type }));
  link.download = name;
  link.click();
  setTimeout(() => URL.revokeObjectURL(link.href), 1000);
}
