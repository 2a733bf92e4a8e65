// The filters and controls: ports, kinds, search, pause, clear, tabs.
import { $, HISTORY } from './config.js';
import { ring } from './ring.js';
import { state } from './state.js';
import { rebuildAggregates } from './aggregates.js';
import { download, exportCsv, exportNdjson } from './export.js';
import { setupTimelineInput } from './timeline.js';
import { RENDERERS } from './main.js';

export function portLabel(port) {
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

export function rebuildPortFilters() {
  const box = $('port-filters');
  box.replaceChildren(...[...state.seenPorts].sort((a, b) => a - b).map((port) =>
    checkbox(portLabel(port), !state.hiddenPorts.has(port),
             (on) => (on ? state.hiddenPorts.delete(port) : state.hiddenPorts.add(port)), { port: String(port) })));
}

export function rebuildKindFilters() {
  const box = $('kind-filters');
  box.replaceChildren(...[...state.seenKinds].sort().map((kind) =>
    checkbox(kind, !state.hiddenKinds.has(kind),
             (on) => (on ? state.hiddenKinds.delete(kind) : state.hiddenKinds.add(kind)), { kind })));
}

export function setupControls() {
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
