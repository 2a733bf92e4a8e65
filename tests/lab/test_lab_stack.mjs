// trace-lab's pages in Chromium (playwright-core) on the REAL stack (tests/lab/lab_web_stack.py):
// nats-server and clickhouse-server, simulated boards shipped by trace-ship and stored by
// trace-store (rack3-b02 loses a too-large record, rack4-away loses to a full --buffer while the
// NATS server is away, rack3-b05 faults), trace-lab. What the pages show is compared with what
// independent readers say: clickhouse-client (counts, losses, search rows), trace-query (a
// stored range), trace-ship's own --stats (the buffer's loss), the lines fed (a live board).
// - the boards table: each board's figures as clickhouse-client counts them, both losses;
//   a board shipping while the page is open goes live and its figures change without reload;
// - a live board shows the records fed while it is open, each once, in order;
// - a stored range shows exactly trace-query's records for it;
// - a stored run's CPU load and Durations charts hold trace-top's figures over trace-query's
//   records, over the whole run (first..last timestamp) once it has come whole;
// - a search finds exactly clickhouse-client's rows, paged; a hit opens its time, marked;
// - hostile globs, search text and board names are refused or shown as text;
// - NATS, then ClickHouse killed while the boards page is open: the page says which, and
//   recovers when it is back.
// Screenshots of each view go to ARTIFACT_DIR (lab-stack-*.png).
// Usage: node test_lab_stack.mjs PROJECT_ROOT BUILD_DIR ARTIFACT_DIR
import { chromium } from '../serve/node_modules/playwright-core/index.mjs';
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { check, finish, step, waitInPage, waitUntil } from '../serve/lib.mjs';

const [root, buildDir, artifacts] = process.argv.slice(2);
const tools = path.join(buildDir, 'tools');
const browserPath = process.env.CHROMIUM || '/usr/bin/chromium';
if (!fs.existsSync(browserPath)) {
  console.log(`FAIL missing chromium (${browserPath}): run scripts/install-deps`);
  process.exit(1);
}
fs.mkdirSync(artifacts, { recursive: true });
const BOARDS = 6;
const STACK_DEADLINE_MS = 240000;
const HOSTILE = `<img src=x onerror="window.pwned=1">'"\\ 50% _*> gr\u00fc\u00dfe \u{1F600}`;

// ---- the stack, driven over the helper's stdin/stdout -------------------------------------
const helper = spawn('python3', [path.join(root, 'tests/lab/lab_web_stack.py'), tools, String(BOARDS)],
                     { stdio: ['pipe', 'pipe', 'inherit'] });
const answers = [];
readline.createInterface({ input: helper.stdout }).on('line', (line) => answers.push(JSON.parse(line)));
const helperExited = new Promise((resolve) => helper.on('exit', resolve));
async function nextAnswer(what) {
  await waitUntil(() => answers.length > 0 || helper.exitCode !== null, what, () => '', STACK_DEADLINE_MS);
  if (answers.length === 0) throw new Error(`${what}: the stack helper exited (${helper.exitCode})`);
  const answer = answers.shift();
  if (answer.error) throw new Error(`${what}: ${answer.error}`);
  return answer;
}
async function command(text) {
  helper.stdin.write(`${text}\n`);
  return nextAnswer(text);
}

let stack = null;
const clickhouse = (sql) => execFileSync('clickhouse-client', ['--port', String(stack.clickhouse_tcp), '-q', sql],
                                         { encoding: 'utf8', maxBuffer: 1 << 28 });
const tsvRows = (text) => text.split('\n').filter((line) => line !== '').map((line) => line.split('\t'));
const traceQuery = (...args) => execFileSync(path.join(tools, 'trace-query'), ['--clickhouse', stack.clickhouse, ...args],
                                             { encoding: 'utf8', maxBuffer: 1 << 28 });
