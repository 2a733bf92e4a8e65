// trace-serve against real WebSocket clients: the original Callisto client's flow, every
// error code, auth, Origin, limits, filters, backpressure with a stalled client, 100
// clients, and command mode with the real tools. Every server message is validated
// against the project's protocol schemas and Callisto's own.
// Usage: node test_protocol.mjs PROJECT_ROOT BUILD_DIR SHARED_DIR
import os from 'node:os';
import { execSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import {
  check, finish, step, validators, startServer, Client, generateRecords, coreKinds, feed, sleep, rssKb, waitUntil,
} from './lib.mjs';

const [root, buildDir, shared] = process.argv.slice(2);
const serve = path.join(buildDir, 'tools/trace-serve');
const schemas = validators(root, shared);
const allClients = [];
const client = (url, options) => {
  const c = new Client(url, schemas, options);
  allClients.push(c);
  return c;
};

const records = generateRecords(buildDir, 4000000, 11).split('\n').filter((l) => l);
const recordKind = (line) => JSON.parse(line).event?.kind;
const coreRecords = records.filter((l) => coreKinds.has(recordKind(l)));
console.log(`${records.length} records, ${coreRecords.length} of core kinds`);

function httpGet(url, headers = {}) {
  return new Promise((resolve, reject) => {
    http.get(url, { headers }, (response) => {
      let body = '';
      response.on('data', (chunk) => { body += chunk; });
      response.on('end', () => resolve({ status: response.statusCode, headers: response.headers, body }));
    }).on('error', reject);
  });
}

// ---- stdin mode ----------------------------------------------------------------------
const server = await startServer(serve, ['--max-message-rate', '50', '-v']);

await step('the original client flow', async () => {
  const c = client(server.url);
  await c.opened;
  const hello = await c.type('Hello');
  check(/^[0-9a-f-]{36}$/.test(hello.data.server_id) && hello.data.version === '0.1.0', 'Hello has a UUID and the version');
  await sleep(1000);  // pace: the original client's (App.tsx sends Connect 1 s after connecting)
  c.send({ type: 'Connect', data: { probe_selector: null, chip: null, token: null } });
  const status = await c.type('Status');
  check(status.data.connected === true && status.data.chip === null, 'Status after Connect');
  await sleep(500);  // pace: the original client's (App.tsx sends Start 500 ms after Connect)
  c.send({ type: 'Start', data: { allow_mask: 0xFFFFFFFF, baud_rate: 2000000 } });
  const meta = await c.type('Meta');
  check(meta.data.ports_map['0'].name === 'Console' && meta.data.ports_map['1'].decoder === 'TaskIsr', 'Meta carries the standard port map');
  const second = client(server.url);
  const hello2 = await second.type('Hello');
  check(hello2.data.server_id === hello.data.server_id, 'one server_id per server process');
  second.close();
  await feed(server.child.stdin, records.slice(0, 3000), 20000);
  const expected = records.slice(0, 3000).filter((l) => coreKinds.has(recordKind(l))).length;
  await c.until(() => c.events >= expected, `${expected} events`);
  const stats = await c.next((m) => m.type === 'Stats' && m.data.events_total >= expected, undefined, 'Stats with the events');
  check(stats.data.events_total === expected, `Stats.events_total ${stats.data.events_total} == ${expected} events received`);
  const events = c.messages.filter((m) => m.type === 'Event');
  check(events.every((m) => coreKinds.has(m.data.event.kind)), 'a client without SetFilter gets only Callisto kinds');
  const sent = records.slice(0, 3000).filter((l) => coreKinds.has(recordKind(l)));
  check(events.length === sent.length && events.every((m, i) => JSON.stringify(m.data) === JSON.stringify(JSON.parse(sent[i]))),
        'events are the input records, in order, unchanged');
  check(stats.data.events_per_sec > 0 && stats.data.bytes_per_sec > 0, 'Stats report measured, non-zero rates while events flow');
  check(c.counts.Hello === 1 && c.counts.Status >= 1 && c.counts.Meta === 1 && c.counts.Stats >= 1, 'Hello, Status, Meta, Events and Stats received');
  c.send({ type: 'Stop' });
  const stopped = await c.type('Status');
  check(stopped.data.connected === false && stopped.data.chip === null && stopped.data.probe === null,
        'Stop -> Status connected:false, as the reference server');
  const before = c.events;
  // A second client traces on: once it has the new records the server has read them too.
  const watcher = client(server.url);
  await watcher.connectAndStart();
  await feed(server.child.stdin, records.slice(3000, 3500), 20000);
  const after = records.slice(3000, 3500).filter((l) => coreKinds.has(recordKind(l))).length;
  await watcher.until(() => watcher.events >= after, `the tracing client's ${after} events`);
  check(c.events === before, `no events after Stop (another client received the ${after} sent meanwhile)`);
  watcher.close();
  c.close();
});

await step('protocol errors', async () => {
  const c = client(server.url);
  await c.type('Hello');
  c.send('{"type":');
  check((await c.error('INVALID_MESSAGE')).data.message.includes('not JSON'), 'bad JSON -> INVALID_MESSAGE');
  c.send({ type: 'Connect', data: {} }); // fine, but first: unknown type
  await c.type('Status');
  c.ws.send(JSON.stringify({ type: 'Launch', data: {} }));
  check((await c.error('INVALID_MESSAGE')).data.message.includes('unknown message type'), 'unknown type -> INVALID_MESSAGE');
  c.ws.send('[1,2]');
  await c.error('INVALID_MESSAGE');
  c.ws.send(Buffer.from([1, 2, 3]), { binary: true });
  check((await c.error('INVALID_MESSAGE')).data.message.includes('binary'), 'binary message -> INVALID_MESSAGE');
  c.ws.send(JSON.stringify({ type: 'Start', data: { allow_mask: 'all' } }));
  await c.error('INVALID_PARAMETERS');
  c.ws.send(JSON.stringify({ type: 'Start', data: { allow_mask: 4294967296 } }));
  await c.error('INVALID_PARAMETERS');
  c.ws.send(JSON.stringify({ type: 'Start', data: {} }));
  await c.error('INVALID_PARAMETERS');
  c.ws.send(JSON.stringify({ type: 'SetFilter', data: { event_types: 'Text' } }));
  await c.error('INVALID_PARAMETERS');
  c.ws.send(JSON.stringify({ type: 'Connect', data: { chip: 42 } }));
  check(!!(await c.error('INVALID_PARAMETERS')), 'wrong field types -> INVALID_PARAMETERS');
  c.send({ type: 'Start', data: { allow_mask: 1, baud_rate: null } });
  await c.type('Meta');
  c.send({ type: 'Start', data: { allow_mask: 1, baud_rate: null } });
  check(!!(await c.error('ALREADY_TRACING')), 'second Start -> ALREADY_TRACING');
  const fresh = client(server.url);
  await fresh.type('Hello');
  fresh.send({ type: 'Start', data: { allow_mask: 1, baud_rate: null } });
  check(!!(await fresh.error('NOT_CONNECTED')), 'Start before Connect -> NOT_CONNECTED');
  // Stats go out every second to connected clients only (the reference server sends none before Connect).
  await c.next((m) => m.type === 'Stats', undefined, 'Stats to the connected client');
  await c.next((m) => m.type === 'Stats', undefined, 'another Stats to the connected client');
  check(!fresh.counts.Stats, `no Stats before Connect (${fresh.counts.Stats ?? 0}) while the connected client got two`);
  const pong = new Promise((resolve) => fresh.ws.once('pong', (data) => resolve(String(data))));
  fresh.ws.ping('hi');
  check((await pong) === 'hi', 'ping -> pong');
  check(c.ws.readyState === 1 && fresh.ws.readyState === 1, 'bad messages do not close the connection');
  c.close();
  fresh.close();
});

await step('oversized and flooding messages', async () => {
  const big = client(server.url);
  await big.type('Hello');
  big.ws.send(JSON.stringify({ type: 'Connect', data: { chip: 'x'.repeat(70000) } }));
  const error = await big.error('INVALID_MESSAGE');
  check(error.data.message.includes('too large'), 'oversized message -> INVALID_MESSAGE');
  check((await big.closed).code === 1009, 'oversized message -> close 1009');

  const flood = client(server.url);
  await flood.type('Hello');
  for (let i = 0; i < 3000; i++) flood.ws.send('{"type":"Stop"}');
  const limited = await flood.next((m) => m.type === 'Error' && m.data.message.includes('too many messages'), undefined, 'rate error');
  check(limited.data.code === 'INVALID_MESSAGE', 'flooding -> a rate-limit Error');
  check((await flood.closed).code === 1008, 'a client that keeps flooding is disconnected (1008)');
  check(flood.counts.Status < 200, `at most the burst of messages was answered (${flood.counts.Status})`);
  const after = client(server.url);
  const afterMeta = await after.connectAndStart();
  check(afterMeta.type === 'Meta' && after.counts.Hello === 1, 'the server serves others after a flood (Hello, Status, Meta)');
  after.close();
});

await step('filters and extended kinds', async () => {
  const port0 = client(server.url);
  const meta = await port0.connectAndStart({ allow_mask: 0xFFFFFFFF, baud_rate: null }, { port_mask: 1, event_types: null });
  check(meta.data.dwt_available === true, 'Meta.dwt_available once records carried cycle timestamps');
  const allowed = client(server.url);
  await allowed.connectAndStart({ allow_mask: 0b1010, baud_rate: null });
  const exceptions = client(server.url, { strict: false });
  await exceptions.connectAndStart({ allow_mask: 0xFFFFFFFF, baud_rate: null }, { port_mask: null, event_types: ['Exception', 'PcSample'] });
  const everything = client(server.url, { strict: false, foreignKinds: ['LaterKind'] });
  await everything.connectAndStart({ allow_mask: 0xFFFFFFFF, baud_rate: null }, { port_mask: null, event_types: ['*'] });
  // One client names 1000 kinds nobody produces: the server's kind table must not change
  // for it (it used to fill up, and every other client's filter then chose wrong kinds).
  const inventor = client(server.url);
  const invented = Array.from({ length: 1000 }, (_, i) => `Invented${i}`);
  await inventor.connectAndStart({ allow_mask: 0xFFFFFFFF, baud_rate: null }, { port_mask: null, event_types: invented });
  check((await inventor.error('INVALID_PARAMETERS')).data.message.includes('1000 names'),
        'SetFilter with 1000 unknown kinds -> INVALID_PARAMETERS naming how many');
  // A producer's own kind asked for before it has arrived selects it once it does.
  const later = client(server.url, { strict: false, foreignKinds: ['LaterKind'] });
  await later.connectAndStart({ allow_mask: 0xFFFFFFFF, baud_rate: null }, { port_mask: null, event_types: ['LaterKind', 'Itm'] });
  const extra = ['{"timestamp":7,"frames":[{"port":0,"data":[65],"timestamp":7}]}',
                 '{"timestamp":8,"port":2,"event":{"kind":"LaterKind","data":{"n":1}}}'];
  const slice = [...records.slice(4000, 6000), ...extra, ...records.slice(6000, 8000)];
  await feed(server.child.stdin, slice, 20000);
  const parsed = slice.map((l) => JSON.parse(l));
  const kindOf = (r) => (r.frames ? 'Itm' : r.event.kind);
  const want = {
    port0: parsed.filter((r) => r.port === 0 && coreKinds.has(kindOf(r))).length,
    allowed: parsed.filter((r) => (r.port === 1 || r.port === 3) && coreKinds.has(kindOf(r))).length,
    exceptions: parsed.filter((r) => ['Exception', 'PcSample'].includes(kindOf(r))).length,
    everything: parsed.length,
    inventor: parsed.filter((r) => invented.includes(kindOf(r))).length,
  };
  await everything.until(() => everything.events >= want.everything, 'all records');
  await waitUntil(() => port0.events >= want.port0 && allowed.events >= want.allowed && exceptions.events >= want.exceptions &&
                  later.events >= 2, 'every filtered client has its records',
                  () => [port0.events, allowed.events, exceptions.events, later.events].join(','));
  await sleep(300);  // must-not-happen: anything more that arrived would be a filter letting too much through
  const events = (c) => c.messages.filter((m) => m.type === 'Event');
  check(port0.events === want.port0 && events(port0).every((m) => m.data.port === 0), `SetFilter.port_mask: ${port0.events} == ${want.port0}`);
  check(allowed.events === want.allowed && events(allowed).every((m) => [1, 3].includes(m.data.port)), `Start.allow_mask: ${allowed.events} == ${want.allowed}`);
  check(want.exceptions > 0 && exceptions.events === want.exceptions, `SetFilter.event_types [Exception, PcSample]: ${exceptions.events} == ${want.exceptions}`);
  check(everything.events === want.everything && everything.counts.Itm === 1,
        `event_types ["*"]: every record, and the frames line as Itm (${everything.events} == ${want.everything})`);
  check([port0, allowed, exceptions, inventor].every((c) => !c.counts.Itm), 'Itm only to clients that ask for it');
  check(inventor.events === want.inventor, `the inventor gets nothing (${inventor.events})`);
  check(later.events === 2 && later.counts.Itm === 1 && events(later)[0]?.data.event.kind === 'LaterKind',
        `event_types [LaterKind, Itm]: the kind that arrived later, and Itm (${later.events})`);
  for (const c of [port0, allowed, exceptions, everything, inventor, later]) c.close();
});

await step('the batched form: only on request, exact and in order', async () => {
  const batched = client(server.url, { protocols: ['tracepipe.batch'], strict: false });
  const batchedTo = (c) => c.ws.protocol;
  const plain = client(server.url);
  await batched.connectAndStart({ allow_mask: 0xFFFFFFFF, baud_rate: null }, { port_mask: null, event_types: ['*'] });
  await plain.connectAndStart();
  check(batchedTo(batched) === 'tracepipe.batch' && batchedTo(plain) === '', 'the subprotocol is granted only to the client that asks');
  const slice = records.slice(8000, 11000);
  await feed(server.child.stdin, slice, 20000);
  const corePart = slice.filter((l) => coreKinds.has(recordKind(l)));
  await waitUntil(() => batched.events >= slice.length && plain.events >= corePart.length, 'both clients have the stream',
                  () => `${batched.events}, ${plain.events}`);
  const lines = batched.messages.filter((m) => m.type === 'Events').flatMap((m) => m.data.map((r) => JSON.stringify(r)));
  check(lines.length === slice.length && lines.every((l, i) => l === JSON.stringify(JSON.parse(slice[i]))),
        `the batched client gets every record in order (${lines.length} of ${slice.length}) in ${batched.counts.Events} messages`);
  check(!batched.counts.Event && !plain.counts.Events && plain.events === corePart.length,
        'Events never reach a client that did not ask; Event never reaches one that did');
  for (const c of [batched, plain]) c.close();
});

// The closing Stats a client gets when the input ends: final offered and dropped totals.
// Exact accounting: what the client received plus what the server dropped for it is what
// the server offered it, and that is every record its filter selects.
function accounting(c, final, expected) {
  const { offered_total: offered, dropped_total: dropped } = final.data;
  return { ok: offered === expected && c.events + dropped === offered, text: `${c.events} received + ${dropped} dropped = ${offered} offered of ${expected}` };
}
const finalStats = (c) => c.next((m) => m.type === 'Stats' && m.data.final === true, undefined, 'the closing Stats');

await step('a stalled client among 10 that keep up', async () => {
  // Its own server: the input ends after the slice, so every client's counters become final.
  // 4 MiB queues: about 2 s of this stream, slack for a Node reader on a busy machine (a
  // sanitized server, other work); the stalled client still overflows (15 MB go through).
  const own = await startServer(serve, ['--queue-size', String(4 << 20)]);
  const keepers = [];
  for (let i = 0; i < 10; i++) {
    const c = client(own.url, { keep: false });
    await c.connectAndStart();
    keepers.push(c);
  }
  const stalled = client(own.url, { keep: false });
  await stalled.connectAndStart();
  stalled.ws._socket.pause();  // stops reading: the kernel buffers fill, then its queue
  const rssBefore = rssKb(own.child.pid, 'VmRSS');
  // 15 MB at 15k records/s: far more than a stalled client's socket buffers and 4 MiB queue
  // hold, while the others have about 2 s of slack in theirs.
  const slice = records.slice(8000, 108000);
  const expected = slice.filter((l) => coreKinds.has(recordKind(l))).length;
  await feed(own.child.stdin, slice, 15000);
  const rss = rssKb(own.child.pid, 'VmRSS');
  own.child.stdin.end();
  const finals = await Promise.all(keepers.map(finalStats));
  const keeperDrops = finals.reduce((sum, f) => sum + f.data.dropped_total, 0);
  keepers.forEach((c, i) => {
    const { ok, text } = accounting(c, finals[i], expected);
    check(ok, `a client that keeps up: ${text}`);
  });
  check(rss < 80 * 1024 || process.env.TRACEPIPE_SANITIZED, `memory stays bounded with a stalled client: RSS ${rss} kB (was ${rssBefore} kB; 15 MB went through)`);
  stalled.ws._socket.resume();
  const overflow = await stalled.error('BUFFER_OVERFLOW');
  check(overflow.data.message.includes('dropped'), 'the stalled client gets BUFFER_OVERFLOW');
  const stalledFinal = await finalStats(stalled);
  const stalledCount = accounting(stalled, stalledFinal, expected);
  check(stalledCount.ok && stalledFinal.data.dropped_total > 0, `the stalled client: ${stalledCount.text}`);
  // Loss is the stalled client's alone: those that read lose nothing (or, on a machine too
  // busy to let a Node client keep up, a small part, counted as above).
  check(keeperDrops * 10 < stalledFinal.data.dropped_total,
        `the stalled client does not make the others lose records (${keeperDrops} dropped for 10 readers, ${stalledFinal.data.dropped_total} for it)`);
  if (keeperDrops > 0) console.log(`note: ${keeperDrops} records dropped for readers that fell 1 MiB behind (a busy machine)`);
  // Each Stats covers the drops since the last one the server queued for the client, so one of
  // them has a drop_rate > 0: maybe only the closing one (finalStats took it out of
  // messages), when the queue stayed full until the input ended, as on a sanitized server.
  check([...stalled.messages, stalledFinal].some((m) => m.type === 'Stats' && m.data.drop_rate > 0),
        'its Stats.drop_rate shows the drops');
  for (const c of [...keepers, stalled]) c.close();
  own.child.kill('SIGTERM');
  await own.exited;
});

await step('records larger than a client queue are dropped for it, never copied per client', async () => {
  const own = await startServer(serve, ['--queue-size', '65536']);
  const clients = [];
  for (let i = 0; i < 50; i++) clients.push(client(own.url, { keep: false }));
  await Promise.all(clients.map((c) => c.connectAndStart()));
  for (const c of clients) c.ws._socket.pause();  // none reads: copies would pile up
  const rssBefore = rssKb(own.child.pid, 'VmRSS');
  const big = (i) => JSON.stringify({ timestamp: i, port: 0, event: { kind: 'Text', data: { message: 'x'.repeat(2 << 20) } } });
  await feed(own.child.stdin, [big(1), big(2), big(3), big(4), big(5)], 50);
  const small = records.slice(0, 200).filter((l) => coreKinds.has(recordKind(l)));
  await feed(own.child.stdin, small, 20000);
  const rss = rssKb(own.child.pid, 'VmRSS');
  own.child.stdin.end();
  for (const c of clients) c.ws._socket.resume();
  const finals = await Promise.all(clients.map(finalStats));
  const expected = 5 + small.length;
  const wrong = clients.map((c, i) => accounting(c, finals[i], expected)).filter((a) => !a.ok);
  check(wrong.length === 0 && finals.every((f) => f.data.dropped_total === 5),
        `each client: exactly the 5 records of 2 MiB dropped and counted, the small ones delivered, accounting exact (${wrong.length} wrong: ${wrong.slice(0, 2).map((a) => a.text).join('; ')})`);
  console.log(`50 clients, 5 records of 2 MiB over a 64 KiB queue: RSS ${rssBefore} -> ${rss} kB; drops per client ${[...new Set(finals.map((f) => f.data.dropped_total))].join(',')}`);
  // 50 clients x 10 MiB would be 500 MiB if each got its own copy.
  check((rss - rssBefore) < 30 * 1024 || process.env.TRACEPIPE_SANITIZED, `memory: RSS grew by ${rss - rssBefore} kB for 50 clients and 10 MiB of records`);
  for (const c of clients) c.close();
  own.child.kill('SIGTERM');
  await own.exited;
});

await step('100 concurrent clients', async () => {
  const own = await startServer(serve, []);
  const clients = [];
  for (let i = 0; i < 100; i++) clients.push(client(own.url, { keep: false }));
  await Promise.all(clients.map((c) => c.connectAndStart()));
  const slice = records.slice(108000, 111000);
  const expected = slice.filter((l) => coreKinds.has(recordKind(l))).length;
  await feed(own.child.stdin, slice, 10000);
  own.child.stdin.end();
  const finals = await Promise.all(clients.map(finalStats));
  const wrong = clients.map((c, i) => accounting(c, finals[i], expected)).filter((a) => !a.ok);
  check(wrong.length === 0, `100 clients: each received every record or had it counted as dropped (${wrong.length} wrong: ${wrong.slice(0, 3).map((a) => a.text).join('; ')})`);
  const drops = finals.reduce((sum, f) => sum + f.data.dropped_total, 0);
  check(drops <= expected, `100 clients at 10k records/s: ${drops} of ${100 * expected} deliveries dropped`);
  await Promise.all(clients.map((c) => c.close()));
  own.child.kill('SIGTERM');
  await own.exited;
});

await step('HTTP', async () => {
  const index = await httpGet(`${server.http}/`);
  check(index.status === 200 && index.body.includes('<canvas id="timeline">') && index.headers['content-security-policy'], 'GET / serves the viewer with a CSP');
  // The viewer is ES modules: the page's entry, and every module it imports, transitively.
  const entry = index.body.match(/<script type="module" src="([^"]+)">/);
  check(entry !== null, 'the page loads its entry module');
  const modules = new Set(entry ? [entry[1]] : []);
  let served = 0;
  for (const module of modules) {
    const script = await httpGet(new URL(module, `${server.http}/`).href);  // the page names its files relative to itself
    if (script.status !== 200 || !script.headers['content-type'].startsWith('text/javascript')) break;
    served++;
    for (const [, imported] of script.body.matchAll(/^import \{[^}]*\} from '\.(\/[\w.-]+)';$/gm)) modules.add(imported);
  }
  check(modules.size > 10 && served === modules.size, `GET of every viewer module as text/javascript (${served} of ${modules.size})`);
  check((await httpGet(`${server.http}/nope`)).status === 404, '404 for unknown paths');
  check((await httpGet(`${server.http}/ws`)).status === 426, 'GET /ws without upgrade -> 426');
  const origin = client(server.url, { ws: { origin: 'http://evil.example' } });
  check(await origin.opened.then(() => false, (e) => e.message === 'HTTP 403'), 'a foreign Origin is refused (403)');
  const refusal = await new Promise((resolve, reject) => {
    http.get(`${server.http}/ws`, { headers: { Origin: 'http://evil.example', Upgrade: 'websocket', Connection: 'Upgrade',
      'Sec-WebSocket-Version': '13', 'Sec-WebSocket-Key': 'dGhlIHNhbXBsZSBub25jZQ==' } }, (response) => {
      let body = '';
      response.on('data', (chunk) => { body += chunk; });
      response.on('end', () => resolve(body));
    }).on('error', reject);
  });
  check(refusal.includes('http://evil.example') && refusal.includes('--allow-origin'), `the 403 names the origin and the flag: ${refusal.trim()}`);
  await waitUntil(() => server.log().includes("origin http://evil.example is not allowed; admit it with --allow-origin 'http://evil.example'"),
                  'the refusal on stderr', () => server.log().slice(-400));
  // What the real Callisto client sends: its development page, and file:// when packaged.
  for (const origin of [`http://127.0.0.1:${server.port}`, 'http://localhost:5173', 'file://']) {
    const own = client(server.url, { ws: { origin } });
    const ownHello = await own.type('Hello');
    check(ownHello.data.server_id.length === 36, `the Origin ${origin} is admitted by default (Hello)`);
    own.close();
  }
  // DNS rebinding: a page whose name now resolves to 127.0.0.1 still names its own host.
  const rebound = await httpGet(`${server.http}/`, { Host: `evil.example:${server.port}` });
  check(rebound.status === 403 && rebound.body.includes('evil.example'), `a foreign Host is refused (${rebound.status})`);
  const tunnel = await httpGet(`${server.http}/`, { Host: 'localhost:8000' });
  check(tunnel.status === 200, 'a loopback Host on another port (an SSH tunnel) is served');
  const raw = net.connect(server.port, '127.0.0.1');
  raw.write(`GET /ws HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n` +
            'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n');
  const handshake = await new Promise((resolve) => raw.once('data', (d) => resolve(String(d))));
  check(handshake.includes('101') && handshake.includes('s3pPLMBiTxaQ9kYGzzhZRbK+xOo='), 'RFC 6455 accept key');
  raw.write(Buffer.from([0x81, 0x02, 0x68, 0x69]));  // an unmasked client frame
  const closing = await new Promise((resolve) => { let all = Buffer.alloc(0); raw.on('data', (d) => { all = Buffer.concat([all, d]); if (all.includes(Buffer.from([0x88]))) resolve(all); }); });
  const at = closing.indexOf(0x88);
  check(closing.readUInt16BE(at + 2) === 1002, 'an unmasked client frame -> close 1002');
  raw.destroy();
});

