// Helpers for the trace-serve tests: start the real binary, talk to it with real
// WebSocket clients (npm ws), validate every message against both schema sets.
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import WebSocket from 'ws';
import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));  // pace: the callers say why

// Deadlines for waits on the system's own signals (a message, a counter, a log line).
// Generous, since a loaded machine is slow, and never a fixed sleep: a wait ends as soon
// as what it waits for is there, and one that runs out fails with what was seen.
export const DEADLINE_MS = 60000;

// Polls `condition` until it is true; on the deadline throws with `seen()`'s description.
export async function waitUntil(condition, what, seen = () => '', timeoutMs = DEADLINE_MS) {
  const until = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > until) throw new Error(`${what}: not within ${timeoutMs / 1000} s (seen: ${await seen()})`);
    await sleep(20);  // pace: polling interval of a wait with a deadline
  }
}

// page.waitForFunction with a deadline that fails loudly: the check fails naming what the
// page showed (`seen` runs in the page), and the caller learns it did not happen.
export async function waitInPage(page, predicate, arg, what, seen, timeoutMs = DEADLINE_MS) {
  try {
    await page.waitForFunction(predicate, arg, { timeout: timeoutMs });
    return true;
  } catch (error) {
    const shown = seen ? await page.evaluate(seen).catch((e) => `(page unreadable: ${e.message})`) : '';
    check(false, `${what}: not within ${timeoutMs / 1000} s (seen: ${JSON.stringify(shown).slice(0, 300)}; ${error.message.split('\n')[0]})`);
    return false;
  }
}

let passed = 0;
let failed = 0;
// TRACEPIPE_SHOW_PASSES=1 prints the passing checks too (their measured figures).
const showPasses = process.env.TRACEPIPE_SHOW_PASSES === '1';
export function check(ok, what) {
  if (ok) {
    passed++;
    if (showPasses) console.log(`ok   ${what}`);
  } else {
    failed++;
    console.log(`FAIL ${what}`);
  }
}
// Runs one named step of a test; an exception is a failed check, and the next step runs.
export async function step(name, body) {
  console.log(`-- ${name}`);
  try {
    await body();
  } catch (error) {
    check(false, `${name}: ${error.stack || error}`);
  }
}

export function finish() {
  console.log(`${passed} passed, ${failed} failed`);
  process.exit(failed === 0 ? 0 : 1);
}

const readJson = (file) => JSON.parse(fs.readFileSync(file, 'utf8'));

// The project's protocol schemas (with the record schemas they refer to) and, when
// ../shared is there, the original Callisto project's own server-message.json.
export function validators(root, shared) {
  const ajv = new Ajv({ allErrors: true, strict: false, formats: { uint8: true, uint32: true, uint64: true, double: true } });
  addFormats(ajv);
  ajv.addSchema(readJson(path.join(root, 'schemas/record.schema.json')));
  ajv.addSchema(readJson(path.join(root, 'schemas/frames.schema.json')));
  const ours = ajv.compile(readJson(path.join(root, 'schemas/server-message.schema.json')));
  const oursClient = ajv.compile(readJson(path.join(root, 'schemas/client-message.schema.json')));
  let callisto = null;
  let callistoClient = null;
  const callistoDir = path.join(shared, 'reference/callisto-schema');
  if (fs.existsSync(path.join(callistoDir, 'server-message.json'))) {
    const strict = new Ajv({ allErrors: true, strict: false, formats: { uint8: true, uint32: true, uint64: true, double: true } });
    addFormats(strict);
    callisto = strict.compile(readJson(path.join(callistoDir, 'server-message.json')));
    callistoClient = strict.compile(readJson(path.join(callistoDir, 'client-message.json')));
  } else {
    console.log(`note: ${callistoDir} is absent: Callisto's own schemas are not checked`);
  }
  return { ours, oursClient, callisto, callistoClient };
}

// Starts trace-serve on a free port; resolves once it listens.
export async function startServer(binary, args, options = {}) {
  const child = spawn(binary, ['--listen', options.listen ?? '127.0.0.1:0', ...args], {
    stdio: [options.stdin ?? 'pipe', 'ignore', 'pipe'],
    env: { ...process.env, ...(options.env || {}) },
  });
  let log = '';
  const port = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`trace-serve did not start: ${log}`)), DEADLINE_MS);  // deadline: fails when it expires
    child.stderr.on('data', (chunk) => {
      log += chunk;
      const match = /serving on http:\/\/[^:]+:(\d+)\//.exec(log);
      if (match) {
        clearTimeout(timer);
        resolve(Number(match[1]));
      }
    });
    child.on('exit', (code) => reject(new Error(`trace-serve exited with ${code}: ${log}`)));
  });
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  return { child, port, exited, log: () => log, url: `ws://127.0.0.1:${port}/ws`, http: `http://127.0.0.1:${port}` };
}

// A client that records every message and checks each against the schemas.
export class Client {
  constructor(url, schemas, options = {}) {
    this.messages = [];
    this.counts = {};
    this.events = 0;
    this.schemas = schemas;
    this.strict = options.strict ?? true;  // expect Callisto-valid messages only
    this.keep = options.keep ?? true;
    // Kinds of another producer: outside the record schema by definition, not validated.
    this.foreignKinds = new Set(options.foreignKinds ?? []);
    this.invalid = [];
    this.waiters = [];
    this.ws = options.protocols ? new WebSocket(url, options.protocols, options.ws || {}) : new WebSocket(url, options.ws || {});
    this.opened = new Promise((resolve, reject) => {
      this.ws.on('open', resolve);
      this.ws.on('error', reject);
      this.ws.on('unexpected-response', (request, response) => reject(new Error(`HTTP ${response.statusCode}`)));
    });
    this.closed = new Promise((resolve) => this.ws.on('close', (code, reason) => resolve({ code, reason: String(reason) })));
    this.ws.on('message', (data, binary) => this.onMessage(data, binary));
  }

