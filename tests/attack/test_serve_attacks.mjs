// The attack campaign against trace-serve (issue 15), on loopback, through real sockets:
// 1000 concurrent WebSocket connections past --max-clients; slowloris headers and a client
// that sends one byte a second; frames at the size limit and one over; fragmented frames
// with pings between the fragments; invalid UTF-8; a ping flood; garbage instead of HTTP;
// conflicting Content-Length / Transfer-Encoding; path traversal on the viewer; a rebinding
// Host with its Origin; client messages nested 10,000 deep; input with a 10 MB line, invalid
// JSON and binary junk. Throughout, a well-behaved client keeps receiving, and the server's
// RSS, sampled every 200 ms, stays under a stated bound.
// Frames are built here from RFC 6455 (section 5), not with the server's code.
// Usage: node test_serve_attacks.mjs PROJECT_ROOT BUILD_DIR
import crypto from 'node:crypto';
import net from 'node:net';
import path from 'node:path';
import {
  check, finish, step, validators, startServer, Client, sleep, rssKb, waitUntil,
} from '../serve/lib.mjs';

const [root, buildDir] = process.argv.slice(2);
const serve = path.join(buildDir, 'tools/trace-serve');
const schemas = validators(root, '');
// 256 clients x 64 KiB queues, a 10 MB input line and the process itself: well under this.
const RSS_BOUND_KB = 64 * 1024;
const sanitized = process.env.TRACEPIPE_SANITIZED === '1';  // shadow memory: RSS means nothing

// ---- raw sockets -----------------------------------------------------------------------
class Raw {
  constructor(port) {
    this.socket = net.connect(port, '127.0.0.1');
    this.data = Buffer.alloc(0);
    this.ended = false;
    this.socket.on('data', (d) => { this.data = Buffer.concat([this.data, d]); });
    this.socket.on('error', () => { this.ended = true; });
    this.socket.on('close', () => { this.ended = true; });
    this.connected = new Promise((resolve) => this.socket.once('connect', resolve));
  }
  write(bytes) { if (!this.ended) this.socket.write(bytes); }
  text() { return this.data.toString('latin1'); }
  async until(condition, what, timeoutMs) {
    await waitUntil(() => condition(this), what, () => `${this.text().slice(0, 200)} ended=${this.ended}`, timeoutMs);
  }
  destroy() { this.socket.destroy(); }
}