server.child.stdin.end();
server.child.kill('SIGTERM');
const exit = await server.exited;
check(exit.code === 143, `SIGTERM -> exit 143 (${exit.code})`);

// ---- auth ----------------------------------------------------------------------------
await step('token auth', async () => {
  const secured = await startServer(serve, ['--allow-origin', 'http://good.example', '--dwt', 'no'], { env: { TRACE_SERVE_TOKEN: 's3cret' } });
  await feed(secured.child.stdin, records.slice(0, 200), 20000);
  secured.child.stdin.end();  // input ended (the server keeps serving): --dwt no must still hold
  await waitUntil(() => /input ended after 200 records/.test(secured.log()), 'the server has read the 200 records',
                  () => secured.log().slice(-300));
  const header = client(secured.url, { ws: { headers: { Authorization: 'Bearer s3cret' } } });
  const headerMeta = await header.connectAndStart();
  check(headerMeta.type === 'Meta' && !header.messages.some((m) => m.type === 'Error'), 'token in the Authorization header');
  const query = client(`${secured.url}?token=s3cret`);
  const meta = await query.connectAndStart();
  check(meta.type === 'Meta' && !query.messages.some((m) => m.type === 'Error'), 'token in ?token=');
  check(meta.data.dwt_available === false, '--dwt no holds even after cycle timestamps');
  const wrongHeader = client(secured.url, { ws: { headers: { Authorization: 'Bearer nope' } } });
  check(await wrongHeader.opened.then(() => false, (e) => e.message === 'HTTP 401'), 'a wrong header token is refused (401)');
  const viaConnect = client(secured.url);
  await viaConnect.type('Hello');
  viaConnect.send({ type: 'Start', data: { allow_mask: 1, baud_rate: null } });
  check(!!(await viaConnect.error('PERMISSION_DENIED')), 'messages before authentication -> PERMISSION_DENIED');
  viaConnect.send({ type: 'Connect', data: { probe_selector: null, chip: null, token: 's3cret' } });
  check((await viaConnect.type('Status')).data.connected, 'token in Connect.token');
  const wrongConnect = client(secured.url);
  await wrongConnect.type('Hello');
  wrongConnect.send({ type: 'Connect', data: { probe_selector: null, chip: null, token: 'guess' } });
  check(!!(await wrongConnect.error('PERMISSION_DENIED')), 'a wrong Connect.token -> PERMISSION_DENIED');
  check((await wrongConnect.closed).code === 1008, '... and the connection is closed');
  const good = client(`${secured.url}?token=s3cret`, { ws: { origin: 'http://good.example' } });
  check((await good.type('Hello')).type === 'Hello', '--allow-origin admits that origin');
  const foreign = client(`${secured.url}?token=s3cret`, { ws: { origin: 'http://other.example' } });
  check(await foreign.opened.then(() => false, (e) => e.message === 'HTTP 403'), 'an origin not listed is refused');
  await waitUntil(() => secured.log().includes("origin http://other.example is not allowed; admit it with --allow-origin 'http://other.example'"),
                  'the refusal on stderr without -v', () => secured.log().slice(-400));
  for (const c of [header, query, viaConnect, good]) c.close();
  secured.child.kill('SIGINT');
  check((await secured.exited).code === 130, 'SIGINT -> exit 130');
});

