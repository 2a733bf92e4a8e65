// A chart as an SVG document: SvgContext takes the drawing calls the charts make on a
// canvas (the subset of CanvasRenderingContext2D they use) and writes each as a vector
// element, so a chart's export is drawn again from its data by its own code, not a picture
// of the canvas. tagNext() labels the next element with data attributes (what a bar or a
// line stands for); on a canvas it does nothing.

const NS = 'http://www.w3.org/2000/svg';

function number(value) {
  return String(Math.round(value * 100) / 100);
}

function escape(text) {
  return String(text).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

// A canvas font ("[weight ]SIZEpx FAMILY") as attributes (a style attribute would be
// refused by a page whose Content-Security-Policy has no 'unsafe-inline', as the viewer's).
function fontAttributes(font) {
  const match = /^(?:(\S+) )?([\d.]+)px (.+)$/.exec(font);
  if (!match) return '';
  return `${match[1] ? ` font-weight="${escape(match[1])}"` : ''} font-size="${match[2]}" font-family="${escape(match[3])}"`;
}

export function tagNext(context, attributes) {
  if (context instanceof SvgContext) context.tag(attributes);
}

export class SvgContext {
  constructor(width, height, background) {
    this.width = width;
    this.height = height;
    this.elements = [`<rect width="${number(width)}" height="${number(height)}" fill="${escape(background)}"/>`];
    this.definitions = [];
    this.fillStyle = '#000';
    this.strokeStyle = '#000';
    this.lineWidth = 1;
    this.font = '10px sans-serif';
    this.dash = [];
    this.clipId = null;
    this.saved = [];
    this.path = [];
    this.tags = '';
    this.measurer = document.createElement('canvas').getContext('2d');
  }

  tag(attributes) {
    this.tags = Object.entries(attributes).map(([name, value]) => ` data-${name}="${escape(value)}"`).join('');
  }

  emit(element, attributes) {
    const clip = this.clipId ? ` clip-path="url(#${this.clipId})"` : '';
    this.elements.push(`<${element}${attributes}${clip}${this.tags}${element === 'text' ? '' : '/'}>`);
    this.tags = '';
  }

  save() {
    this.saved.push({ fillStyle: this.fillStyle, strokeStyle: this.strokeStyle, lineWidth: this.lineWidth, font: this.font,
                      dash: this.dash, clipId: this.clipId });
  }

  restore() {
    Object.assign(this, this.saved.pop() ?? {});
  }

  setTransform() {}  // the document is in the canvas's CSS pixels
  clearRect() {}     // the document starts as its background
  setLineDash(dash) { this.dash = [...dash]; }
  measureText(text) {
    this.measurer.font = this.font;
    return this.measurer.measureText(text);
  }

  fillRect(x, y, width, height) {
    this.emit('rect', ` x="${number(x)}" y="${number(y)}" width="${number(width)}" height="${number(height)}" fill="${escape(this.fillStyle)}"`);
  }

  fillText(text, x, y, maxWidth = Infinity) {
    const squeeze = this.measureText(text).width > maxWidth ? ` textLength="${number(maxWidth)}" lengthAdjust="spacingAndGlyphs"` : '';
    this.emit('text', ` x="${number(x)}" y="${number(y)}" fill="${escape(this.fillStyle)}"${fontAttributes(this.font)}${squeeze}`);
    this.elements[this.elements.length - 1] += `${escape(text)}</text>`;
  }

  beginPath() { this.path = []; }
  moveTo(x, y) { this.path.push(`M${number(x)} ${number(y)}`); }
  lineTo(x, y) { this.path.push(`L${number(x)} ${number(y)}`); }
  rect(x, y, width, height) {
    this.path.push(`M${number(x)} ${number(y)}h${number(width)}v${number(height)}h${number(-width)}Z`);
  }

  fill() {
    if (this.path.length) this.emit('path', ` d="${this.path.join('')}" fill="${escape(this.fillStyle)}"`);
  }

  stroke() {
    if (!this.path.length) return;
    const dash = this.dash.length ? ` stroke-dasharray="${this.dash.map(number).join(' ')}"` : '';
    this.emit('path', ` d="${this.path.join('')}" fill="none" stroke="${escape(this.strokeStyle)}" stroke-width="${number(this.lineWidth)}"${dash}`);
  }

  clip() {
    const id = `clip${this.definitions.length}`;
    this.definitions.push(`<clipPath id="${id}"><path d="${this.path.join('')}"/></clipPath>`);
    this.clipId = id;
  }

  document() {
    return `<?xml version="1.0" encoding="UTF-8"?>\n<svg xmlns="${NS}" width="${number(this.width)}" height="${number(this.height)}" ` +
           `viewBox="0 0 ${number(this.width)} ${number(this.height)}">\n<defs>${this.definitions.join('')}</defs>\n${this.elements.join('\n')}\n</svg>\n`;
  }
}