const sqlString = (text) => `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
const rfc3339 = (us) => `${new Date(Math.floor(us / 1000)).toISOString().slice(0, 19)}.${String(us % 1e6).padStart(6, '0')}Z`;

// ---- the browser ----------------------------------------------------------------------------
const browser = await chromium.launch({
  executablePath: browserPath,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking',
         '--disable-component-update', '--disable-sync'],
});
const pageErrors = [];
async function newPage(expectedErrors = []) {
  const page = await browser.newPage({ viewport: { width: 1400, height: 760 } });
  page.on('pageerror', (error) => pageErrors.push(String(error)));
  page.on('console', (message) => {
    if (message.type() === 'error' && !expectedErrors.some((e) => message.text().includes(e))) pageErrors.push(message.text());
  });
  return page;
}
const lab = (address) => new URL(address, stack.lab).href;
const rowFigures = (page) => page.evaluate(() => Object.fromEntries([...document.querySelectorAll('#boards tbody tr[data-board]')]
  .map((row) => [row.dataset.board, Object.fromEntries(['run', 'records_per_s', 'records', 'lost', 'gaps', 'exceptions', 'overflows',
                                                        'malformed', 'last_text'].map((name) => [name, row.querySelector(`td.${name}`).textContent])
    .concat([['live', row.querySelector('.dot').classList.contains('on')]]))])));

// Each board's figures as clickhouse-client counts them (all stored records are within the hour).
function storedFigures() {
  const rows = tsvRows(clickhouse(
    "SELECT board, count(), sumIf(visitParamExtractUInt(data, 'records'), kind = 'Loss'), countIf(kind = 'Exception'), " +
    "countIf(kind = 'Overflow'), countIf(kind = 'Malformed') FROM trace FINAL GROUP BY board ORDER BY board"));
  return Object.fromEntries(rows.map(([board, records, lost, exceptions, overflows, malformed]) =>
    [board, { records, lost, exceptions, overflows, malformed }]));
}

async function boardsTable() {
  const page = await newPage(['status of 503']);  // the engines killed on purpose (enginesAway)
  await page.goto(lab('/#boards'));
  const names = stack.boards;
  await waitInPage(page, (n) => document.querySelectorAll('#boards tbody tr[data-board]').length === n, names.length,
                   'the boards table shows every board shipped', () => document.querySelector('#boards').textContent.slice(0, 300));
  const shown = await rowFigures(page);
  const stored = storedFigures();
  check(Object.keys(shown).join() === names.join(), `one row per board shipped (${Object.keys(shown)})`);
  for (const board of names) {
    const want = stored[board];
    const row = shown[board];
    check(want && row && ['records', 'lost', 'exceptions', 'overflows', 'malformed'].every((k) => row[k] === want[k]),
          `${board}: the row shows clickhouse-client's counts (${JSON.stringify(row)} vs ${JSON.stringify(want)})`);
  }
  check(shown['rack3-b02']?.lost === '1' && shown['rack3-b02']?.gaps === '0',
        `rack3-b02's too-large record is its one loss, not a gap too (${shown['rack3-b02']?.lost}, ${shown['rack3-b02']?.gaps})`);
  check(shown[stack.away]?.gaps === '0',
        `${stack.away}'s records lost to its full buffer are told by its Loss records: no unexplained gap (${shown[stack.away]?.gaps})`);
  check(shown[stack.away]?.lost === String(stack.away_stats.lost_buffer_full),
        `${stack.away}'s loss is what trace-ship lost to its full buffer (${shown[stack.away]?.lost} vs ${stack.away_stats.lost_buffer_full})`);
  check(Number(shown['rack3-b05']?.exceptions) > 0 && shown['rack3-b05']?.last_text === 'watchdog: task 3 starved, resetting',
        `the faulting board shows its exceptions and its last Text line (${JSON.stringify(shown['rack3-b05'])})`);
  await page.screenshot({ path: path.join(artifacts, 'lab-stack-boards.png') });
  return page;
}

