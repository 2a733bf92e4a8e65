// What the canvas views share: their colours, the height of a time axis, and a canvas sized
// to its box at the screen's pixel ratio.
export const COLOURS = ['#4aa3ff', '#7bd88f', '#ffb454', '#ff6b6b', '#c792ea', '#5ccfe6', '#ffd580', '#f29e74'];
export const AXIS_HEIGHT = 34;

// A chart's text beside its canvas, set only when it changed: a DOM change each frame makes
// the browser lay the page out again for the next one.
export function showText(element, text) {
  if (element.textContent !== text) element.textContent = text;
}

export function fitCanvas(canvas) {
  const ratio = window.devicePixelRatio || 1;
  const width = Math.max(1, Math.floor(canvas.clientWidth * ratio));
  const height = Math.max(1, Math.floor(canvas.clientHeight * ratio));
  if (canvas.width !== width || canvas.height !== height) { canvas.width = width; canvas.height = height; }
  const context = canvas.getContext('2d');
  context.setTransform(ratio, 0, 0, ratio, 0, 0);
  return { context, width: canvas.clientWidth, height: canvas.clientHeight };
}
