// The shared time range (state.view) and the input that moves it: the Timeline and the CPU
// load chart draw the same range, so zooming or panning either moves both.
import { state } from './state.js';

const MIN_SPAN = 1e-3;  // clock units: far below a cycle or a nanosecond
const MAX_SPAN = 1e18;  // far beyond any trace (31 years of nanoseconds)

// The range to draw over data from `first` to `end`: following live, its newest part of the
// current span; else as the user left it.
export function settleView(first, end) {
  const view = state.view;
  if (view.follow || view.end <= view.start) {
    const span = view.end > view.start ? view.end - view.start : Math.max(1, end - first);
    view.end = end;
    view.start = Math.max(first, end - span);
    if (view.start >= view.end) view.start = view.end - 1;
  }
  return view;
}

// Wheel zooms about the mouse, drag pans; `left`: the width of the labels left of the plot,
// `right`: the margin after it; `active()`: whether the canvas shows the range now.
export function attachTimeZoom(canvas, left, right, active = () => true) {
  canvas.addEventListener('wheel', (event) => {
    if (!active()) return;
    event.preventDefault();
    const view = state.view;
    const rect = canvas.getBoundingClientRect();
    const fraction = Math.min(1, Math.max(0, (event.clientX - rect.left - left) / (rect.width - left - right)));
    const at = view.start + fraction * (view.end - view.start);
    const span = view.end - view.start;
    // Within MIN_SPAN..MAX_SPAN: a range wheeled out to Infinity would leave nothing to draw.
    const factor = Math.min(Math.max(event.deltaY > 0 ? 1.25 : 0.8, MIN_SPAN / span), MAX_SPAN / span);
    view.start = at - (at - view.start) * factor;
    view.end = at + (view.end - at) * factor;
    view.follow = false;
    state.mark.auto = false;
    state.dirty = true;
  }, { passive: false });
  let drag = null;
  canvas.addEventListener('mousedown', (event) => {
    if (!active()) return;
    drag = { x: event.clientX, start: state.view.start, end: state.view.end };
    state.mark.auto = false;
  });
  window.addEventListener('mouseup', () => { drag = null; });
  window.addEventListener('mousemove', (event) => {
    if (!drag) return;
    const perPixel = (drag.end - drag.start) / Math.max(1, canvas.clientWidth - left - right);
    const shift = (drag.x - event.clientX) * perPixel;
    state.view.start = drag.start + shift;
    state.view.end = drag.end + shift;
    state.view.follow = false;
    state.dirty = true;
  });
}
