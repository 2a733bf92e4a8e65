// The connection: the Callisto protocol over a WebSocket, reconnecting. What arrives goes to
// `sink` (main.js composes it): the ingest's functions (ingest.js) and `portMap()`, called
// when the port map changed.
import { $, BATCH_PROTOCOL } from './config.js';
import { state } from './state.js';
import { socketQuery, storedView } from './view.js';

let socket = null;
let retryMs = 500;
// The server closes with this after an Error that retrying cannot mend (a view it refuses,
// the token): the Error stays shown, and the viewer does not retry.
const POLICY_VIOLATION = 1008;

export function connect(sink) {
  const params = new URLSearchParams(location.search);
  const token = params.get('token');
  const url = `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/ws${socketQuery()}`;
  socket = new WebSocket(url, [BATCH_PROTOCOL]);
  setConnection('connecting…', '');
  state.started = false;
  let opened = false;
  socket.onopen = () => {
    opened = true;
    retryMs = 500;
    state.batched = socket.protocol === BATCH_PROTOCOL;
  };
  socket.onmessage = (event) => onText(event.data, token, sink);
  socket.onclose = (event) => {
    if (event.code === POLICY_VIOLATION) {
      setConnection(`refused: ${event.reason}`, 'bad');
      return;
    }
    if (!opened && params.has('board')) sayWhyRefused();
    setConnection('disconnected: retrying', 'bad');
    setTimeout(() => connect(sink), retryMs);
    retryMs = Math.min(retryMs * 2, 10000);
  };
}

// A browser hides why an upgrade was refused (the token, the origin, too many clients): say
// at least whether the server answers.
function sayWhyRefused() {
  fetch(location.href, { method: 'HEAD', cache: 'no-store' })
    .then((response) => showMessage(response.ok ? 'the server refused the connection (the token? too many clients?)'
      : `the server answers HTTP ${response.status}`, true))
    .catch(() => showMessage('the server does not answer', true));
}

function send(message) {
  if (socket && socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(message));
}

function onText(text, token, sink) {
  const message = JSON.parse(text);
  if (message.type === 'Events') {
    sink.addEventsMessage(message, text);
    return;
  }
  onMessage(message, token, text, sink);
}

function onMessage(message, token, text, sink) {
  switch (message.type) {
    case 'Hello':
      send({ type: 'Connect', data: { probe_selector: null, chip: null, token: token || null } });
      break;
    case 'Status':
      $('target').textContent = [message.data.target, message.data.chip, message.data.probe].filter(Boolean).join(' · ');
      if (message.data.connected && !state.started) {
        state.started = true;
        // Every kind, the extended ones too (Exception, PcSample, ...).
        send({ type: 'SetFilter', data: { port_mask: null, event_types: ['*'] } });
        send({ type: 'Start', data: { allow_mask: 0xFFFFFFFF, baud_rate: null } });
      }
      setConnection(message.data.connected ? (storedView ? 'stored' : 'live') : 'not connected', message.data.connected ? 'ok' : 'bad');
      if (!message.data.connected) state.started = false;
      break;
    case 'Meta':
      state.portNames = {};
      state.portIdNames = {};
      for (const [port, config] of Object.entries(message.data.ports_map || {})) {
        state.portNames[port] = config.name;
        if (config.names) state.portIdNames[port] = config.names;
      }
      state.cpuHz = message.data.cpu_hz || null;
      sink.portMap();
      state.dirty = true;
      break;
    case 'Event':
      sink.addEventMessage(message, text);
      break;
    case 'Itm':
      sink.addFramesLine(message.data);
      break;
    case 'Stats':
      state.stats = message.data;
      // The closing Stats of a stream: its totals are final (what was offered, dropped).
      if (message.data.final) state.finalStats = message.data;
      if (message.data.final && storedView) {
        setConnection('stored: complete', 'ok');  // the range has come whole
        fitStoredRange();
      }
      break;
    case 'Error':
      showMessage(`${message.data.code || 'error'}: ${message.data.message}`, true);
      break;
    default:
      break;
  }
}

// A stored view, once whole, shows all of it (rather than following its newest records), unless
// the user moved the range or a mark (a search hit) centres it.
function fitStoredRange() {
  if (!state.view.follow || state.mark.us !== null || state.oldest === null) return;
  state.view = { start: state.oldest, end: Math.max(state.newest, state.oldest + 1), follow: false };
  state.dirty = true;
}

function setConnection(text, kind) {
  const pill = $('connection');
  pill.textContent = text;
  pill.className = `pill ${kind}`;
}

function showMessage(text, bad) {
  const box = $('messages');
  box.textContent = text;
  box.className = bad ? 'bad' : 'muted';
}
