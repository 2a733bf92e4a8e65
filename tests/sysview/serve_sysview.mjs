// trace-serve with a SystemView recording (sysview-decode's records of SEGGER's own target
// code): a Callisto client (the default filter) gets the TaskSwitch, IsrEnter/IsrExit,
// IdleEnter/IdleExit, Marker and Text events as for ITM, every message valid against the
// project's and Callisto's own schemas; a client of every kind ("*") gets SystemView's own
// kinds too. Real WebSocket clients (npm ws, tests/serve).
// Usage: node serve_sysview.mjs PROJECT_ROOT SHARED TRACE_SERVE RECORDS
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';

const [root, shared, traceServe, recordsFile] = process.argv.slice(2);
const lib = await import(path.join(root, 'tests/serve/lib.mjs'));
const { Client, check, finish, startServer, validators, coreKinds, feed } = lib;
createRequire(path.join(root, 'tests/serve/package.json'))('ws');

const lines = fs.readFileSync(recordsFile, 'utf8').split('\n').filter((l) => l);
const records = lines.map((l) => JSON.parse(l));
const callistoCount = records.filter((r) => coreKinds.has(r.event.kind)).length;
const schemas = validators(root, shared);
const server = await startServer(traceServe, []);
const callisto = new Client(server.url, schemas);
const everything = new Client(server.url, schemas, { strict: false });
await callisto.connectAndStart();
await everything.connectAndStart(undefined, { event_types: ['*'], ports: null });
await feed(server.child.stdin, lines, 50000);
await callisto.until(() => callisto.events >= callistoCount, `${callistoCount} Callisto events`);
await everything.until(() => everything.events >= records.length, `${records.length} events of every kind`);
const kinds = (client) => new Set(client.messages.filter((m) => m.type === 'Event').map((m) => m.data.event.kind));
const seen = kinds(callisto);
check(callisto.events === callistoCount && [...seen].every((k) => coreKinds.has(k)) &&
      ['TaskSwitch', 'IsrEnter', 'IsrExit', 'IdleEnter', 'Marker', 'Text'].every((k) => seen.has(k)),
      `a Callisto client gets the ${callistoCount} task, ISR, idle, marker and text events`);
check(callisto.invalid.length === 0, `every message valid against ours and Callisto's schemas ${callisto.invalid.slice(0, 2)}`);
const all = kinds(everything);
check(everything.events === records.length && ['TaskInfo', 'SystemInfo', 'Overflow', 'HeapEvent'].every((k) => all.has(k)),
      `a client of every kind gets all ${records.length} records, SystemView's own kinds too`);
check(everything.invalid.length === 0, `and every one is valid against the project's schemas ${everything.invalid.slice(0, 2)}`);
await callisto.close();
await everything.close();
server.child.kill('SIGTERM');
await server.exited;
finish();
