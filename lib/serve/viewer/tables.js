// The Markers, Exceptions, PC samples and Statistics tabs.
import { $, TABLE_ROWS } from './config.js';
import { live } from './state.js';
import { idName, portLabel } from './names.js';
import { formatSpan, formatTime } from './time.js';

function row(cells) {
  const tr = document.createElement('tr');
  for (const cell of cells) {
    const td = document.createElement('td');
    if (cell instanceof Node) td.append(cell); else td.textContent = String(cell);
    tr.append(td);
  }
  return tr;
}

export function renderMarkers() {
  const chosen = live.agg.markers.slice(-TABLE_ROWS).reverse();
  $('markers').tBodies[0].replaceChildren(...chosen.map((r) =>
    row([formatTime(r.timestamp, r.clock), portLabel(r.port), r.data.id, r.data.name ?? idName(r.port, r.data.id) ?? ''])));
}

export function renderExceptions() {
  $('exception-counts').tBodies[0].replaceChildren(...[...live.agg.exceptions.entries()]
    .sort((a, b) => b[1].enter - a[1].enter).map(([name, c]) => row([name, c.enter, c.exit, c.resume])));
  $('exception-recent').tBodies[0].replaceChildren(...live.agg.recentExceptions.slice(-TABLE_ROWS).reverse().map((r) =>
    row([formatTime(r.timestamp, r.clock), r.data.number, r.data.handler ?? r.data.name ?? '', r.data.action])));
}

export function renderPcSamples() {
  const total = live.agg.pcTotal;
  $('pc-summary').textContent = `${total} samples, ${live.agg.pcSleeping} while sleeping`;
  const top = [...live.agg.pc.entries()].sort((a, b) => b[1] - a[1]).slice(0, 50);
  const max = top.length ? top[0][1] : 1;
  $('pc-top').tBodies[0].replaceChildren(...top.map(([place, n]) => {
    const bar = document.createElement('span');
    bar.className = 'bar';
    bar.style.width = `${Math.round((200 * n) / max)}px`;
    return row([place, n, `${((100 * n) / total).toFixed(2)}%`, bar]);
  }));
}

// The Statistics tab: trace-top's tables, from the newest snapshot trace-serve sent.
function percent(share) {
  return `${(100 * share).toFixed(2)}%`;
}

export function renderStatistics() {
  const top = live.statistics;
  if (!top) {
    $('top-summary').textContent = 'No statistics yet: trace-serve sends them with --top-interval SECONDS.';
    return;
  }
  const s = top.summary;
  const time = (value) => (value == null ? '?' : formatSpan(value, top.clock));
  $('top-summary').textContent = `${s.records} records over ${time(s.span)}; ${s.pc_samples} PC samples ` +
    `(${s.sleep_samples} asleep); ${s.overflows} overflows, ${s.uncertain} uncertain intervals`;
  $('top-functions').tBodies[0].replaceChildren(...top.functions.map((f) => row([f.rank, f.function, f.samples,
    percent(f.share)])));
  $('top-handlers').tBodies[0].replaceChildren(...top.handlers.map((h) => row([h.source, h.number, h.name ?? '',
    h.count, percent(h.share), time(h.total), time(h.min), time(Math.round(h.avg)), time(h.max), h.max_nesting,
    h.uncertain])));
  $('top-tasks').tBodies[0].replaceChildren(...top.tasks.map((t) => row([t.task ?? '', t.name ?? `task ${t.task}`,
    percent(t.share), time(t.time), t.uncertain_time ? time(t.uncertain_time) : ''])));
}
