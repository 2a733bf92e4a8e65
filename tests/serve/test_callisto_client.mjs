// trace-serve with the ORIGINAL Callisto ITM Viewer client: its React renderer, built from
// its own sources (../shared/reference/callisto-client/dist), in headless Debian Chromium.
// Only window.electronAPI is stubbed, with what the client's electron/main.ts returns when no
// probe-rs is installed and an external server listens on :9229. The page is served from a
// loopback origin on another port (as the client's development server does), so this also
// proves trace-serve admits the real client with default flags. trace-serve is fed by
// `swo-capture --simulate | itm-decode`. Checked: the client's event list fills with the
// kinds the stream carries, its stats tiles show non-zero rates, every WebSocket message
// validates against Callisto's own schema, and the page logs no errors. A screenshot goes to
// the artifacts directory.
// Usage: node test_callisto_client.mjs PROJECT_ROOT BUILD_DIR SHARED_DIR ARTIFACT_DIR
import { chromium } from 'playwright-core';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { check, finish, step, startServer, validators, waitInPage } from './lib.mjs';

const [root, buildDir, shared, artifacts] = process.argv.slice(2);
const dist = path.join(shared, 'reference/callisto-client/dist');
if (!fs.existsSync(path.join(dist, 'index.html'))) {
  console.log(`skipped: the original Callisto client is not at ${dist} (../shared absent)`);
  process.exit(77);
}
const browserPath = process.env.CHROMIUM || '/usr/bin/chromium';
if (!fs.existsSync(browserPath)) {
  console.log(`FAIL missing chromium (${browserPath}): run scripts/install-deps`);
  process.exit(1);
}
fs.mkdirSync(artifacts, { recursive: true });
const schemas = validators(root, shared);

// The client's dist/, served as its Vite development server would (a loopback origin).
const types = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css' };
const pages = http.createServer((request, response) => {
  const wanted = decodeURIComponent(new URL(request.url, 'http://x').pathname);
  if (wanted === '/vite.svg') {
    // index.html names Vite's icon, which the client's build leaves out of dist/.
    response.writeHead(200, { 'Content-Type': 'image/svg+xml' }).end('<svg xmlns="http://www.w3.org/2000/svg"/>');
    return;
  }
  const file = path.join(dist, wanted === '/' ? 'index.html' : wanted);
  if (!file.startsWith(dist) || !fs.existsSync(file) || fs.statSync(file).isDirectory()) {
    response.writeHead(404).end();
    return;
  }
  response.writeHead(200, { 'Content-Type': types[path.extname(file)] || 'application/octet-stream' });
  response.end(fs.readFileSync(file));
});
await new Promise((resolve) => pages.listen(0, '127.0.0.1', resolve));
const pageUrl = `http://127.0.0.1:${pages.address().port}/`;

// The client has ws://127.0.0.1:9229/ws built in: the server must listen there.
const server = await startServer(path.join(buildDir, 'tools/trace-serve'), [], { listen: '127.0.0.1:9229' })
  .catch((error) => {
    console.log(`FAIL trace-serve could not listen on 127.0.0.1:9229, the address the Callisto client has built in: ${error.message}`);
    process.exit(1);
  });
const producer = spawn('sh', ['-c', `'${buildDir}/tools/swo-capture' --simulate --seed 3 --rate 20000 | '${buildDir}/tools/itm-decode'`],
  { stdio: ['ignore', 'pipe', 'inherit'], detached: true });
producer.stdout.pipe(server.child.stdin);
server.child.stdin.on('error', () => {});  // the server going first at the end is fine

// What electron/main.ts answers when no probe-rs is installed and a server answers on :9229.
const electronApi = () => {
  window.electronAPI = {
    getAvailableDevices: async () => ({ success: true, devices: [{ id: 'mock', name: 'Mock Device', type: 'mock' }] }),
    restartServerWithDevice: async () => ({ success: true, message: 'External server already running on :9229' }),
    getServerStatus: async () => ({ running: true, external: true }),
    restartServer: async () => ({ success: true }),
    showSaveDialog: async () => ({ canceled: true }),
    showOpenDialog: async () => ({ canceled: true, filePaths: [] }),
    platform: 'linux',
    versions: { node: '20', chrome: '120', electron: '28' },
  };
};