await step('--listen beyond loopback: this host\'s own origins with a token, loopback only without', async () => {
  // A browser on another machine opens the server by one of this host's addresses (found
  // here by Node, not by trace-serve) or by its name.
  const external = Object.values(os.networkInterfaces()).flat().find((a) => a && !a.internal && a.family === 'IPv4');
  const hostPart = external ? external.address : os.hostname();
  const withToken = await startServer(serve, ['--dwt', 'no'], { listen: '0.0.0.0:0', env: { TRACE_SERVE_TOKEN: 's3cret' } });
  const origin = `http://${hostPart}:${withToken.port}`;
  const remote = client(`${withToken.url}?token=s3cret`, { ws: { origin } });
  check((await remote.type('Hello')).type === 'Hello', `with a token, the origin ${origin} of this host is admitted`);
  remote.close();
  const foreign = client(`${withToken.url}?token=s3cret`, { ws: { origin: `http://evil.example:${withToken.port}` } });
  check(await foreign.opened.then(() => false, (e) => e.message === 'HTTP 403'), '... a foreign origin still is not');
  withToken.child.kill('SIGTERM');
  await withToken.exited;
  const open = await startServer(serve, ['--dwt', 'no'], { listen: '0.0.0.0:0' });
  const refused = client(open.url, { ws: { origin: `http://${hostPart}:${open.port}` } });
  check(await refused.opened.then(() => false, (e) => e.message === 'HTTP 403'), 'without a token it is refused (403)');
  check(/without --token: browsers on other hosts are refused/.test(open.log()), '... and the log says why at start');
  open.child.kill('SIGTERM');
  await open.exited;
});

