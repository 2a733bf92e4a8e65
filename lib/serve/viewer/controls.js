// The controls: tabs, pause, clear, search, exports (a button with data-png="ID" saves the
// canvas ID as ID.png). `render(tab)` draws a tab now (main.js owns the views).
import { $, HISTORY } from './config.js';
import { ring } from './ring.js';
import { state } from './state.js';
import { rebuildAggregates } from './aggregates.js';
import { download, exportCsv, exportNdjson, exportPng } from './export.js';

export function setupControls(render) {
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
    state.oldest = null;
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
  for (const button of document.querySelectorAll('button[data-png]')) {
    button.addEventListener('click', () => exportPng($(button.dataset.png), `${button.dataset.png}.png`));
  }
  for (const tab of ['console', 'records']) {
    // The virtual lists draw the rows scrolled into view at once.
    $(`tab-${tab}`).addEventListener('scroll', () => { if (state.activeTab === tab && !state.paused) render(tab); });
  }
}
