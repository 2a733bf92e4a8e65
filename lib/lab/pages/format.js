// Times, figures and the addresses of the views, for people and for links.

const pad = (value, width = 2) => String(value).padStart(width, '0');

// Microseconds since 1970 as RFC 3339 UTC with all six fraction digits (what the server parses
// back exactly): 2026-11-29T02:13:00.250123Z.
export function rfc3339(us) {
  const millis = Math.floor(us / 1000);
  const date = new Date(millis);
  const micros = ((us % 1e6) + 1e6) % 1e6;
  return `${date.getUTCFullYear()}-${pad(date.getUTCMonth() + 1)}-${pad(date.getUTCDate())}T` +
         `${pad(date.getUTCHours())}:${pad(date.getUTCMinutes())}:${pad(date.getUTCSeconds())}.${pad(micros, 6)}Z`;
}

// Host time for a table: 2026-11-29 02:13:00.250 (UTC, milliseconds).
export function hostTime(us) {
  if (us === null || us === undefined) return '–';
  return rfc3339(us).slice(0, 23).replace('T', ' ');
}

// How long ago: 3 s, 5 min, 2 h, 4 d.
export function age(nowUs, us) {
  if (us === null || us === undefined) return '–';
  const seconds = Math.max(0, (nowUs - us) / 1e6);
  if (seconds < 60) return `${seconds.toFixed(0)} s ago`;
  if (seconds < 3600) return `${(seconds / 60).toFixed(0)} min ago`;
  if (seconds < 86400) return `${(seconds / 3600).toFixed(1)} h ago`;
  return `${(seconds / 86400).toFixed(1)} d ago`;
}

export function rate(value) {
  if (value === null || value === undefined) return '–';
  if (value >= 1e6) return `${(value / 1e6).toFixed(2)}M`;
  if (value >= 1e4) return `${(value / 1e3).toFixed(1)}k`;
  return value.toFixed(value < 10 && value > 0 ? 1 : 0);
}

// The page's token (?token=T), carried to the APIs and the viewer's links.
export function pageToken() {
  return new URLSearchParams(location.search).get('token');
}

// The viewer's address for a view (docs/tools/trace-lab.md): {board, live, since, from, to, run,
// then, mark}; every value through URLSearchParams.
export function viewerUrl(view) {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(view)) {
    if (value !== null && value !== undefined) query.set(name, String(value));
  }
  const token = pageToken();
  if (token) query.set('token', token);
  return `/board/?${query}`;
}

// A search hit's view: the board's stored records HIT_SPAN_US either side of it, the hit marked.
export const HIT_SPAN_US = 10e6;
export function hitUrl(hit) {
  return viewerUrl({ board: hit.board, from: rfc3339(hit.host_us - HIT_SPAN_US), to: rfc3339(hit.host_us + HIT_SPAN_US),
                     mark: rfc3339(hit.host_us), mark_run: hit.run, mark_seq: hit.seq });
}
