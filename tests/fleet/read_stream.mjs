// The fleet tests' independent reader: the official NATS JavaScript client (npm `nats`), not
// our code, reads every message of a JetStream stream and accounts for every record by the
// fleet fields in its own lines (not trace-ship's headers): per (board, run), how many
// records, how many seqs seen twice, which seqs are missing, how many messages came out of
// seq order, and the Loss records' ranges.
//
//   node read_stream.mjs nats://127.0.0.1:PORT STREAM [--domain D] [--expect-subject-prefix P]
//
// Prints one JSON object on stdout.
import { connect } from 'nats';

const [server, stream, ...rest] = process.argv.slice(2);
const option = (name) => {
  const at = rest.indexOf(name);
  return at >= 0 ? rest[at + 1] : undefined;
};
const domain = option('--domain');

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
      const key = `${record.board} ${record.run}`;
      if (!runs.has(key)) {
        runs.set(key, { seen: new Map(), max: -1, outOfOrder: 0, losses: [], lastChunkFirst: -1 });
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
      }
    }
    if (m.info.pending === 0) break;
  }
  await sub.close();
}
await nc.close();

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
}
console.log(JSON.stringify(result));
