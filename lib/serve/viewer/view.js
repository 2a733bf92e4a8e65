// The view the page was opened with (trace-lab's /board/?board=B&live=1, &from=T&to=T, &run=R,
// &then=live, &mark=T): passed on to the WebSocket, shown in the header with a link back to
// the lab's front page. Without view parameters (trace-serve) there is nothing to show and the
// WebSocket's address is what it always was.
import { $ } from './config.js';

export const VIEW_PARAMS = ['board', 'live', 'since', 'from', 'to', 'run', 'then', 'mark'];
const page = new URLSearchParams(location.search);

// The page's view parameters and token, in the WebSocket's query ('' when it has none).
export function socketQuery() {
  const pairs = [];
  for (const name of [...VIEW_PARAMS, 'token']) {
    for (const value of page.getAll(name)) pairs.push(`${name}=${encodeURIComponent(value)}`);
  }
  return pairs.length ? `?${pairs.join('&')}` : '';
}

// A time of the address (RFC 3339 or microseconds since 1970) in microseconds, or null.
export function parseUs(text) {
  if (text === null || text === '') return null;
  if (/^\d+$/.test(text)) return Number(text);
  const match = /^(.*?)(?:\.(\d{1,9}))?(Z|[+-]\d\d:\d\d)$/i.exec(text);
  if (!match) return null;
  const seconds = Date.parse(`${match[1]}${match[3]}`);
  if (Number.isNaN(seconds)) return null;
  return seconds * 1000 + Number((match[2] ?? '').padEnd(6, '0').slice(0, 6));
}

// A stored view (trace-lab's from/to or run): what the connection pill says instead of 'live'.
export const storedView = page.has('from') || page.has('to') || page.has('run');

// The host time the Timeline centres on and marks (a search hit's), in microseconds.
export const markUs = parseUs(page.get('mark'));
// The hit itself (&mark_run=R&mark_seq=N, the page's alone): a chunk's records share one host
// time, so the nearest in host time is the chunk's first; the hit's run and seq name it.
export const markRecord = page.has('mark_seq') && /^\d+$/.test(page.get('mark_seq'))
  ? { run: page.get('mark_run') ?? '', seq: Number(page.get('mark_seq')) } : null;

function describe() {
  const parts = [];
  if (page.has('run')) parts.push(`run ${page.get('run')} stored`);
  if (page.has('from') || page.has('to')) parts.push(`stored ${page.get('from') ?? '…'} – ${page.get('to') ?? '…'}`);
  if (page.get('live') === '1' && !page.has('run') && !page.has('from')) parts.push(`live${page.has('since') ? ` since ${page.get('since')}` : ''}`);
  if (page.get('then') === 'live') parts.push('then live');
  if (page.has('mark')) parts.push(`mark ${page.get('mark')}`);
  return parts.join(' · ');
}

// The header's board, view and link back to the lab (its token kept), as text.
export function showView() {
  if (!page.has('board')) return;
  $('view').hidden = false;
  $('view-board').textContent = page.get('board');
  $('view-range').textContent = describe();
  const token = page.get('token');
  $('view-lab').href = `/${token ? `?${new URLSearchParams({ token })}` : ''}#boards`;
  document.title = `${page.get('board')} · tracepipe lab`;
}
