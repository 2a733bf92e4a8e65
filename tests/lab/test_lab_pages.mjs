// trace-lab's pages in a real browser (headless Debian Chromium, playwright-core):
// - the front page (lib/lab/pages) against a scripted API that answers as docs/tools/trace-lab.md
//   says and records what the page asked: the boards table shows each board's figures, sorts by
//   a column, filters by glob, keeps its state in the address, updates in place (a poll that
//   changes nothing changes nothing in the document), lists a board's runs; the search sends
//   the form exactly, shows the hits newest first, pages with the cursor, links a hit to its
//   board's stored view around it; hostile names and lines are shown as text;
// - the viewer (lib/serve/viewer) from the real trace-serve with view parameters in its address:
//   it passes them to /ws, shows the board and the view in its header (as text), the host time
//   (host_us as UTC) beside the target time in the Console, and the Timeline centres on and
//   marks the record nearest to `mark`; without parameters its WebSocket address is /ws.
// Screenshots of the boards, search and stored-board (Console, Timeline) views go to ARTIFACT_DIR.
// Usage: node test_lab_pages.mjs PROJECT_ROOT BUILD_DIR ARTIFACT_DIR
import { chromium } from '../serve/node_modules/playwright-core/index.mjs';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { check, feed, finish, startServer, waitInPage, waitUntil } from '../serve/lib.mjs';

const [root, buildDir, artifacts] = process.argv.slice(2);
const browserPath = process.env.CHROMIUM || '/usr/bin/chromium';
if (!fs.existsSync(browserPath)) {
  console.log(`FAIL missing chromium (${browserPath}): run scripts/install-deps`);
  process.exit(1);
}
fs.mkdirSync(artifacts, { recursive: true });

const HOSTILE = `<img src=x onerror="window.pwned=1">'"\\ 50% _*> gr\u00fc\u00dfe \u{1F600}`;
const NOW_US = 1796000000000000;  // 2026-11-29T...Z
const boards = [
  { board: 'rack3-01', live: true, run: 'r1a', records_per_s: 1520.5, last_seen_us: NOW_US - 1e6, records: 91000, lost: 0, gaps: 0,
    exceptions: 0, overflows: 1, malformed: 0, last_text: 'tick 91', last_text_us: NOW_US - 2e6 },
  { board: 'rack3-02', live: false, run: 'r2b', records_per_s: 0, last_seen_us: NOW_US - 600e6, records: 4000, lost: 1200, gaps: 3,
    exceptions: 0, overflows: 0, malformed: 2, last_text: HOSTILE, last_text_us: NOW_US - 600e6 },
  { board: 'rack1-17', live: true, run: 'r17', records_per_s: 800, last_seen_us: NOW_US - 0.5e6, records: 50000, lost: 0, gaps: 0,
    exceptions: 7, overflows: 0, malformed: 0, last_text: 'HardFault at 0x0800_1234', last_text_us: NOW_US - 3e6 },
  { board: 'x<b>bold</b>', live: false, run: null, records_per_s: null, last_seen_us: null, records: 1, lost: 0, gaps: 0,
    exceptions: 0, overflows: 0, malformed: 0, last_text: null, last_text_us: null },
  { board: 'rack9-99', live: false, run: 'big', records_per_s: 0, last_seen_us: NOW_US - 5e6, records: 2, lost: 0, gaps: 0,
    exceptions: 0, overflows: 0, malformed: 0, last_text: `${'\u00e9'.repeat(1 << 19)}</td><script>window.pwned=2</script>`,
    last_text_us: NOW_US - 5e6 },  // a 1 MB line (UTF-8)
];
const hits = Array.from({ length: 5 }, (_, i) => ({
  board: i % 2 ? 'rack3-01' : 'rack1-17', run: 'r', seq: 100 - i, host_us: NOW_US - i * 1e6 - 123, kind: 'Text',
  line: i === 2 ? `{"message":${JSON.stringify(HOSTILE)}}` : `{"timestamp":${100 - i},"message":"watchdog ${i}"}`,
}));

