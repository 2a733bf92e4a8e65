// The board-to-browser latency of the fleet benchmark: a Callisto WebSocket client of
// trace-serve that takes Event messages until none came for 3 s (a Callisto client gets the
// Callisto kinds only) and prints the p50/p99/max of (receive time - the record's host_us),
// host_us being when trace-ship read the record on the rack host.
// Usage: node fleet-latency.mjs PORT   (run from tests/serve, for its ws package)
import { createRequire } from 'node:module';
import path from 'node:path';

const require = createRequire(path.join(process.cwd(), 'package.json'));
const WebSocket = require('ws');
const port = Number(process.argv[2]);
let quiet = null;
const ws = new WebSocket(`ws://127.0.0.1:${port}/ws`);
const latencies = [];
ws.on('message', (data) => {
  const m = JSON.parse(data);
  if (m.type === 'Hello') ws.send(JSON.stringify({ type: 'Connect', data: { probe_selector: null, chip: null, token: null } }));
  if (m.type === 'Status' && m.data.connected) ws.send(JSON.stringify({ type: 'Start', data: { allow_mask: 0xFFFFFFFF, baud_rate: 2000000 } }));
  if (m.type !== 'Event' || m.data.host_us === undefined) return;
  const nowUs = (performance.timeOrigin + performance.now()) * 1000;
  latencies.push((nowUs - m.data.host_us) / 1000);
  clearTimeout(quiet);
  quiet = setTimeout(report, 3000);  // deadline: the board stopped; nothing more will come
});

function report() {
  latencies.sort((a, b) => a - b);
  const at = (q) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))].toFixed(1);
  console.log(`p50 ${at(0.5)} ms, p99 ${at(0.99)} ms, max ${at(1)} ms over ${latencies.length} records`);
  process.exit(0);
}
