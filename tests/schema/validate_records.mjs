// Validates what the real itm-decode writes against the project's record and frames
// schemas (lib/records/*.schema.json), checks every record kind shows up, and validates
// the Callisto core kinds, wrapped as Event messages, against the original Callisto
// project's own schema (../shared/reference/callisto-schema).
// palm-recv's records are checked too, from messages sent over TCP.
// PART local: everything the project makes itself; PART shared: the sigrok capture and
// Callisto's schema from ../shared, exit 77 (skipped) where that material is absent.
// Usage: node validate_records.mjs PROJECT_ROOT ITM_DECODE ITM_SYNTH SHARED_DIR PALM_RECV CHIBI_PULL local|shared
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import { execFileSync, spawn } from 'node:child_process';
import net from 'node:net';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const [root, decode, synth, shared, palmRecv, chibiPull, traceTop, part] = process.argv.slice(2);
const sharedPart = part === 'shared';
const sigrok = path.join(shared, 'reference/captures/sigrok-stm32f105/stm32f105_swo_tpiu_raw.bin');
const callisto = path.join(shared, 'reference/callisto-schema/server-message.json');
if (sharedPart && !(fs.existsSync(sigrok) && fs.existsSync(callisto))) {
  console.log(`skipped: ${sigrok} or ${callisto} not found (the shared reference material is absent)`);
  process.exit(77);
}
const readJson = (file) => JSON.parse(fs.readFileSync(file, 'utf8'));
const ajv = new Ajv({ allErrors: true, strict: false, formats: { uint8: true, uint32: true, uint64: true, double: true } });
addFormats(ajv);
const validateRecord = ajv.compile(readJson(path.join(root, 'schemas/record.schema.json')));
const validateFrames = ajv.compile(readJson(path.join(root, 'schemas/frames.schema.json')));

let passed = 0;
let failed = 0;
const check = (ok, what) => {
  if (ok) passed++;
  else {
    failed++;
    console.log(`FAIL ${what}`);
  }
};

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'tracepipe-schema-'));
const run = (args, input) => execFileSync(decode, args, { input, maxBuffer: 1 << 28 }).toString().split('\n').filter((l) => l);

// A stream with the kinds a generated target rarely emits: ISR and idle records, a named
// marker, a raw port, every DWT packet form, an extension and a reserved header.
const rare = Buffer.from([
  0x09, 2, 0x09, 10, 0x09, 0, 0x09, 0, 0x09, 0, 0x09, 0, 0x09, 0, 0x09, 0, 0x09, 0,  // IsrEnter 10
  0x0b, 0x03, 0x0a, 0x00, 0x00, 0x0b, 0, 0, 0, 0, 0x09, 0,                           // IsrExit 10 (4+4+1 byte writes)
  0x09, 4, 0x0b, 0, 0, 0, 0, 0x0b, 0, 0, 0, 0, 0x09, 5, 0x0b, 0, 0, 0, 0, 0x0b, 0, 0, 0, 0,  // IdleEnter, IdleExit
  0x13, 1, 0, 0, 0,  // Marker 1 (named by the port map)
  0xa1, 0x42,        // port 20: Raw
  0x05, 0x21, 0x15, 0x00, 0x17, 1, 2, 3, 4, 0x47, 1, 2, 3, 4, 0x4e, 0x14, 0x10, 0x85, 7, 0x8e, 1, 2,
  0x1d, 0xaa, 0x0c, 0x70, 0x90, 0xc0, 0x05,
]);
const rareFile = path.join(work, 'rare.bin');
fs.writeFileSync(rareFile, rare);
const mapFile = path.join(work, 'map.json');
fs.writeFileSync(mapFile, JSON.stringify({
  0: { port: 0, name: 'Console', decoder: 'Text', enabled: true },
  1: { port: 1, name: 'RTOS', decoder: 'TaskIsr', enabled: true, names: { 10: 'TIM1_IRQHandler' } },
  2: { port: 2, name: 'Markers', decoder: 'Marker', enabled: true, names: { 1: 'boot' } },
  3: { port: 3, name: 'Counters', decoder: 'Counter', enabled: true },
}));
const streamFile = path.join(work, 'synth.bin');
fs.writeFileSync(streamFile, execFileSync(synth, ['--size', '300000', '--seed', '5'], { maxBuffer: 1 << 26 }));

