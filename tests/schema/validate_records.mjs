// Validates what the real itm-decode writes against the project's record and frames
// schemas (lib/records/*.schema.json), checks every record kind shows up, and validates
// the Callisto core kinds, wrapped as Event messages, against the original Callisto
// project's own schema (../shared/reference/callisto-schema, skipped when absent).
// Usage: node validate_records.mjs PROJECT_ROOT ITM_DECODE ITM_SYNTH SHARED_DIR
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const [root, decode, synth, shared] = process.argv.slice(2);
const readJson = (file) => JSON.parse(fs.readFileSync(file, 'utf8'));
const ajv = new Ajv({ allErrors: true, strict: false, formats: { uint8: true, uint32: true, uint64: true, double: true } });
addFormats(ajv);
const validateRecord = ajv.compile(readJson(path.join(root, 'lib/records/record.schema.json')));
const validateFrames = ajv.compile(readJson(path.join(root, 'lib/records/frames.schema.json')));

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
const sigrok = path.join(shared, 'reference/captures/sigrok-stm32f105/stm32f105_swo_tpiu_raw.bin');
if (fs.existsSync(sigrok)) outputs.push(['sigrok capture (TPIU)', run(['--tpiu', sigrok])]);
else console.log(`skip sigrok capture: ${sigrok} not found`);

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
const kinds = Object.keys(readJson(path.join(root, 'lib/records/record.schema.json')).definitions);
for (const kind of kinds) check(seen.has(kind), `kind ${kind} was never produced, so its schema is untested`);

const callisto = path.join(shared, 'reference/callisto-schema/server-message.json');
if (fs.existsSync(callisto)) {
  const validateEvent = ajv.compile(readJson(callisto));
  let bad = 0;
  for (const record of coreRecords) {
    if (!validateEvent({ type: 'Event', data: record }) && bad++ < 3) {
      console.log(`Callisto rejects ${JSON.stringify(record)}: ${ajv.errorsText(validateEvent.errors)}`);
    }
  }
  check(bad === 0, `${bad} of ${coreRecords.length} core-kind records rejected by Callisto's own Event schema`);
} else {
  console.log(`skip Callisto schema check: ${callisto} not found`);
}
fs.rmSync(work, { recursive: true, force: true });
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
