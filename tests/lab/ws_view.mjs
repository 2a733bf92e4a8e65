// A viewer of a trace-lab view over WebSocket (the `ws` package, as tests/serve): Connect,
// SetFilter with every kind, Start; prints each record line exactly as it came (cut out of
// its Event message) to stdout (trace-top's snapshots the view's pump adds, kinds Top*, are
// counted in the summary's `snapshots`, not printed), and ends at the final Stats of a stored view (or --records N
// records, or --seconds S), then a JSON summary on stderr.
// Usage: node ws_view.mjs WS_URL [--records N] [--seconds S] [--until TEXT] [--stall-after N]
//   --until TEXT: end after the first record whose line contains TEXT.
//   --stall-after N: stop reading the socket after N records (a viewer that stops reading)
//   and stay connected until killed.
import WebSocket from '../serve/node_modules/ws/index.js';

const [url, ...rest] = process.argv.slice(2);
const option = (name) => {
  const at = rest.indexOf(name);
  return at >= 0 ? Number(rest[at + 1]) : null;
};
const wantRecords = option('--records');
const seconds = option('--seconds');
const stallAfter = option('--stall-after');
const until = rest.includes('--until') ? rest[rest.indexOf('--until') + 1] : null;
const out = [];
let records = 0;
let snapshots = 0;
let errors = [];
let ended = false;
let closed = null;

const ws = new WebSocket(url, { headers: { Origin: new URL(url.replace(/^ws/, 'http')).origin } });
const finish = (why) => {
  if (ended) return;
  ended = true;
  ws.terminate();
  process.stderr.write(JSON.stringify({ why, records, snapshots, errors, closed }) + '\n');
  // Exits once stdout has taken everything (a pipe takes it in pieces).
  process.stdout.write(out.join(''), () => process.exit(0));
};
ws.on('unexpected-response', (request, response) => {
  let body = '';
  response.on('data', (chunk) => { body += chunk; });
  response.on('end', () => {
    process.stderr.write(JSON.stringify({ why: 'refused', status: response.statusCode, body }) + '\n');
    process.exit(3);
  });
});
// The server's close (a view it refused): its code and reason in the summary.
ws.on('close', (code, reason) => { closed = { code, reason: String(reason) }; finish('closed'); });
ws.on('error', (e) => { process.stderr.write(JSON.stringify({ why: 'error', error: String(e) }) + '\n'); process.exit(4); });
ws.on('message', (data) => {
  const text = String(data);
  const message = JSON.parse(text);
  if (message.type === 'Hello') ws.send(JSON.stringify({ type: 'Connect', data: { probe_selector: null, chip: null, token: null } }));
  if (message.type === 'Status' && message.data.connected) {
    ws.send(JSON.stringify({ type: 'SetFilter', data: { port_mask: null, event_types: ['*'] } }));
    ws.send(JSON.stringify({ type: 'Start', data: { allow_mask: 0xFFFFFFFF, baud_rate: 2000000 } }));
  }
  if (message.type === 'Error') errors.push(message.data);
  if (message.type === 'Event' && /^Top[A-Z]/.test(message.data.event?.kind ?? '')) snapshots++;
  else if (message.type === 'Event') {
    out.push(text.slice('{"type":"Event","data":'.length, -1) + '\n');
    records++;
    if (stallAfter !== null && records === stallAfter) {
      ws._socket.pause();
      setInterval(() => {}, 1000);  // pace: a paused socket does not keep node alive; this does, until killed
    }
    if (wantRecords !== null && records >= wantRecords) finish('records');
    if (until !== null && text.includes(until)) finish('until');
  }
  if (message.type === 'Stats' && message.data.final) finish('final');
});
if (seconds !== null) setTimeout(() => finish('seconds'), seconds * 1000);  // deadline: the caller's