// A board shipping while the boards page and its live view are open.
async function liveBoard(boardsPage) {
  const board = 'rack3-b00';
  const rowNode = await boardsPage.$(`#boards tbody tr[data-board="${board}"]`);
  const recordsBefore = Number(await rowNode.evaluate((row) => row.querySelector('td.records').textContent));
  const viewer = await newPage();
  await viewer.goto(lab(`/board/?board=${board}&live=1`));
  await waitInPage(viewer, () => document.querySelector('#connection').textContent === 'live', null, 'the live viewer connects');
  const ship = spawn(path.join(tools, 'trace-ship'), ['--board', board, '--run', 'live1', '--server', stack.nats, '--stats'],
                     { stdio: ['pipe', 'ignore', 'pipe'] });
  const shipExited = new Promise((resolve) => ship.on('exit', resolve));
  const probes = [];
  let fed = 0;
  const feeder = setInterval(() => {  // pace: a board printing 20 lines every 100 ms
    const lines = [];
    for (let i = 0; i < 20; i++, fed++) {
      const message = `live probe ${fed}`;
      probes.push(message);
      lines.push(JSON.stringify({ timestamp: 1000 * fed, port: 0, event: { kind: 'Text', data: { message } }, source: 'itm', clock: 'cycles' }));
    }
    ship.stdin.write(`${lines.join('\n')}\n`);
  }, 100);
  try {
    await waitInPage(boardsPage, (name) => {
      const row = document.querySelector(`#boards tbody tr[data-board="${name}"]`);
      return row.querySelector('.dot').classList.contains('on') && Number(row.querySelector('td.records_per_s').textContent) > 0 &&
             row.querySelector('td.run').textContent === 'live1';
    }, board, 'the shipping board goes live in the table (dot, run, records/s) without reload',
    () => document.querySelector('#boards tbody tr').textContent);
    await waitInPage(viewer, () => window.tracepipe.exportNdjson().includes('live probe 200"'), null,
                     'the live viewer shows the records being shipped', () => window.tracepipe.state.total);
    await boardsPage.screenshot({ path: path.join(artifacts, 'lab-stack-boards-live.png') });
  } finally {
    clearInterval(feeder);
    ship.stdin.end();
  }
  await shipExited;
  const shown = await viewer.evaluate(() => window.tracepipe.exportNdjson().split('\n').filter((l) => l).map((l) => JSON.parse(l)));
  const messages = shown.filter((r) => r.run === 'live1').map((r) => r.event.data.message);
  await waitInPage(viewer, (n) => window.tracepipe.exportNdjson().includes(`live probe ${n - 1}"`), probes.length,
                   'the last record fed reaches the live viewer', () => window.tracepipe.state.total);
  const all = await viewer.evaluate(() => window.tracepipe.exportNdjson().split('\n').filter((l) => l).map((l) => JSON.parse(l))
    .filter((r) => r.run === 'live1').map((r) => r.event.data.message));
  check(messages.length > 0 && all.join('\n') === probes.join('\n'),
        `the live viewer shows every record fed, once, in order (${all.length} of ${probes.length})`);
  await viewer.screenshot({ path: path.join(artifacts, 'lab-stack-live-board.png') });
  await viewer.close();
  // Stored now: the row's records change in place to the store's new count.
  execFileSync(path.join(tools, 'trace-store'), ['--server', stack.nats, '--clickhouse', stack.clickhouse, '--until-idle'],
               { stdio: 'ignore' });
  const want = storedFigures()[board].records;
  check(Number(want) === recordsBefore + probes.length, `the store has the live records (${want} = ${recordsBefore} + ${probes.length})`);
  await waitInPage(boardsPage, ([name, n]) => document.querySelector(`#boards tbody tr[data-board="${name}"] td.records`).textContent === n,
                   [board, want], "the row's records become the store's count without reload");
  check(await rowNode.evaluate((row) => row.isConnected), 'the row was updated in place');
}

// A stored range: exactly trace-query's records for it, read from the viewer.
async function storedRange() {
  const board = 'rack3-b01';
  // From the second chunk's host time to the last one's (exclusive): some chunks, not all.
  const times = tsvRows(clickhouse(`SELECT DISTINCT host_us FROM trace FINAL WHERE board = ${sqlString(board)} ORDER BY host_us`))
    .map(([us]) => Number(us));
  check(times.length >= 3, `${board} was stored in chunks of several host times (${times.length})`);
  const from = rfc3339(times[1]);
  const to = rfc3339(times[times.length - 1]);
  const expected = traceQuery('--board', board, '--since', from, '--until', to).split('\n').filter((line) => line);
  const viewer = await newPage();
  await viewer.goto(lab(`/board/?${new URLSearchParams({ board, from, to })}`));
  await waitInPage(viewer, () => window.tracepipe.state.finalStats !== null, null, 'the stored range has come whole',
                   () => window.tracepipe.state.total);
  await waitInPage(viewer, () => document.querySelector('#connection').textContent === 'stored: complete', null,
                   'the viewer says the stored range is complete', () => document.querySelector('#connection').textContent);
  const shown = (await viewer.evaluate(() => window.tracepipe.exportNdjson())).split('\n').filter((line) => line);
  const key = (line) => { const r = JSON.parse(line); return `${r.run} ${r.seq}`; };
  const all = Number(clickhouse(`SELECT count() FROM trace FINAL WHERE board = ${sqlString(board)}`));
  check(expected.length > 0 && expected.length < all && shown.length === expected.length && shown.every((line, i) => line === expected[i]),
        `the stored range shows trace-query's records exactly (${shown.length} shown, ${expected.length} from trace-query of ${all}; ` +
        `first difference ${shown.findIndex((line, i) => line !== expected[i])}: ${shown.find((line, i) => line !== expected[i])?.slice(0, 160)})`);
  check(new Set(shown.map(key)).size === shown.length, 'no record twice');
  await viewer.screenshot({ path: path.join(artifacts, 'lab-stack-stored-board.png') });
  await viewer.close();
}

