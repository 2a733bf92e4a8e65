// The Console and Records tabs: virtual lists of the newest lines.
import { $ } from './config.js';
import { CLOCKS, ring, ringSlot, ringText } from './ring.js';
import { state } from './state.js';
import { portLabel } from './names.js';
import { formatHostTime, formatTime } from './time.js';

function highlight(element, text) {
  if (!state.search) { element.append(text); return; }
  const lower = text.toLowerCase();
  let at = 0;
  for (let i = lower.indexOf(state.search); i >= 0; i = lower.indexOf(state.search, at)) {
    element.append(text.slice(at, i));
    const mark = document.createElement('mark');
    mark.textContent = text.slice(i, i + state.search.length);
    element.append(mark);
    at = i + state.search.length;
  }
  element.append(text.slice(at));
}

// A virtual list: only the rows in view are in the document (a fixed row height), so a
// redraw costs the same at any rate; at the bottom it follows the newest line.
const ROW_HEIGHT = 18;

function logLine(r, lineText) {
  const line = document.createElement('div');
  line.className = 'line';
  line.dataset.port = String(r.port);
  const time = document.createElement('span');
  time.className = 'time';
  time.textContent = formatTime(r.timestamp, r.clock);
  const port = document.createElement('span');
  port.className = 'port';
  port.textContent = portLabel(r.port);
  if (r.hostUs !== undefined) {
    // A fleet record (trace-lab): its host time (UTC wall clock) before the target's.
    const host = document.createElement('span');
    host.className = 'host';
    host.textContent = formatHostTime(r.hostUs);
    line.append(host);
    if (state.mark.t !== null && r.timestamp === state.mark.t) line.classList.add('marked');  // the record nearest the mark
  }
  line.append(time, port);
  highlight(line, lineText(r));
  return line;
}

// An arrival number of agg.all as a record for the records view (its text cut from the ring).
export function heldRecord(seq) {
  const at = ringSlot(seq, state.total);
  if (at < 0) return { timestamp: 0, port: 0, clock: null, json: '(no longer held)' };
  return { timestamp: ring.time[at], port: ring.port[at], clock: CLOCKS[ring.clock[at]], json: ringText(at) };
}

// `item`: turns a list entry into the record drawn (the records view keeps arrival numbers).
export function renderLog(box, list, lineText, item = (entry) => entry) {
  const scroller = box.parentElement;
  const following = box.dataset.rows === undefined ||
                    scroller.scrollTop + scroller.clientHeight >= Number(box.dataset.rows) * ROW_HEIGHT - ROW_HEIGHT;
  box.style.height = `${list.length * ROW_HEIGHT}px`;
  box.dataset.rows = String(list.length);
  if (following) scroller.scrollTop = scroller.scrollHeight;
  const first = Math.max(0, Math.floor(scroller.scrollTop / ROW_HEIGHT) - 2);
  const last = Math.min(list.length, first + Math.ceil(scroller.clientHeight / ROW_HEIGHT) + 4);
  const fragment = document.createDocumentFragment();
  for (let i = first; i < last; i++) {
    const line = logLine(item(list[i]), lineText);
    line.style.top = `${i * ROW_HEIGHT}px`;
    fragment.append(line);
  }
  box.replaceChildren(fragment);
}
