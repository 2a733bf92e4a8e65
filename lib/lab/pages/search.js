// Search across boards (GET /api/search): text, kinds, a boards glob and a time range -> hits
// newest first, a page at a time (the answer's cursor asks for the older ones); a hit opens
// its board's stored view around it, the hit marked. The query is the address
// (#search?text=&kind=&boards=&from=&to=).
import { getJson } from './api.js';
import { $, element, link } from './dom.js';
import { hitUrl, hostTime } from './format.js';
import { setRoute } from './route.js';

// The kinds offered as boxes (the API takes any kind name).
export const SEARCH_KINDS = ['Text', 'Exception', 'Overflow', 'Malformed', 'Loss', 'Marker', 'Trigger'];
const FIELDS = { text: 'search-text', boards: 'search-boards', from: 'search-from', to: 'search-to' };
let query = null;     // the URLSearchParams of the search shown
let cursor = null;    // the answer's `next`
let generation = 0;
let shown = 0;

function hitRow(hit) {
  const row = element('tr');
  row.dataset.board = hit.board;
  row.dataset.hostUs = String(hit.host_us);
  const time = element('td', 'time');
  time.append(link(hitUrl(hit), hostTime(hit.host_us), 'open the board stored around this hit'));
  row.append(time, element('td', 'board', hit.board), element('td', 'run', hit.run), element('td', 'kind', hit.kind),
             element('td', 'line', hit.line));
  return row;
}

async function fetchPage(append) {
  const asked = ++generation;
  const params = new URLSearchParams(query);
  if (append && cursor) params.set('before', cursor);
  const summary = $('search-summary');
  summary.textContent = 'searching…';
  summary.className = 'muted';
  try {
    const answer = await getJson('/api/search', params);
    if (asked !== generation) return;
    const body = $('hits').tBodies[0];
    if (!append) { body.replaceChildren(); shown = 0; }
    body.append(...answer.hits.map(hitRow));
    shown += answer.hits.length;
    cursor = answer.next;
    $('search-more').hidden = !cursor;
    summary.textContent = `${shown} hit${shown === 1 ? '' : 's'}${cursor ? ' (more: older hits)' : ''}, newest first`;
  } catch (error) {
    if (asked !== generation) return;
    summary.textContent = error.message;
    summary.className = 'bad';
  }
}

// The form as the API's parameters (and the address's).
function formQuery() {
  const params = new URLSearchParams();
  for (const [name, id] of Object.entries(FIELDS)) {
    const value = $(id).value;
    if (value !== '') params.set(name, value);
  }
  for (const box of document.querySelectorAll('#search-kinds input:checked')) params.append('kind', box.value);
  return params;
}

export function setupSearch() {
  const kinds = $('search-kinds');
  kinds.append(element('span', 'muted', 'Kinds '));
  for (const kind of SEARCH_KINDS) {
    const box = element('input');
    box.type = 'checkbox';
    box.value = kind;
    const label = element('label');
    label.append(box, ` ${kind}`);
    kinds.append(label);
  }
  $('search-form').addEventListener('submit', (event) => {
    event.preventDefault();
    setRoute('search', formQuery(), true);
    query = null;  // the same search again is asked again (newer hits)
    showSearch(formQuery());
  });
  $('search-more').addEventListener('click', () => fetchPage(true));
}

// The page shown with the address's query; a query with nothing in it searches nothing.
export function showSearch(params) {
  for (const [name, id] of Object.entries(FIELDS)) $(id).value = params.get(name) ?? '';
  const wanted = new Set(params.getAll('kind'));
  for (const box of document.querySelectorAll('#search-kinds input')) box.checked = wanted.has(box.value);
  const asked = formQuery();
  if (query !== null && asked.toString() === query.toString()) return;
  query = asked;
  cursor = null;
  if (!params.toString()) {
    $('hits').tBodies[0].replaceChildren();
    $('search-summary').textContent = 'Text, kinds, boards and times: hits newest first.';
    $('search-more').hidden = true;
    return;
  }
  fetchPage(false);
}