async function upgrade(port, target = '/ws', headers = {}) {
  const raw = new Raw(port);
  await raw.connected;
  const key = crypto.randomBytes(16).toString('base64');
  const extra = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('');
  raw.write(`GET ${target} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
            `Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: ${key}\r\n${extra}\r\n`);
  await raw.until((r) => r.text().includes('\r\n\r\n') || r.ended, 'the upgrade response');
  const head = raw.text().slice(0, raw.text().indexOf('\r\n\r\n') + 4);
  raw.data = raw.data.subarray(head.length);
  raw.status = Number(/^HTTP\/1\.1 (\d+)/.exec(head)?.[1] ?? 0);
  return raw;
}

// A masked client frame (RFC 6455 5.2): FIN, opcode, mask bit always set from a client.
function frame(opcode, payload, fin = true) {
  const body = Buffer.isBuffer(payload) ? payload : Buffer.from(payload);
  const mask = crypto.randomBytes(4);
  let header;
  if (body.length < 126) {
    header = Buffer.from([(fin ? 0x80 : 0) | opcode, 0x80 | body.length]);
  } else if (body.length < 65536) {
    header = Buffer.alloc(4);
    header[0] = (fin ? 0x80 : 0) | opcode;
    header[1] = 0x80 | 126;
    header.writeUInt16BE(body.length, 2);
  } else {
    header = Buffer.alloc(10);
    header[0] = (fin ? 0x80 : 0) | opcode;
    header[1] = 0x80 | 127;
    header.writeBigUInt64BE(BigInt(body.length), 2);
  }
  const masked = Buffer.from(body.map((b, i) => b ^ mask[i % 4]));
  return Buffer.concat([header, mask, masked]);
}

// Server frames (unmasked) out of what arrived: [{opcode, payload}].
function serverFrames(data) {
  const frames = [];
  let at = 0;
  while (data.length - at >= 2) {
    let length = data[at + 1] & 0x7f;
    let offset = at + 2;
    if (length === 126) { if (data.length < at + 4) break; length = data.readUInt16BE(at + 2); offset = at + 4; }
    if (length === 127) { if (data.length < at + 10) break; length = Number(data.readBigUInt64BE(at + 2)); offset = at + 10; }
    if (data.length < offset + length) break;
    frames.push({ opcode: data[at] & 0x0f, payload: data.subarray(offset, offset + length) });
    at = offset + length;
  }
  return frames;
}
const closeCode = (raw) => {
  const close = serverFrames(raw.data).find((f) => f.opcode === 8);
  return close && close.payload.length >= 2 ? close.payload.readUInt16BE(0) : null;
};
const texts = (raw) => serverFrames(raw.data).filter((f) => f.opcode === 1).map((f) => JSON.parse(f.payload.toString()));

async function httpRaw(port, request) {
  const raw = new Raw(port);
  await raw.connected;
  raw.write(request);
  // The whole answer: its head and as many bytes of body as Content-Length says, or the close.
  const answered = (r) => {
    const text = r.text();
    const head = text.indexOf('\r\n\r\n');
    if (r.ended) return true;
    if (head < 0) return false;
    const length = /\r\ncontent-length: *(\d+)/i.exec(text.slice(0, head));
    return !length || Buffer.byteLength(text) - head - 4 >= Number(length[1]);
  };
  await raw.until(answered, 'an HTTP answer or a close', 15000);
  const status = Number(/^HTTP\/1\.1 (\d+)/.exec(raw.text())?.[1] ?? 0);
  raw.destroy();
  return { status, text: raw.text() };
}

// ---- the server, a keeper client, and an RSS sampler ----------------------------------
const server = await startServer(serve, ['--max-clients', '256', '--queue-size', '65536', '--stats'], {});
let peakRss = 0;
// pace: RSS sampled every 200 ms (the peak is checked)
const sampler = setInterval(() => { try { peakRss = Math.max(peakRss, rssKb(server.child.pid, 'VmRSS')); } catch { /* gone */ } }, 200);
let fed = 0;
// pace: 50 records every 20 ms, a live feed under every attack
const feeder = setInterval(() => {
  const lines = [];
  for (let i = 0; i < 50; i++) lines.push(JSON.stringify({ timestamp: fed++, port: 0, event: { kind: 'Text', data: { message: `tick ${fed}` } }, source: 'itm', clock: 'us' }));
  server.child.stdin.write(`${lines.join('\n')}\n`);
}, 20);
const keeper = new Client(server.url, schemas, { keep: false });
await keeper.connectAndStart();
const keeperReceives = async (what) => {
  const before = keeper.events;
  await keeper.until(() => keeper.events >= before + 50, `the keeper receives during: ${what}`, 30000).then(
    () => check(true, `the keeper keeps receiving: ${what}`),
    (e) => check(false, `the keeper keeps receiving: ${what}: ${e.message}`));
};

await step('1000 concurrent WebSocket connections, --max-clients 256', async () => {
  const sockets = [];
  for (let i = 0; i < 1000; i++) sockets.push(upgrade(server.port));
  const all = await Promise.all(sockets);
  const admitted = all.filter((r) => r.status === 101).length;
  const refused = all.filter((r) => r.status === 503).length;
  check(admitted === 255 && refused === 745, `exactly the free places admitted: ${admitted} upgraded (255 free beside the keeper), ${refused} refused with 503`);
  await keeperReceives('1000 connections');
  for (const r of all) r.destroy();
  // The server frees the places as it sees the connections close: a new client gets in then.
  let lastStatus = 0;
  const admittedAgain = await waitUntil(async () => {
    const attempt = await upgrade(server.port);
    lastStatus = attempt.status;
    attempt.destroy();
    return lastStatus === 101;
  }, 'a new client is admitted after the 1000 leave').then(() => true, () => false);  // the deadline fails the check
  check(admittedAgain, `after they leave, a new client gets in (last answer ${lastStatus})`);
});

await step('slowloris: headers one byte a second, a frame one byte a second', async () => {
  const slow = new Raw(server.port);
  await slow.connected;
  const request = 'GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\n';
  const started = Date.now();
  let i = 0;
  // pace: a byte a second is the slowloris scenario
  const drip = setInterval(() => { slow.write(request[i++ % request.length]); }, 1000);
  await slow.until((r) => r.ended, 'the server drops a request that never completes', 20000).catch(() => {});
  clearInterval(drip);
  const seconds = (Date.now() - started) / 1000;
  check(slow.ended && seconds < 15, `headers a byte a second: dropped after ${seconds.toFixed(1)} s (request deadline 10 s)`);
  const ws = await upgrade(server.port);
  const partial = frame(1, JSON.stringify({ type: 'Connect', data: { probe_selector: null, chip: null, token: null } }));
  let j = 0;
  // pace: a byte a second is the scenario
  const dripFrame = setInterval(() => { ws.write(partial.subarray(j, j + 1)); j++; }, 1000);
  await keeperReceives('a client sending a frame one byte a second');
  clearInterval(dripFrame);
  check(!ws.ended, 'an upgraded client that is merely slow is not dropped (idle clients are allowed)');
  ws.destroy();
});

await step('frames at the size limit and one over', async () => {
  const limit = 65536;
  const at = await upgrade(server.port);
  const padding = limit - JSON.stringify({ type: 'Connect', data: { probe_selector: null, chip: '' , token: null } }).length;
  at.write(frame(1, JSON.stringify({ type: 'Connect', data: { probe_selector: null, chip: 'x'.repeat(padding), token: null } })));
  await at.until((r) => texts(r).some((m) => m.type === 'Status' || m.type === 'Error'), 'an answer to a message at the limit');
  check(!texts(at).some((m) => m.type === 'Error' && /too large/.test(m.data.message)) && closeCode(at) === null,
        `a message of exactly ${limit} bytes is read (answered, not closed)`);
  const over = await upgrade(server.port);
  over.write(frame(1, 'x'.repeat(limit + 1)));
  await over.until((r) => closeCode(r) !== null, 'a close for one byte over');
  check(closeCode(over) === 1009, `one byte over the limit -> close 1009 (${closeCode(over)})`);
  at.destroy();
  over.destroy();
});

await step('fragmented frames with pings between the fragments; invalid UTF-8; a ping flood', async () => {
  const ws = await upgrade(server.port);
  const message = JSON.stringify({ type: 'Connect', data: { probe_selector: null, chip: null, token: null } });
  ws.write(frame(1, message.slice(0, 10), false));
  ws.write(frame(9, 'between'));
  ws.write(frame(0, message.slice(10, 30), false));
  ws.write(frame(9, 'again'));
  ws.write(frame(0, message.slice(30), true));
  await ws.until((r) => texts(r).some((m) => m.type === 'Status'), 'Status for the fragmented Connect');
  const pongs = serverFrames(ws.data).filter((f) => f.opcode === 10).map((f) => f.payload.toString());
  check(pongs.join(',') === 'between,again', `pings between fragments are answered in order (${pongs})`);
  check(texts(ws).some((m) => m.type === 'Status' && m.data.connected), 'the fragmented message is one Connect');
  ws.destroy();
  const bad = await upgrade(server.port);
  bad.write(frame(1, Buffer.from([0x7b, 0xc3, 0x28, 0x7d])));  // {, an invalid 2-byte sequence, }
  await bad.until((r) => closeCode(r) !== null || r.ended, 'a close for invalid UTF-8');
  check(closeCode(bad) === 1007, `invalid UTF-8 in a text frame -> close 1007 (${closeCode(bad)})`);
  bad.destroy();
  const flood = await upgrade(server.port);
  const pings = Buffer.concat(Array.from({ length: 20000 }, () => frame(9, 'p')));
  flood.write(pings);
  await flood.until((r) => r.ended || closeCode(r) !== null || serverFrames(r.data).filter((f) => f.opcode === 10).length >= 20000,
    'the ping flood answered or cut off', 30000).catch(() => {});
  const answered = serverFrames(flood.data).filter((f) => f.opcode === 10).length;
  check(answered === 20000 || closeCode(flood) === 1008 || flood.ended,
        `a ping flood is answered or cut off (${answered} pongs, close ${closeCode(flood)})`);
  await keeperReceives('a ping flood');
  flood.destroy();
});

await step('HTTP: garbage, conflicting Content-Length / Transfer-Encoding, path traversal, a rebinding Host', async () => {
  const garbage = await httpRaw(server.port, crypto.randomBytes(3000));
  check(garbage.status === 400 || garbage.status === 0, `random bytes instead of HTTP -> 400 or a close (${garbage.status})`);
  const smuggle = await httpRaw(server.port, 'POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /secret HTTP/1.1\r\n\r\n');
  check(smuggle.status === 400 && !/secret/.test(smuggle.text) && (smuggle.text.match(/HTTP\/1\.1/g) || []).length === 1,
        `Content-Length with Transfer-Encoding -> 400, no second request read (${smuggle.status})`);
  for (const target of ['/../../../etc/passwd', '/%2e%2e/%2e%2e/etc/passwd', '/viewer.js%00.html', '/..%2f..%2fetc%2fpasswd', '//etc/passwd']) {
    const answer = await httpRaw(server.port, `GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
    check((answer.status === 404 || answer.status === 400) && !answer.text.includes('root:'), `${target} -> ${answer.status}, no file outside the viewer`);
  }
  const rebinding = await upgrade(server.port, '/ws', { Host: `rebind.example:${server.port}`, Origin: `http://rebind.example:${server.port}` });
  check(rebinding.status === 403, `a rebinding Host with its own Origin -> 403 (${rebinding.status})`);
  rebinding.destroy();
});

