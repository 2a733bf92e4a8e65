// The web viewer in a real browser: headless Debian Chromium driven by playwright-core
// loads the page from trace-serve, is fed a known stream, and the test checks the console
// text, the timeline's task bars, the counter plot's points, the exception and PC views,
// the port/kind filters, search, pause and export (records, and the canvases as PNG); it
// saves a screenshot.
// Usage: node test_browser.mjs PROJECT_ROOT BUILD_DIR ARTIFACT_DIR
import { chromium } from 'playwright-core';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { check, finish, startServer, generateRecords, feed, sleep, waitInPage, DEADLINE_MS } from './lib.mjs';

const [, buildDir, artifacts] = process.argv.slice(2);
const browserPath = process.env.CHROMIUM || '/usr/bin/chromium';
if (!fs.existsSync(browserPath)) {
  console.log(`FAIL missing chromium (${browserPath}): run scripts/install-deps`);
  process.exit(1);
}
fs.mkdirSync(artifacts, { recursive: true });

const known = [
  { timestamp: 100, port: 0, event: { kind: 'Text', data: { message: 'boot: tracepipe viewer test' } }, source: 'itm', clock: 'cycles' },
  { timestamp: 150, port: 4, event: { kind: 'Text', data: { message: 'user port four says hi: gr\u00fc\u00dfe \u{1F600}' } }, source: 'itm', clock: 'cycles' },
  { timestamp: 200, port: 1, event: { kind: 'TaskSwitch', data: { from_task: 0, to_task: 1 } }, source: 'itm', clock: 'cycles' },
  { timestamp: 300, port: 1, event: { kind: 'IsrEnter', data: { isr_id: 10, name: 'TIM1_IRQHandler' } }, source: 'itm', clock: 'cycles' },
  { timestamp: 340, port: 1, event: { kind: 'IsrExit', data: { isr_id: 10 } }, source: 'itm', clock: 'cycles' },
  { timestamp: 400, port: 1, event: { kind: 'TaskSwitch', data: { from_task: 1, to_task: 2 } }, source: 'itm', clock: 'cycles' },
  { timestamp: 500, port: 1, event: { kind: 'IdleEnter' }, source: 'itm', clock: 'cycles' },
  { timestamp: 600, port: 1, event: { kind: 'IdleExit' }, source: 'itm', clock: 'cycles' },
  { timestamp: 650, port: 2, event: { kind: 'Marker', data: { id: 7, name: 'checkpoint' } }, source: 'itm', clock: 'cycles' },
  { timestamp: 700, port: 1, event: { kind: 'TaskSwitch', data: { from_task: 2, to_task: 1 } }, source: 'itm', clock: 'cycles' },
  { timestamp: 710, port: 0, event: { kind: 'Exception', data: { number: 15, name: 'SysTick', action: 'enter', handler: 'SysTick_Handler' } }, source: 'dwt', clock: 'cycles' },
  { timestamp: 720, port: 0, event: { kind: 'PcSample', data: { pc: 134218000, sleep: false } }, source: 'dwt', clock: 'cycles' },
  { timestamp: 725, port: 0, event: { kind: 'PcSample', data: { pc: 134218200, sleep: false, function: 'sensor_read' } }, source: 'dwt', clock: 'cycles' },
];
for (let i = 0; i < 50; i++) {
  known.push({ timestamp: 800 + i * 10, port: 3, event: { kind: 'Counter', data: { counter_id: 1, value: i * i } }, source: 'itm', clock: 'cycles' });
}
const knownLines = known.map((r) => JSON.stringify(r));

// The first pixel of a PNG as "R,G,B,A": the first row's first pixel is stored as is, whatever
// the row's filter (its left and upper neighbours count as 0).
function firstPngPixel(png) {
  const data = [];
  for (let at = 8; at < png.length; at += 12 + png.readUInt32BE(at)) {
    if (png.toString('ascii', at + 4, at + 8) === 'IDAT') data.push(png.subarray(at + 8, at + 8 + png.readUInt32BE(at)));
  }
  const colourType = png[25];  // 6: RGBA, 2: RGB (opaque); 8 bits a channel
  const rows = zlib.inflateSync(Buffer.concat(data));
  return [...rows.subarray(1, colourType === 6 ? 5 : 4), ...(colourType === 6 ? [] : [255])].join(',');
}