// A stored run's charts: trace-lab's views carry trace-top's snapshots (--top-interval, on by
// default), so the CPU load chart and the handlers' Durations equal trace-top's over the same
// records (trace-query's, through trace-top --once: the pump's final snapshot covers them all);
// once whole, the view shows all of it: the records' first..last timestamp.
async function storedCharts() {
  const board = 'rack3-b03';
  const recordsText = traceQuery('--board', board, '--run', 'r1');
  const top = execFileSync(path.join(tools, 'trace-top'), ['--once'], { input: recordsText, encoding: 'utf8', maxBuffer: 1 << 28 })
    .split('\n').filter((line) => line).map((line) => JSON.parse(line));
  const topTasks = top.filter((r) => r.event.kind === 'TopTask').map((r) => r.event.data);
  const topHandlers = top.filter((r) => r.event.kind === 'TopHandler').map((r) => r.event.data);
  check(topTasks.length >= 3 && topHandlers.length >= 2, `trace-top sees tasks, idle and handlers in ${board}'s run (${topTasks.length}, ${topHandlers.length})`);
  const times = recordsText.split('\n').filter((line) => line).map((line) => JSON.parse(line).timestamp).filter(Number.isFinite);
  const first = times.reduce((a, b) => Math.min(a, b));
  const last = times.reduce((a, b) => Math.max(a, b));
  const viewer = await newPage();
  await viewer.goto(lab(`/board/?${new URLSearchParams({ board, run: 'r1' })}`));
  await waitInPage(viewer, () => document.querySelector('#connection').textContent === 'stored: complete', null,
                   'the stored run has come whole', () => window.tracepipe.state.total);
  const view = await viewer.evaluate(() => ({ ...window.tracepipe.state.view }));
  check(view.start === first && view.end === last && !view.follow,
        `the complete stored view shows all of it: ${view.start}..${view.end} (follow ${view.follow}) == the records' ${first}..${last}`);
  await viewer.click('#tabs button[data-tab="load"]');
  await viewer.evaluate(() => window.tracepipe.render());
  const chart = await viewer.evaluate(() => window.tracepipe.loadChart());
  check(chart !== null && chart.view.start === first && chart.view.end === last,
        `the CPU load chart is drawn over the whole run (${chart?.view.start}..${chart?.view.end})`);
  const wanted = [
    ...topTasks.map((t) => [t.task == null ? 'idle' : (t.name ?? `task ${t.task}`), t.time]),
    ...topHandlers.map((h) => [`${h.source} ${h.name ?? h.number}`, h.total]),
  ];
  const got = new Map((chart?.series ?? []).map((s) => [s.label, s.shown]));
  const wrong = wanted.filter(([label, time]) => got.get(label) !== time);
  check(chart?.series.length === wanted.length && wrong.length === 0,
        `the CPU load chart's series are trace-top's, each series' time == trace-top's (${wanted.length} series; ` +
        `wrong: ${JSON.stringify(wrong.map(([label, time]) => [label, time, got.get(label)]))})`);
  await viewer.screenshot({ path: path.join(artifacts, 'lab-stack-stored-load.png') });
  await viewer.click('#tabs button[data-tab="durations"]');
  // trace-top's records carry no histogram (the pump's carry the load): its count, min and max.
  const isrs = topHandlers.filter((h) => h.source === 'isr');
  check(isrs.length >= 2, `the run has ISRs (${isrs.length})`);
  for (const h of isrs) {
    await viewer.selectOption('#durations-handler', `isr:${h.number}`);
    await viewer.evaluate(() => window.tracepipe.render());
    const d = await viewer.evaluate(() => window.tracepipe.durationsChart());
    check(d !== null && d.count === h.count && d.min === h.min && d.max === h.max && d.histogram === h.count - h.uncertain &&
          d.worstEnd - d.worstStart >= d.max,
          `isr ${h.number}'s histogram holds trace-top's intervals: count, min, max ${d?.count}, ${d?.min}, ${d?.max} == ` +
          `${h.count}, ${h.min}, ${h.max}; ${d?.histogram} certain`);
  }
  await viewer.screenshot({ path: path.join(artifacts, 'lab-stack-stored-durations.png') });
  await viewer.close();
}

