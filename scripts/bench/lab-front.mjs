// trace-lab's viewers for scripts/bench/lab-front.py: WebSocket clients taking the batched
// subprotocol (tracepipe.batch) as the viewer does (lib/serve/viewer/main.js): Connect,
// SetFilter with every kind, Start, then each message JSON.parse'd whole.
//   node lab-front.mjs range URL
//     counts a stored view's records until its final Stats; prints one JSON line: records,
//     seconds from the socket's open, the seqs' count/sum/min/max and whether they rose by one.
//   node lab-front.mjs live URL MARKER
//     prints {"open":ms} when the socket opens, then {"marker":ms,"first":ms} at the first
//     record whose line holds MARKER (first: the first record of any kind), and ends.
//   node lab-front.mjs many SECONDS URL[#stall] ...
//     one viewer per URL for SECONDS (a #stall one stops reading after its first message);
//     prints {"records":[per viewer],"errors":[...]}.
import WebSocket from '../../tests/serve/node_modules/ws/index.js';

const BATCH_PROTOCOL = 'tracepipe.batch';

function viewer(url, onRecord, onFinal, onOpen) {
  const ws = new WebSocket(url, [BATCH_PROTOCOL], { headers: { Origin: new URL(url.replace(/^ws/, 'http')).origin } });
  ws.on('open', () => onOpen && onOpen(ws));
  ws.on('unexpected-response', (request, response) => {
    process.stderr.write(`refused ${response.statusCode} ${url}\n`);
    process.exit(3);
  });
  ws.on('error', (e) => { process.stderr.write(`error ${e} ${url}\n`); process.exit(4); });
  ws.on('close', (code, reason) => { process.stderr.write(`closed ${code} ${reason} ${url}\n`); process.exit(5); });
  ws.on('message', (data) => {
    const text = String(data);
    const message = JSON.parse(text);
    if (message.type === 'Hello') ws.send(JSON.stringify({ type: 'Connect', data: { probe_selector: null, chip: null, token: null } }));
    if (message.type === 'Status' && message.data.connected) {
      ws.send(JSON.stringify({ type: 'SetFilter', data: { port_mask: null, event_types: ['*'] } }));
      ws.send(JSON.stringify({ type: 'Start', data: { allow_mask: 0xFFFFFFFF, baud_rate: 2000000 } }));
    }
    if (message.type === 'Error') process.stderr.write(`Error message ${JSON.stringify(message.data)}\n`);
    // trace-top's snapshots (kinds Top*) the view's pump adds are not the range's records.
    const take = (record) => { if (!/^Top[A-Z]/.test(record.event?.kind ?? '')) onRecord(record, ws); };
    if (message.type === 'Events') for (const record of message.data) take(record);
    if (message.type === 'Event') take(message.data);
    if (message.type === 'Stats' && message.data.final && onFinal) onFinal(ws);
  });
  return ws;
}

function range(url) {
  let opened = 0;
  const seqs = { count: 0, sum: 0, min: Infinity, max: -Infinity, rising: true, last: null, runs: new Set(), boards: new Set() };
  viewer(url, (record) => {
    seqs.count++;
    seqs.sum += record.seq;
    seqs.min = Math.min(seqs.min, record.seq);
    seqs.max = Math.max(seqs.max, record.seq);
    if (seqs.last !== null && record.seq !== seqs.last + 1) seqs.rising = false;
    seqs.last = record.seq;
    seqs.runs.add(record.run);
    seqs.boards.add(record.board);
  }, (ws) => {
    const seconds = (performance.now() - opened) / 1000;
    ws.terminate();
    const { count, sum, min, max, rising } = seqs;
    console.log(JSON.stringify({ records: count, seconds, sum, min, max, rising, runs: [...seqs.runs], boards: [...seqs.boards] }));
    process.exit(0);
  }, () => { opened = performance.now(); });
}

function live(url, marker) {
  let first = null;
  viewer(url, (record, ws) => {
    if (first === null) first = Date.now();
    if (JSON.stringify(record).includes(marker)) {
      console.log(JSON.stringify({ marker: Date.now(), first }));
      ws.terminate();
      process.exit(0);
    }
  }, null, () => console.log(JSON.stringify({ open: Date.now() })));
}

function many(seconds, urls) {
  const records = urls.map(() => 0);
  urls.forEach((spec, i) => {
    const stall = spec.endsWith('#stall');
    viewer(stall ? spec.slice(0, -'#stall'.length) : spec, (record, ws) => {
      records[i]++;
      if (stall && !ws._socket.isPaused()) ws._socket.pause();
    });
  });
  setTimeout(() => {  // deadline: the caller's
    console.log(JSON.stringify({ records }));
    process.exit(0);
  }, seconds * 1000);
}

const [mode, ...rest] = process.argv.slice(2);
if (mode === 'range') range(rest[0]);
else if (mode === 'live') live(rest[0], rest[1]);
else if (mode === 'many') many(Number(rest[0]), rest.slice(1));
else {
  process.stderr.write('usage: lab-front.mjs range URL | live URL MARKER | many SECONDS URL[#stall]...\n');
  process.exit(2);
}
