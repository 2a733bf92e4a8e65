// The viewer's charts in a real browser (headless Debian Chromium, playwright-core) against
// trace-top on the same recording: the simulated target's stream (swo-capture --simulate,
// saved to a file, decoded by itm-decode) goes to trace-top and to trace-serve, and what the
// page's charts hold must equal trace-top's figures (CPU load per task, idle and handler;
// handler durations; the flame graph's folded stacks) or an independent model of the records
// (durations' quantiles and worst case, counters in a range, marker pairs with known
// durations). Zoom sync, hover, click-to-focus and the jump to the worst are driven with the
// mouse. Screenshots in ARTIFACT_DIR.
// Usage: node test_charts.mjs PROJECT_ROOT BUILD_DIR ARTIFACT_DIR
import { chromium } from 'playwright-core';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Client, check, finish, startServer, feed, step, validators, waitInPage } from './lib.mjs';

const [root, buildDir, artifacts] = process.argv.slice(2);
const browserPath = process.env.CHROMIUM || '/usr/bin/chromium';
if (!fs.existsSync(browserPath)) {
  console.log(`FAIL missing chromium (${browserPath}): run scripts/install-deps`);
  process.exit(1);
}
fs.mkdirSync(artifacts, { recursive: true });
const tool = (name) => path.join(buildDir, 'tools', name);

// The recording: the simulator's ITM bytes in a file, decoded once; both readers get these lines
// (800 kB: its cycle timestamps pass 2^24, where a float's epsilon vanishes).
const capture = path.join(artifacts, 'charts-sim.swo');
execFileSync(tool('swo-capture'), ['--simulate', '--rate', '0', '--max-bytes', '800K', '-o', capture]);
const recordsText = execFileSync(tool('itm-decode'), [capture], { maxBuffer: 1 << 28 }).toString();
const lines = recordsText.split('\n').filter((l) => l);
// trace-top's figures at the end of the same records (its snapshot records).
const topRecords = execFileSync(tool('trace-top'), ['--once'], { input: recordsText, maxBuffer: 1 << 28 }).toString()
  .split('\n').filter((l) => l).map((l) => JSON.parse(l));
const topTasks = topRecords.filter((r) => r.event.kind === 'TopTask').map((r) => r.event.data);
const topHandlers = topRecords.filter((r) => r.event.kind === 'TopHandler').map((r) => r.event.data);
check(topTasks.length >= 3 && topHandlers.length >= 2, `trace-top sees tasks, idle and handlers in the recording (${topTasks.length} tasks, ${topHandlers.length} handlers)`);

// An independent model of the ISRs' own times (IsrEnter/IsrExit): a handler's time less what
// preempted it; an exit closes the handlers above it (lost exits); an interval open across a
// loss (Overflow, Malformed) is uncertain, as trace-top documents them.
function handlerModel(records) {
  const stack = [];
  const byId = new Map();
  const close = (entry, at, lost) => {
    const self = at - entry.start - entry.nested;
    if (stack.length) stack[stack.length - 1].nested += at - entry.start;
    if (!byId.has(entry.id)) byId.set(entry.id, { certain: [] });
    if (!entry.uncertain && !lost) byId.get(entry.id).certain.push({ self, start: entry.start, end: at });
  };
  for (const line of records) {
    const r = JSON.parse(line);
    const kind = r.event?.kind;
    if (kind === 'IsrEnter') stack.push({ id: r.event.data.isr_id, start: r.timestamp, nested: 0, uncertain: false });
    else if (kind === 'Overflow' || kind === 'Malformed') stack.forEach((e) => { e.uncertain = true; });
    else if (kind === 'IsrExit' && stack.some((e) => e.id === r.event.data.isr_id)) {
      while (stack[stack.length - 1].id !== r.event.data.isr_id) close(stack.pop(), r.timestamp, true);
      close(stack.pop(), r.timestamp, false);
    }
  }
  return byId;
}