// The scripted API: the lab's pages from the source tree, the viewer's under /board/.
const asked = [];
let boardsAnswer = { now_us: NOW_US, window_s: 3600, boards };
function serveFile(response, file) {
  const type = file.endsWith('.html') ? 'text/html' : file.endsWith('.css') ? 'text/css' : 'text/javascript';
  response.writeHead(200, { 'Content-Type': `${type}; charset=utf-8` });
  response.end(fs.readFileSync(file));
}
function answer(response, status, body) {
  response.writeHead(status, { 'Content-Type': 'application/json' });
  response.end(JSON.stringify(body));
}
function api(url, request, response) {
  asked.push({ path: url.pathname, params: url.searchParams, authorization: request.headers.authorization ?? null });
  if (url.pathname === '/api/boards') {
    if (url.searchParams.get('boards') === 'bad[') return answer(response, 400, { error: 'boards: not a glob of board names' });
    const glob = url.searchParams.get('boards');
    const pattern = glob ? new RegExp(`^${glob.replace(/\*/g, '.*').replace(/\?/g, '.')}$`) : null;
    return answer(response, 200, { ...boardsAnswer, window_s: Number(url.searchParams.get('window')),
                                   boards: boardsAnswer.boards.filter((b) => !pattern || pattern.test(b.board)) });
  }
  if (url.pathname === '/api/runs') {
    return answer(response, 200, { runs: [{ run: 'r1a', first_us: NOW_US - 60e6, last_us: NOW_US, records: 900 },
                                          { run: 'r0"<i>', first_us: NOW_US - 7200e6, last_us: NOW_US - 3600e6, records: 10 }] });
  }
  if (url.pathname === '/api/search') {
    const before = url.searchParams.get('before');
    return answer(response, 200, before === 'page2' ? { hits: hits.slice(3), next: null } : { hits: hits.slice(0, 3), next: 'page2' });
  }
  return answer(response, 404, { error: 'no such API' });
}
const mock = http.createServer((request, response) => {
  const url = new URL(request.url, 'http://127.0.0.1');
  if (url.pathname.startsWith('/api/')) return api(url, request, response);
  const viewer = url.pathname.startsWith('/board/');
  const name = (viewer ? url.pathname.slice(7) : url.pathname.slice(1)) || (viewer ? 'index.html' : 'lab.html');
  const file = path.join(root, 'lib', viewer ? 'serve/viewer' : 'lab/pages', path.basename(name));
  if (!fs.existsSync(file)) return answer(response, 404, { error: 'not found' });
  return serveFile(response, file);
});
await new Promise((resolve) => mock.listen(0, '127.0.0.1', resolve));
const base = `http://127.0.0.1:${mock.address().port}`;
const lastAsked = (apiPath) => [...asked].reverse().find((a) => a.path === apiPath);

const browser = await chromium.launch({
  executablePath: browserPath,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking',
         '--disable-component-update', '--disable-sync'],
});
const pageErrors = [];
async function newPage() {
  const page = await browser.newPage({ viewport: { width: 1400, height: 700 } });
  page.on('pageerror', (error) => pageErrors.push(String(error)));
  // The 400 the bad glob asks for on purpose is the one resource error expected.
  page.on('console', (message) => {
    if (message.type() === 'error' && !message.text().includes('status of 400')) pageErrors.push(message.text());
  });
  return page;
}
const rowTexts = (page) => page.evaluate(() => [...document.querySelectorAll('#boards tbody tr[data-board]')].map((row) => {
  const cell = (name) => row.querySelector(`td.${name}`).textContent;
  return { board: row.dataset.board, live: row.querySelector('.dot').classList.contains('on'), run: cell('run'),
           records: cell('records'), lost: cell('lost'), gaps: cell('gaps'), exceptions: cell('exceptions'),
           overflows: cell('overflows'), malformed: cell('malformed'), last_text: cell('last_text'),
           live_link: row.querySelector('td.views a').getAttribute('href') };
}));

