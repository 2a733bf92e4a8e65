// The live viewer under a live stream (issue 17, item 7): trace-serve fed by the simulated
// target (`swo-capture --simulate --rate R | itm-decode`, paced to about the wanted events
// per second), its own viewer in headless Chromium, and, when ../shared holds it, the
// original Callisto client on the same stream. For each rate: events per second that
// reached the page, what the server dropped for it, the slowest next frame, records held.
// Usage: node viewer-bench.mjs BUILD_DIR SHARED_DIR SECONDS RATE...
import { execSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';

import { launchBrowser } from './cdp-page.mjs';

const [buildDir, shared, secondsArg, ...rateArgs] = process.argv.slice(2);
const seconds = Number(secondsArg);
const rates = rateArgs.map(Number);
const browserPath = process.env.CHROMIUM || '/usr/bin/chromium';
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// Events per simulated SWO byte, measured on this build (the mix depends on the seed).
function eventsPerByte(seed) {
  const bytes = 4000000;
  const lines = Number(execSync(`'${buildDir}/tools/swo-capture' --simulate --seed ${seed} --rate 0 --max-bytes ${bytes} | ` +
                                `'${buildDir}/tools/itm-decode' | wc -l`, { shell: '/bin/bash' }).toString().trim());
  return lines / bytes;
}

// The tab the viewer shows meanwhile (TRACEPIPE_BENCH_TAB: timeline, load, durations, flame,
// ...); the chart tabs draw trace-serve's statistics, so it sends them (--top-interval 1), as
// it does for any tab with TRACEPIPE_BENCH_TOP=1.
const benchTab = process.env.TRACEPIPE_BENCH_TAB || 'timeline';
const statisticsArgs = (process.env.TRACEPIPE_BENCH_TOP === '1' || ['load', 'durations', 'statistics'].includes(benchTab)) ? ' --top-interval 1' : '';

async function startPipeline(rate, seed, perByte, listen) {
  const bytesPerSecond = Math.round(rate / perByte);
  const command = `'${buildDir}/tools/swo-capture' --simulate --seed ${seed} --rate ${bytesPerSecond} | ` +
                  `'${buildDir}/tools/itm-decode' | '${buildDir}/tools/trace-serve' --listen ${listen} --cpu-hz 64000000${statisticsArgs}`;
  const child = spawn('bash', ['-c', command], { stdio: ['ignore', 'ignore', 'pipe'], detached: true });
  let log = '';
  const port = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`trace-serve did not start: ${log}`)), 30000);
    child.stderr.on('data', (chunk) => {
      log += chunk;
      const match = /serving on http:\/\/[^:]+:(\d+)\//.exec(log);
      if (match) { clearTimeout(timer); resolve(Number(match[1])); }
    });
  });
  return { port, stop: () => { try { process.kill(-child.pid, 'SIGTERM'); } catch { /* gone */ } } };
}

// Samples the next frame every 250 ms while `until` is in the future, with the server's drops
// for this page and the machine's runnable threads (/proc/stat procs_running) at that moment:
// where drops came, what the page and the machine were doing then.
function runnable() {
  return Number(/procs_running (\d+)/.exec(fs.readFileSync('/proc/stat', 'utf8'))[1]);
}

async function sampleFrames(page, until) {
  const samples = [];
  const t0 = Date.now();
  while (Date.now() < until) {
    const { took, dropped } = await page.evaluate(
      `new Promise((resolve) => { const t0 = performance.now(); requestAnimationFrame(() => resolve({
         took: performance.now() - t0, dropped: window.tracepipe?.state.stats?.dropped_total ?? 0 })); })`);
    samples.push({ at: (Date.now() - t0) / 1000, took, dropped, runnable: runnable() });
    await sleep(250);  // pace: a sample every 250 ms
  }
  return samples;
}

// The samples around the first of each stretch of drops (the 2 s before it and the first after).
function printDrops(samples) {
  for (let i = 1; i < samples.length; i++) {
    if (samples[i].dropped === samples[i - 1].dropped || (i > 1 && samples[i - 1].dropped !== samples[i - 2].dropped)) continue;
    const around = samples.slice(Math.max(0, i - 8), i + 2);
    console.log(`  drops from ${samples[i - 1].at.toFixed(2)} s: ` + around.map((s) =>
      `${s.at.toFixed(2)} s frame ${s.took.toFixed(0)} ms, ${s.runnable} runnable, ${s.dropped} dropped`).join('; '));
  }
}

// TRACEPIPE_BENCH_TRACE=1: a Chromium trace of the page meanwhile (the DevTools timeline's
// categories; it costs the page a little) and the longest tasks of its main thread are
// listed with the events that took most of them (a script's function, a layout, a GC...):
// where a slow frame's time went.
const tracing = Boolean(process.env.TRACEPIPE_BENCH_TRACE);
const TRACE_CATEGORIES = 'toplevel,devtools.timeline,disabled-by-default-devtools.timeline,v8,v8.execute,blink.user_timing';