  onMessage(data, binary) {
    const text = String(data);
    const message = JSON.parse(text);
    this.counts[message.type] = (this.counts[message.type] || 0) + 1;
    if (message.type === 'Event' || message.type === 'Itm') this.events++;
    if (message.type === 'Events') this.events += message.data.length;  // the batched form
    const foreign = message.type === 'Event' && this.foreignKinds.has(message.data?.event?.kind);
    const validateAll = !foreign && (this.keep || message.type !== 'Event' || this.events % 97 === 1);
    if (binary) this.invalid.push('binary frame');
    if (validateAll) {
      if (!this.schemas.ours(message)) this.invalid.push(`ours: ${text.slice(0, 200)} ${JSON.stringify(this.schemas.ours.errors?.[0])}`);
      if (this.strict && this.schemas.callisto && !this.schemas.callisto(message)) {
        this.invalid.push(`callisto: ${text.slice(0, 200)} ${JSON.stringify(this.schemas.callisto.errors?.[0])}`);
      }
    }
    if (this.keep || message.type !== 'Event') this.messages.push(message);
    this.waiters = this.waiters.filter((waiter) => !waiter(message));
  }

  send(message) {
    if (this.schemas.oursClient && typeof message === 'object') {
      // What the tests send on purpose is checked against our client schema too (bad
      // messages are sent as strings).
      if (!this.schemas.oursClient(message)) throw new Error(`test sends an invalid message ${JSON.stringify(message)}`);
      if (this.schemas.callistoClient && !this.schemas.callistoClient(message) && !message.data?.event_types?.includes('*')) {
        throw new Error(`test sends a message Callisto's schema rejects ${JSON.stringify(message)}`);
      }
    }
    this.ws.send(typeof message === 'string' ? message : JSON.stringify(message));
  }

  // Resolves with the first message (from now on, or already received) that matches.
  next(predicate, timeoutMs = DEADLINE_MS, what = 'message') {
    const already = this.messages.find(predicate);
    if (already) {
      this.messages.splice(this.messages.indexOf(already), 1);
      return Promise.resolve(already);
    }
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what} ` +  // deadline: fails when it expires
        `(${this.events} events, ${JSON.stringify(this.counts)} so far)`)), timeoutMs);
      this.waiters.push((message) => {
        if (!predicate(message)) return false;
        clearTimeout(timer);
        const index = this.messages.indexOf(message);
        if (index >= 0) this.messages.splice(index, 1);
        resolve(message);
        return true;
      });
    });
  }

  // Resolves once condition() holds (checked now and after each message); consumes nothing.
  until(condition, what = 'condition', timeoutMs = DEADLINE_MS) {
    if (condition()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what} ` +  // deadline: fails when it expires
        `(${this.events} events, ${JSON.stringify(this.counts)} so far)`)), timeoutMs);
      this.waiters.push(() => {
        if (!condition()) return false;
        clearTimeout(timer);
        resolve();
        return true;
      });
    });
  }

  type(type, timeoutMs = DEADLINE_MS) {
    return this.next((m) => m.type === type, timeoutMs, type);
  }

  error(code, timeoutMs = DEADLINE_MS) {
    return this.next((m) => m.type === 'Error' && m.data.code === code, timeoutMs, `Error ${code}`);
  }

  async connectAndStart(start = { allow_mask: 0xFFFFFFFF, baud_rate: 2000000 }, filter = null) {
    await this.opened;
    await this.type('Hello');
    this.send({ type: 'Connect', data: { probe_selector: null, chip: null, token: null } });
    await this.next((m) => m.type === 'Status' && m.data.connected, DEADLINE_MS, 'Status connected');
    if (filter) this.send({ type: 'SetFilter', data: filter });
    this.send({ type: 'Start', data: start });
    return this.type('Meta');
  }

  close() {
    this.ws.close();
    return this.closed;
  }
}

// Records to serve: generated by the real itm-synth | itm-decode.
export function generateRecords(buildDir, size, seed) {
  const synth = execFileSync(path.join(buildDir, 'tests/itm-synth'), ['--size', String(size), '--seed', String(seed)], { maxBuffer: 1 << 30 });
  return execFileSync(path.join(buildDir, 'tools/itm-decode'), [], { input: synth, maxBuffer: 1 << 30 }).toString();
}

export const coreKinds = new Set(['Text', 'Marker', 'TaskSwitch', 'IsrEnter', 'IsrExit', 'IdleEnter', 'IdleExit', 'Counter', 'Raw']);

// Writes lines to a stream at about `perSecond` lines a second; resolves when done.
export async function feed(stream, lines, perSecond) {
  const chunk = Math.max(1, Math.round(perSecond / 100));
  for (let i = 0; i < lines.length; i += chunk) {
    const text = `${lines.slice(i, i + chunk).join('\n')}\n`;
    if (!stream.write(text)) await new Promise((resolve) => stream.once('drain', resolve));
    await sleep(10);  // pace: the feed rate asked for
  }
}

export function rssKb(pid, field = 'VmHWM') {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = new RegExp(`${field}:\\s+(\\d+)`).exec(status);
  return match ? Number(match[1]) : 0;
}