// A chart's Export SVG: the saved file, read back by the browser's XML parser (it must be an
// SVG document of vector elements, no picture in it): each element's name, attributes, text.
async function exportedSvg(page, id) {
  const [download] = await Promise.all([page.waitForEvent('download'), page.click(`button[data-svg="${id}"]`)]);
  check(download.suggestedFilename() === `${id}.svg`, `Export SVG saves the ${id} chart (${download.suggestedFilename()})`);
  const file = path.join(artifacts, `viewer-export-${id}.svg`);
  await download.saveAs(file);
  const parsed = await page.evaluate((text) => {
    const doc = new DOMParser().parseFromString(text, 'image/svg+xml');
    if (doc.querySelector('parsererror') || doc.documentElement.localName !== 'svg') return { error: doc.documentElement.textContent.slice(0, 200) };
    return { width: Number(doc.documentElement.getAttribute('width')),
             elements: [...doc.documentElement.querySelectorAll('*')].map((e) => ({
               name: e.localName, text: e.textContent, ...Object.fromEntries([...e.attributes].map((a) => [a.name, a.value])) })) };
  }, fs.readFileSync(file, 'utf8'));
  check(!parsed.error && !parsed.elements.some((e) => ['image', 'foreignObject'].includes(e.name)),
        `${id}.svg is an SVG document of vector elements (${parsed.error ?? `${parsed.elements.length} elements`})`);
  return parsed;
}

