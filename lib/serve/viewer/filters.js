// The filters: a checkbox per port and per kind seen; a change rebuilds the aggregates.
import { $ } from './config.js';
import { state } from './state.js';
import { portLabel } from './names.js';
import { rebuildAggregates } from './aggregates.js';

function checkbox(label, checked, onChange, dataset) {
  const wrapper = document.createElement('label');
  const input = document.createElement('input');
  input.type = 'checkbox';
  input.checked = checked;
  Object.assign(input.dataset, dataset);
  input.addEventListener('change', () => { onChange(input.checked); rebuildAggregates(); });
  wrapper.append(input, ` ${label}`);
  return wrapper;
}

export function rebuildPortFilters() {
  const box = $('port-filters');
  box.replaceChildren(...[...state.seenPorts].sort((a, b) => a - b).map((port) =>
    checkbox(portLabel(port), !state.hiddenPorts.has(port),
             (on) => (on ? state.hiddenPorts.delete(port) : state.hiddenPorts.add(port)), { port: String(port) })));
}

export function rebuildKindFilters() {
  const box = $('kind-filters');
  box.replaceChildren(...[...state.seenKinds].sort().map((kind) =>
    checkbox(kind, !state.hiddenKinds.has(kind),
             (on) => (on ? state.hiddenKinds.delete(kind) : state.hiddenKinds.add(kind)), { kind })));
}
