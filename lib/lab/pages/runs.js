// A board's runs (GET /api/runs): each a link to its stored view, and to the stored view that
// goes on live from its end.
import { getJson } from './api.js';
import { element, link } from './dom.js';
import { hostTime, viewerUrl } from './format.js';

function runItem(board, run) {
  const item = element('span', 'run');
  item.dataset.run = run.run;
  item.append(link(viewerUrl({ board, run: run.run }), `run ${run.run}`, 'the run stored'),
              element('span', 'muted', ` ${hostTime(run.first_us)} – ${hostTime(run.last_us)}, ${run.records} records `),
              link(viewerUrl({ board, run: run.run, then: 'live' }), 'then live', 'the run stored, then live from its end'));
  return item;
}

// Fills `cell` with the board's runs, newest first.
export async function showRuns(cell, board) {
  cell.replaceChildren(element('span', 'muted', 'runs…'));
  try {
    const answer = await getJson('/api/runs', new URLSearchParams({ board }));
    const items = answer.runs.map((run) => runItem(board, run));
    cell.replaceChildren(...(items.length ? items : [element('span', 'muted', 'no stored runs')]));
  } catch (error) {
    cell.replaceChildren(element('span', 'bad', error.message));
  }
}