const outputs = [
  ['generated stream, --frames', run(['--frames', streamFile])],
  ['generated stream, --cpu-hz', run(['--cpu-hz', '48000000', streamFile])],
  ['rare kinds', run(['--port-map', mapFile, rareFile])],
];
// Palm Reporter messages (protocol 1.0, big-endian): text, text with line break and all
// optional parameters, binary.
function palmMessage(kind, data, extra = []) {
  const param = (op, body) => Buffer.concat([Buffer.from([op, body.length >> 8, body.length & 255]), body]);
  const parts = [param(1, Buffer.from([0x02, 0x00, 0, 0, kind])), ...extra, param(5, data), param(0, Buffer.alloc(0))];
  const body = Buffer.concat(parts);
  const header = Buffer.alloc(6);
  header.writeUInt8(1, 0);
  header.writeUInt32BE(6 + body.length, 2);
  return Buffer.concat([header, body]);
}
async function palmRecords() {
  const child = spawn(palmRecv, ['--listen', '127.0.0.1:0', '--once']);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => { stdout += d; });
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  const closed = new Promise((resolve) => child.on('close', resolve));
  const port = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`palm-recv did not start: ${stderr}`)), 60000);  // deadline: fails when it expires
    child.stderr.on('data', (d) => {
      stderr += d;
      const match = /listening on 127\.0\.0\.1:(\d+)/.exec(stderr);
      if (match) {
        clearTimeout(timer);
        resolve(Number(match[1]));
      }
    });
    exited.then(({ code, signal }) => reject(new Error(`palm-recv exited (${code ?? signal}) before listening: ${stderr}`)));
  });
  const u32 = (v) => { const b = Buffer.alloc(4); b.writeUInt32BE(v); return b; };
  const param = (op, body) => Buffer.concat([Buffer.from([op, body.length >> 8, body.length & 255]), body]);
  await new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1', () => {
      socket.end(Buffer.concat([
        palmMessage(0, Buffer.from('plain "text"')),
        palmMessage(1, Buffer.from('line'), [param(2, Buffer.from([3])), param(3, u32(7)), param(4, u32(8)), param(6, u32(9))]),
        palmMessage(2, Buffer.from([0, 1, 255])),
      ]));
    });
    socket.on('close', resolve);
  });
  const { code, signal } = await exited;
  await closed;
  check(code === 0, `palm-recv --once exits 0 (${code ?? signal}): ${stderr}`);
  return stdout.split('\n').filter((l) => l);
}

if (sharedPart) outputs.push(['sigrok capture (TPIU)', run(['--tpiu', sigrok])]);

if (!sharedPart) {
  const lines = await palmRecords();
  check(lines.length === 3, `palm-recv wrote ${lines.length} of 3 records`);
  outputs.push(['palm-recv', lines]);
}

// chibi-pull: every subcommand against the ChibiOS shell emulator on a pseudo-terminal.
async function chibiRecords() {
  const link = path.join(work, 'chibios.tty');
  const emulator = spawn('python3', [path.join(root, 'tests/chibios/shell_emulator.py'), '--link', link, '--seed', '4', '--trigger']);
  await new Promise((resolve) => emulator.stdout.once('data', resolve));
  const lines = [];
  for (const command of ['stat', 'uc', 'list', 'timestamps', 'timeline', 'trigger']) {
    lines.push(...execFileSync(chibiPull, ['--port', link, command]).toString().split('\n').filter((l) => l));
  }
  emulator.kill();
  return lines;
}
if (!sharedPart) outputs.push(['chibi-pull', await chibiRecords()]);
// trace-top's snapshot records, over the decoded streams above (and an Overflow among them).
const decoded = outputs.flatMap(([, lines]) => lines).filter((l) => !l.includes('"frames"'));
decoded.splice(decoded.length >> 1, 0, '{"timestamp":1,"port":0,"event":{"kind":"Overflow","data":{}},"source":"itm"}');
outputs.push(['trace-top', execFileSync(traceTop, ['--once', '--format', 'ndjson'], { input: decoded.join('\n') + '\n', maxBuffer: 1 << 28 })
  .toString().split('\n').filter((l) => l)]);

