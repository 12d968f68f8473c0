// The public session API: the token from sessionStorage in an
// Authorization header (never in a URL), JSON bodies, and the timeline
// over SSE read with fetch() streaming, reconnecting from the last seen id.

const TOKEN = "cortex.token";
const SHARE = "cortex.share";

export const auth = {
  token: () => sessionStorage.getItem(TOKEN) || share()?.token || null,
  share,
  set(token) {
    sessionStorage.removeItem(SHARE);
    sessionStorage.setItem(TOKEN, token);
  },
  setShare(session, token) {
    sessionStorage.removeItem(TOKEN);
    sessionStorage.setItem(SHARE, JSON.stringify({ session, token }));
  },
  clear() {
    sessionStorage.removeItem(TOKEN);
    sessionStorage.removeItem(SHARE);
  },
};

function share() {
  try {
    const value = JSON.parse(sessionStorage.getItem(SHARE) || "null");
    return value && typeof value.token === "string" ? value : null;
  } catch {
    return null;
  }
}

/** An error answer: `{"error": {"code", "message"}}` and its status. */
export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

function headers(extra = {}) {
  const token = auth.token();
  return token ? { Authorization: `Bearer ${token}`, ...extra } : extra;
}

/** One request; the parsed JSON body (null for none), or an ApiError. */
export async function api(method, path, body) {
  const init = { method, headers: headers(), cache: "no-store" };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const response = await fetch(path, init);
  const text = await response.text();
  let json = null;
  if (text) {
    try {
      json = JSON.parse(text);
    } catch {
      json = null;
    }
  }
  if (!response.ok) {
    const error = json?.error ?? {};
    throw new ApiError(response.status, error.code ?? "http", error.message ?? `HTTP ${response.status}`);
  }
  return json;
}

export const sid = (id) => encodeURIComponent(id);

/**
 * Follow a session's timeline from `after` (a seq) until `signal` aborts:
 * `onEvent(event)` for each event, in order, each once; `onState(state,
 * detail)` with `live`, `reconnecting` or `failed`. A dropped stream (the
 * server restarted, the network blinked) is opened again at the last seq
 * seen, so nothing is missed or repeated.
 */
export async function follow(session, after, { onEvent, onState, signal }) {
  let last = after;
  let delay = 250;
  while (!signal.aborted) {
    try {
      const response = await fetch(`/v1/sessions/${sid(session)}/events?after=${last}`, {
        headers: headers({ Accept: "text/event-stream" }),
        cache: "no-store",
        signal,
      });
      if (response.status === 401 || response.status === 403 || response.status === 404) {
        let message = `HTTP ${response.status}`;
        try {
          message = (await response.json()).error.message;
        } catch {
          // keep the status
        }
        onState("failed", message);
        return;
      }
      if (!response.ok || !response.body) throw new Error(`HTTP ${response.status}`);
      onState("live");
      delay = 250;
      const reader = response.body.getReader();
      const decoder = new TextDecoder();
      let buffer = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += decoder.decode(value, { stream: true });
        let end;
        while ((end = buffer.indexOf("\n\n")) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const message = parse(block);
          if (!message) continue;
          if (message.id !== null && message.id <= last) continue;
          let event;
          try {
            event = JSON.parse(message.data);
          } catch {
            continue;
          }
          if (message.id !== null) last = message.id;
          onEvent(event);
        }
      }
    } catch (error) {
      if (signal.aborted) return;
    }
    if (signal.aborted) return;
    onState("reconnecting");
    await new Promise((resolve) => setTimeout(resolve, delay));
    delay = Math.min(delay * 2, 4000);
  }
}

function parse(block) {
  let id = null;
  const data = [];
  for (const line of block.split("\n")) {
    if (line.startsWith(":")) continue;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "id") {
      const n = Number(value);
      if (Number.isSafeInteger(n)) id = n;
    } else if (field === "data") data.push(value);
  }
  return data.length ? { id, data: data.join("\n") } : null;
}
