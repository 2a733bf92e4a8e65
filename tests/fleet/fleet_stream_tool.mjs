// The fleet attack test's hands on the server, through the official NATS JavaScript client
// (npm `nats`, not our code):
//
//   node fleet_stream_tool.mjs URL create STREAM SUBJECT CONFIG_JSON   a stream as a lab might set it
//                                                                      up (config as JetStream's API)
//   node fleet_stream_tool.mjs URL recreate STREAM SUBJECT CONFIG_JSON the same, deleted first (an operator
//                                                                      recreating it under a shipper)
//   node fleet_stream_tool.mjs URL probe STREAM SUBJECT N              publish N acknowledged messages:
//                                                                      {"acked":N,"held":what it keeps}
//   node fleet_stream_tool.mjs URL records STREAM                      every record line of every
//                                                                      message, one JSON per line
//   node fleet_stream_tool.mjs URL login USER PASSWORD                 {"ok":true} once connected
import { connect, nanos } from 'nats';

const [server, what, ...args] = process.argv.slice(2);

if (what === 'login') {
  const nc = await connect({ servers: server, user: args[0], pass: args[1], timeout: 10000 });
  await nc.flush();
  await nc.close();
  console.log(JSON.stringify({ ok: true }));
  process.exit(0);
}

const nc = await connect({ servers: server, ignoreClusterUpdates: true, timeout: 10000 });
const jsm = await nc.jetstreamManager({ timeout: 10000 });
if (what === 'create' || what === 'recreate') {
  const [name, subject, configText] = args;
  if (what === 'recreate') await jsm.streams.delete(name);
  const config = JSON.parse(configText);
  for (const key of ['max_age', 'duplicate_window']) {
    if (config[key] !== undefined) config[key] = nanos(config[key] * 1000);  // given in seconds
  }
  const info = await jsm.streams.add({ name, subjects: [subject], ...config });
  console.log(JSON.stringify(info.config));
} else if (what === 'probe') {
  const [name, subject, count] = args;
  const js = nc.jetstream();
  let acked = 0;
  for (let i = 0; i < Number(count); i += 1) {
    try {
      await js.publish(subject, new TextEncoder().encode(`probe ${i}`), { msgID: `probe-${i}` });
      acked += 1;
    } catch {
      // refused (discard new): counted by what is not acked
    }
  }
  const info = await jsm.streams.info(name);
  console.log(JSON.stringify({ acked, held: info.state.messages }));
} else if (what === 'records') {
  const [name] = args;
  const info = await jsm.streams.info(name);
  if (info.state.messages > 0) {
    const js = nc.jetstream();
    const consumer = await js.consumers.get(name);
    const sub = await consumer.consume();
    const decoder = new TextDecoder();
    for await (const m of sub) {
      for (const line of decoder.decode(m.data).split('\n')) {
        if (line !== '') console.log(line);
      }
      if (m.info.pending === 0) break;
    }
    await sub.close();
  }
}
await nc.close();