async function boardsPage() {
  const page = await newPage();
  await page.goto(`${base}/?token=t%26k#boards`);
  await waitInPage(page, (n) => document.querySelectorAll('#boards tbody tr').length === n, boards.length,
                   'the boards table shows every board', () => document.querySelector('#boards').textContent);
  const rows = await rowTexts(page);
  check(rows.map((r) => r.board).join(' ') === 'rack1-17 rack3-01 rack3-02 rack9-99 x<b>bold</b>', `sorted by board by default (${rows.map((r) => r.board)})`);
  for (const b of boards) {
    const row = rows.find((r) => r.board === b.board);
    const same = row && row.live === b.live && row.run === (b.run ?? '–') && row.last_text === (b.last_text ?? '') &&
      ['records', 'lost', 'gaps', 'exceptions', 'overflows', 'malformed'].every((k) => row[k] === String(b[k]));
    check(same, `the row of ${b.board} shows the API's figures (${JSON.stringify(row)})`);
    const link = new URL(row.live_link, base);
    check(link.pathname === '/board/' && link.searchParams.get('board') === b.board && link.searchParams.get('live') === '1' &&
          link.searchParams.get('token') === 't&k', `the live link of ${b.board} is its viewer, live, with the token (${row.live_link})`);
  }
  check(await page.evaluate(() => !document.querySelector('#boards img, #boards tbody b, #boards script') && window.pwned === undefined),
        'hostile names and lines are text: no element made of them, no script run');
  const overflow = await page.evaluate(() => [...document.querySelectorAll('#boards td.views a')]
    .map((a) => a.getBoundingClientRect().right).filter((right) => right > window.innerWidth).length);
  check(overflow === 0, `a 1 MB line is cut in its cell: every row's links stay on the page (${overflow} off it)`);
  check(lastAsked('/api/boards').authorization === 'Bearer t&k', `the page's token goes to the API as a Bearer header (${lastAsked('/api/boards').authorization})`);
  await page.screenshot({ path: path.join(artifacts, 'lab-boards.png') });

  // A poll that finds the same figures changes nothing in the document; a changed figure is updated in place.
  await page.evaluate(() => {
    window.mutations = 0;
    new MutationObserver((list) => { window.mutations += list.length; })
      .observe(document.querySelector('#boards tbody'), { subtree: true, childList: true, characterData: true, attributes: true });
  });
  boardsAnswer = { ...boardsAnswer, boards: boards.map((b) => ({ ...b, last_seen_us: null })) };  // "–" from now on: stable
  const polled = asked.length;
  await waitUntil(() => asked.filter((a) => a.path === '/api/boards').length >= 1 && asked.length > polled + 1, 'two polls');
  await page.evaluate(() => { window.mutations = 0; });
  const quiet = asked.length;
  await waitUntil(() => asked.length > quiet + 1, 'two more polls');
  check(await page.evaluate(() => window.mutations) === 0, `a poll with the same figures changes nothing (${await page.evaluate(() => window.mutations)} mutations)`);
  const rowNode = await page.$('#boards tbody tr[data-board="rack3-01"]');
  boardsAnswer = { ...boardsAnswer, boards: boardsAnswer.boards.map((b) => (b.board === 'rack3-01' ? { ...b, records: 91500 } : b)) };
  await waitInPage(page, () => document.querySelector('#boards tr[data-board="rack3-01"] td.records').textContent === '91500', null,
                   'a new figure appears without reloading');
  check(await rowNode.evaluate((row) => row.isConnected), 'the row is updated in place, not replaced');

  // Sorting, filtering, the window: each in the address, each restored from it.
  await page.click('#boards th[data-sort="lost"]');
  await page.click('#boards th[data-sort="lost"]');
  const byLost = (await rowTexts(page)).map((r) => r.board);
  check(byLost[0] === 'rack3-02' && byLost.length === 5 && new URLSearchParams(page.url().split('#boards?')[1]).get('sort') === 'lost' &&
        page.url().includes('order=desc'), `a click on lost twice sorts by it, most first, in the address (${byLost}; ${page.url()})`);
  await page.fill('#boards-glob', 'rack3-*');
  await waitInPage(page, () => document.querySelectorAll('#boards tbody tr').length === 2, null, 'the glob keeps rack3-*');
  check(lastAsked('/api/boards').params.get('boards') === 'rack3-*', 'the glob goes to the API as boards=');
  await page.selectOption('#boards-window', '86400');
  await waitUntil(() => lastAsked('/api/boards').params.get('window') === '86400', 'the window goes to the API');
  const address = page.url();
  const again = await newPage();
  await again.goto(address);
  await waitInPage(again, () => document.querySelectorAll('#boards tbody tr').length === 2, null, 'the address restores the view');
  check(await again.evaluate(() => [document.querySelector('#boards-glob').value, document.querySelector('#boards-window').value,
                                    document.querySelector('th.sorted').dataset.sort].join(' ')) === 'rack3-* 86400 lost',
        `the address restores glob, window and sort (${address})`);
  await again.close();

  // A board's runs: links to their stored views.
  await page.click('#boards tr[data-board="rack3-01"] td.views button');
  await waitInPage(page, () => document.querySelectorAll('tr.runs .run').length === 2, null, "the board's runs are listed");
  const runLinks = await page.evaluate(() => [...document.querySelectorAll('tr.runs .run a')].map((a) => a.getAttribute('href')));
  const first = new URL(runLinks[0], base).searchParams;
  const hostile = new URL(runLinks[2], base).searchParams;
  check(first.get('board') === 'rack3-01' && first.get('run') === 'r1a' && hostile.get('run') === 'r0"<i>' &&
        new URL(runLinks[3], base).searchParams.get('then') === 'live', `each run links to its stored view (${runLinks})`);
  check(await page.evaluate(() => !document.querySelector('tr.runs i')), 'a hostile run name is text');

  // An error answer is shown as the server's text.
  await page.fill('#boards-glob', 'bad[');
  await waitInPage(page, () => document.querySelector('#status').textContent.includes('not a glob'), null, 'a 400 is shown');
  await page.close();
}

