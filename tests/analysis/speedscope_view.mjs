// trace-timeline's output opened in a real viewer (issue 21, item 3): speedscope, the npm
// package's built app served from here, in Debian's Chromium (playwright-core). The file must
// load without an error on the page; the profile list speedscope shows is read back: one
// profile per track that has slices, named by the track's thread_name, and each task's total
// time as speedscope adds it up equal to trace-top's for the same stream (within 0.1% and the
// display's rounding). A screenshot of the timeline goes to the artifacts directory.
//
// Usage: node speedscope_view.mjs BUILD_DIR ARTIFACTS_DIR   (fails without Chromium or speedscope)
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const [buildDir, artifacts] = process.argv.slice(2);
const browserPath = process.env.CHROMIUM || '/usr/bin/chromium';
const app = path.join(here, 'node_modules/speedscope/dist/release');
const CPU_HZ = 64000000;
let passed = 0;
let failed = 0;
function check(ok, what, detail = '') {
  if (ok) passed += 1;
  else {
    failed += 1;
    console.log(`FAIL ${what}${detail === '' ? '' : `: ${String(detail).slice(0, 2000)}`}`);
  }
}
if (!fs.existsSync(browserPath) || !fs.existsSync(app)) {
  console.log(`FAIL missing ${fs.existsSync(browserPath) ? 'speedscope (tests/analysis/node_modules)' : `chromium (${browserPath})`}: run scripts/install-deps`);
  process.exit(1);
}
const { chromium } = await import('playwright-core');

const tool = (name) => path.join(buildDir, 'tools', name);
const capture = execFileSync(tool('swo-capture'), ['--simulate', '--seed', '11', '--rate', '0', '--max-bytes', '600000']);
const records = execFileSync(tool('itm-decode'), [], { input: capture, maxBuffer: 1 << 28 });
const traceJson = execFileSync(tool('trace-timeline'), ['--cpu-hz', String(CPU_HZ)], { input: records, maxBuffer: 1 << 28 });
const top = execFileSync(tool('trace-top'), ['--once', '--format', 'ndjson'], { input: records }).toString();
fs.mkdirSync(artifacts, { recursive: true });
fs.writeFileSync(path.join(artifacts, 'timeline.json'), traceJson);

// What speedscope should list: tracks with slices, by tid, named as its importer names them.
const events = JSON.parse(traceJson.toString()).traceEvents;
const threadNames = new Map(events.filter((e) => e.ph === 'M' && e.name === 'thread_name').map((e) => [e.tid, e.args.name]));
const sliced = [...new Set(events.filter((e) => e.ph === 'B').map((e) => e.tid))].sort((a, b) => a - b);
const expectedNames = sliced.map((tid) => `target (pid 1), ${threadNames.get(tid)} (tid ${tid})`);

const types = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css', '.json': 'application/json',
  '.wasm': 'application/wasm', '.png': 'image/png', '.woff2': 'font/woff2' };
const server = http.createServer((req, res) => {
  const url = decodeURIComponent(new URL(req.url, 'http://x').pathname);
  const file = url === '/timeline.json' ? path.join(artifacts, 'timeline.json') : path.join(app, url === '/' ? 'index.html' : url);
  if (!file.startsWith(app) && !file.startsWith(artifacts)) return res.writeHead(403).end();
  if (!fs.existsSync(file)) return res.writeHead(404).end();
  res.writeHead(200, { 'Content-Type': types[path.extname(file)] || 'application/octet-stream' });
  fs.createReadStream(file).pipe(res);
});
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const base = `http://127.0.0.1:${server.address().port}`;

// "27.59ms", "415.84µs", "1.02s": speedscope's formatted weights, in microseconds.
function microseconds(text) {
  const m = /^([\d.]+)\s*(µs|ms|s)$/.exec(text.trim());
  if (!m) return NaN;
  return Number(m[1]) * { 'µs': 1, ms: 1e3, s: 1e6 }[m[2]];
}

const browser = await chromium.launch({ executablePath: browserPath, args: ['--headless', '--no-sandbox', '--disable-gpu'] });
try {
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  const errors = [];
  page.on('pageerror', (error) => errors.push(String(error)));
  page.on('console', (message) => { if (message.type() === 'error') errors.push(message.text()); });
  await page.goto(`${base}/#profileURL=${encodeURIComponent(`${base}/timeline.json`)}`);
  const counter = `(1/${expectedNames.length})`;
  await page.getByText(counter).waitFor({ timeout: 60000 });
  await page.screenshot({ path: path.join(artifacts, 'timeline-speedscope.png') });
  check(errors.length === 0, 'speedscope loads the timeline without an error', errors.join('\n'));
  const body = await page.evaluate(() => document.body.innerText);
  check(!/Something went wrong|Unrecognized format|Failed to/i.test(body), 'speedscope shows no import failure', body.slice(0, 300));

  // The profile list (opened from the title): rows of number, name and total weight.
  await page.getByText(counter).click();
  await page.getByText(expectedNames[expectedNames.length - 1]).waitFor({ timeout: 20000 });
  const rows = await page.evaluate(() => document.body.innerText.split('\n')
    .map((line) => /^\d+\t(target \(pid 1\).*)\t(.+)$/.exec(line))
    .filter((m) => m)
    .map((m) => [m[1], m[2]]));
  await page.screenshot({ path: path.join(artifacts, 'timeline-speedscope-profiles.png') });
  const shown = rows.map(([name]) => name);
  check(JSON.stringify(shown) === JSON.stringify(expectedNames), 'speedscope lists one profile per track, by its name',
    `${JSON.stringify(shown)}\nexpected ${JSON.stringify(expectedNames)}`);

  const weights = new Map(rows.map(([name, weight]) => [name, microseconds(weight)]));
  const tasks = top.split('\n').filter((l) => l).map((l) => JSON.parse(l).event).filter((e) => e.kind === 'TopTask');
  check(tasks.length >= 3, 'the stream has tasks and idle', JSON.stringify(tasks));
  for (const { data } of tasks) {
    const label = data.task === null ? data.name : (data.name || `task ${data.task}`);
    const tid = [...threadNames].find(([, name]) => name === label)?.[0];
    const shownUs = weights.get(`target (pid 1), ${label} (tid ${tid})`);
    const expectedUs = (data.time * 1e6) / CPU_HZ;
    // speedscope shows four significant digits: its rounding and 0.1% both allowed.
    const allowed = expectedUs * 0.001 + 0.5 * 10 ** (Math.floor(Math.log10(expectedUs)) - 3);
    check(Math.abs(shownUs - expectedUs) <= allowed, `${label}: speedscope's total time is trace-top's`,
      `${shownUs} us shown, ${expectedUs} us by trace-top`);
  }
  // The picture for the README: the first task's track.
  const firstTask = expectedNames.find((name) => name.includes(', task '));
  if (firstTask) {
    await page.getByText(firstTask, { exact: true }).click();
    await page.getByText(firstTask).first().waitFor({ timeout: 20000 });
    // Two animation frames: the flame chart's canvas has been painted since the click.
    await page.evaluate(() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done))));
    await page.screenshot({ path: path.join(artifacts, 'timeline-speedscope-task.png') });
  }
} finally {
  await browser.close();
  server.close();
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
