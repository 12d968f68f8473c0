// A small Markdown renderer that builds DOM nodes: text only ever goes in
// through text nodes, raw HTML is shown as the text it is, and links are
// made only for http(s) URLs (rel=noopener). Fenced `mermaid` blocks are
// handed to `onDiagram` (drawn lazily); other fences are code.

import { el, link } from "./render.js";

/** Render `text` into a new <div class="md">. */
export function markdown(text, { onDiagram } = {}) {
  const root = el("div", { class: "md" });
  const lines = String(text).replace(/\r\n?/g, "\n").split("\n");
  let i = 0;
  let paragraph = [];
  const flush = () => {
    if (paragraph.length) {
      root.append(el("p", {}, inline(paragraph.join("\n"))));
      paragraph = [];
    }
  };
  while (i < lines.length) {
    const line = lines[i];
    const fence = /^ {0,3}(`{3,}|~{3,})\s*([\w+-]*)/.exec(line);
    if (fence) {
      flush();
      const close = fence[1];
      const body = [];
      i++;
      while (i < lines.length && !lines[i].trimStart().startsWith(close)) body.push(lines[i++]);
      i++;
      const source = body.join("\n");
      if (fence[2].toLowerCase() === "mermaid" && onDiagram) {
        const holder = el("figure", { class: "diagram" }, el("pre", { class: "code" }, source));
        root.append(holder);
        onDiagram(holder, source);
      } else {
        root.append(el("pre", { class: "code", dataset: fence[2] ? { lang: fence[2] } : {} }, el("code", {}, source)));
      }
      continue;
    }
    const heading = /^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) {
      flush();
      root.append(el(`h${Math.min(heading[1].length + 2, 6)}`, {}, inline(heading[2])));
      i++;
      continue;
    }
    if (/^ {0,3}([-*_])(\s*\1){2,}\s*$/.test(line)) {
      flush();
      root.append(el("hr"));
      i++;
      continue;
    }
    if (/^ {0,3}>/.test(line)) {
      flush();
      const quoted = [];
      while (i < lines.length && /^ {0,3}>/.test(lines[i])) quoted.push(lines[i++].replace(/^ {0,3}> ?/, ""));
      root.append(el("blockquote", {}, markdown(quoted.join("\n"), { onDiagram })));
      continue;
    }
    const item = /^(\s*)([-*+]|\d{1,9}[.)])\s+(.*)$/.exec(line);
    if (item) {
      flush();
      const ordered = /\d/.test(item[2]);
      const list = el(ordered ? "ol" : "ul");
      while (i < lines.length) {
        const m = /^(\s*)([-*+]|\d{1,9}[.)])\s+(.*)$/.exec(lines[i]);
        if (!m || /\d/.test(m[2]) !== ordered) break;
        const task = /^\[([ xX])\]\s+(.*)$/.exec(m[3]);
        const li = el("li", {});
        if (task) {
          li.append(el("input", { type: "checkbox", disabled: true, checked: task[1] !== " " }), " ");
          li.append(inline(task[2]));
        } else li.append(inline(m[3]));
        i++;
        while (i < lines.length && /^\s{2,}\S/.test(lines[i]) && !/^(\s*)([-*+]|\d{1,9}[.)])\s+/.test(lines[i])) {
          li.append(" ", inline(lines[i++].trim()));
        }
        list.append(li);
      }
      root.append(list);
      continue;
    }
    if (/^\s*\|.*\|\s*$/.test(line) && i + 1 < lines.length && /^\s*\|?[\s:|-]+\|?\s*$/.test(lines[i + 1]) && lines[i + 1].includes("-")) {
      flush();
      const cells = (row) => row.trim().replace(/^\|/, "").replace(/\|$/, "").split("|").map((c) => c.trim());
      const table = el("table");
      table.append(el("thead", {}, el("tr", {}, cells(line).map((c) => el("th", {}, inline(c))))));
      const body = el("tbody");
      i += 2;
      while (i < lines.length && /^\s*\|.*\|\s*$/.test(lines[i])) {
        body.append(el("tr", {}, cells(lines[i++]).map((c) => el("td", {}, inline(c)))));
      }
      table.append(body);
      root.append(el("div", { class: "table" }, table));
      continue;
    }
    if (line.trim() === "") {
      flush();
      i++;
      continue;
    }
    paragraph.push(line);
    i++;
  }
  flush();
  return root;
}

/** Inline Markdown: code spans, links, autolinks, bold, italic, breaks. */
export function inline(text) {
  const out = document.createDocumentFragment();
  let rest = String(text);
  const rules = [
    [/^`([^`]+)`/, (m) => el("code", {}, m[1])],
    [/^\[([^\]\n]*)\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)/, (m) => link(m[2], m[1] || m[2])],
    [/^<(https?:\/\/[^>\s]+)>/i, (m) => link(m[1], m[1])],
    [/^https?:\/\/[^\s<>()]+[^\s<>().,;:!?'"]/i, (m) => link(m[0], m[0])],
    [/^\*\*(?=\S)([\s\S]*?\S)\*\*/, (m) => el("strong", {}, inline(m[1]))],
    [/^__(?=\S)([\s\S]*?\S)__/, (m) => el("strong", {}, inline(m[1]))],
    [/^\*(?=\S)([^*]*?\S)\*/, (m) => el("em", {}, inline(m[1]))],
    [/^_(?=\S)([^_]*?\S)_(?![A-Za-z0-9])/, (m) => el("em", {}, inline(m[1]))],
    [/^~~(?=\S)([\s\S]*?\S)~~/, (m) => el("del", {}, inline(m[1]))],
    [/^ {2,}\n/, () => el("br")],
  ];
  let plain = "";
  const push = () => {
    if (plain) {
      out.append(document.createTextNode(plain));
      plain = "";
    }
  };
  outer: while (rest.length) {
    const c = rest[0];
    if ("`[<h*_~ ".includes(c)) {
      for (const [pattern, make] of rules) {
        const m = pattern.exec(rest);
        if (m) {
          // An autolink only at a word's start.
          if (c === "h" && plain && /\w$/.test(plain)) break;
          push();
          out.append(make(m));
          rest = rest.slice(m[0].length);
          continue outer;
        }
      }
    }
    if (c === "\\" && rest.length > 1 && /[\\`*_{}\[\]()#+\-.!~|<>]/.test(rest[1])) {
      plain += rest[1];
      rest = rest.slice(2);
      continue;
    }
    plain += c;
    rest = rest.slice(1);
  }
  push();
  return out;
}
