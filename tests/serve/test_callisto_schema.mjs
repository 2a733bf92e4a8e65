// Every message trace-serve sends in the Callisto client's flow, validated against the
// original Callisto project's own server-message schema (../shared/reference/callisto-schema):
// Hello, Status, Meta, Events of every core kind, Stats (the closing one too), Errors, and
// Status after Stop. Exit 77 (skipped) where the shared material is absent.
// Usage: node test_callisto_schema.mjs PROJECT_ROOT BUILD_DIR SHARED_DIR
import { execSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { check, finish, validators, startServer, Client, coreKinds, feed } from './lib.mjs';

const [root, buildDir, shared] = process.argv.slice(2);
const schemaFile = path.join(shared, 'reference/callisto-schema/server-message.json');
if (!fs.existsSync(schemaFile)) {
  console.log(`skipped: ${schemaFile} not found (the shared reference material is absent)`);
  process.exit(77);
}
const schemas = validators(root, shared);
// The simulated target's stream: every core kind (tasks, ISRs, idle, markers, counters, text).
const tools = path.join(buildDir, 'tools');
const records = execSync(`'${tools}/swo-capture' --simulate --seed 3 --rate 0 --max-bytes 300K | '${tools}/itm-decode'`,
                         { maxBuffer: 1 << 28 }).toString().split('\n').filter((l) => l);
const server = await startServer(path.join(buildDir, 'tools/trace-serve'), ['--stats-interval', '0.2']);
const c = new Client(server.url, schemas, { strict: true });
await c.connectAndStart();
c.send({ type: 'Start', data: { allow_mask: 1, baud_rate: null } });
await c.error('ALREADY_TRACING');
c.send('{"type":');
await c.error('INVALID_MESSAGE');
await feed(server.child.stdin, records, 50000);
server.child.stdin.end();
const final = await c.next((m) => m.type === 'Stats' && m.data.final === true, undefined, 'the closing Stats');
c.send({ type: 'Stop' });
await c.next((m) => m.type === 'Status', undefined, 'Status after Stop');
const kinds = new Set(c.messages.filter((m) => m.type === 'Event').map((m) => m.data.event.kind));
const expectedKinds = [...coreKinds].filter((k) => k !== 'Raw');
check(expectedKinds.every((k) => kinds.has(k)), `Events of the core kinds were validated (${[...kinds].join(', ')})`);
check(final.data.offered_total > 1000 && c.events === final.data.offered_total - final.data.dropped_total,
      `the closing Stats accounts for the stream (${c.events} received, ${final.data.dropped_total} dropped, ${final.data.offered_total} offered)`);
const types = Object.keys(c.counts).sort().join(',');
check(['Error', 'Event', 'Hello', 'Meta', 'Stats', 'Status'].every((t) => c.counts[t] > 0), `every message type was validated (${types})`);
check(schemas.callisto !== null && c.invalid.length === 0,
      `every message valid under Callisto's own schema (${c.invalid.length} invalid: ${c.invalid.slice(0, 3).join(' | ')})`);
c.close();
server.child.kill('SIGTERM');
await server.exited;
finish();