await step('unauthenticated connections: their own pool, a deadline, an exact cap', async () => {
  const secured = await startServer(serve, ['--max-clients', '5', '-v'], { env: { TRACE_SERVE_TOKEN: 's3cret' } });
  // Strangers that never show the token do not count against --max-clients...
  const strangers = [];
  for (let i = 0; i < 32; i++) strangers.push(client(secured.url));
  await Promise.all(strangers.map((c) => c.type('Hello')));
  const oneTooMany = client(secured.url);
  check(await oneTooMany.opened.then(() => false, (e) => e.message === 'HTTP 503'), 'the 33rd connection without a token is refused (503)');
  const user = client(`${secured.url}?token=s3cret`);
  check((await user.connectAndStart()).type === 'Meta', 'with 32 strangers connected the real user still gets in');
  // ... and are cut off when they have not shown it in time.
  const started = Date.now();
  const closes = await Promise.all(strangers.map((c) => c.closed));
  const waited = (Date.now() - started) / 1000;
  check(closes.every((c) => c.code === 1008) && strangers.every((c) => c.messages.some((m) => m.type === 'Error' && m.data.code === 'PERMISSION_DENIED')),
        `strangers are closed (1008, PERMISSION_DENIED) after the authentication deadline (${waited.toFixed(1)} s)`);
  // An exact cap under concurrent upgrades: 20 at once for the 4 free places.
  const rush = [];
  for (let i = 0; i < 20; i++) rush.push(client(`${secured.url}?token=s3cret`));
  const outcomes = await Promise.all(rush.map((c) => c.opened.then(() => 'open', (e) => e.message)));
  const opened = outcomes.filter((o) => o === 'open').length;
  check(opened === 4 && outcomes.filter((o) => o === 'HTTP 503').length === 16, `--max-clients 5 is exact: 4 of 20 concurrent upgrades admitted beside the user (${opened})`);
  // A client that authenticates by Connect.token when the client pool is full is refused.
  const late = client(secured.url);
  await late.type('Hello');
  late.send({ type: 'Connect', data: { probe_selector: null, chip: null, token: 's3cret' } });
  check((await late.error('PERMISSION_DENIED')).data.message.includes('too many clients') && (await late.closed).code === 1013,
        'Connect.token with the client pool full -> PERMISSION_DENIED, close 1013');
  for (const c of [user, ...rush]) c.close();
  secured.child.kill('SIGTERM');
  await secured.exited;
});

