// A session's timeline: each event becomes (or updates) a row. Every
// string from the model, a tool or a file goes in as text, Markdown through
// markdown.js. `actions` is null for a read-only viewer (a share link).

import { el, clear } from "./render.js";
import { markdown } from "./markdown.js";
import { diagram } from "./diagram.js";

const md = (text) => markdown(text, { onDiagram: diagram });

export class Timeline {
  constructor(root, { actions, onChange }) {
    this.root = root;
    this.actions = actions;
    this.onChange = onChange ?? (() => {});
    this.calls = new Map();
    this.approvals = new Map();
    this.proposals = [];
    this.message = null;
    this.thinking = null;
    this.running = false;
    this.mode = null;
    this.goal = null;
    this.lastSeq = 0;
    this.applied = 0;
  }

  row(kind, ...children) {
    const row = el("div", { class: `row ${kind}` }, ...children);
    this.root.append(row);
    return row;
  }

  mark(kind, text) {
    return this.row(`mark ${kind}`, el("span", { class: "mark-text" }, text));
  }

  /** Apply one event (in seq order). */
  apply(event) {
    if (typeof event?.seq === "number") this.lastSeq = event.seq;
    this.applied++;
    // For tests and tools: how many events were applied, up to which seq.
    this.root.dataset.applied = String(this.applied);
    this.root.dataset.last = String(this.lastSeq);
    const p = event.payload ?? {};
    const handler = HANDLERS[event.type];
    if (handler) handler.call(this, p, event);
    // A message ends with its `message.done` (usage or progress events may
    // come between its deltas and that); thinking ends where anything else
    // shows.
    if (event.type === "turn.started" || event.type?.startsWith("turn.")) this.message = null;
    if (event.type === "message.delta" || event.type === "tool.call" || event.type?.startsWith("turn.")) this.thinking = null;
    this.onChange(event);
  }

  turnEnded() {
    this.running = false;
    for (const row of this.calls.values()) row.classList.remove("running");
  }
}

function toolSummary(name, args) {
  try {
    const value = JSON.parse(args);
    for (const key of ["command", "path", "pattern", "url", "query", "description"]) {
      if (typeof value?.[key] === "string") return value[key].split("\n")[0].slice(0, 200);
    }
  } catch {
    // fall through: the raw text
  }
  return String(args).split("\n")[0].slice(0, 200);
}

function diffView(diff) {
  const pre = el("pre", { class: "diff" });
  for (const line of String(diff).split("\n")) {
    let kind = "ctx";
    if (line.startsWith("+++") || line.startsWith("---")) kind = "file";
    else if (line.startsWith("@@")) kind = "hunk";
    else if (line.startsWith("+")) kind = "add";
    else if (line.startsWith("-")) kind = "del";
    pre.append(el("span", { class: `d-${kind}` }, line), "\n");
  }
  return pre;
}

function verdictBox(timeline, kind, card) {
  if (!timeline.actions) return null;
  const feedback = el("textarea", { class: "feedback", rows: 2, placeholder: "What to change (for Reject)" });
  const box = el("div", { class: "verdict" },
    el("button", { type: "button", class: "accept", onclick: () => timeline.actions.verdict(kind, "accept", null, card) }, "Accept"),
    feedback,
    el("button", { type: "button", class: "reject", onclick: () => {
      const text = feedback.value.trim();
      if (!text) {
        feedback.focus();
        feedback.classList.add("needed");
        return;
      }
      timeline.actions.verdict(kind, "reject", text, card);
    } }, "Reject"));
  return box;
}

function settle(card, text) {
  card.querySelector(".verdict")?.remove();
  card.classList.add("settled");
  card.append(el("div", { class: "outcome" }, text));
}

