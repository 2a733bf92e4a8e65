// PC samples as folded stacks ("task;function"), each with its time, for the flame graph:
// trace-top --format folded's definitions (lib/analysis LiveStats), ported so the graph can
// count any time range: the task is what had the CPU at the sample ("idle" between IdleEnter
// and IdleExit, else the task switched to last, by the name it was given, else "task N";
// nothing before any), the function the sample's, else its PC in hex, "[sleep]" asleep; ';'
// in a name becomes ':'. A sample with a source line (itm-decode --elf with DWARF) has a
// third frame, "file:line", below its function; its base (task;function) is what trace-top
// folds. serve_charts checks the counts by base against trace-top's.
import { HISTORY } from './config.js';

export function freshStacks() {
  return { idle: false, running: '', names: new Map(), ids: new Map(), stacks: [], bases: [], times: [], samples: [] };
}

const frame = (name) => name.replaceAll(';', ':');

export function stacksRecord(s, t, kind, data) {
  if (kind === 'TaskSwitch') {
    const to = Number.isInteger(data.to_task) ? data.to_task : 0;
    if (typeof data.to_name === 'string' && data.to_name) s.names.set(to, data.to_name);
    s.running = s.names.get(to) ?? `task ${to}`;
  } else if (kind === 'IdleEnter') {
    s.idle = true;
  } else if (kind === 'IdleExit') {
    s.idle = false;
  } else if (kind === 'PcSample' && Number.isInteger(data.pc)) {
    const task = s.idle ? 'idle' : s.running;
    const fn = data.sleep === true ? '[sleep]'
      : (typeof data.function === 'string' && data.function) || `0x${data.pc.toString(16).padStart(8, '0')}`;
    const base = task ? `${frame(task)};${frame(fn)}` : frame(fn);
    const line = data.sleep !== true && typeof data.file === 'string' && data.file ? `;${frame(data.file)}:${data.line ?? 0}` : '';
    const stack = base + line;
    let id = s.ids.get(stack);
    if (id === undefined) { id = s.stacks.length; s.ids.set(stack, id); s.stacks.push(stack); s.bases.push(base); }
    s.times.push(t);
    s.samples.push(id);
    if (s.times.length > HISTORY * 1.25) {
      s.times.splice(0, s.times.length - HISTORY);
      s.samples.splice(0, s.samples.length - HISTORY);
      compact(s);
    }
  }
}

// Only the stacks of the samples held stay numbered: a stream of ever new PCs does not grow
// the table without end.
function compact(s) {
  const renumbered = new Int32Array(s.stacks.length).fill(-1);
  const stacks = [];
  const bases = [];
  s.ids = new Map();
  for (let i = 0; i < s.samples.length; i++) {
    const old = s.samples[i];
    if (renumbered[old] < 0) {
      renumbered[old] = stacks.length;
      s.ids.set(s.stacks[old], stacks.length);
      stacks.push(s.stacks[old]);
      bases.push(s.bases[old]);
    }
    s.samples[i] = renumbered[old];
  }
  s.stacks = stacks;
  s.bases = bases;
}

// Samples per stack within [start, end] (the samples are in arrival order, which is time
// order): counted by stack number into a typed array, no map in the loop (a million samples
// take a few milliseconds).
export function foldedIn(s, start, end) {
  let low = 0;
  let high = s.times.length;
  while (low < high) {
    const mid = (low + high) >> 1;
    if (s.times[mid] < start) low = mid + 1; else high = mid;
  }
  const perStack = new Uint32Array(s.stacks.length);
  for (let i = low; i < s.times.length && s.times[i] <= end; i++) perStack[s.samples[i]]++;
  const counts = new Map();
  const bases = new Map();
  perStack.forEach((n, id) => {
    if (!n) return;
    counts.set(s.stacks[id], n);
    bases.set(s.bases[id], (bases.get(s.bases[id]) ?? 0) + n);
  });
  return { counts, bases };
}