const browser = await chromium.launch({
  executablePath: browserPath,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
         '--disable-component-update', '--disable-sync'],
});
const received = { messages: 0, invalid: [], types: {}, kinds: new Set() };
const pageErrors = [];
try {
  const page = await browser.newPage({ viewport: { width: 1600, height: 1000 } });
  page.on('pageerror', (error) => pageErrors.push(String(error)));
  page.on('console', (message) => { if (message.type() === 'error') pageErrors.push(message.text()); });
  page.on('websocket', (socket) => {
    socket.on('framereceived', ({ payload }) => {
      const message = JSON.parse(String(payload));
      received.messages++;
      received.types[message.type] = (received.types[message.type] || 0) + 1;
      if (message.type === 'Event') received.kinds.add(message.data.event.kind);
      if (!schemas.callisto(message)) received.invalid.push(`${String(payload).slice(0, 160)} ${JSON.stringify(schemas.callisto.errors?.[0])}`);
    });
  });
  await page.addInitScript(electronApi);

  await step('the user picks the mock device and presses Connect', async () => {
    await page.goto(pageUrl);
    await page.getByText('Select Device').first().waitFor();
    await page.getByText('Mock Device - Simulated data').click();
    await page.locator('.btn.btn-primary', { hasText: /^Connect$/ }).click();
    await page.getByText('🟢 Connect').click();
    await waitInPage(page, () => document.body.textContent.includes('Disconnect'), null, 'the client shows it is connected',
                     () => document.querySelector('.toolbar')?.textContent);
  });

  await step('its event list fills with the kinds the stream carries', async () => {
    await waitInPage(page, () => document.querySelectorAll('.event-item').length >= 1000, null, 'the event list holds 1000 events',
                     () => document.querySelector('.timeline-header')?.textContent);
    const shown = await page.evaluate(() => [...document.querySelectorAll('.event-content')].map((e) => e.className));
    check(shown.length >= 1000, `the client lists ${shown.length} events`);
    // The client's own classes for the kinds (components/Timeline.tsx).
    const classOf = { Text: 'event-text', Marker: 'event-marker', TaskSwitch: 'event-task', IsrEnter: 'event-isr', IsrExit: 'event-isr',
                      IdleEnter: 'event-task', IdleExit: 'event-task', Counter: 'event-counter', Raw: 'event-text' };
    const wanted = [...new Set([...received.kinds].map((kind) => classOf[kind]))];
    const present = wanted.filter((cls) => shown.some((name) => name.includes(cls)));
    check(received.kinds.size >= 5 && present.length === wanted.length,
          `the list shows every kind the stream carried (${[...received.kinds].join(', ')} -> ${present.join(', ')})`);
    check(!(await page.textContent('body')).includes('No events received yet'), 'no "No events received yet"');
  });

  await step('its stats tiles show non-zero rates', async () => {
    const tiles = () => Object.fromEntries([...document.querySelectorAll('.stat-item')].map((item) =>
      [item.querySelector('.stat-label')?.textContent, item.querySelector('.stat-value')?.textContent]));
    await waitInPage(page, () => {
      const values = Object.fromEntries([...document.querySelectorAll('.stat-item')].map((item) =>
        [item.querySelector('.stat-label')?.textContent, item.querySelector('.stat-value')?.textContent]));
      return values['Events/sec'] && values['Events/sec'] !== '0' && values.Throughput && values.Throughput !== '0 B/s';
    }, null, 'the stats tiles show rates', tiles);
    const values = await page.evaluate(tiles);
    check(values['Events/sec'] !== '0' && values.Throughput !== '0 B/s' && values['CPU Load'] !== 'N/A',
          `Events/sec ${values['Events/sec']}, Throughput ${values.Throughput}, CPU Load ${values['CPU Load']}`);
    await page.screenshot({ path: path.join(artifacts, 'callisto-client.png') });
  });

  await step('Disconnect: Stop, and the client shows it is disconnected', async () => {
    await page.getByText('🔴 Disconnect').click();
    await waitInPage(page, () => document.body.textContent.includes('🟢 Connect'), null, 'the client shows Connect again',
                     () => document.querySelector('.toolbar')?.textContent);
  });

  check(received.messages > 1000 && received.types.Hello === 1 && received.types.Status >= 1 && received.types.Meta === 1 &&
        received.types.Stats >= 1, `the client got Hello, Status, Meta, Events and Stats (${JSON.stringify(received.types)})`);
  check(!received.types.Itm && !received.types.Error, 'no Itm or Error messages it would ignore');
  check(received.invalid.length === 0, `every message is valid under Callisto's own schema (${received.invalid.length} invalid: ${received.invalid.slice(0, 2).join(' | ')})`);
  check(pageErrors.length === 0, `the page logs no errors (${pageErrors.slice(0, 3).join(' | ')})`);
} finally {
  await browser.close();
  try { process.kill(-producer.pid, 'SIGTERM'); } catch { /* already gone */ }
  server.child.kill('SIGTERM');
  await server.exited;
  pages.close();
}
finish();