async function searchPage() {
  const page = await newPage();
  await page.goto(`${base}/#search`);
  await page.fill('#search-text', HOSTILE);
  await page.fill('#search-boards', 'rack*');
  await page.fill('#search-from', '2026-11-28T00:00:00Z');
  await page.fill('#search-to', '2026-11-29T00:00:00.5Z');
  await page.check('#search-kinds input[value="Text"]');
  await page.check('#search-kinds input[value="Exception"]');
  await page.click('#search-go');
  await waitInPage(page, () => document.querySelectorAll('#hits tbody tr').length === 3, null, 'the first page of hits');
  const sent = lastAsked('/api/search').params;
  check(sent.get('text') === HOSTILE && sent.get('boards') === 'rack*' && sent.get('from') === '2026-11-28T00:00:00Z' &&
        sent.get('to') === '2026-11-29T00:00:00.5Z' && sent.getAll('kind').join() === 'Text,Exception' && !sent.has('before'),
        `the form goes to the API exactly (${sent})`);
  await page.click('#search-more');
  await waitInPage(page, () => document.querySelectorAll('#hits tbody tr').length === 5, null, 'the older hits are appended');
  check(lastAsked('/api/search').params.get('before') === 'page2', 'the next page is asked with the cursor');
  const shown = await page.evaluate(() => [...document.querySelectorAll('#hits tbody tr')].map((row) => ({
    host_us: Number(row.dataset.hostUs), line: row.querySelector('td.line').textContent, board: row.dataset.board,
    href: row.querySelector('td.time a').getAttribute('href') })));
  check(shown.map((h) => h.host_us).join() === hits.map((h) => h.host_us).join() && shown.every((h, i) => h.line === hits[i].line),
        'the hits are shown in the order given (newest first), their lines as text');
  check(await page.evaluate(() => !document.querySelector('#hits img') && window.pwned === undefined), 'a hostile line is text');
  const link = new URL(shown[1].href, base).searchParams;
  const micros = (text) => Date.parse(text.replace(/\.\d+Z$/, 'Z')) * 1000 + Number(/\.(\d{6})Z$/.exec(text)[1]);
  check(link.get('board') === hits[1].board && micros(link.get('mark')) === hits[1].host_us &&
        micros(link.get('from')) === hits[1].host_us - 10e6 && micros(link.get('to')) === hits[1].host_us + 10e6,
        `a hit opens its board stored 10 s either side of it, marked at its host time (${shown[1].href})`);
  await page.screenshot({ path: path.join(artifacts, 'lab-search.png') });
  const address = page.url();
  const before = asked.length;
  const again = await newPage();
  await again.goto(address);
  await waitInPage(again, () => document.querySelectorAll('#hits tbody tr').length === 3, null, 'the address repeats the search');
  check(asked.slice(before).some((a) => a.path === '/api/search' && a.params.get('text') === HOSTILE), `the search is its address (${address.slice(0, 120)}…)`);
  await again.close();
  await page.close();
}