await step('token guessing is slowed down per address and logged', async () => {
  const secured = await startServer(serve, [], { env: { TRACE_SERVE_TOKEN: 's3cret' } });
  const statuses = [];
  const started = Date.now();
  for (let i = 0; i < 200; i++) {
    const guess = client(`${secured.url}?token=guess${i}`);
    statuses.push(await guess.opened.then(() => 'open', (e) => e.message));
  }
  const perSecond = 200 / ((Date.now() - started) / 1000);
  const evaluated = statuses.filter((s) => s === 'HTTP 401').length;
  check(evaluated <= 4 && statuses.filter((s) => s === 'HTTP 429').length === 200 - evaluated,
        `of 200 guesses (${perSecond.toFixed(0)}/s) ${evaluated} were tried and the rest refused unseen (429)`);
  const logged = (secured.log().match(/wrong token from 127\.0\.0\.1/g) || []).length;
  check(logged === evaluated && secured.log().includes('its connections are refused for'), `each tried guess is logged, and the back-off (${logged} lines)`);
  const right = client(`${secured.url}?token=s3cret`);
  check(await right.opened.then(() => false, (e) => e.message === 'HTTP 429'), 'during the back-off even the right token waits');
  const noToken = client(secured.url);
  const refused = await noToken.opened.then(() => 'open', (e) => e.message);
  check(refused === 'HTTP 429', `a blocked address cannot try Connect.token either (${refused})`);
  secured.child.kill('SIGTERM');
  await secured.exited;
});

