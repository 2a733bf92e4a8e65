// The chart tabs drawn over a whole recording (scripts/bench/viewer-charts.sh): for each tab,
// trace-serve fed the records (paced, then the end of input), the viewer with that tab open
// (over the bare DevTools protocol, cdp-page.mjs), "Fit all" where the tab has it, then 30
// draws, each followed by two animation frames.
// Usage: node viewer-charts.mjs TRACE_SERVE RECORDS_FILE [TAB...]
import { spawn } from 'node:child_process';
import fs from 'node:fs';

import { launchBrowser } from './cdp-page.mjs';
import { feed } from '../../tests/serve/lib.mjs';

const [traceServe, recordsFile, ...tabArgs] = process.argv.slice(2);
const tabs = tabArgs.length ? tabArgs : ['timeline', 'load', 'durations', 'flame', 'counters'];
const FEED_PER_SECOND = 200000;  // the viewer's budget rate (the records column: what the page got)
const lines = fs.readFileSync(recordsFile, 'utf8').split('\n').filter((l) => l);
const loadAverage = () => fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

async function startServer() {
  const child = spawn(traceServe, ['--listen', '127.0.0.1:0', '--cpu-hz', '64000000', '--top-interval', '1'],
                      { stdio: ['pipe', 'ignore', 'pipe'] });
  let log = '';
  const port = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`trace-serve did not start: ${log}`)), 30000);
    child.stderr.on('data', (chunk) => {
      log += chunk;
      const match = /serving on http:\/\/[^:]+:(\d+)\//.exec(log);
      if (match) { clearTimeout(timer); resolve(Number(match[1])); }
    });
  });
  return { child, port };
}

// In the page: the open tab drawn 30 times, each time until two frames later.
const MEASURE = `(async () => {
  const draw = [];
  const frame = [];
  for (let i = 0; i < 30; i++) {
    const t0 = performance.now();
    window.tracepipe.render();
    draw.push(performance.now() - t0);
    await new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)));
    frame.push(performance.now() - t0);
  }
  const median = (values) => [...values].sort((a, b) => a - b)[values.length >> 1];
  return { records: window.tracepipe.state.total, drawMedian: median(draw), drawMax: Math.max(...draw),
           frameMedian: median(frame), frameMax: Math.max(...frame) };
})()`;

async function benchTab(browser, tab) {
  const server = await startServer();
  const page = await browser.newPage({ width: 1600, height: 1000 });
  try {
    await page.goto(`http://127.0.0.1:${server.port}/`);
    await page.waitFor("document.getElementById('connection')?.textContent === 'live'", 30000, 'the viewer to go live');
    await page.evaluate(`document.querySelector('#tabs button[data-tab="${tab}"]').click()`);
    await feed(server.child.stdin, lines, FEED_PER_SECOND);
    server.child.stdin.end();
    await page.waitFor('window.tracepipe.state.finalStats !== null', 300000, 'the closing Stats');
    await page.evaluate(`document.getElementById('${tab}-fit')?.click()`);
    return await page.evaluate(MEASURE);
  } finally {
    await page.close();
    server.child.kill('SIGTERM');
  }
}

console.log(`viewer charts: ${lines.length} records; load average ${loadAverage()}`);
const browser = await launchBrowser(process.env.CHROMIUM || '/usr/bin/chromium');
const ms = (x) => `${x.toFixed(1).padStart(6)} ms`;
try {
  console.log('tab         records   draw median  draw max    frame median  frame max   load average after');
  for (const tab of tabs) {
    const r = await benchTab(browser, tab);
    console.log(`${tab.padEnd(11)} ${String(r.records).padEnd(9)} ${ms(r.drawMedian)}   ${ms(r.drawMax)}   ${ms(r.frameMedian)}     ${ms(r.frameMax)}   ${loadAverage()}`);
  }
} finally {
  browser.close();
}
