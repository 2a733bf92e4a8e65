// The boards table: one row per board (GET /api/boards), polled every POLL_MS, rows updated in
// place (a poll that changes nothing changes nothing on screen), filtered by a glob, sorted by
// any column, the state in the address (#boards?glob=&sort=&order=&window=).
import { getJson } from './api.js';
import { $, element, link, setProperty, setText } from './dom.js';
import { age, hostTime, rate, viewerUrl } from './format.js';
import { setRoute } from './route.js';
import { showRuns } from './runs.js';

export const POLL_MS = 2000;
const NUMBER_COLUMNS = ['records', 'lost', 'gaps', 'exceptions', 'overflows', 'malformed'];
const view = { glob: '', sort: 'board', order: 'asc', window: '3600' };
const rows = new Map();  // board -> {row, cells, runs: the runs row or null}
let latest = null;       // the newest answer
let generation = 0;      // answers to an older query are dropped
let inFlight = false;

function compare(a, b) {
  const key = view.sort;
  const x = a[key] ?? null;
  const y = b[key] ?? null;
  let order = 0;
  if (x === null || y === null) order = (x === null) - (y === null);
  else if (typeof x === 'string') order = x.localeCompare(y, undefined, { numeric: true });
  else order = Number(x) - Number(y);
  if (view.order === 'desc') order = -order;
  return order || a.board.localeCompare(b.board, undefined, { numeric: true });
}

function newRow(board) {
  const row = element('tr');
  row.dataset.board = board;
  const cells = {};
  for (const name of ['live', 'board', 'run', 'records_per_s', 'last_seen', ...NUMBER_COLUMNS, 'last_text', 'views']) {
    cells[name] = element('td', name);
    if (name === 'records_per_s' || NUMBER_COLUMNS.includes(name)) cells[name].classList.add('num');
    row.append(cells[name]);
  }
  cells.live.append(element('span', 'dot'));
  cells.board.textContent = board;
  const runsButton = element('button', '', 'runs');
  runsButton.type = 'button';
  runsButton.addEventListener('click', () => toggleRuns(board));
  cells.views.append(link(viewerUrl({ board, live: 1 }), 'live', 'the board live from the stream'), runsButton);
  return { row, cells, runs: null };
}

function toggleRuns(board) {
  const entry = rows.get(board);
  if (entry.runs) {
    entry.runs.remove();
    entry.runs = null;
    return;
  }
  entry.runs = element('tr', 'runs');
  const cell = element('td');
  cell.colSpan = 13;
  entry.runs.append(cell);
  entry.row.after(entry.runs);
  showRuns(cell, board);
}

function fillRow(entry, board, nowUs) {
  const { cells } = entry;
  // null: the engine that knows this figure is away (the answer's "away" names it).
  setProperty(cells.live.firstChild, 'className', board.live === null ? 'dot unknown' : board.live ? 'dot on' : 'dot');
  setText(cells.run, board.run ?? '–');
  setText(cells.records_per_s, board.records_per_s === null ? '?' : rate(board.records_per_s));
  setText(cells.last_seen, age(nowUs, board.last_seen_us));
  setProperty(cells.last_seen, 'title', hostTime(board.last_seen_us));
  for (const name of NUMBER_COLUMNS) {
    setText(cells[name], board[name] === null ? '?' : String(board[name] ?? 0));
    cells[name].classList.toggle('nonzero', Number(board[name]) > 0);
  }
  setText(cells.last_text, board.last_text ?? '');
  setProperty(cells.last_text, 'title', board.last_text_us ? hostTime(board.last_text_us) : '');
}

function render() {
  if (!latest) return;
  const boards = [...latest.boards].sort(compare);
  const body = $('boards').tBodies[0];
  const wanted = new Set(boards.map((b) => b.board));
  for (const [board, entry] of rows) {
    if (wanted.has(board)) continue;
    entry.row.remove();
    entry.runs?.remove();
    rows.delete(board);
  }
  let previous = null;
  for (const board of boards) {
    let entry = rows.get(board.board);
    if (!entry) rows.set(board.board, (entry = newRow(board.board)));
    fillRow(entry, board, latest.now_us);
    // Moved only when out of place: a row left where it is keeps its hover and selection.
    const expected = previous ? (previous.runs || previous.row).nextSibling : body.firstChild;
    if (expected !== entry.row) {
      body.insertBefore(entry.row, expected);
      if (entry.runs) entry.row.after(entry.runs);
    }
    previous = entry;
  }
  const live = boards.filter((b) => b.live).length;
  setText($('boards-summary'), `${boards.length} boards, ${live} live · window ${latest.window_s} s · ${hostTime(latest.now_us)} UTC`);
  for (const th of $('boards').tHead.rows[0].cells) {
    th.classList.toggle('sorted', th.dataset.sort === view.sort);
    if (th.dataset.sort === view.sort) th.dataset.order = view.order;
  }
}

async function poll() {
  if (inFlight) return;
  inFlight = true;
  const asked = generation;
  const params = new URLSearchParams({ window: view.window });
  if (view.glob) params.set('boards', view.glob);
  try {
    const answer = await getJson('/api/boards', params);
    if (asked === generation) {
      latest = answer;
      render();
      $('boards').classList.remove('stale');
      // One engine away: the other's figures are shown, the away one's are '?', and it is named.
      const away = answer.away;
      $('status').textContent = away ? `${away.why} (its figures are shown as ?; ${away.engine === 'nats' ? 'the store' : 'the live'} figures are current)` : '';
      $('status').className = away ? 'bad' : '';
    }
  } catch (error) {
    if (asked === generation) {
      // The figures shown are the last answer's: dimmed until the server answers again.
      $('boards').classList.add('stale');
      $('status').textContent = error.message;
      $('status').className = 'bad';
    }
  } finally {
    inFlight = false;
  }
}

function writeRoute() {
  const params = new URLSearchParams();
  if (view.glob) params.set('glob', view.glob);
  if (view.sort !== 'board') params.set('sort', view.sort);
  if (view.order !== 'asc') params.set('order', view.order);
  if (view.window !== '3600') params.set('window', view.window);
  setRoute('boards', params);
}

function changed() {
  generation++;
  inFlight = false;
  writeRoute();
  render();
  poll();
}

export function setupBoards() {
  let typing = null;
  $('boards-glob').addEventListener('input', (event) => {
    clearTimeout(typing);
    typing = setTimeout(() => { view.glob = event.target.value.trim(); changed(); }, 250);
  });
  $('boards-controls').addEventListener('submit', (event) => event.preventDefault());
  $('boards-window').addEventListener('change', (event) => { view.window = event.target.value; changed(); });
  for (const th of $('boards').tHead.rows[0].cells) {
    if (!th.dataset.sort) continue;
    th.addEventListener('click', () => {
      view.order = view.sort === th.dataset.sort && view.order === 'asc' ? 'desc' : 'asc';
      view.sort = th.dataset.sort;
      changed();
    });
  }
  setInterval(() => { if (!$('page-boards').hidden) poll(); }, POLL_MS);
}

// The page shown with the address's state.
export function showBoards(params) {
  view.glob = params.get('glob') ?? '';
  view.sort = params.get('sort') ?? 'board';
  view.order = params.get('order') === 'desc' ? 'desc' : 'asc';
  view.window = params.get('window') ?? '3600';
  $('boards-glob').value = view.glob;
  const select = $('boards-window');
  if (![...select.options].some((o) => o.value === view.window)) select.append(new Option(`${view.window} s`, view.window));
  select.value = view.window;
  generation++;
  inFlight = false;
  render();
  poll();
}