// trace-serve --top-interval's snapshot fields (tests/serve/test_charts.mjs validates the
// records it sends): a well-formed TopHandler and TopTask with them pass, each malformed
// value is refused.
{
  const handler = { timestamp: 9, port: 0, source: 'trace-top', clock: 'cycles', event: { kind: 'TopHandler', data: {
    source: 'isr', number: 3, name: null, count: 2, total: 7, min: 3, avg: 3.5, max: 4, max_nesting: 1, share: 0.1, uncertain: 0,
    load_width: 64, load_first: 2, load: [0, 7, 3], hist_first: 3, hist: [1, 0, 1], p50: 3, p99: 4, worst_start: 100, worst_end: 104 } } };
  const task = { timestamp: 9, port: 0, source: 'trace-top', clock: 'cycles', event: { kind: 'TopTask', data: {
    task: null, name: 'idle', time: 5, share: 0.5, uncertain_time: 0, load_width: 1, load_first: 0, load: new Array(1024).fill(1) } } };
  const changed = (record, field, value) => ({ ...record, event: { ...record.event, data: { ...record.event.data, [field]: value } } });
  check(validateRecord(handler) && validateRecord(task), `a snapshot's series and histogram pass (${ajv.errorsText(validateRecord.errors)})`);
  const malformed = [
    ...['load', 'hist'].flatMap((field) => ['7', 7, null, { 0: 1 }, [-1], [1.5], ['1'], [true], [null], [[1]]].map((v) => [handler, field, v])),
    [task, 'load', new Array(1025).fill(1)], [handler, 'hist', new Array(497).fill(1)], [handler, 'hist_first', 496],
    ...['load_width', 'load_first', 'p50', 'p99', 'worst_start', 'worst_end'].flatMap((field) => [[handler, field, -1], [handler, field, [1]], [handler, field, 1.5]]),
    [handler, 'load_width', 0], [task, 'load_first', '0'],
  ];
  const accepted = malformed.filter(([record, field, value]) => validateRecord(changed(record, field, value)));
  check(accepted.length === 0, `each malformed snapshot field is refused (${malformed.length}; accepted: ${JSON.stringify(accepted.map(([r, f, v]) => [r.event.kind, f, v]).slice(0, 3))})`);
}

const seen = new Set();
const core = new Set(['Text', 'Marker', 'TaskSwitch', 'IsrEnter', 'IsrExit', 'IdleEnter', 'IdleExit', 'Counter', 'Raw']);
const coreRecords = [];
for (const [name, lines] of outputs) {
  let bad = 0;
  for (const line of lines) {
    const value = JSON.parse(line);
    const validate = value.frames ? validateFrames : validateRecord;
    if (!validate(value)) {
      if (bad++ < 3) console.log(`${name}: ${line}\n  ${ajv.errorsText(validate.errors)}`);
      continue;
    }
    if (value.event) {
      seen.add(value.event.kind);
      if (core.has(value.event.kind)) coreRecords.push(value);
    }
  }
  check(bad === 0, `${name}: ${bad} of ${lines.length} lines do not match the schema`);
}
const kinds = Object.keys(readJson(path.join(root, 'schemas/record.schema.json')).definitions);
// eko-collect's kinds need a live GDB server: tests/eko validates them (validate_file.mjs);
// trace-ship's Loss needs a NATS server: tests/fleet validates both reasons the same way.
// sysview-decode's kinds come from SEGGER's target code: tests/sysview makes every one and
// validates them the same way.
const validatedElsewhere = new Set(['EkoEvent', 'EkoClock', 'Loss', 'TaskInfo', 'TaskState', 'StackInfo', 'TimerEnter',
                                    'TimerExit', 'DataSample', 'HeapEvent', 'SystemInfo', 'UserEvent']);
for (const kind of kinds.filter((k) => !validatedElsewhere.has(k) && !sharedPart)) {
  check(seen.has(kind), `kind ${kind} was never produced, so its schema is untested`);
}

if (sharedPart) {
  const validateEvent = ajv.compile(readJson(callisto));
  let bad = 0;
  for (const record of coreRecords) {
    if (!validateEvent({ type: 'Event', data: record }) && bad++ < 3) {
      console.log(`Callisto rejects ${JSON.stringify(record)}: ${ajv.errorsText(validateEvent.errors)}`);
    }
  }
  check(coreRecords.length > 1000 && bad === 0, `${bad} of ${coreRecords.length} core-kind records rejected by Callisto's own Event schema`);
}
fs.rmSync(work, { recursive: true, force: true });
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