const server = await startServer(tool('trace-serve'), ['--cpu-hz', '64000000', '--top-interval', '0.2']);
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
  await waitInPage(page, () => document.getElementById('connection').textContent === 'live', null, 'the viewer connects',
                   () => document.getElementById('connection').textContent);
  await page.click('#tabs button[data-tab="load"]');
  // A client of its own validates every message against the schemas (the snapshots' series
  // and histograms against record.schema.json).
  const client = new Client(server.url, validators(root, path.join(root, '..', 'shared')), { strict: false });
  await client.connectAndStart(undefined, { port_mask: null, event_types: ['*'] });  // every kind, Top* too
  await feed(server.child.stdin, lines, 20000);
  server.child.stdin.end();
  // The input ended: trace-serve's last snapshot (final) covers every record.
  await waitInPage(page, () => window.tracepipe.state.finalStats !== null, null, 'the closing Stats reaches the viewer',
                   () => window.tracepipe.state.total);

  await step('Statistics snapshots: their series and histograms are what the record schema says', async () => {
    await client.until(() => client.messages.some((m) => m.type === 'Stats' && m.data.final), 'the client\'s closing Stats');
    const snapshot = client.messages.filter((m) => m.type === 'Event' && m.data.event.kind.startsWith('Top')).map((m) => m.data.event);
    check(snapshot.some((e) => e.kind === 'TopHandler' && e.data.hist && e.data.load) && snapshot.some((e) => e.kind === 'TopTask' && e.data.load),
          `the client got snapshot records with series and histograms (${snapshot.length} Top records)`);
    check(client.invalid.length === 0, `every message matches the schemas (${client.invalid.slice(0, 2).join(' | ')})`);
    await client.close();
  });

  await step('CPU load: the chart holds trace-top\'s figures', async () => {
    await page.click('#load-fit');
    await page.evaluate(() => window.tracepipe.render());
    const chart = await page.evaluate(() => window.tracepipe.loadChart());
    check(chart !== null && chart.series.length === topTasks.length + topHandlers.length,
          `a series per task, idle and handler trace-top lists (${chart?.series.length} == ${topTasks.length} + ${topHandlers.length})`);
    const wanted = [
      ...topTasks.map((t) => [t.task == null ? 'idle' : (t.name ?? `task ${t.task}`), t.time]),
      ...topHandlers.map((h) => [`${h.source} ${h.name ?? h.number}`, h.total]),
    ];
    const got = new Map(chart.series.map((s) => [s.label, s.shown]));
    const wrong = wanted.filter(([label, time]) => got.get(label) !== time);
    check(wrong.length === 0, `each series' time over the whole range == trace-top's (${wanted.length} series; ` +
          `wrong: ${JSON.stringify(wrong.map(([label, time]) => [label, time, got.get(label)]))})`);
    check(chart.intervals > 10 && chart.series.every((s) => s.sums.reduce((a, b) => a + b, 0) === s.shown),
          `the figures are spread over ${chart.intervals} intervals of ${chart.interval} cycles`);
    const busiest = Math.max(...chart.series.filter((s) => s.kind !== 'handler').map((s) => Math.max(...s.sums)));
    check(busiest <= chart.interval, `no task has more time in an interval than the interval (${busiest} <= ${chart.interval})`);
    await page.screenshot({ path: path.join(artifacts, 'viewer-load.png') });
  });

  await step('CPU load: hovering an interval shows its figures', async () => {
    const box = await page.locator('#load').boundingBox();
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    await waitInPage(page, () => !document.getElementById('load-tip').hidden, null, 'the load tip shows',
                     () => document.getElementById('load-tip').textContent);
    const tip = await page.textContent('#load-tip');
    check(/\+.*\n.*%.*(task|idle)/.test(tip), `the tip names the interval and each series' share and time (${JSON.stringify(tip)})`);
    await page.screenshot({ path: path.join(artifacts, 'viewer-load-hover.png') });
    await page.mouse.move(box.x + 5, box.y + 5);
  });

  await step('CPU load: zoom and pan are the Timeline\'s', async () => {
    const before = await page.evaluate(() => window.tracepipe.loadChart());
    const box = await page.locator('#load').boundingBox();
    await page.mouse.move(box.x + box.width / 2, box.y + 100);
    for (let i = 0; i < 8; i++) await page.mouse.wheel(0, -400);
    await page.evaluate(() => window.tracepipe.render());
    const zoomed = await page.evaluate(() => window.tracepipe.loadChart());
    check(zoomed.view.end - zoomed.view.start < 0.3 * (before.view.end - before.view.start) && zoomed.interval < before.interval,
          `wheel zooms the load chart, with narrower intervals (${before.interval} -> ${zoomed.interval} cycles)`);
    await page.click('#tabs button[data-tab="timeline"]');
    await page.evaluate(() => window.tracepipe.render());
    const timelineView = await page.getAttribute('#timeline', 'data-view');
    check(timelineView === `${zoomed.view.start} ${zoomed.view.end}`, `the Timeline shows the load chart's range (${timelineView})`);
    const timelineSvg = await exportedSvg(page, 'timeline');
    check(timelineSvg.elements.filter((e) => e.name === 'rect').length > 10 && timelineSvg.elements.some((e) => e.name === 'text' && e.text === 'idle'),
          'timeline.svg has the lanes\' bars and labels');
    const timelineBox = await page.locator('#timeline').boundingBox();
    await page.mouse.move(timelineBox.x + timelineBox.width / 2, timelineBox.y + 40);
    await page.mouse.wheel(0, 400);
    await page.evaluate(() => window.tracepipe.render());
    const timelineZoomed = await page.getAttribute('#timeline', 'data-view');
    await page.click('#tabs button[data-tab="load"]');
    await page.evaluate(() => window.tracepipe.render());
    check(timelineZoomed !== timelineView && (await page.getAttribute('#load', 'data-view')) === timelineZoomed,
          `zooming the Timeline zooms the load chart (${timelineZoomed})`);
    await page.screenshot({ path: path.join(artifacts, 'viewer-load-zoomed.png') });
    // Wheeled out 4000 times (1.25 each: past Infinity unbounded), then in 4000 times.
    for (const deltaY of [400, -400]) {
      await page.evaluate((dy) => {
        const canvas = document.getElementById('load');
        const rect = canvas.getBoundingClientRect();
        for (let i = 0; i < 4000; i++) {
          canvas.dispatchEvent(new WheelEvent('wheel', { deltaY: dy, clientX: rect.left + rect.width / 2, clientY: rect.top + 50, cancelable: true }));
        }
        window.tracepipe.render();
      }, deltaY);
      const extreme = await page.evaluate(() => window.tracepipe.loadChart());
      const span = extreme.view.end - extreme.view.start;
      check(Number.isFinite(span) && span > 0 && extreme.intervals <= 1400,
            `wheeled ${deltaY > 0 ? 'out' : 'in'} 4000 times the range stays drawable (${span} wide, ${extreme.intervals} intervals)`);
    }
    await page.click('#load-fit');
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('button[data-png="load"]')]);
    check(download.suggestedFilename() === 'load.png', `Export PNG saves the load chart (${download.suggestedFilename()})`);
    await download.saveAs(path.join(artifacts, 'viewer-export-load.png'));
  });

  await step('CPU load: Export SVG holds the chart\'s figures as areas and lines', async () => {
    await page.evaluate(() => window.tracepipe.render());
    const chart = await page.evaluate(() => window.tracepipe.loadChart());
    const svg = await exportedSvg(page, 'load');
    // The share axis' labels sit 4 px below their line: the plot's 0% and 100%.
    const labelY = (text) => Number(svg.elements.find((e) => e.name === 'text' && e.text === text)?.y) - 4;
    const zero = labelY('0%');
    const plotHeight = zero - labelY('100%');
    check(plotHeight > 100, `the SVG has the share axis (0% at ${zero}, ${plotHeight} px to 100%)`);
    const wrong = [];
    for (const s of chart.series) {
      // Each interval's height (a stacked area's rectangle, none when 0; a line's point above
      // 0%), less the first and last intervals (the trace covers only part of them).
      const mine = svg.elements.filter((e) => e['data-series'] === s.label && e['data-kind'] === s.kind);
      const heights = new Array(chart.intervals).fill(0);
      if (s.kind === 'handler') {
        const points = mine.length === 1 ? [...mine[0].d.matchAll(/[ML](-?[\d.]+) (-?[\d.]+)/g)] : [];
        if (points.length !== chart.intervals) { wrong.push([s.label, `${points.length} points`]); continue; }
        points.forEach((m, i) => { heights[i] = zero - Number(m[2]); });
      } else {
        for (const rect of mine.filter((e) => e.name === 'rect')) heights[Number(rect['data-interval'])] = Number(rect.height);
        if (mine.length === 0) { wrong.push([s.label, 'missing']); continue; }
      }
      for (let i = 1; i < chart.intervals - 1; i++) {
        const expected = (plotHeight * s.sums[i]) / chart.interval;
        if (Math.abs(heights[i] - expected) > 0.05) wrong.push([s.label, i, heights[i], expected]);
      }
    }
    check(wrong.length === 0, `every series' height in every interval of load.svg is its time in the chart's data (${chart.series.length} series ` +
          `x ${chart.intervals} intervals; wrong: ${JSON.stringify(wrong.slice(0, 4))})`);
  });

  await step('Durations: the histogram of a handler, its worst a click away', async () => {
    const model = handlerModel(lines);
    const isrs = topHandlers.filter((h) => h.source === 'isr');
    check(isrs.length >= 2, `the recording has ISRs (${isrs.length})`);
    await page.click('#tabs button[data-tab="durations"]');
    for (const h of isrs) {
      await page.selectOption('#durations-handler', `isr:${h.number}`);
      await page.evaluate(() => window.tracepipe.render());
      const chart = await page.evaluate(() => window.tracepipe.durationsChart());
      const m = model.get(h.number);
      const sorted = [...m.certain].map((d) => d.self).sort((a, b) => a - b);
      const rank = (q) => sorted[Math.max(1, Math.ceil(q * sorted.length)) - 1];
      const worst = m.certain.reduce((a, b) => (b.self > a.self ? b : a));
      check(chart.count === h.count && chart.min === h.min && chart.max === h.max,
            `isr ${h.number}: count, min and max are trace-top's (${chart.count}, ${chart.min}, ${chart.max})`);
      check(chart.histogram === sorted.length && chart.min === sorted[0] && chart.max === sorted[sorted.length - 1],
            `isr ${h.number}: the histogram holds every certain interval of the records (${chart.histogram} == ${sorted.length}), ` +
            `from the shortest to the longest (${sorted[0]}..${sorted[sorted.length - 1]})`);
      check(chart.worstStart === worst.start && chart.worstEnd === worst.end,
            `isr ${h.number}: the worst is the longest interval in the records (${chart.worstStart}..${chart.worstEnd} == ${worst.start}..${worst.end})`);
      for (const [name, q] of [['p50', 0.5], ['p99', 0.99]]) {
        const exact = rank(q);
        check(chart[name] >= exact && chart[name] <= Math.max(exact * 1.125, exact + 1),
              `isr ${h.number}: ${name} ${chart[name]} is the end of the bucket holding the exact ${exact}`);
      }
    }
    const heaviest = isrs[0];
    await page.selectOption('#durations-handler', `isr:${heaviest.number}`);
    await page.evaluate(() => window.tracepipe.render());
    const chart = await page.evaluate(() => window.tracepipe.durationsChart());
    await page.screenshot({ path: path.join(artifacts, 'viewer-durations.png') });
    const svg = await exportedSvg(page, 'durations');
    const bars = svg.elements.filter((e) => e.name === 'rect' && e['data-bucket'] !== undefined);
    const tallest = Math.max(...bars.map((b) => Number(b.height)));
    const wrongBars = chart.hist.map((count, i) => [chart.histFirst + i, count]).filter(([bucket, count]) => {
      const bar = bars.find((b) => Number(b['data-bucket']) === bucket);
      return count === 0 ? bar !== undefined : !bar || Number(bar['data-count']) !== count ||
        Math.abs(Number(bar.height) - (tallest * count) / Math.max(...chart.hist)) > 0.02;
    });
    check(bars.length === chart.hist.filter((n) => n > 0).length && wrongBars.length === 0,
          `durations.svg has a bar per bucket of the chart's histogram, its height the bucket's count (${bars.length} bars; wrong: ${JSON.stringify(wrongBars.slice(0, 4))})`);
    const box = await page.locator('#durations').boundingBox();
    await page.mouse.click(box.x + chart.maxX, box.y + box.height / 2);
    await waitInPage(page, () => window.tracepipe.state.activeTab === 'timeline', null, 'a click on the max shows the Timeline',
                     () => window.tracepipe.state.activeTab);
    await page.evaluate(() => window.tracepipe.render());
    const [start, end] = (await page.getAttribute('#timeline', 'data-view')).split(' ').map(Number);
    check(start < chart.worstStart && end > chart.worstEnd && end - start <= 4 * (chart.worstEnd - chart.worstStart),
          `the Timeline shows the worst interval (${chart.worstStart}..${chart.worstEnd} in ${start}..${end})`);
    await page.screenshot({ path: path.join(artifacts, 'viewer-durations-worst.png') });
  });

  await step('Flame graph: the weights are trace-top --format folded\'s', async () => {
    const folded = Object.fromEntries(execFileSync(tool('trace-top'), ['--format', 'folded'], { input: recordsText, maxBuffer: 1 << 28 })
      .toString().split('\n').filter((l) => l).map((l) => [l.slice(0, l.lastIndexOf(' ')), Number(l.slice(l.lastIndexOf(' ') + 1))]));
    check(Object.keys(folded).length > 10 && Object.keys(folded).some((k) => k.startsWith('idle;')),
          `trace-top folds the samples by task (${Object.keys(folded).length} stacks)`);
    await page.click('#tabs button[data-tab="flame"]');
    await page.click('#flame-fit');
    await page.evaluate(() => window.tracepipe.render());
    const chart = await page.evaluate(() => window.tracepipe.flameChart());
    const stacks = new Set([...Object.keys(folded), ...Object.keys(chart.folded)]);
    const wrong = [...stacks].filter((k) => folded[k] !== chart.folded[k]);
    check(wrong.length === 0, `every stack's samples over the whole range == trace-top --format folded (${stacks.size} stacks; ` +
          `wrong: ${JSON.stringify(wrong.slice(0, 3).map((k) => [k, folded[k], chart.folded[k]]))})`);
    await page.screenshot({ path: path.join(artifacts, 'viewer-flame.png') });
    const svg = await exportedSvg(page, 'flame');
    const rootTotal = Object.values(chart.stacks).reduce((a, b) => a + b, 0);
    const samplesUnder = (prefix) => Object.entries(chart.stacks)
      .filter(([k]) => !prefix || k === prefix || k.startsWith(`${prefix};`)).reduce((a, [, n]) => a + n, 0);
    const flameBoxes = svg.elements.filter((e) => e.name === 'rect' && e['data-path'] !== undefined);
    const wrongBoxes = flameBoxes.filter((b) => {
      const samples = samplesUnder(b['data-path']);
      const width = (svg.width * samples) / rootTotal;  // a box is drawn 1 px narrower (a gap)
      return Number(b['data-samples']) !== samples || (width > 2 && Math.abs(Number(b.width) + 1 - width) > 0.02);
    });
    check(flameBoxes.length === chart.boxes && wrongBoxes.length === 0,
          `flame.svg has each box of the graph, its width its samples in the range (${flameBoxes.length} boxes; ` +
          `wrong: ${JSON.stringify(wrongBoxes.slice(0, 3))})`);
    // The visible range only: half of it, against the samples of the records in it.
    const half = { start: chart.view.start, end: (chart.view.start + chart.view.end) / 2 };
    await page.evaluate((v) => { window.tracepipe.state.view = { ...v, follow: false }; window.tracepipe.render(); }, half);
    const inRange = lines.map((l) => JSON.parse(l)).filter((r) => r.event?.kind === 'PcSample' && r.timestamp >= half.start && r.timestamp <= half.end).length;
    const halfChart = await page.evaluate(() => window.tracepipe.flameChart());
    const counted = Object.values(halfChart.folded).reduce((a, b) => a + b, 0);
    check(counted === inRange && counted < Object.values(folded).reduce((a, b) => a + b, 0),
          `zoomed to half the range, the graph counts the samples in it (${counted} == ${inRange})`);
    // Focus: a click on the idle box (the second row) makes it the top.
    await page.click('#flame-fit');
    await page.evaluate(() => window.tracepipe.render());
    const box = await page.locator('#flame').boundingBox();
    const idleX = await page.evaluate(() => window.tracepipe.flameChart().boxes);
    check(idleX > 3, `the graph draws boxes (${idleX})`);
    await page.mouse.click(box.x + 5, box.y + 4 + 22 + 10);
    await page.evaluate(() => window.tracepipe.render());
    const focused = await page.evaluate(() => window.tracepipe.flameChart().focus);
    check(typeof focused === 'string' && focused.length > 0, `a click on a task focuses it (${focused})`);
    await page.mouse.move(box.x + box.width / 2, box.y + 4 + 22 + 10);
    await waitInPage(page, () => !document.getElementById('flame-tip').hidden, null, 'the flame tip shows',
                     () => document.getElementById('flame-tip').textContent);
    check(/samples \(\d+\.\d\d%\)/.test(await page.textContent('#flame-tip')), 'hovering a box shows its samples and share');
    await page.screenshot({ path: path.join(artifacts, 'viewer-flame-focused.png') });
    const moved = await page.locator('#flame').boundingBox();  // the summary line may have grown
    await page.mouse.click(moved.x + 5, moved.y + 12);  // the top box: back to all
    await page.evaluate(() => window.tracepipe.render());
    const back = await page.evaluate(() => window.tracepipe.flameChart().focus);
    check(back === null, `a click on the top box goes back to all (${back})`);
  });

  await step('Counters: lines over the Timeline\'s range, zooming with it; hover: the values then', async () => {
    const counters = lines.map((l) => JSON.parse(l)).filter((r) => r.event?.kind === 'Counter');
    const first = counters[0].timestamp;
    const last = counters[counters.length - 1].timestamp;
    const range = { start: first + (last - first) / 3, end: first + (2 * (last - first)) / 3 };
    await page.click('#tabs button[data-tab="counters"]');
    await page.check('#counters-follow');
    await page.evaluate((v) => { window.tracepipe.state.view = { ...v, follow: false }; window.tracepipe.render(); }, range);
    const drawn = Number(await page.getAttribute('#counters', 'data-points'));
    const inRange = counters.filter((r) => r.timestamp >= range.start && r.timestamp <= range.end).length;
    check(drawn === inRange && drawn < counters.length, `following the Timeline's range, the plot draws the Counter records in it (${drawn} == ${inRange})`);
    // A range whose ends are Counter records' own (cycle) timestamps: both ends count.
    const edges = { start: counters[Math.floor(counters.length / 3)].timestamp, end: counters[Math.floor((2 * counters.length) / 3)].timestamp };
    await page.evaluate((v) => { window.tracepipe.state.view = { ...v, follow: false }; window.tracepipe.render(); }, edges);
    const drawnToEdges = Number(await page.getAttribute('#counters', 'data-points'));
    const inEdges = counters.filter((r) => r.timestamp >= edges.start && r.timestamp <= edges.end).length;
    check(edges.end > 2 ** 24 && drawnToEdges === inEdges,
          `a range ending on a Counter record's timestamp (${edges.end}) counts that record (${drawnToEdges} == ${inEdges})`);
    await page.evaluate((v) => { window.tracepipe.state.view = { ...v, follow: false }; window.tracepipe.render(); }, range);
    const svg = await exportedSvg(page, 'counters');
    const points = svg.elements.filter((e) => e.name === 'rect' && e['data-counter'] !== undefined)
      .map((e) => `${e['data-counter']}@${e['data-time']}=${e['data-value']}`).sort();
    const records = counters.filter((r) => r.timestamp >= range.start && r.timestamp <= range.end)
      .map((r) => `${r.event.data.counter_id}@${r.timestamp}=${r.event.data.value}`).sort();
    check(JSON.stringify(points) === JSON.stringify(records),
          `counters.svg has a point per Counter record in the range, at its time and value (${points.length} == ${records.length})`);
    check(svg.elements.filter((e) => e.name === 'path' && e['data-counter'] !== undefined).length === new Set(counters.map((r) => r.event.data.counter_id)).size,
          'counters.svg has a line per counter');
    const box = await page.locator('#counters').boundingBox();
    const px = 90 + (box.width - 2 - 90 - 10) / 2;  // the plot's middle (the canvas has a 1 px border)
    await page.mouse.move(box.x + 1 + px, box.y + box.height / 2);
    await waitInPage(page, () => !document.getElementById('counters-tip').hidden, null, 'the counters tip shows',
                     () => document.getElementById('counters-tip').textContent);
    const tip = await page.textContent('#counters-tip');
    // The mouse's time: the plot's middle within a pixel (the browser rounds the event's
    // position); the tip says the exact time, and the values must be each counter's last then.
    const t = Number(await page.getAttribute('#counters-tip', 'data-time'));
    const pixel = (range.end - range.start) / (box.width - 2 - 90 - 10);
    check(Math.abs(t - (range.start + range.end) / 2) <= pixel, `the tip's time is the one under the mouse (${t})`);
    const expected = new Map();
    for (const r of counters) if (r.timestamp <= t) expected.set(r.event.data.counter_id, r.event.data.value);
    const shown = new Map([...tip.matchAll(/counter (\d+): (\d+)/g)].map((m) => [Number(m[1]), Number(m[2])]));
    check(shown.size === expected.size && [...expected].every(([id, v]) => shown.get(id) === v),
          `hovering shows each counter's last value at that time (${JSON.stringify([...shown])} == ${JSON.stringify([...expected])})`);
    await page.screenshot({ path: path.join(artifacts, 'viewer-counters-range.png') });
    await page.mouse.wheel(0, -400);
    await page.evaluate(() => window.tracepipe.render());
    const zoomed = await page.evaluate(() => ({ ...window.tracepipe.state.view }));
    await page.click('#tabs button[data-tab="timeline"]');
    await page.evaluate(() => window.tracepipe.render());
    check(zoomed.end - zoomed.start < range.end - range.start && (await page.getAttribute('#timeline', 'data-view')) === `${zoomed.start} ${zoomed.end}`,
          `zooming the counters zooms the Timeline (${zoomed.start}..${zoomed.end})`);
  });

  // As a stored view of the fleet's front door shows a range: a finite stream that ends, its
  // records carrying the fleet's fields (board, run, seq, host_us), no statistics snapshots
  // (trace-serve without --top-interval).
  await step('Durations: marker pairs (MarkStart/MarkStop) as a histogram, the worst a click away', async () => {
    // SystemView's marks as sysview-decode writes them: id 3 "frame" 40 times 100..490 us, one
    // 5000 us (the worst), one of 9000 us across an Overflow (uncertain: left out), a stop
    // without a start and a start started again (unmatched); id 4 once.
    const mark = (t, id, phase, name) => JSON.stringify({ timestamp: t, port: 5, event: { kind: 'Marker', data: { id, ...(name ? { name } : {}), phase } }, source: 'sysview', clock: 'us' });
    const marks = [JSON.stringify({ timestamp: 0, port: 5, event: { kind: 'TaskSwitch', data: { from_task: 0, to_task: 1 } }, source: 'sysview', clock: 'us' }),
                   mark(10, 3, 'stop', 'frame')];
    const expected = [];
    let t = 100;
    for (let i = 0; i < 40; i++, t += 1000) { marks.push(mark(t, 3, 'start', 'frame'), mark(t + 100 + 10 * i, 3, 'stop')); expected.push(100 + 10 * i); }
    marks.push(mark(t, 3, 'start'), mark(t + 50, 3, 'start'), mark(t + 5050, 3, 'stop'));  // 5000 from t + 50
    expected.push(5000);
    const worstStart = t + 50;
    t += 10000;
    marks.push(mark(t, 3, 'start'), JSON.stringify({ timestamp: t + 10, port: 5, event: { kind: 'Overflow', data: {} }, source: 'sysview', clock: 'us' }),
               mark(t + 9000, 3, 'stop'), mark(t + 9500, 4, 'start'), mark(t + 9600, 4, 'stop'));
    // PC samples as itm-decode --elf writes them with DWARF (function, file, line), after the marks.
    const sample = (at, fields) => JSON.stringify({ timestamp: at, port: 0, event: { kind: 'PcSample', data: { pc: 134218000 + at, sleep: false, ...fields } }, source: 'dwt', clock: 'us' });
    const at = t + 9700;
    marks.push(sample(at, { function: 'main_loop', file: 'src/main.c', line: 42 }), sample(at + 1, { function: 'main_loop', file: 'src/main.c', line: 42 }),
               sample(at + 2, { function: 'main_loop', file: 'src/main.c', line: 43 }), sample(at + 3, { function: 'sensor_read', file: 'src/sensor.c', line: 7 }),
               sample(at + 4, { function: 'memcpy' }), sample(at + 5, { sleep: true }));
    const markServer = await startServer(tool('trace-serve'), []);
    try {
      await page.goto(`${markServer.http}/`);
      await waitInPage(page, () => document.getElementById('connection').textContent === 'live', null, 'the viewer connects again',
                       () => document.getElementById('connection').textContent);
      const stored = marks.map((line, seq) => JSON.stringify({ ...JSON.parse(line), board: 'bench-3', run: 'r1', seq, host_us: 1764000000000000 + seq }));
      await feed(markServer.child.stdin, stored, 5000);
      markServer.child.stdin.end();
      await waitInPage(page, () => window.tracepipe.state.finalStats !== null, null, 'the stream\'s closing Stats', () => window.tracepipe.state.total);
      check(await page.evaluate((n) => window.tracepipe.state.total === n, marks.length), `every record of the ended stream arrived (${marks.length})`);
      await page.click('#tabs button[data-tab="load"]');
      await page.evaluate(() => window.tracepipe.render());
      const loadSvg = await exportedSvg(page, 'load');
      check(await page.evaluate(() => window.tracepipe.loadChart() === null) &&
            loadSvg.elements.some((e) => e.name === 'text' && e.text.includes('--top-interval')),
            'without statistics snapshots the CPU load chart is empty and says what it needs (trace-serve --top-interval)');
      await page.click('#tabs button[data-tab="durations"]');
      await page.selectOption('#durations-handler', 'marker:5:3');
      await page.evaluate(() => window.tracepipe.render());
      const chart = await page.evaluate(() => window.tracepipe.durationsChart());
      const sorted = [...expected].sort((a, b) => a - b);
      const rank = (q) => sorted[Math.ceil(q * sorted.length) - 1];
      check(chart.label === 'marker frame (port 5)' && chart.count === 42 && chart.uncertain === 1 && chart.histogram === 41,
            `the pair's intervals: 42 closed, the one across the loss left out (${JSON.stringify(chart)})`);
      check(chart.min === 100 && chart.max === 5000 && chart.p50 === rank(0.5) && chart.p99 === rank(0.99),
            `min, median, p99 and max are the records' (${chart.min}, ${chart.p50} == ${rank(0.5)}, ${chart.p99} == ${rank(0.99)}, ${chart.max})`);
      check(chart.worstStart === worstStart && chart.worstEnd === worstStart + 5000,
            `the worst is the longest certain pair in the records (${chart.worstStart}..${chart.worstEnd})`);
      check((await page.locator('#durations-handler option').allTextContents()).includes('marker 4 (port 5)'), 'each marker id is a pair of its own');
      await page.screenshot({ path: path.join(artifacts, 'viewer-durations-marker.png') });
      const folded = Object.fromEntries(execFileSync(tool('trace-top'), ['--format', 'folded'], { input: `${marks.join('\n')}\n` })
        .toString().split('\n').filter((l) => l).map((l) => [l.slice(0, l.lastIndexOf(' ')), Number(l.slice(l.lastIndexOf(' ') + 1))]));
      await page.click('#tabs button[data-tab="flame"]');
      await page.click('#flame-fit');
      await page.evaluate(() => window.tracepipe.render());
      const flame = await page.evaluate(() => window.tracepipe.flameChart());
      check(JSON.stringify(Object.entries(flame.folded).sort()) === JSON.stringify(Object.entries(folded).sort()),
            `with source lines too, the flame graph's task;function weights are trace-top --format folded's (${JSON.stringify(flame.folded)})`);
      check(flame.stacks['task 1;main_loop;src/main.c:42'] === 2 && flame.stacks['task 1;main_loop;src/main.c:43'] === 1 &&
            flame.stacks['task 1;memcpy'] === 1, `a sample's source line is a frame below its function (${JSON.stringify(flame.stacks)})`);
      await page.screenshot({ path: path.join(artifacts, 'viewer-flame-lines.png') });
      await page.click('#tabs button[data-tab="durations"]');
      await page.click('#durations-worst');
      await waitInPage(page, () => window.tracepipe.state.activeTab === 'timeline', null, 'the button shows the Timeline',
                       () => window.tracepipe.state.activeTab);
      const view = await page.evaluate(() => window.tracepipe.state.view);
      check(view.start < worstStart && view.end > worstStart + 5000, `the Timeline shows the worst pair (${view.start}..${view.end})`);
    } finally {
      markServer.child.kill('SIGTERM');
    }
  });

  check(pageErrors.length === 0, `no errors in the page (${pageErrors.slice(0, 3).join(' | ')})`);
} finally {
  await browser.close();
  server.child.kill('SIGTERM');
}
finish();
