// The fleet tests' independent reader: the official NATS JavaScript client (npm `nats`), not
// our code, reads every message of a JetStream stream and accounts for every record by the
// fleet fields in its own lines (not trace-ship's headers): per (board, run), how many
// records, how many seqs seen twice, which seqs are missing, how many messages came out of
// seq order, and the Loss records' ranges. A message line that is not a stamped record
// (not JSON, no board/run/seq) counts in bad_lines.
//
// With --input KEY=FILE (KEY a board, or "board run"), every record of that run is decoded
// and checked against what went in: FILE holds the lines given to trace-ship, and each stored
// record, without its fleet fields (the stamp trace-ship appends), must be one of them, in
// input order; an input line that is not stored must sit where the stream has a seq missing.
//
//   node read_stream.mjs nats://127.0.0.1:PORT STREAM [--domain D] [--input KEY=FILE]...
//
// Prints one JSON object on stdout.
import { readFileSync } from 'node:fs';
import { connect } from 'nats';

const [server, stream, ...rest] = process.argv.slice(2);
const option = (name) => {
  const at = rest.indexOf(name);
  return at >= 0 ? rest[at + 1] : undefined;
};
const domain = option('--domain');
const inputs = new Map();
rest.forEach((arg, at) => {
  if (arg !== '--input') return;
  const [key, path] = [rest[at + 1].slice(0, rest[at + 1].indexOf('=')), rest[at + 1].slice(rest[at + 1].indexOf('=') + 1)];
  inputs.set(key, readFileSync(path, 'utf8').split('\n').filter((line) => line !== ''));
});
// The stamp trace-ship appends to a record, last in its line (docs/design.md, fleet fields).
const STAMP = /,"board":"[^"\\]*","run":"[^"\\]*","seq":\d+,"host_us":\d+\}$/;

const nc = await connect({ servers: server, ignoreClusterUpdates: true, timeout: 10000 });
// A cluster that has just been restarted answers late for a while (the manager itself asks for
// the account's state first): asked again until a deadline, which fails the read when it expires.
let info = null;
for (const deadline = Date.now() + 90000; info === null;) {
  try {
    const jsm = await nc.jetstreamManager({ timeout: 10000, ...(domain ? { domain } : {}) });
    info = await jsm.streams.info(stream);
  } catch (error) {
    if (error.code !== 'TIMEOUT' && error.code !== '503') throw error;
    if (Date.now() > deadline) throw error;
  }
}
const total = info.state.messages;
const js = nc.jetstream(domain ? { domain } : {});

const runs = new Map();
let messages = 0;
let badLines = 0;
if (total > 0) {
  // An ordered consumer from the stream's first message.
  const consumer = await js.consumers.get(stream);
  const sub = await consumer.consume();
  const decoder = new TextDecoder();
  for await (const m of sub) {
    messages += 1;
    let previousSeq = null;
    for (const line of decoder.decode(m.data).split('\n')) {
      if (line === '') continue;
      let record;
      try {
        record = JSON.parse(line);
      } catch {
        badLines += 1;
        continue;
      }
      if (record === null || typeof record !== 'object' || typeof record.board !== 'string' ||
          typeof record.run !== 'string' || !Number.isSafeInteger(record.seq) || record.seq < 0) {
        badLines += 1;
        continue;
      }
      const key = `${record.board} ${record.run}`;
      if (!runs.has(key)) {
        runs.set(key, { seen: new Map(), max: -1, outOfOrder: 0, losses: [], lastChunkFirst: -1, bodies: new Map() });
      }
      const run = runs.get(key);
      const seq = record.seq;
      if (previousSeq === null) {
        if (seq < run.lastChunkFirst) run.outOfOrder += 1;
        run.lastChunkFirst = seq;
      }
      previousSeq = seq;
      run.seen.set(seq, (run.seen.get(seq) || 0) + 1);
      if (seq > run.max) run.max = seq;
      if (record.event && record.event.kind === 'Loss') {
        const d = record.event.data;
        run.losses.push([d.first_seq, d.last_seq, d.reason]);
      } else if (!run.bodies.has(seq)) {
        run.bodies.set(seq, STAMP.test(line) ? line.replace(STAMP, '}') : null);
      }
    }
    if (m.info.pending === 0) break;
  }
  await sub.close();
}
await nc.close();

// The stored records of a run against the lines that went in: each body must be an input line,
// later in the input than the one before it; the input lines passed over between two stored
// records are lost, and must be no more than the seqs missing between those two records.
function againstInput(run, lines) {
  const at = new Map();
  lines.forEach((line, index) => {
    if (!at.has(line)) at.set(line, []);
    at.get(line).push(index);
  });
  const firstAfter = (indices, from) => {
    let [low, high] = [0, indices.length];
    while (low < high) {
      const mid = (low + high) >> 1;
      if (indices[mid] < from) low = mid + 1;
      else high = mid;
    }
    return low < indices.length ? indices[low] : -1;
  };
  const missingBetween = (first, last) => {
    let count = 0;
    for (let seq = first + 1; seq < last; seq += 1) if (!run.seen.has(seq)) count += 1;
    return count;
  };
  const out = { lines: lines.length, matched: 0, not_in_input: [], lost: 0, lost_ranges: [], unaccounted: 0 };
  let next = 0;
  let previousSeq = -1;
  const passOver = (upTo, seq) => {
    const skipped = upTo - next;
    if (skipped > 0) {
      out.lost += skipped;
      out.lost_ranges.push([next, upTo - 1]);
    }
    out.unaccounted += Math.max(0, skipped - missingBetween(previousSeq, seq));
  };
  for (const seq of [...run.bodies.keys()].sort((a, b) => a - b)) {
    const body = run.bodies.get(seq);
    const index = body === null ? -1 : firstAfter(at.get(body) || [], next);
    if (index < 0) {
      if (out.not_in_input.length < 10) out.not_in_input.push(seq);
      else out.not_in_input_more = (out.not_in_input_more || 0) + 1;
      continue;
    }
    passOver(index, seq);
    out.matched += 1;
    next = index + 1;
    previousSeq = seq;
  }
  passOver(lines.length, run.max + 1);
  out.lost_ranges = out.lost_ranges.slice(0, 20);
  return out;
}

const result = { messages, stored_messages: total, bad_lines: badLines, runs: {} };
for (const [key, run] of runs) {
  let doubled = 0;
  for (const count of run.seen.values()) if (count > 1) doubled += count - 1;
  const missing = [];
  let first = null;
  for (let seq = 0; seq <= run.max + 1; seq += 1) {
    const absent = !run.seen.has(seq) && seq <= run.max;
    if (absent && first === null) first = seq;
    if (!absent && first !== null) {
      missing.push([first, seq - 1]);
      first = null;
    }
  }
  result.runs[key] = {
    records: run.seen.size,
    max_seq: run.max,
    doubled,
    missing,
    out_of_order: run.outOfOrder,
    losses: run.losses,
  };
  const lines = inputs.get(key) || inputs.get(key.split(' ')[0]);
  if (lines) result.runs[key].input = againstInput(run, lines);
}
console.log(JSON.stringify(result));