const HANDLERS = {
  "session.created"(p) {
    this.mark("created", `Session created on ${p.name ?? "a repository"}`);
  },
  "turn.started"(p) {
    this.running = true;
    this.mode = p.mode;
    this.row("user", el("div", { class: "who" }, `You · ${p.mode}`), el("div", { class: "text" }, p.message));
  },
  "turn.context"() {},
  "turn.images"(p) {
    this.mark("note", `${(p.images ?? []).length} image(s) attached`);
  },
  "message.delta"(p) {
    if (!this.message) {
      this.message = { text: "", row: this.row("assistant", el("div", { class: "who" }, "Cortex")), body: null, pending: false };
    }
    const m = this.message;
    m.text += p.text ?? "";
    if (!m.pending) {
      m.pending = true;
      requestAnimationFrame(() => {
        m.pending = false;
        const body = md(m.text);
        if (m.body) m.body.replaceWith(body);
        else m.row.append(body);
        m.body = body;
      });
    }
  },
  "message.done"(p) {
    const m = this.message;
    if (m) {
      m.text = p.text ?? m.text;
      const body = md(m.text);
      if (m.body) m.body.replaceWith(body);
      else m.row.append(body);
      m.body = body;
      m.pending = true; // a late frame must not redraw the deltas
    } else if (p.text) {
      this.row("assistant", el("div", { class: "who" }, "Cortex"), md(p.text));
    }
    this.message = null;
  },
  "thinking.delta"(p) {
    if (!this.thinking) {
      const text = el("div", { class: "text" });
      this.thinking = { text, row: this.row("thinking", el("details", {}, el("summary", {}, "Thinking"), text)) };
    }
    this.thinking.text.append(p.text ?? "");
  },
  "tool.call"(p) {
    const output = el("pre", { class: "output" });
    const details = el("details", { class: "tool-body" },
      el("summary", {}, el("span", { class: "tool-name" }, p.name), " ", el("span", { class: "tool-args" }, toolSummary(p.name, p.arguments ?? ""))),
      el("div", { class: "label" }, "Arguments"), el("pre", { class: "args" }, p.arguments ?? ""),
      el("div", { class: "label" }, "Output"), output);
    const row = this.row("tool running", details);
    row.dataset.call = p.call_id;
    this.calls.set(p.call_id, row);
  },
  "tool.output.delta"(p) {
    this.calls.get(p.call_id)?.querySelector(".output")?.append(p.text ?? "");
  },
  "tool.refused"(p) {
    const row = this.calls.get(p.call_id);
    if (row) row.append(el("div", { class: "refused" }, `Refused: ${p.reason}`));
  },
  "tool.result"(p) {
    let row = this.calls.get(p.call_id);
    if (!row) {
      HANDLERS["tool.call"].call(this, { call_id: p.call_id, name: p.name, arguments: "" });
      row = this.calls.get(p.call_id);
    }
    row.classList.remove("running");
    row.classList.add(`status-${p.status}`);
    const output = row.querySelector(".output");
    clear(output).append(p.output ?? "");
    const summary = row.querySelector("summary");
    summary.append(el("span", { class: `status ${p.status}` }, p.status));
    if (p.diff) row.append(diffView(p.diff));
  },
  "approval.requested"(p) {
    const card = this.row("approval", el("div", { class: "who" }, `Approval: ${p.name}`),
      el("pre", { class: "summary" }, p.summary ?? ""), el("div", { class: "reason" }, p.reason ?? ""));
    card.dataset.call = p.call_id;
    if (this.actions) {
      const buttons = el("div", { class: "buttons" });
      for (const [decision, label] of [["allow", "Allow"], ["deny", "Deny"], ["always", "Always"]]) {
        buttons.append(el("button", { type: "button", class: decision, onclick: () => this.actions.approve(p.call_id, decision, card) }, label));
      }
      card.append(buttons);
    }
    this.approvals.set(p.call_id, card);
  },
  "approval.resolved"(p) {
    const card = this.approvals.get(p.call_id);
    if (!card) return;
    card.querySelector(".buttons")?.remove();
    card.classList.add("settled");
    const decision = typeof p.decision === "string" ? p.decision : JSON.stringify(p.decision);
    card.append(el("div", { class: "outcome" }, `Resolved: ${decision}`));
  },
  "plan.proposed"(p) {
    for (const old of this.proposals) old.querySelector(".verdict")?.remove();
    const card = this.row("plan", el("div", { class: "who" }, `Plan v${p.version}: ${p.title ?? ""}`), md(p.markdown ?? ""));
    card.dataset.version = p.version;
    const box = verdictBox(this, "plan", card);
    if (box) card.append(box);
    this.proposals.push(card);
  },
  "plan.accepted"(p) {
    const card = this.proposals.find((c) => c.dataset.version === String(p.version));
    if (card) settle(card, "Accepted");
  },
  "plan.rejected"(p) {
    const card = this.proposals.find((c) => c.dataset.version === String(p.version));
    if (card) settle(card, `Rejected: ${p.feedback}`);
  },
  "spec.proposed"(p) {
    for (const old of this.proposals) old.querySelector(".verdict")?.remove();
    const card = this.row("plan spec", el("div", { class: "who" }, `Spec · ${p.phase} v${p.version}`), md(p.markdown ?? ""));
    card.dataset.version = p.version;
    const box = verdictBox(this, "spec", card);
    if (box) card.append(box);
    this.proposals.push(card);
  },
  "spec.accepted"(p) {
    const card = this.proposals.find((c) => c.dataset.version === String(p.version));
    if (card) settle(card, "Accepted");
  },
  "spec.rejected"(p) {
    const card = this.proposals.find((c) => c.dataset.version === String(p.version));
    if (card) settle(card, `Rejected: ${p.feedback}`);
  },
  "spec.written"(p) {
    this.mark("note", `Spec written: ${(p.paths ?? []).join(", ")}`);
  },
  "mode.changed"(p) {
    this.mode = p.to;
    this.mark("mode", `Mode: ${p.from} → ${p.to}`);
  },
  "todo.updated"(p) {
    const list = el("ul", { class: "todos" });
    for (const todo of p.todos ?? []) {
      list.append(el("li", { class: `todo ${todo.status ?? ""}` }, todo.content ?? ""));
    }
    this.row("todo", el("div", { class: "who" }, "Todo"), list);
  },
  "goal.set"(p) {
    this.goal = { objective: p.objective, steps: [], status: "active" };
    this.mark("goal", `Goal set: ${p.objective}`);
  },
  "goal.updated"(p) {
    if (this.goal) this.goal.steps = p.steps ?? [];
  },
  "goal.paused"(p) {
    if (this.goal) this.goal.status = "paused";
    this.mark("goal", `Goal paused: ${typeof p.reason === "string" ? p.reason : JSON.stringify(p.reason)}`);
  },
  "goal.resumed"() {
    if (this.goal) this.goal.status = "active";
    this.mark("goal", "Goal resumed");
  },
  "goal.completed"(p) {
    if (this.goal) this.goal.status = "complete";
    this.mark("goal", `Goal complete: ${p.evidence}`);
  },
  "goal.cleared"() {
    this.goal = null;
    this.mark("goal", "Goal cleared");
  },
  "goal.continued"(p) {
    this.mark("goal", `Goal continues (turn ${p.continuation})`);
  },
  "compaction.started"() {},
  "compaction.done"(p) {
    const row = this.mark("compaction", `Context compacted: ${p.tokens_before} → ${p.tokens_after} tokens (${p.summarised} messages summarised)`);
    row.append(el("details", {}, el("summary", {}, "Summary"), el("div", { class: "text" }, p.summary ?? "")));
  },
  "compaction.failed"(p) {
    this.mark("compaction failed", `Compaction failed: ${p.error}`);
  },
  "session.rewound"(p) {
    const scope = typeof p.scope === "string" ? p.scope : JSON.stringify(p.scope);
    this.mark("rewind", `Rewound to before ${p.turn_id} (${scope}; ${p.paths ?? 0} paths)`);
  },
  "model.retry"(p) {
    this.mark("note", `Retrying the model (attempt ${p.attempt}): ${p.reason}`);
  },
  "turn.completed"() {
    this.turnEnded();
    this.mark("end", "Turn complete");
  },
  "turn.stopped"(p) {
    this.turnEnded();
    this.mark("end stopped", `Turn stopped: ${p.reason}`);
  },
  "turn.failed"(p) {
    this.turnEnded();
    this.mark("end failed", `Turn failed: ${p.error}`);
  },
  "runtime.failed"(p) {
    this.mark("failed", `Sandbox failed: ${p.reason ?? ""}`);
  },
  "process.started"(p) {
    this.mark("note", `Background process started: ${p.process?.command ?? p.command ?? ""}`);
  },
  "subagent.started"(p) {
    this.mark("note", `Subagent started: ${p.description ?? p.kind ?? ""}`);
  },
  "hook.failed"(p) {
    this.mark("failed", `Hook failed: ${p.hook ?? ""}`);
  },
  error(p) {
    this.mark("failed", `Error: ${p.message ?? JSON.stringify(p)}`);
  },
};