async function startTrace(page) {
  const events = [];
  page.on('Tracing.dataCollected', (params) => events.push(...params.value));
  const done = new Promise((resolve) => page.on('Tracing.tracingComplete', resolve));
  await page.send('Tracing.start', { categories: TRACE_CATEGORIES, transferMode: 'ReportEvents' });
  return async () => { await page.send('Tracing.end'); await done; return events; };
}

function eventName(e) {
  const data = e.args?.data ?? {};
  const where = data.functionName || data.url ? ` ${data.functionName ?? ''}${data.url ? ` ${path.basename(data.url)}:${data.lineNumber ?? ''}` : ''}` : '';
  return `${e.name}${data.type ? ` ${data.type}` : ''}${where}`;
}

// The main thread's longest tasks, each with the longest events inside it.
function printLongTasks(events) {
  const main = events.find((e) => e.ph === 'M' && e.name === 'thread_name' && e.args?.name === 'CrRendererMain');
  const onMain = events.filter((e) => e.ph === 'X' && main && e.pid === main.pid && e.tid === main.tid);
  const tasks = onMain.filter((e) => e.name === 'RunTask' || e.name === 'ThreadControllerImpl::RunTask').sort((a, b) => b.dur - a.dur);
  const onMainAll = events.filter((e) => main && e.pid === main.pid && e.tid === main.tid);
  for (const task of tasks.slice(0, 5)) {
    const marks = onMainAll.filter((e) => e.cat?.includes('user_timing') && e.ts >= task.ts && e.ts <= task.ts + task.dur);
    if (marks.length) console.log(`    user timing: ${marks.map((e) => `${e.name} ${e.ph} ${((e.ts - task.ts) / 1000).toFixed(1)}`).join(' | ')}`);
    const inside = onMain.filter((e) => e !== task && e.ts >= task.ts && e.ts + e.dur <= task.ts + task.dur && e.dur >= 1000)
      .sort((a, b) => b.dur - a.dur).slice(0, 10);
    console.log(`  task ${(task.dur / 1000).toFixed(1)} ms: ${inside.map((e) => `${eventName(e)} ${(e.dur / 1000).toFixed(1)}`).join(' | ')}`);
  }
}

async function benchViewer(browser, rate, perByte) {
  const pipeline = await startPipeline(rate, 7, perByte, '127.0.0.1:0');
  const page = await browser.newPage({ width: 1600, height: 1000 });
  try {
    await page.goto(`http://127.0.0.1:${pipeline.port}/`);
    await page.waitFor("document.getElementById('connection')?.textContent === 'live'", 30000, 'the viewer to go live');
    await page.evaluate(`document.querySelector('#tabs button[data-tab="${benchTab}"]').click()`);
    await page.waitFor('window.tracepipe.state.stats !== null', 30000, 'the first Stats');
    await sleep(2000);  // past the start
    const read = () => page.evaluate(`({
      total: window.tracepipe.state.total, held: window.tracepipe.state.count,
      offered: window.tracepipe.state.stats?.offered_total ?? 0, dropped: window.tracepipe.state.stats?.dropped_total ?? 0,
      batched: window.tracepipe.state.batched })`);
    const before = await read();
    const endTrace = tracing ? await startTrace(page) : null;
    const t0 = Date.now();
    const samples = await sampleFrames(page, t0 + seconds * 1000);
    const slowest = Math.max(0, ...samples.map((s) => s.took));
    const after = await read();
    if (after.dropped > before.dropped) printDrops(samples);
    // The open tab drawn 10 times in a row, synchronously: its drawing's own cost, apart
    // from the records' arrival and the compositor (the slowest of the 10).
    const render = await page.evaluate(`(() => { let slowest = 0; for (let i = 0; i < 10; i++) {
      const t0 = performance.now(); window.tracepipe.render(); slowest = Math.max(slowest, performance.now() - t0); } return slowest; })()`);
    if (endTrace) printLongTasks(await endTrace());
    const elapsed = (Date.now() - t0) / 1000;
    return { rate: (after.total - before.total) / elapsed, offered: (after.offered - before.offered) / elapsed,
             dropped: after.dropped - before.dropped, slowest, render, held: after.held, batched: after.batched };
  } finally {
    await page.close();
    pipeline.stop();
    await sleep(500);
  }
}