// ---- command mode --------------------------------------------------------------------
const capture = path.join(buildDir, 'tools/swo-capture');
const decode = path.join(buildDir, 'tools/itm-decode');

await step('command mode with the real tools', async () => {
  const simulate = `${capture} --simulate --seed 5 --rate 0 --max-bytes 200000`;
  const pipeline = `${simulate} | ${decode}`;
  const expected = execSync(pipeline, { maxBuffer: 1 << 30 }).toString().split('\n')
    .filter((l) => l && coreKinds.has(recordKind(l))).length;
  const cmd = await startServer(serve, ['-v', '--', 'sh', '-c', pipeline]);
  const c = client(cmd.url, { keep: false });
  const meta = await c.connectAndStart();
  check(meta.data.cpu_hz === null, 'Meta at Start: the target clock is not known yet');
  // swo-capture states its source on stderr; the server passes it on (no flag given).
  const stated = await c.next((m) => m.type === 'Status', undefined, 'Status from the pipeline');
  check(stated.data.connected && stated.data.probe === 'simulator' && stated.data.target === 'simulated Cortex-M target',
        `Status from the pipeline names the simulator (${JSON.stringify(stated.data)})`);
  const restated = await c.type('Meta');
  check(restated.data.cpu_hz === 64000000, `Meta.cpu_hz from the pipeline: the simulator's 64 MHz (${restated.data.cpu_hz})`);
  const status = await c.next((m) => m.type === 'Status', undefined, 'Status at the end of the command');
  check(status.data.connected === true, 'a command that ends well -> Status connected');
  check(c.events === expected, `the command's records reach the client (${c.events} == ${expected})`);
  c.close();
  cmd.child.kill('SIGTERM');
  await cmd.exited;
});

