// Marker pairs: SystemView's MarkStart/MarkStop (Marker records with phase "start" and "stop",
// sysview-decode) as durations, for the Durations tab. A pair is a start and the next stop of
// the same id on the same port; a second start before the stop starts it again (the first is
// counted as unmatched, as is a stop with no start); a pair open across a loss (Overflow,
// Malformed) is uncertain and left out, as trace-top leaves such handler intervals out of
// min and max. The newest MAX_PAIR_DURATIONS durations of each pair are kept, for the first
// MAX_PAIRS pairs.
export const MAX_PAIR_DURATIONS = 100000;
export const MAX_PAIRS = 1000;  // marker ids paired (by port); a stream naming more gets no more

export function freshPairs() {
  return new Map();  // "port:id" -> {port, id, name, open, durations: [[duration, start]], count, uncertain, unmatched}
}

function pairOf(pairs, port, data) {
  const key = `${port}:${data.id}`;
  let pair = pairs.get(key);
  if (!pair && pairs.size >= MAX_PAIRS) return null;
  if (!pair) {
    pair = { key, port, id: data.id, name: null, open: null, durations: [], count: 0, uncertain: 0, unmatched: 0 };
    pairs.set(key, pair);
  }
  if (typeof data.name === 'string' && data.name) pair.name = data.name;
  return pair;
}

export function pairsRecord(pairs, t, port, kind, data) {
  if (kind === 'Overflow' || kind === 'Malformed') {
    for (const pair of pairs.values()) if (pair.open) pair.open.uncertain = true;
    return;
  }
  if (kind !== 'Marker' || (data.phase !== 'start' && data.phase !== 'stop') || !Number.isInteger(data.id)) return;
  const pair = pairOf(pairs, port, data);
  if (!pair) return;
  if (data.phase === 'start') {
    if (pair.open) pair.unmatched++;
    pair.open = { start: t, uncertain: false };
    return;
  }
  if (!pair.open) { pair.unmatched++; return; }
  pair.count++;
  if (pair.open.uncertain) pair.uncertain++;
  else {
    pair.durations.push([t - pair.open.start, pair.open.start]);
    if (pair.durations.length > MAX_PAIR_DURATIONS * 1.25) pair.durations.splice(0, pair.durations.length - MAX_PAIR_DURATIONS);
  }
  pair.open = null;
}
