// DOM helpers: every string from the server becomes a text node, never
// markup: nothing in this client parses a string as HTML.

/** An element with attributes and children (strings become text nodes). */
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (key === "dataset") Object.assign(node.dataset, value);
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  append(node, children);
  return node;
}

/** Append children: nodes as they are, anything else as text. */
export function append(node, children) {
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

/** Remove every child. */
export function clear(node) {
  while (node.firstChild) node.firstChild.remove();
  return node;
}

/** A safe link: only http(s) URLs become links, opened with noopener. */
export function link(href, label) {
  let url;
  try {
    url = new URL(href, "http://invalid.invalid/");
  } catch {
    return document.createTextNode(label);
  }
  const absolute = /^https?:\/\//i.test(href);
  if (!absolute || (url.protocol !== "http:" && url.protocol !== "https:")) {
    return document.createTextNode(label);
  }
  return el("a", { href: url.href, rel: "noopener noreferrer", target: "_blank" }, label);
}

/** "3 min ago"-style time from an RFC 3339 stamp. */
export function ago(ts) {
  const t = Date.parse(ts);
  if (Number.isNaN(t)) return "";
  const s = Math.round((Date.now() - t) / 1000);
  if (s < 60) return "just now";
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ago`;
  return new Date(t).toISOString().slice(0, 10);
}