await step('command mode: placeholders, stop when the last client leaves, restart', async () => {
  // The documented form: placeholders as arguments of their own, used as "$1".. in the script.
  const script = `printf '{"timestamp":1,"port":0,"event":{"kind":"Text","data":{"message":"baud=%s mask=%s chip=%s probe=%s"}}}\\n' "$1" "$2" "$3" "$4"; ${capture} --simulate --seed 2 --rate 100000 | ${decode}`;
  const cmd = await startServer(serve, ['-v', '--', 'sh', '-c', script, 'sh', '{baud_rate}', '{allow_mask_hex}', '{chip}', '{probe_selector}']);
  const c = client(cmd.url);
  await c.opened;
  await c.type('Hello');
  // A chip or selector with shell metacharacters never reaches the command.
  const marker = path.join(buildDir, `pwned-${process.pid}`);
  for (const chip of [`$(touch ${marker})`, `x;touch ${marker}`, `\`touch ${marker}\``, 'a b', "it's"]) {
    c.send({ type: 'Connect', data: { probe_selector: null, chip, token: null } });
    const refused = await c.error('INVALID_PARAMETERS');
    check(refused.data.message.includes('chip may only contain'), `command mode: Connect with chip ${JSON.stringify(chip)} -> INVALID_PARAMETERS`);
  }
  c.send({ type: 'Connect', data: { probe_selector: '$(id)', chip: null, token: null } });
  check((await c.error('INVALID_PARAMETERS')).data.message.includes('probe_selector'), 'command mode: a probe_selector with $( ) is refused');
  c.send({ type: 'Start', data: { allow_mask: 0xF, baud_rate: null } });
  await c.error('NOT_CONNECTED');
  check(!fs.existsSync(marker) && !cmd.log().includes('started the capture command'), 'no command ran and no injected command ran');
  c.send({ type: 'Connect', data: { probe_selector: 'VID:PID:0483:374B', chip: 'STM32F407VG', token: null } });
  await c.type('Status');
  c.send({ type: 'Start', data: { allow_mask: 0xF, baud_rate: 4000000 } });
  const first = await c.next((m) => m.type === 'Event', undefined, 'first event');
  check(first.data.event.data.message === 'baud=4000000 mask=0x0000000f chip=STM32F407VG probe=VID:PID:0483:374B',
        `placeholders substituted: ${first.data.event.data.message}`);
  await c.until(() => c.events > 50, 'a stream');
  c.send({ type: 'Stop' });
  await c.type('Status');
  await waitUntil(() => cmd.log().includes('no client is tracing: stopping the capture command'),
                  'Stop by the last client stops the command', () => cmd.log().slice(-300));
  check(cmd.log().includes('no client is tracing: stopping the capture command'), 'Stop by the last client stops the command');
  c.messages.length = 0;
  c.send({ type: 'Start', data: { allow_mask: 0xF, baud_rate: null } });
  await c.error('NOT_CONNECTED');
  c.send({ type: 'Connect', data: { probe_selector: null, chip: null, token: null } });
  check((await c.type('Status')).data.connected, 'Connect again after Stop');
  c.send({ type: 'Start', data: { allow_mask: 0xF, baud_rate: null } });
  const again = await c.next((m) => m.type === 'Event', undefined, 'first event again');
  check(again.data.event.data.message.startsWith('baud=2000000 '), 'Start again restarts it (null baud -> --baud default)');
  const runs = () => (cmd.log().match(/started the capture command/g) || []).length;
  // Its stderr line may come after its first record: wait for the log, then count.
  await waitUntil(() => runs() >= 2, 'the second run is logged', () => cmd.log().slice(-300)).catch((e) => check(false, e.message));
  check(runs() === 2, `the command ran twice (${runs()})`);
  c.close();
  const stops = () => (cmd.log().match(/stopping the capture command/g) || []).length;
  await waitUntil(() => stops() >= 2, 'the last client leaving stops the command', () => cmd.log().slice(-300));
  check(stops() === 2, `the last client leaving stops it too (${stops()} stops)`);
  cmd.child.kill('SIGTERM');
  check((await cmd.exited).code === 143, 'command mode exits on SIGTERM');
});

