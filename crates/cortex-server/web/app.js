// The Cortex web client: log-in, the session list, a session's timeline
// with its controls, and read-only share links. Routes live in the URL's
// fragment: `#` the list, `#s/ID` a session, `#share/ID/TOKEN` a share
// link (its token moves to sessionStorage and out of the address at once).

import { api, auth, follow, sid, ApiError } from "./api.js";
import { el, clear } from "./render.js";
import { showList } from "./list.js";
import { Timeline } from "./timeline.js";

const main = document.getElementById("main");
const where = document.getElementById("where");
const conn = document.getElementById("conn");
const logout = document.getElementById("logout");
let leave = () => {};

logout.addEventListener("click", () => {
  auth.clear();
  location.hash = "";
  route();
});

function login(message) {
  clear(main);
  where.textContent = "";
  logout.hidden = true;
  const input = el("input", { type: "password", name: "token", autocomplete: "current-password", placeholder: "Token", "aria-label": "Token", required: true });
  const note = el("p", { class: "error" }, message ?? "");
  const form = el("form", { class: "login" },
    el("h1", {}, "Log in"),
    el("p", { class: "muted" }, "Paste a token from `cortex tokens add NAME` (kept for this tab only)."),
    input, el("button", { type: "submit" }, "Log in"), note);
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    auth.set(input.value.trim());
    try {
      await api("GET", "/v1/sessions?limit=1");
      route();
    } catch (error) {
      auth.clear();
      note.textContent = error instanceof ApiError && error.status === 401 ? "That token is not accepted." : error.message;
    }
  });
  main.append(form);
  input.focus();
}