// The viewer from trace-serve, opened as trace-lab links it: a stored view with a mark.
async function viewerPage() {
  const server = await startServer(path.join(buildDir, 'tools/trace-serve'), ['--cpu-hz', '1000000']);
  try {
    const hostBase = Date.UTC(2026, 10, 29, 2, 13, 0) * 1000;
    const records = [];
    for (let i = 0; i < 40; i++) {
      const host = hostBase + i * 250000 + 17;
      records.push({ timestamp: i * 1000, port: 0, event: { kind: 'Text', data: { message: `line ${i}` } }, source: 'itm', clock: 'cycles',
                     board: 'rack3-07', run: 'r9', seq: 2 * i, host_us: host });
      records.push({ timestamp: i * 1000 + 500, port: 1, event: { kind: 'TaskSwitch', data: { from_task: i % 2, to_task: (i + 1) % 2 } },
                     source: 'itm', clock: 'cycles', board: 'rack3-07', run: 'r9', seq: 2 * i + 1, host_us: host + 1 });
    }
    const markUs = hostBase + 25 * 250000 + 17 - 40;  // nearest: the Text record 25 (timestamp 25000), its TaskSwitch 41 after
    const view = new URLSearchParams({ board: 'rack3-07<b>x</b>', from: '2026-11-29T02:13:00Z', to: '2026-11-29T02:13:10Z',
                                       mark: `2026-11-29T02:13:06.${String(25 * 250000 % 1e6 + 17 - 40).padStart(6, '0')}Z` });
    const page = await newPage();
    const sockets = [];
    page.on('websocket', (socket) => sockets.push(socket.url()));
    await page.goto(`http://127.0.0.1:${server.port}/?${view}&other=1`);
    await waitInPage(page, () => document.querySelector('#connection').textContent === 'stored', null,
                     'the viewer connects, a stored view said as stored');
    const socket = new URL(sockets[0]);
    check(socket.pathname === '/ws' && ['board', 'from', 'to', 'mark'].every((k) => socket.searchParams.get(k) === view.get(k)) &&
          !socket.searchParams.has('other'), `the view parameters go to /ws, nothing else (${sockets[0]})`);
    check(await page.evaluate(() => document.querySelector('#view-board').textContent === 'rack3-07<b>x</b>' &&
                              !document.querySelector('#view b#view-board b') && !document.querySelector('#view').hidden),
          'the header shows the board (as text)');
    const range = await page.evaluate(() => document.querySelector('#view-range').textContent);
    check(range.includes('stored 2026-11-29T02:13:00Z – 2026-11-29T02:13:10Z') && range.includes('mark'), `the header shows the view (${range})`);
    check(await page.evaluate(() => document.querySelector('#view-lab').getAttribute('href')) === '/#boards', 'the header links back to the lab');
    await feed(server.child.stdin, records.map((r) => JSON.stringify(r)), 5000);
    await waitInPage(page, () => document.querySelectorAll('#console .line').length >= 30, null, 'the Console shows the records',
                     () => document.querySelector('#console').textContent.slice(-300));
    const lines = await page.evaluate(() => [...document.querySelectorAll('#console .line')].map((line) => ({
      host: line.querySelector('.host')?.textContent, text: line.textContent, marked: line.classList.contains('marked') })));
    const expectHost = (i) => new Date(Math.floor((hostBase + i * 250000) / 1000)).toISOString().slice(0, 19).replace('T', ' ') +
                              `.${String((i * 250000 + 17) % 1e6).padStart(6, '0')}`;
    const wrong = lines.filter((line) => { const i = Number(/line (\d+)$/.exec(line.text)[1]); return line.host !== expectHost(i); });
    check(lines.length > 0 && wrong.length === 0, `each Console line shows its host_us as UTC (${JSON.stringify(wrong[0] ?? lines[0])})`);
    const marked = lines.filter((line) => line.marked).map((line) => line.text);
    check(marked.length === 1 && marked[0].endsWith('line 25'), `the Console marks the line nearest the mark (${marked})`);
    await page.screenshot({ path: path.join(artifacts, 'lab-viewer-console.png') });
    await page.click('#tabs button[data-tab="timeline"]');
    await waitInPage(page, () => document.querySelector('#timeline').dataset.mark !== undefined, null, 'the Timeline has the mark');
    const [start, end] = (await page.evaluate(() => document.querySelector('#timeline').dataset.view)).split(' ').map(Number);
    const mark = Number(await page.evaluate(() => document.querySelector('#timeline').dataset.mark));
    check(mark === 25000, `the mark is the target time of the record nearest to it in host time (${mark}; ${markUs})`);
    check(Math.abs((start + end) / 2 - mark) < 1e-6 && start <= 500 && end >= 39500, `the Timeline centres on the mark with all the records in view (${start} – ${end})`);
    await page.screenshot({ path: path.join(artifacts, 'lab-viewer-stored.png') });
    await page.close();
    const plain = await newPage();
    const plainSockets = [];
    plain.on('websocket', (socket) => plainSockets.push(socket.url()));
    await plain.goto(`http://127.0.0.1:${server.port}/`);
    await waitInPage(plain, () => document.querySelector('#connection').textContent === 'live', null, 'the plain viewer connects');
    check(plainSockets[0] === `ws://127.0.0.1:${server.port}/ws` && await plain.evaluate(() => document.querySelector('#view').hidden),
          `without view parameters: /ws as before, no view in the header (${plainSockets[0]})`);
    await plain.close();
  } finally {
    server.child.kill('SIGTERM');
    await server.exited;
  }
}

try {
  await boardsPage();
  await searchPage();
  await viewerPage();
  check(pageErrors.length === 0, `no errors in the pages (${pageErrors.slice(0, 3).join(' | ')})`);
} catch (error) {
  check(false, `the test ran to its end (${error.stack})`);
} finally {
  await browser.close();
  mock.close();
}
finish();