await step('command mode: failures become protocol errors', async () => {
  const cases = [
    ['a JSON error line', `echo '{"level":"error","code":"PROBE_NOT_FOUND","message":"no LPC-Link2 attached"}' >&2; exit 3`, 'PROBE_NOT_FOUND', 'no LPC-Link2'],
    ['an exit code', 'exit 5', 'PROBE_IN_USE', 'status 5'],
    ['an exit code', 'exit 8', 'TARGET_NOT_RESPONDING', 'status 8'],
    ['a real tool', `${decode} /nonexistent/capture.bin`, 'PROBE_NOT_FOUND', 'nonexistent'],
    ['a baud rate error', `echo '{"level":"error","code":"BAUD_RATE_ERROR","message":"cannot reach 7 MHz"}' >&2; exit 9`, 'BAUD_RATE_ERROR', '7 MHz'],
  ];
  for (const [what, script, code, text] of cases) {
    const cmd = await startServer(serve, ['--', 'sh', '-c', script]);
    const c = client(cmd.url);
    await c.connectAndStart();
    const error = await c.error(code);
    check(error.data.message.includes(text), `${what} -> Error ${code}: ${error.data.message}`);
    const status = await c.next((m) => m.type === 'Status', undefined, 'Status after the failure');
    check(status.data.connected === false, `${what} -> Status connected:false`);
    check(c.messages.filter((m) => m.type === 'Error').length === 0, `${what}: one Error, not two`);
    c.close();
    cmd.child.kill('SIGTERM');
    await cmd.exited;
  }
});

const invalid = allClients.flatMap((c) => c.invalid);
const checkedAgainst = schemas.callisto ? "the project's schema and Callisto's own (../shared)" : "the project's schema (Callisto's own: ../shared absent)";
check(invalid.length === 0, `every server message is valid against ${checkedAgainst} (${invalid.length} invalid: ${invalid.slice(0, 3).join(' | ')})`);
finish();