// A canvas view's Export PNG: a PNG named after it, of the canvas's pixel size, on the page's
// background where nothing is drawn (its top-left corner; #0d1014), opaque.
async function checkPngExport(page, id) {
  const [download] = await Promise.all([page.waitForEvent('download'), page.click(`button[data-png="${id}"]`)]);
  const saved = path.join(artifacts, `viewer-export-${id}.png`);  // for a person to look at
  await download.saveAs(saved);
  const png = fs.readFileSync(saved);
  const size = await page.evaluate((canvasId) => [document.getElementById(canvasId).width, document.getElementById(canvasId).height], id);
  const isPng = png.subarray(0, 8).equals(Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]));
  check(isPng && download.suggestedFilename() === `${id}.png` && png.readUInt32BE(16) === size[0] && png.readUInt32BE(20) === size[1],
        `Export PNG saves the ${id} canvas as ${id}.png at its size (${download.suggestedFilename()}, ` +
        `${isPng ? `${png.readUInt32BE(16)}x${png.readUInt32BE(20)}` : 'not a PNG'}, canvas ${size.join('x')})`);
  const corner = isPng ? firstPngPixel(png) : '';
  check(corner === '13,16,20,255', `the ${id} PNG is on the page's background, opaque (top-left pixel ${corner})`);
}
const generated = generateRecords(buildDir, 3000000, 4).split('\n').filter((l) => l);