function route() {
  leave();
  leave = () => {};
  conn.textContent = "";
  const hash = location.hash.replace(/^#/, "");
  const shared = /^share\/([^/]+)\/([^/]+)$/.exec(hash);
  if (shared) {
    auth.setShare(decodeURIComponent(shared[1]), decodeURIComponent(shared[2]));
    history.replaceState(null, "", `#s/${shared[1]}`);
    return route();
  }
  if (!auth.token()) return login();
  const share = auth.share();
  logout.hidden = false;
  const session = /^s\/(.+)$/.exec(hash);
  if (session) {
    const id = decodeURIComponent(session[1]);
    if (share && share.session !== id) return login("A share link reads its one session only.");
    return showSession(id, !!share);
  }
  if (share) {
    location.hash = `#s/${encodeURIComponent(share.session)}`;
    return;
  }
  where.textContent = "";
  showList(main).catch(failed);
}

function failed(error) {
  if (error instanceof ApiError && error.status === 401) {
    auth.clear();
    return login("The token is no longer accepted.");
  }
  clear(main).append(el("p", { class: "error" }, error.message ?? String(error)));
}

async function showSession(id, readOnly) {
  clear(main);
  const controller = new AbortController();
  leave = () => controller.abort();
  let view;
  try {
    view = await api("GET", `/v1/sessions/${sid(id)}`);
  } catch (error) {
    return failed(error);
  }
  const name = view.title || view.repository;
  where.textContent = readOnly ? `${name} (read-only)` : name;
  const goalBox = el("section", { class: "goal", hidden: true });
  const rows = el("div", { class: "timeline", "aria-live": "polite" });
  const composer = readOnly ? null : makeComposer(id);
  main.append(el("div", { class: "session-view" }, goalBox, rows, composer?.node ?? el("p", { class: "muted readonly" }, "Read-only: shared link.")));
  const actions = readOnly ? null : {
    approve: (call, decision, card) => act(card, () => api("POST", `/v1/sessions/${sid(id)}/approvals/${encodeURIComponent(call)}`, { decision })),
    verdict: (kind, what, feedback, card) => act(card, () => api("POST", `/v1/sessions/${sid(id)}/${kind}/${what}`, feedback === null ? undefined : { feedback })),
  };
  let nearBottom = true;
  const timeline = new Timeline(rows, {
    actions,
    onChange: (event) => {
      composer?.update(timeline);
      if (event.type.startsWith("goal.")) drawGoal(goalBox, timeline.goal);
      if (nearBottom) requestAnimationFrame(() => window.scrollTo(0, document.body.scrollHeight));
    },
  });
  timeline.mode = view.mode;
  timeline.running = !!view.running_turn;
  composer?.update(timeline);
  window.addEventListener("scroll", () => {
    nearBottom = window.innerHeight + window.scrollY >= document.body.scrollHeight - 80;
  }, { signal: controller.signal, passive: true });
  follow(id, 0, {
    signal: controller.signal,
    onEvent: (event) => timeline.apply(event),
    onState: (state, detail) => {
      conn.textContent = state === "live" ? "● live" : state === "reconnecting" ? "○ reconnecting…" : `✕ ${detail ?? ""}`;
      conn.className = `conn ${state}`;
      document.body.dataset.stream = state;
    },
  });
}

async function act(card, request) {
  card.querySelectorAll("button").forEach((b) => (b.disabled = true));
  try {
    await request();
  } catch (error) {
    card.querySelectorAll("button").forEach((b) => (b.disabled = false));
    card.append(el("div", { class: "error" }, error.message));
  }
}

function drawGoal(box, goal) {
  clear(box);
  box.hidden = !goal;
  if (!goal) return;
  const done = goal.steps.filter((s) => s.done === true).length;
  box.append(el("div", { class: "goal-head" }, el("strong", {}, "Goal "), goal.objective,
    el("span", { class: `chip goal ${goal.status}` }, `${done}/${goal.steps.length} · ${goal.status}`)));
  const list = el("ol", { class: "steps" });
  for (const step of goal.steps) {
    list.append(el("li", { class: step.done ? "step done" : "step" }, step.title ?? ""));
  }
  box.append(list);
}

function makeComposer(id) {
  const text = el("textarea", { name: "message", rows: 3, placeholder: "Message (Ctrl+Enter sends)", "aria-label": "Message" });
  const mode = el("select", { name: "mode", "aria-label": "Mode" }, ["agent", "plan", "spec", "ask"].map((m) => el("option", { value: m }, m)));
  const send = el("button", { type: "submit", class: "send" }, "Send");
  const stop = el("button", { type: "button", class: "stop", hidden: true }, "Stop");
  const share = el("button", { type: "button", class: "ghost share" }, "Share");
  const note = el("div", { class: "note" });
  const form = el("form", { class: "composer" }, text, el("div", { class: "controls" }, mode, send, stop, el("span", { class: "grow" }), share), note);
  const say = (message, error = false) => {
    note.textContent = message;
    note.className = error ? "note error" : "note";
  };
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const message = text.value;
    if (!message.trim()) return;
    send.disabled = true;
    try {
      await api("POST", `/v1/sessions/${sid(id)}/turns`, { message });
      text.value = "";
      say("");
    } catch (error) {
      say(error.message, true);
    } finally {
      send.disabled = false;
    }
  });
  text.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) form.requestSubmit();
  });
  mode.addEventListener("change", async () => {
    try {
      await api("PUT", `/v1/sessions/${sid(id)}/mode`, { mode: mode.value });
      say("");
    } catch (error) {
      say(error.message, true);
    }
  });
  stop.addEventListener("click", async () => {
    try {
      await api("POST", `/v1/sessions/${sid(id)}/stop`);
    } catch (error) {
      say(error.message, true);
    }
  });
  share.addEventListener("click", async () => {
    try {
      const made = await api("POST", `/v1/sessions/${sid(id)}/shares`, {});
      const url = new URL(made.link, location.origin).href;
      say(`Read-only link (expires ${made.share.expires_at}): `);
      note.append(el("input", { class: "share-link", readonly: true, value: url, "aria-label": "Share link" }));
    } catch (error) {
      say(error.message, true);
    }
  });
  return {
    node: form,
    update(timeline) {
      if (timeline.mode && document.activeElement !== mode) mode.value = timeline.mode;
      stop.hidden = !timeline.running;
      document.body.dataset.running = timeline.running ? "yes" : "no";
    },
  };
}

window.addEventListener("hashchange", route);
route();
