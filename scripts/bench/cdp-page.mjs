// Headless Chromium driven over the bare DevTools protocol, for the viewer benchmark.
// Playwright enables the Network domain on every page, and Chromium then copies every
// WebSocket frame's payload to the driver: at 200,000 records/s that is ~25 MB/s of
// DevTools traffic through the browser process, a cost no user's browser pays. This client
// enables only the Page domain: it creates a page, adds init scripts, evaluates expressions
// in it and closes it.
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

// ws is installed for the tests (tests/serve/node_modules).
const require = createRequire(path.join(path.dirname(fileURLToPath(import.meta.url)), '../../tests/serve/package.json'));
const WebSocket = require('ws');

export async function launchBrowser(executable) {
  const chrome = spawn(executable, ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking',
                                    '--disable-component-update', '--disable-sync', '--remote-debugging-port=0', 'about:blank'],
                       { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  const endpoint = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`chromium did not start: ${log}`)), 30000);
    chrome.stderr.on('data', (chunk) => {
      log += chunk;
      const match = /DevTools listening on (ws:\/\/\S+)/.exec(log);
      if (match) { clearTimeout(timer); resolve(match[1]); }
    });
    chrome.once('exit', (code) => reject(new Error(`chromium exited (${code}): ${log}`)));
  });
  const socket = new WebSocket(endpoint, { perMessageDeflate: false, maxPayload: 1 << 30 });
  await new Promise((resolve, reject) => { socket.once('open', resolve); socket.once('error', reject); });
  let lastId = 0;
  const pending = new Map();
  const listeners = new Map();  // "sessionId method" -> handler of that event
  socket.on('message', (bytes) => {
    const message = JSON.parse(bytes);
    if (message.method) listeners.get(`${message.sessionId} ${message.method}`)?.(message.params);
    const waiter = pending.get(message.id);
    if (!waiter) return;
    pending.delete(message.id);
    if (message.error) waiter.reject(new Error(`${waiter.method}: ${message.error.message}`));
    else waiter.resolve(message.result);
  });
  const call = (method, params = {}, sessionId = undefined) => new Promise((resolve, reject) => {
    const id = ++lastId;
    pending.set(id, { resolve, reject, method });
    socket.send(JSON.stringify({ id, method, params, sessionId }));
  });

  async function newPage({ width, height }) {
    const { targetId } = await call('Target.createTarget', { url: 'about:blank' });
    const { sessionId } = await call('Target.attachToTarget', { targetId, flatten: true });
    await call('Emulation.setDeviceMetricsOverride', { width, height, deviceScaleFactor: 1, mobile: false }, sessionId);
    await call('Page.enable', {}, sessionId);  // for the init scripts (it copies no network traffic)
    const evaluate = async (expression) => {
      const { result, exceptionDetails } = await call('Runtime.evaluate', { expression, awaitPromise: true, returnByValue: true }, sessionId);
      if (exceptionDetails) throw new Error(`in the page: ${exceptionDetails.exception?.description ?? exceptionDetails.text}`);
      return result.value;
    };
    return {
      evaluate,
      // A DevTools command on this page and an event's handler (the tracing's, for
      // TRACEPIPE_BENCH_TRACE).
      send: (method, params = {}) => call(method, params, sessionId),
      on: (method, handler) => listeners.set(`${sessionId} ${method}`, handler),
      // Runs before the page's own scripts on every navigation.
      addInitScript: (source) => call('Page.addScriptToEvaluateOnNewDocument', { source }, sessionId),
      goto: (url) => call('Page.navigate', { url }, sessionId),
      // Polls until the expression is true; it may throw meanwhile (the page still loading).
      async waitFor(expression, timeoutMs, what) {
        const until = Date.now() + timeoutMs;
        let problem = '';
        for (;;) {
          try {
            if (await evaluate(expression)) return;
          } catch (error) {
            problem = `: ${error.message}`;
          }
          if (Date.now() > until) throw new Error(`timed out waiting for ${what}${problem}`);
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      },
      close: () => call('Target.closeTarget', { targetId }),
    };
  }

  return {
    newPage,
    close() {
      socket.close();
      chrome.kill();
    },
  };
}
