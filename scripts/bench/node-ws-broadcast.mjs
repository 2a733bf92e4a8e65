// The peer a user would otherwise write: a small Node `ws` server that reads NDJSON
// records from stdin and broadcasts each, wrapped as a Callisto Event message, to every
// connected client. Used by scripts/bench/trace-serve.sh for comparison.
// Usage: node node-ws-broadcast.mjs PORT   (needs tests/serve/node_modules: ws)
import readline from 'node:readline';
import { createRequire } from 'node:module';

// ws comes from the test packages (npm ci in tests/serve).
const { WebSocketServer } = createRequire(new URL('../../tests/serve/package.json', import.meta.url))('ws');

const port = Number(process.argv[2] || 0);
const wss = new WebSocketServer({ host: '127.0.0.1', port, path: '/ws' });
wss.on('listening', () => console.error(`listening on 127.0.0.1:${wss.address().port}`));
const input = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
input.on('line', (line) => {
  if (!line) return;
  const message = `{"type":"Event","data":${line}}`;
  for (const client of wss.clients) if (client.readyState === 1) client.send(message);
});