const server = await startServer(path.join(buildDir, 'tools/trace-serve'), ['--cpu-hz', '48000000', '--top-interval', '0.2']);
const browser = await chromium.launch({
  executablePath: browserPath,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
         '--disable-component-update', '--disable-sync'],
});
try {
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 }, acceptDownloads: true });
  const pageErrors = [];
  page.on('pageerror', (error) => pageErrors.push(String(error)));
  page.on('console', (message) => { if (message.type() === 'error') pageErrors.push(message.text()); });
  await page.goto(`${server.http}/`);
  const connection = () => document.getElementById('connection').textContent;
  await waitInPage(page, () => document.getElementById('connection').textContent === 'live', null, 'the viewer connects', connection);
  check((await page.textContent('#connection')) === 'live', 'the viewer connects and starts tracing');
  await feed(server.child.stdin, knownLines, 5000);

  const consoleSeen = () => document.getElementById('console').textContent.slice(0, 200);
  await waitInPage(page, () => {
    const text = document.getElementById('console').textContent;
    return text.includes('boot: tracepipe viewer test') && text.includes('user port four says hi');
  }, null, 'the console shows the first lines', consoleSeen);
  const consoleText = await page.textContent('#console');
  check(consoleText.includes('0 Console') && consoleText.includes('user port four says hi'), 'the console shows the text with port names from Meta');

  await page.click('#tabs button[data-tab="timeline"]');
  await page.click('#timeline-fit');
  await waitInPage(page, () => Number(document.getElementById('timeline').dataset.bars) > 0, null, 'the timeline draws',
                   () => document.getElementById('timeline').dataset.bars);
  const bars = Number(await page.getAttribute('#timeline', 'data-bars'));
  check(bars >= 5, `the timeline draws task, ISR and idle bars (${bars})`);
  await page.screenshot({ path: path.join(artifacts, 'viewer-timeline.png') });
  const canvasInk = await page.evaluate(() => {
    const canvas = document.getElementById('timeline');
    const pixels = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
    let coloured = 0;
    for (let i = 0; i < pixels.length; i += 4) if (pixels[i + 2] > 200 && pixels[i] < 120) coloured++;
    return coloured;
  });
  check(canvasInk > 100, `task bars are painted on the canvas (${canvasInk} bar-coloured pixels)`);
  const box = await page.locator('#timeline').boundingBox();
  const fitted = await page.evaluate(() => ({ ...window.tracepipe.state.view }));
  // Fit: from the first task/ISR/idle record to the newest record of any kind (the running
  // task's bar ends at the newest data: the last counter at 1290).
  check(fitted.start === 200 && fitted.end === 1290, `Fit all spans the timeline to the newest data (${fitted.start}..${fitted.end})`);
  await page.mouse.move(box.x + box.width / 2, box.y + 40);
  await page.mouse.wheel(0, -400);
  const zoomed = await page.evaluate(() => window.tracepipe.state.view);
  check(zoomed.follow === false && zoomed.end - zoomed.start < 0.85 * (fitted.end - fitted.start),
        `wheel zooms the timeline (${zoomed.start}..${zoomed.end})`);

  await page.click('#tabs button[data-tab="counters"]');
  await waitInPage(page, () => Number(document.getElementById('counters').dataset.points) > 0, null, 'the counter plot draws',
                   () => document.getElementById('counters').dataset.points);
  const points = Number(await page.getAttribute('#counters', 'data-points'));
  check(points === 50, `the counter plot has a point per Counter record (${points})`);
  check((await page.textContent('#counter-legend')).includes('counter 1: 2401'), 'the legend shows the latest counter value');
  await checkPngExport(page, 'counters');

  await page.click('#tabs button[data-tab="markers"]');
  await waitInPage(page, () => document.querySelector('#markers tbody').textContent.includes('checkpoint'), null, 'the marker list',
                   () => document.querySelector('#markers tbody').textContent);
  const markerRows = await page.locator('#markers tbody tr').allTextContents();
  check(markerRows.length === 1 && markerRows[0].includes('checkpoint') && markerRows[0].includes('7'),
        `the marker list shows the marker with its id (${JSON.stringify(markerRows)})`);
  await page.click('#tabs button[data-tab="exceptions"]');
  await waitInPage(page, () => document.querySelector('#exception-counts tbody').textContent.includes('SysTick'), null,
                   'the exception view', () => document.querySelector('#exception-counts tbody').textContent);
  const exceptionRows = await page.locator('#exception-counts tbody tr').allTextContents();
  check(exceptionRows.length === 1 && exceptionRows[0].includes('SysTick_Handler'),
        `the exception view shows the exception by its handler's name (extended kinds reach the viewer): ${JSON.stringify(exceptionRows)}`);
  await page.click('#tabs button[data-tab="pcsamples"]');
  await waitInPage(page, () => document.querySelector('#pc-top tbody').textContent.includes('0x08000110'), null,
                   'the PC-sample view', () => document.querySelector('#pc-top tbody').textContent);
  const pcRows = await page.locator('#pc-top tbody tr').allTextContents();
  check(pcRows.length === 2 && pcRows.some((r) => r.includes('0x08000110')) && pcRows.some((r) => r.includes('sensor_read')),
        `the PC-sample view shows a sample's function, else its PC: ${JSON.stringify(pcRows)}`);

  // Statistics: trace-top's snapshot (trace-serve --top-interval) of the records above.
  await page.click('#tabs button[data-tab="statistics"]');
  await waitInPage(page, () => document.querySelector('#top-handlers tbody').textContent.includes('TIM1_IRQHandler'), null,
                   'the Statistics tab', () => document.getElementById('tab-statistics').textContent.slice(0, 300));
  const handlerRows = await page.evaluate(() => [...document.querySelectorAll('#top-handlers tbody tr')]
    .map((tr) => [...tr.cells].map((td) => td.textContent).join('|')));
  const taskRows = await page.locator('#top-tasks tbody tr').allTextContents();
  const functionRows = await page.locator('#top-functions tbody tr').allTextContents();
  // From the records: TIM1 ran 300..340 (40 cycles at 48 MHz: 833 ns) once; SysTick entered
  // at 710 with no exit yet: listed, not counted; tasks 1 and 2 and idle (500..600).
  check(handlerRows.length === 2 && handlerRows.some((r) => r.startsWith('isr|10|TIM1_IRQHandler|1|') && r.includes('|833.333 ns|')) &&
        handlerRows.some((r) => r.startsWith('exception|15|SysTick_Handler|0|')),
        `the Statistics tab lists the ISR with its count and the exception not yet ended (${JSON.stringify(handlerRows)})`);
  check(taskRows.length === 3 && taskRows.some((r) => r.includes('idle')), `the Statistics tab lists the tasks and idle (${JSON.stringify(taskRows)})`);
  check(functionRows.some((r) => r.includes('sensor_read')), `the Statistics tab lists the sampled functions (${JSON.stringify(functionRows)})`);
  await page.screenshot({ path: path.join(artifacts, 'viewer-statistics.png') });
  check(await page.evaluate(() => window.tracepipe.state.statisticsRecords > 0), 'statistics records are kept out of the trace');

  // Filters: hide port 4, then the Text kind.
  await page.click('#tabs button[data-tab="console"]');
  await page.uncheck('#port-filters input[data-port="4"]');
  await waitInPage(page, () => !document.getElementById('console').textContent.includes('user port four'), null,
                   'the port filter hides port 4', consoleSeen);
  check((await page.textContent('#console')).includes('boot: tracepipe'), 'the port filter hides port 4 and keeps port 0');
  await page.check('#port-filters input[data-port="4"]');
  await page.fill('#search', 'four says');
  await waitInPage(page, () => !document.getElementById('console').textContent.includes('boot:'), null, 'search filters lines', consoleSeen);
  check((await page.locator('#console mark').count()) === 1, 'search keeps matching lines and highlights the match');
  await page.fill('#search', '');
  // The search applies 150 ms after the last keystroke: the export below must not race it.
  await waitInPage(page, () => window.tracepipe.state.search === '', null, 'the search cleared',
                   () => window.tracepipe.state.search);
  await page.uncheck('#kind-filters input[data-kind="Text"]');
  await waitInPage(page, () => document.querySelectorAll('#console .line').length === 0, null, 'the kind filter hides Text',
                   () => document.querySelectorAll('#console .line').length);
  check((await page.locator('#console .line').count()) === 0, 'the kind filter hides Text records');
  await page.check('#kind-filters input[data-kind="Text"]');

  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#export-ndjson')]);
  const exported = fs.readFileSync(await download.path(), 'utf8').trim().split('\n');
  check(exported.length === knownLines.length && exported.every((line, i) => line === knownLines[i]), `NDJSON export is the records as served (${exported.length})`);
  check(await page.evaluate(() => window.tracepipe.state.scannedBatches) === 0,
        'the records (non-ASCII text too) were cut out of the batched messages by their lengths, never by a scan');
  const [csvDownload] = await Promise.all([page.waitForEvent('download'), page.click('#export-csv')]);
  const csv = fs.readFileSync(await csvDownload.path(), 'utf8').trim().split('\n');
  check(csv[0].startsWith('timestamp,port,kind,message') && csv.length === knownLines.length + 1, 'CSV export has a header and a row per record');

  // Pause freezes the views while records keep arriving; a fast stream stays responsive.
  await page.click('#pause');
  const linesBefore = await page.locator('#console .line').count();
  const totalBefore = await page.evaluate(() => window.tracepipe.state.total);
  await feed(server.child.stdin, [JSON.stringify({ timestamp: 5000, port: 0, event: { kind: 'Text', data: { message: 'while paused' } } })], 1000);
  // Paused, the record still arrives (it is counted): wait for that, then look.
  await waitInPage(page, (n) => window.tracepipe.state.total > n, totalBefore, 'the record sent while paused arrives',
                   () => window.tracepipe.state.total);
  await sleep(300);  // must-not-happen: two of the viewer's 100 ms render intervals, a redraw would show it
  check((await page.locator('#console .line').count()) === linesBefore && !(await page.textContent('#console')).includes('while paused'),
        'pause freezes the console');
  await page.click('#pause');
  await waitInPage(page, () => document.getElementById('console').textContent.includes('while paused'), null,
                   'resume shows the line', consoleSeen);
  check((await page.textContent('#console')).includes('while paused'), 'resume shows what arrived meanwhile');

  // The viewer takes the batched form (an extension a Callisto client never asks for) and,
  // at a live rate, every record with no drop while the page stays responsive. The floor is
  // one a loaded 2-core machine meets; scripts/bench/viewer.sh measures the real figures.
  check(await page.evaluate(() => window.tracepipe.state.batched), 'the viewer negotiated the batched form');
  const floorRate = 40000;
  const floorLines = [...generated, ...generated].slice(0, floorRate * 10);
  const before = await page.evaluate(() => ({ total: window.tracepipe.state.total, dropped: window.tracepipe.state.stats?.dropped_total ?? 0 }));
  let slowestFrame = 0;
  // pace: a frame-latency sample every 250 ms while the records flow
  const frames = setInterval(async () => {
    const took = await page.evaluate(() => new Promise((resolve) => {
      const t0 = performance.now();
      requestAnimationFrame(() => resolve(performance.now() - t0));
    })).catch(() => Number.POSITIVE_INFINITY);  // a page that cannot answer is not responsive
    slowestFrame = Math.max(slowestFrame, took);
  }, 250);
  const floorStart = Date.now();
  await feed(server.child.stdin, floorLines, floorRate);
  await waitInPage(page, (n) => window.tracepipe.state.total >= n, before.total + floorLines.length,
                   'the live-rate records reach the viewer', () => window.tracepipe.state.total);
  clearInterval(frames);
  const floorSeconds = (Date.now() - floorStart) / 1000;
  const after = await page.evaluate(() => ({ total: window.tracepipe.state.total, dropped: window.tracepipe.state.stats?.dropped_total ?? 0 }));
  const rate = (after.total - before.total) / floorSeconds;
  check(after.total - before.total === floorLines.length && after.dropped === before.dropped,
        `${floorLines.length} records at ${floorRate}/s: all reached the viewer, none dropped (${(rate / 1000).toFixed(1)}k/s taken)`);
  check(slowestFrame < 250, `the page stays responsive meanwhile (slowest next frame ${slowestFrame.toFixed(0)} ms)`);

  const started = Date.now();
  await feed(server.child.stdin, generated, 100000);
  const fedSeconds = (Date.now() - started) / 1000;
  const expected = knownLines.length + 1 + floorLines.length + generated.length;
  // The input ends: the server sends each tracing client a closing Stats after the last
  // record it queued for it, with final offered and dropped totals.
  server.child.stdin.end();
  await waitInPage(page, () => window.tracepipe.state.finalStats !== null, null, 'the closing Stats reaches the viewer',
                   () => ({ total: window.tracepipe.state.total, stats: window.tracepipe.state.stats }), 2 * DEADLINE_MS);
  const seen = await page.evaluate(() => ({ total: window.tracepipe.state.total, final: window.tracepipe.state.finalStats }));
  const offered = seen.final?.offered_total;
  const dropped = seen.final?.dropped_total;
  console.log(`viewer: ${seen.total} records received, ${dropped} dropped by the server for it, ${offered} offered, of ${expected}`);
  // Besides the records, the statistics records (--top-interval) the server sent.
  const statistics = await page.evaluate(() => window.tracepipe.state.statisticsRecords);
  check(offered >= expected && offered - expected <= statistics + dropped,
        `the server offered the viewer every record, and its statistics (${offered} == ${expected} + ${offered - expected})`);
  check(seen.total + statistics + dropped === offered,
        `every record reached the viewer or was counted as dropped (${seen.total} + ${statistics} + ${dropped} == ${offered})`);
  const probe = await page.evaluate(async () => {
    const t0 = performance.now();
    await new Promise((resolve) => requestAnimationFrame(() => resolve()));
    return performance.now() - t0;
  });
  check(probe < 500, `the page stays responsive after ${generated.length} records in ${fedSeconds.toFixed(1)} s (next frame in ${probe.toFixed(0)} ms)`);
  await page.click('#tabs button[data-tab="timeline"]');
  await page.dblclick('#timeline');
  await page.evaluate(() => window.tracepipe.render());  // drawn now, not at the next frame
  await page.screenshot({ path: path.join(artifacts, 'viewer-live.png') });
  await checkPngExport(page, 'timeline');
  check(fs.statSync(path.join(artifacts, 'viewer-live.png')).size > 10000, `screenshots saved in ${artifacts}`);
  // Every tab after the stream, for a person to look at; hovering a bar shows its details.
  const timelineBox = await page.locator('#timeline').boundingBox();
  // Down the right edge: the running task's bar reaches the newest data there.
  for (let y = timelineBox.y + 8; y < timelineBox.y + timelineBox.height - 40; y += 10) {
    await page.mouse.move(timelineBox.x + timelineBox.width - 12, y);
    if (await page.isVisible('#timeline-tip')) break;
  }
  const tip = (await page.isVisible('#timeline-tip')) ? await page.textContent('#timeline-tip') : '';
  check(/start .*\nduration /.test(tip), `hovering a timeline bar shows its kind, name, start and duration (${JSON.stringify(tip)})`);
  await page.screenshot({ path: path.join(artifacts, 'viewer-timeline-hover.png') });
  for (const tab of ['console', 'markers', 'counters', 'exceptions', 'pcsamples', 'records']) {
    await page.click(`#tabs button[data-tab="${tab}"]`);
    await page.evaluate(() => window.tracepipe.render());
    await page.screenshot({ path: path.join(artifacts, `viewer-${tab}.png`) });
  }
  const shares = await page.locator('#pc-top tbody tr td:nth-child(3)').allTextContents();
  check(shares.length > 0 && shares.every((s) => /^\d+\.\d\d%$/.test(s)) && shares.some((s) => s !== '0.00%'),
        `PC shares with two decimals (${shares.slice(0, 3).join(', ')})`);
  check(pageErrors.length === 0, `no errors in the page (${pageErrors.slice(0, 3).join(' | ')})`);
} finally {
  await browser.close();
  server.child.kill('SIGTERM');
}
finish();
