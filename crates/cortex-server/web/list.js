// The session list: the caller's sessions (every page), with a search over
// title, repository, model, mode and goal.

import { api } from "./api.js";
import { el, clear, ago } from "./render.js";

const MAX_SESSIONS = 2000;

async function allSessions() {
  const sessions = [];
  let cursor = null;
  do {
    const query = cursor ? `?limit=200&cursor=${encodeURIComponent(cursor)}` : "?limit=200";
    const page = await api("GET", `/v1/sessions${query}`);
    sessions.push(...(page.sessions ?? []));
    cursor = page.next_cursor ?? null;
  } while (cursor && sessions.length < MAX_SESSIONS);
  return sessions;
}

function goalChip(goal) {
  if (!goal) return "";
  return el("span", { class: `chip goal ${goal.status}` }, `${goal.objective} · ${goal.done}/${goal.total} · ${goal.status}`);
}

function row(s) {
  const name = s.title || s.repository.split("/").filter(Boolean).pop() || s.repository;
  return el("a", { class: "session", href: `#s/${encodeURIComponent(s.id)}`, dataset: { id: s.id } },
    el("div", { class: "s-title" }, name),
    el("div", { class: "s-repo" }, s.repository),
    el("div", { class: "s-meta" },
      el("span", { class: "chip" }, s.mode),
      el("span", { class: "chip model" }, s.model),
      el("span", { class: `chip status ${s.running_turn ? "running" : "idle"}` }, s.running_turn ? "running" : "idle"),
      goalChip(s.goal),
      el("span", { class: "when", title: s.created_at }, `${s.last_seq} events · created ${ago(s.created_at)}`)));
}

/** Show the session list in `main`. */
export async function showList(main) {
  clear(main);
  const search = el("input", { type: "search", class: "search", placeholder: "Search sessions", "aria-label": "Search sessions" });
  const list = el("div", { class: "sessions" }, el("p", { class: "muted" }, "Loading…"));
  main.append(el("div", { class: "list-head" }, el("h1", {}, "Sessions"), search), list);
  let sessions;
  try {
    sessions = await allSessions();
  } catch (error) {
    clear(list).append(el("p", { class: "error" }, error.message));
    return;
  }
  const draw = () => {
    const words = search.value.toLowerCase().split(/\s+/).filter(Boolean);
    const shown = sessions.filter((s) => {
      const hay = [s.title, s.repository, s.model, s.mode, s.id, s.goal?.objective].filter(Boolean).join(" ").toLowerCase();
      return words.every((w) => hay.includes(w));
    });
    clear(list);
    if (!shown.length) list.append(el("p", { class: "muted" }, sessions.length ? "No session matches." : "No sessions yet. Start one with `cortex` or the API."));
    for (const s of shown) list.append(row(s));
  };
  search.addEventListener("input", draw);
  draw();
}