// A search: the rows clickhouse-client finds with the same condition, newest first, paged.
async function search() {
  const text = 'line 1';
  const page = await newPage();
  await page.goto(lab('/#search'));
  await page.fill('#search-text', text);
  await page.fill('#search-boards', 'rack3-*');
  await page.click('#search-go');
  await waitInPage(page, () => document.querySelectorAll('#hits tbody tr').length > 0, null, 'the first page of hits');
  await page.screenshot({ path: path.join(artifacts, 'lab-stack-search.png') });
  for (let pages = 0; pages < 50; pages++) {
    const more = await page.$("#search-more");
    if (!more || !(await more.isVisible())) break;
    const before = await page.evaluate(() => document.querySelectorAll('#hits tbody tr').length);
    await more.click();
    await waitInPage(page, (n) => document.querySelectorAll('#hits tbody tr').length > n, before, 'the older hits come');
  }
  const hits = await page.evaluate(() => [...document.querySelectorAll('#hits tbody tr')].map((row) =>
    `${row.dataset.board}\t${row.dataset.hostUs}\t${row.querySelector('td.line').textContent}`));
  const rows = tsvRows(clickhouse(
    `SELECT board, host_us, run, seq FROM trace FINAL WHERE kind = 'Text' AND position(data, ${sqlString(text)}) > 0 ` +
    "AND startsWith(board, 'rack3-') ORDER BY host_us DESC, board DESC, run DESC, seq DESC"));
  const same = hits.length === rows.length && hits.every((hit, i) => hit.startsWith(`${rows[i][0]}\t${rows[i][1]}\t`) &&
    JSON.parse(hit.split('\t')[2]).seq === Number(rows[i][3]));
  check(rows.length > 100 && same, `the search shows clickhouse-client's rows, newest first, over pages (${hits.length} hits, ${rows.length} rows)`);

  // The faulting board's watchdog line: its hit opens the board stored around it, marked.
  await page.fill('#search-text', 'watchdog');
  await page.fill('#search-boards', '');
  await page.click('#search-go');
  await waitInPage(page, () => document.querySelectorAll('#hits tbody tr').length === 1 &&
                   document.querySelector('#hits tbody tr').dataset.board === 'rack3-b05', null, 'the watchdog hit');
  const hostUs = Number(await page.evaluate(() => document.querySelector('#hits tbody tr').dataset.hostUs));
  await page.click('#hits tbody tr td.time a');
  await waitInPage(page, () => window.tracepipe?.state.finalStats != null, null, 'the hit opens its board stored');
  await waitInPage(page, () => [...document.querySelectorAll('#console .line.marked')].some((l) => l.textContent.includes('watchdog')),
                   null, "the hit's view marks its line in the Console", () => ({
                     marked: [...document.querySelectorAll('#console .line.marked')].map((l) => l.textContent),
                     mark: window.tracepipe.state.mark, last: document.querySelector('#console').textContent.slice(-200) }));
  const marked = await page.evaluate(() => [...document.querySelectorAll('#console .line.marked')].map((l) => l.textContent));
  const markUs = await page.evaluate(() => window.tracepipe.state.mark.us);
  check(markUs === hostUs && marked.length === 1, `the hit's view marks its line, only it (${marked}; mark ${markUs}, hit ${hostUs})`);
  await page.screenshot({ path: path.join(artifacts, 'lab-stack-hit.png') });
  await page.close();
}

