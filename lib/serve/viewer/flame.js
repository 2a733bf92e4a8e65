// The Flame graph tab: PC samples in the Timeline's time range as an icicle (all, then each
// task, then each function in it, then its source lines when the samples carry them), widths
// by samples; click a box to focus it, the top box
// to go back; hover: its samples and share. The stacks are trace-top --format folded's
// (stacks.js).
import { $ } from './config.js';
import { live, state } from './state.js';
import { COLOURS, fitCanvas, showText } from './canvas.js';
import { foldedIn } from './stacks.js';
import { settleView } from './zoom.js';
import { tagNext } from './svg.js';
import { attachSvgExport } from './export.js';

const ROW = 22;
let flameLayout = null;  // the boxes drawn, for hover and click
let focus = null;        // the focused stack prefix ("task" or "task;function"), null: all
let cache = { key: '', agg: null, folded: { counts: new Map(), bases: new Map() } };

// The samples per stack in the view, counted again only when the view or the samples change.
function foldedInView() {
  const s = live.agg.stacks;
  if (s.times.length === 0) return { counts: new Map(), bases: new Map() };
  const view = settleView(Math.min(s.times[0], live.agg.first ?? s.times[0]), Math.max(s.times[s.times.length - 1], state.newest ?? 0));
  const key = `${view.start} ${view.end} ${s.times.length}`;
  if (key !== cache.key || cache.agg !== live.agg) cache = { key, agg: live.agg, folded: foldedIn(s, view.start, view.end) };
  return cache.folded;
}

// The tree: root -> tasks -> functions (a stack without a task is a function under the root).
function tree(counts) {
  const root = { name: 'all', path: '', total: 0, children: new Map() };
  for (const [stack, n] of counts) {
    const parts = stack.split(';');
    let node = root;
    root.total += n;
    parts.forEach((part, i) => {
      const path = parts.slice(0, i + 1).join(';');
      if (!node.children.has(part)) node.children.set(part, { name: part, path, total: 0, children: new Map() });
      node = node.children.get(part);
      node.total += n;
    });
  }
  return root;
}

function find(root, path) {
  if (!path) return root;
  let node = root;
  for (const part of path.split(';')) {
    node = node.children.get(part);
    if (!node) return root;
  }
  return node;
}

function colourOf(name) {
  let hash = 0;
  for (let i = 0; i < name.length; i++) hash = (hash * 31 + name.charCodeAt(i)) | 0;
  return COLOURS[Math.abs(hash) % COLOURS.length];
}

// Boxes of `node` and below, from x over width, `depth` rows down.
function layout(node, x, width, depth, boxes) {
  boxes.push({ node, x, width, y: 4 + depth * ROW });
  let at = x;
  const children = [...node.children.values()].sort((a, b) => b.total - a.total || a.name.localeCompare(b.name));
  for (const child of children) {
    const w = (width * child.total) / node.total;
    if (w >= 0.5) layout(child, at, w, depth + 1, boxes);
    at += w;
  }
}

// `target`: where to draw (an SVG export's), else the canvas.
export function renderFlame(target = null) {
  const canvas = $('flame');
  const { context, width } = target ?? fitCanvas(canvas);
  context.clearRect(0, 0, canvas.width, canvas.height);
  const root = tree(foldedInView().counts);
  if (root.total === 0) {
    context.fillStyle = '#8a96a3';
    context.font = '12px system-ui, sans-serif';
    context.fillText('No PC samples in the range (the Timeline\'s; Fit all shows them all).', 12, 20);
    flameLayout = null;
    return;
  }
  const top = find(root, focus);
  const boxes = [];
  layout(top, 0, width, 0, boxes);
  context.font = '12px system-ui, sans-serif';
  for (const box of boxes) {
    context.fillStyle = box.node === top ? '#3a4450' : colourOf(box.node.name);
    tagNext(context, { path: box.node.path, samples: box.node.total });
    context.fillRect(box.x, box.y, Math.max(0.5, box.width - 1), ROW - 2);
    if (box.width > 40) {
      context.fillStyle = '#0d1014';
      const label = box.node === top ? `${box.node.path || 'all'} (${box.node.total})` : box.node.name;
      context.fillText(label, box.x + 4, box.y + 15, box.width - 8);
    }
  }
  flameLayout = { boxes, root, top };
  showText($('flame-summary'), `${root.total} samples in the range` + (focus ? ` · focused on ${focus} (click the top box: all)` : ''));
}

// What the graph holds, for tests and scripts: samples per folded stack in the range (as
// trace-top folds them: task;function), and with the source lines.
export function flameChartData() {
  if (!flameLayout) return null;
  const folded = foldedInView();
  return { folded: Object.fromEntries(folded.bases), stacks: Object.fromEntries(folded.counts), focus, boxes: flameLayout.boxes.length,
           view: { start: state.view.start, end: state.view.end } };
}

function boxAt(event) {
  if (!flameLayout) return null;
  const rect = $('flame').getBoundingClientRect();
  const x = event.clientX - rect.left;
  const y = event.clientY - rect.top;
  return flameLayout.boxes.find((b) => x >= b.x && x < b.x + b.width && y >= b.y && y < b.y + ROW) ?? null;
}

function flameHover(event) {
  const tip = $('flame-tip');
  const box = boxAt(event);
  if (!box) { tip.hidden = true; return; }
  const share = (100 * box.node.total) / flameLayout.root.total;
  tip.textContent = `${box.node.path || 'all'}\n${box.node.total} samples (${share.toFixed(2)}%)`;
  tip.hidden = false;
  const panel = tip.parentElement.getBoundingClientRect();
  tip.style.left = `${Math.min(event.clientX - panel.left + 14, panel.width - 320)}px`;
  tip.style.top = `${event.clientY - panel.top + 14}px`;
}

export function setupFlameInput() {
  const canvas = $('flame');
  canvas.addEventListener('mousemove', flameHover);
  attachSvgExport('flame', renderFlame);
  canvas.addEventListener('mouseleave', () => { $('flame-tip').hidden = true; });
  canvas.addEventListener('click', (event) => {
    const box = boxAt(event);
    if (!box) return;
    const parent = box.node.path.includes(';') ? box.node.path.slice(0, box.node.path.lastIndexOf(';')) : null;
    focus = box.node === flameLayout.top ? parent : box.node.path;
    state.dirty = true;
  });
  $('flame-fit').addEventListener('click', () => {
    const s = live.agg.stacks;
    if (s.times.length) {
      const start = Math.min(s.times[0], live.agg.first ?? s.times[0]);
      const end = Math.max(s.times[s.times.length - 1], state.newest ?? 0);
      state.view = { start, end: Math.max(end, start + 1), follow: false };
    }
    state.dirty = true;
  });
}
