// Every view of the page is its address: #boards?glob=..&sort=..&order=..&window=.. and
// #search?text=..&kind=..&boards=..&from=..&to=.. (pasteable into a bug report).

export function currentRoute() {
  const hash = location.hash.replace(/^#/, '');
  const at = hash.indexOf('?');
  const page = (at < 0 ? hash : hash.slice(0, at)) || 'boards';
  return { page, params: new URLSearchParams(at < 0 ? '' : hash.slice(at + 1)) };
}

// Writes a view's state into the address; `push`: a new history entry (a search), else the
// current one replaced (a filter typed letter by letter).
export function setRoute(page, params, push = false) {
  const hash = `#${page}${params.toString() ? `?${params}` : ''}`;
  if (location.hash === hash) return;
  if (push) history.pushState(null, '', hash);
  else history.replaceState(null, '', hash);
}