// Hostile input: refused with the parameter named, or shown as text.
async function hostile() {
  const page = await newPage(['status of 400']);
  await page.goto(lab(`/#search?${new URLSearchParams({ text: HOSTILE })}`));
  const rows = tsvRows(clickhouse(`SELECT count() FROM trace FINAL WHERE kind = 'Text' AND position(data, ${sqlString(HOSTILE)}) > 0`));
  await waitInPage(page, () => /hits?,/.test(document.querySelector('#search-summary').textContent), null, 'the hostile search answered',
                   () => document.querySelector('#search-summary').textContent);
  check(await page.evaluate(() => document.querySelectorAll('#hits tbody tr').length) === Number(rows[0][0]) &&
        await page.evaluate(() => window.pwned === undefined && !document.querySelector('img')), 'a hostile search text finds what clickhouse-client finds, runs nothing');
  await page.goto(lab(`/#boards?${new URLSearchParams({ glob: `rack3-'>*` })}`));
  await waitInPage(page, () => document.querySelector('#status').textContent.includes('boards:'), null,
                   'a hostile glob is refused, naming the parameter', () => document.querySelector('#status').textContent);
  const viewer = await newPage([]);
  await viewer.goto(lab(`/board/?${new URLSearchParams({ board: '<b>x</b>.>', live: '1' })}`));
  // The server's own words: the parameter and why, and a refusal the viewer does not retry.
  await waitInPage(viewer, () => document.querySelector('#messages').textContent.startsWith('INVALID_PARAMETERS: board: ') &&
                   document.querySelector('#connection').textContent.startsWith('refused'), null,
                   'a hostile board name is refused, the parameter and why said in the viewer',
                   () => `${document.querySelector('#messages').textContent} | ${document.querySelector('#connection').textContent}`);
  check(await viewer.evaluate(() => document.querySelector('#view-board').textContent === '<b>x</b>.>' && !document.querySelector('#view b b')),
        'the hostile board name is shown as text');
  await viewer.close();
  await page.close();
}

// An engine killed while the page is open: said, then recovered from.
async function enginesAway(page) {
  await page.goto(lab('/#boards'));
  for (const [engine, name] of [['nats', 'NATS'], ['clickhouse', 'ClickHouse']]) {
    await command(`kill ${engine}`);
    await waitInPage(page, (n) => document.querySelector('#status').textContent.includes(n), name,
                     `${name} killed: the page says so`, () => document.querySelector('#status').textContent, 90000);
    // The answer is partial, not refused: what the other engine knows stays current, the away
    // one's figures are '?'.
    check(await page.evaluate(() => !document.querySelector('#boards').classList.contains('stale')),
          `${name} killed: the page shows a partial answer, not the last one dimmed`);
    const partial = await rowFigures(page);
    const rows = Object.values(partial);
    if (engine === 'nats') {
      const stored = storedFigures();
      check(rows.length > 0 && rows.every((r) => r.records_per_s === '?' && r.live === false) &&
            Object.entries(partial).every(([board, r]) => r.records === stored[board]?.records),
            `NATS killed: rates unknown (?), the store's counts still clickhouse-client's (${JSON.stringify(rows[0])})`);
    } else {
      check(rows.length > 0 && rows.every((r) => ['records', 'lost', 'gaps', 'exceptions'].every((k) => r[k] === '?')),
            `ClickHouse killed: the store's counts unknown (?), the boards NATS knows still listed (${JSON.stringify(rows[0])})`);
    }
    await page.screenshot({ path: path.join(artifacts, `lab-stack-${engine}-away.png`) });
    await command(`start ${engine}`);
    await waitInPage(page, () => document.querySelector('#status').textContent === '', null,
                     `${name} back: the page recovers`, () => document.querySelector('#status').textContent, 90000);
    check(await page.evaluate(() => !document.querySelector('#boards').classList.contains('stale')), `${name} back: not dimmed`);
  }
  check(Object.keys(await rowFigures(page)).length === stack.boards.length, 'every board is shown again');
}

try {
  stack = await nextAnswer('the stack starts');
  let boardsPage = null;
  await step('boards table', async () => { boardsPage = await boardsTable(); });
  await step('live board', () => liveBoard(boardsPage));
  await step('stored range', storedRange);
  await step('stored charts', storedCharts);
  await step('search', search);
  await step('hostile input', hostile);
  await step('engines away', () => enginesAway(boardsPage));
  check(pageErrors.length === 0, `no errors in the pages (${pageErrors.slice(0, 3).join(' | ')})`);
} catch (error) {
  check(false, `the test ran to its end (${error.stack})`);
} finally {
  await browser.close();
  helper.stdin.end('stop\n');
  await helperExited;
}
finish();
