// The soak driver for scripts/bench/soak-serve.sh: 20 WebSocket clients that join and leave
// at random for DURATION seconds against a running trace-serve, while RSS and open
// descriptors of the server are sampled every SAMPLE seconds. At the end the input stops:
// every client still there checks the closing Stats (received + dropped = offered, exactly).
// Prints one JSON line of figures. Usage: node soak-serve.mjs URL PID DURATION_S SAMPLE_S
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(path.join(path.dirname(fileURLToPath(import.meta.url)), '../../tests/serve/package.json'));
const WebSocket = require('ws');
const [url, pid, durationS, sampleS] = [process.argv[2], Number(process.argv[3]), Number(process.argv[4]), Number(process.argv[5])];
const CLIENTS = 20;

function status(field) {
  const text = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(new RegExp(`${field}:\\s+(\\d+)`).exec(text)[1]);
}
const fds = () => fs.readdirSync(`/proc/${pid}/fd`).length;

class Viewer {
  constructor() {
    this.received = 0;
    this.final = null;
    this.ws = new WebSocket(url);
    this.closed = new Promise((resolve) => this.ws.on('close', resolve));
    this.ws.on('error', () => {});
    this.ws.on('message', (data) => {
      const m = JSON.parse(String(data));
      if (m.type === 'Hello') this.ws.send(JSON.stringify({ type: 'Connect', data: { probe_selector: null, chip: null, token: null } }));
      if (m.type === 'Status' && m.data.connected && !this.started) {
        this.started = true;
        this.ws.send(JSON.stringify({ type: 'Start', data: { allow_mask: 0xFFFFFFFF, baud_rate: null } }));
      }
      if (m.type === 'Event') this.received++;
      if (m.type === 'Stats' && m.data.final) this.final = m.data;
    });
  }
  leave() { this.ws.close(); return this.closed; }
}

const viewers = Array.from({ length: CLIENTS }, () => new Viewer());
const samples = [];
let joins = CLIENTS;
let leaves = 0;
const started = Date.now();
const sampler = setInterval(() => samples.push({ t: (Date.now() - started) / 1000, rss_kb: status('VmRSS'), fds: fds() }), sampleS * 1000);
const churn = setInterval(async () => {
  const index = Math.floor(Math.random() * CLIENTS);
  const leaving = viewers[index];
  viewers[index] = new Viewer();
  joins++;
  leaves++;
  await leaving.leave();
}, 500);
await new Promise((resolve) => setTimeout(resolve, durationS * 1000));
clearInterval(churn);
clearInterval(sampler);
samples.push({ t: (Date.now() - started) / 1000, rss_kb: status('VmRSS'), fds: fds() });
process.stdout.write('READY_TO_END\n');
// The shell script ends the input now; every remaining client gets its closing Stats.
const deadline = Date.now() + 120000;
while (viewers.some((v) => !v.final) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
const exact = viewers.filter((v) => v.final && v.received + v.final.dropped_total === v.final.offered_total).length;
const warm = samples.filter((s) => s.t >= Math.min(60, durationS / 4));
const figures = {
  duration_s: durationS, clients: CLIENTS, joins, leaves,
  rss_mb_first_warm: +(warm[0].rss_kb / 1024).toFixed(1), rss_mb_last: +(samples.at(-1).rss_kb / 1024).toFixed(1),
  rss_mb_max: +(Math.max(...samples.map((s) => s.rss_kb)) / 1024).toFixed(1),
  fds_first: samples[0].fds, fds_last: samples.at(-1).fds, fds_max: Math.max(...samples.map((s) => s.fds)),
  final_stats: viewers.filter((v) => v.final).length, exact_accounting: exact,
  received_total: viewers.reduce((n, v) => n + v.received, 0),
};
console.log(JSON.stringify(figures));
for (const v of viewers) v.ws.terminate();
process.exit(0);