await step('client messages nested 10,000 deep', async () => {
  const ws = await upgrade(server.port);
  const deep = `{"type":"Connect","data":${'['.repeat(10000)}${']'.repeat(10000)}}`;
  ws.write(frame(1, deep));
  const deepObject = `${'{"a":'.repeat(10000)}1${'}'.repeat(10000)}`;
  ws.write(frame(1, deepObject));
  await ws.until((r) => texts(r).filter((m) => m.type === 'Error').length >= 2, 'two Errors');
  check(texts(ws).filter((m) => m.type === 'Error').every((m) => ['INVALID_MESSAGE', 'INVALID_PARAMETERS'].includes(m.data.code)),
        'deep nesting -> an Error for each, the connection kept');
  check(!ws.ended, 'the client stays connected');
  ws.destroy();
});

await step('input: a 10 MB line, invalid JSON, binary junk', async () => {
  const before = keeper.events;
  server.child.stdin.write(`{"timestamp":1,"port":0,"event":{"kind":"Text","data":{"message":"${'y'.repeat(10 << 20)}"}}}\n`);
  server.child.stdin.write('{"timestamp": nope}\n');
  server.child.stdin.write(Buffer.concat([crypto.randomBytes(100000), Buffer.from('\n')]));
  await keeper.until(() => keeper.events >= before + 200, 'records after the junk', 30000);
  check(keeper.events >= before + 200, 'records after the junk arrive');
});

clearInterval(feeder);
server.child.stdin.end();
const closing = await keeper.next((m) => m.type === 'Stats' && m.data.final === true, 60000, 'the closing Stats');
check(keeper.events + closing.data.dropped_total === closing.data.offered_total,
      `the keeper's accounting is exact: ${keeper.events} received + ${closing.data.dropped_total} dropped = ${closing.data.offered_total} offered`);
check(peakRss > 0 && (sanitized || peakRss < RSS_BOUND_KB), `RSS sampled every 200 ms stayed under ${RSS_BOUND_KB / 1024} MB (peak ${(peakRss / 1024).toFixed(1)} MB)`);
clearInterval(sampler);
server.child.kill('SIGTERM');
const exit = await server.exited;
check(exit.code === 143, `SIGTERM -> 143 (${exit.code})`);
check(/bad lines skipped/.test(server.log()) && /[1-9]\d* bad lines skipped/.test(server.log()), 'the junk lines were counted (--stats)');
finish();
