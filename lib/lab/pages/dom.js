// The lab page's DOM helpers. Board names, runs and record lines are hostile input: they
// reach the page only as textContent (never innerHTML) and URLs only through URLSearchParams.

export const $ = (id) => document.getElementById(id);

// An element with a class and a text (either may be empty).
export function element(tag, className = '', text = '') {
  const made = document.createElement(tag);
  if (className) made.className = className;
  if (text !== '') made.textContent = text;
  return made;
}

// A link whose text and address come from data: the address is built by the caller from
// URLSearchParams, the text set as text.
export function link(href, text, title = '') {
  const made = element('a', '', text);
  made.href = href;
  if (title) made.title = title;
  return made;
}

// Sets a node's text only when it changed: a poll that finds the same figures touches nothing
// (no flicker, no lost selection).
export function setText(node, text) {
  if (node.textContent !== text) node.textContent = text;
}

// The same for a property that is an attribute (title, className): setting it to its own value
// is still a change to the document.
export function setProperty(node, name, value) {
  if (node[name] !== value) node[name] = value;
}