// The original Callisto client (its own build), on the same stream; it has :9229 built in.
// TRACEPIPE_BENCH_CALLISTO=0: not run (a chart tab's figures need only ours).
async function benchCallisto(browser, rate, perByte) {
  const dist = path.join(shared, 'reference/callisto-client/dist');
  if (!fs.existsSync(path.join(dist, 'index.html')) || process.env.TRACEPIPE_BENCH_CALLISTO === '0') return null;
  const pages = http.createServer((request, response) => {
    const wanted = new URL(request.url, 'http://x').pathname;
    const file = path.join(dist, wanted === '/' ? 'index.html' : wanted);
    if (!file.startsWith(dist) || !fs.existsSync(file) || fs.statSync(file).isDirectory()) { response.writeHead(404).end(); return; }
    response.writeHead(200, { 'Content-Type': file.endsWith('.js') ? 'text/javascript' : file.endsWith('.css') ? 'text/css' : 'text/html' });
    response.end(fs.readFileSync(file));
  });
  await new Promise((resolve) => pages.listen(0, '127.0.0.1', resolve));
  const pipeline = await startPipeline(rate, 7, perByte, '127.0.0.1:9229');
  const page = await browser.newPage({ width: 1600, height: 1000 });
  // Only window.electronAPI is stubbed (as ../shared/reference/callisto-client/README.md
  // says); the page's WebSocket counts the Event messages it receives.
  await page.addInitScript(`
    window.electronAPI = {
      getAvailableDevices: async () => ({ success: true, devices: [{ id: 'mock', name: 'Mock Device', type: 'mock' }] }),
      restartServerWithDevice: async () => ({ success: true, message: 'external server' }),
      getServerStatus: async () => ({ running: true }), restartServer: async () => ({ success: true }),
      showSaveDialog: async () => ({ canceled: true }), showOpenDialog: async () => ({ canceled: true, filePaths: [] }),
      platform: 'linux', versions: {},
    };
    window.benchEvents = 0;
    const NativeWebSocket = window.WebSocket;
    window.WebSocket = class extends NativeWebSocket {
      constructor(...args) {
        super(...args);
        this.addEventListener('message', (event) => {
          if (typeof event.data === 'string' && event.data.startsWith('{"type":"Event"')) window.benchEvents++;
        });
      }
    };
    // Clicks the innermost element (matching selector) whose text contains / equals text.
    window.benchClick = (text, selector = '*', exact = false) => {
      const matches = [...document.querySelectorAll(selector)].filter((element) => {
        const own = element.textContent.trim();
        return exact ? own === text : own.includes(text);
      });
      const innermost = matches.filter((element) => !matches.some((other) => other !== element && element.contains(other)));
      if (innermost.length) innermost[0].click();
      return innermost.length > 0;
    };
  `);
  const click = async (text, selector, exact) => {
    await page.waitFor(`window.benchClick(${JSON.stringify(text)}, ${JSON.stringify(selector ?? '*')}, ${Boolean(exact)})`, 30000, text);
  };
  try {
    await page.goto(`http://127.0.0.1:${pages.address().port}/`);
    await click('Mock Device - Simulated data');
    await click('Connect', '.btn.btn-primary', true);
    await click('🟢 Connect');
    await page.waitFor("document.querySelectorAll('.event-item').length > 0", 30000, 'events in the list');
    await sleep(2000);
    const before = await page.evaluate('window.benchEvents');
    const t0 = Date.now();
    const slowest = Math.max(0, ...(await sampleFrames(page, t0 + seconds * 1000)).map((s) => s.took));
    const events = await page.evaluate('window.benchEvents');
    return { rate: (events - before) / ((Date.now() - t0) / 1000), slowest };
  } finally {
    await page.close();
    pipeline.stop();
    pages.close();
    await sleep(500);
  }
}

const perByte = eventsPerByte(7);
console.log(`viewer benchmark: ${seconds} s per rate, ${(perByte * 1000).toFixed(1)} events per simulated kB`);
const browser = await launchBrowser(browserPath);
const k = (x) => `${(x / 1000).toFixed(1)}k`;
try {
  console.log(`tab: ${benchTab}; load average before: ${fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`);
  console.log('target/s   offered/s  taken/s   dropped   slowest frame  render  held      | Callisto client: taken/s  slowest frame  ratio');
  for (const rate of rates) {
    const ours = await benchViewer(browser, rate, perByte);
    const theirs = await benchCallisto(browser, rate, perByte);
    const line = `${k(rate).padEnd(10)} ${k(ours.offered).padEnd(10)} ${k(ours.rate).padEnd(9)} ${String(ours.dropped).padEnd(9)} ` +
                 `${ours.slowest.toFixed(0).padStart(5)} ms       ${ours.render.toFixed(1).padStart(4)} ms ${String(ours.held).padEnd(9)}` +
                 (ours.batched ? '' : ' (not batched!)') +
                 (theirs ? `| ${k(theirs.rate).padEnd(24)} ${theirs.slowest.toFixed(0).padStart(5)} ms       ${(ours.rate / Math.max(1, theirs.rate)).toFixed(1)}x`
                         : '| (Callisto client not run)');
    console.log(`${line} (load average after: ${fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')})`);
  }
} finally {
  await browser.close();
}
