// The wire: every JSON-RPC call the console makes (SSE streams read by hand, as `fetch` gives
// them), recorded with its raw request and response for the wire view.

import { $ } from "./dom.js";

// The console's state, shared by its modules.
export const state = {
  config: null,
  card: null,
  rpcUrl: null,       // what the page calls
  agentUrl: null,     // what the card names (for curl)
  auth: null,         // { header, prefix, label }
  credential: sessionStorage.getItem("a2a-console-credential") || "",
  calls: [],
  callSeq: 0,
  schemas: {},
  live: new Map(),    // task id -> AbortController (task list subscriptions)
  taskPage: null,     // { id, abort }
  tenant: null,       // the JSON-RPC interface's tenant, copied into every request
  openStreams: 0,     // SSE responses being read (a browser allows 6 connections per origin)
  tasksBusy: false,   // a task-list refresh in flight
  tasksTimer: null,
};

export class RpcError extends Error {
  constructor(message, { code, data, status } = {}) {
    super(message);
    this.code = code; this.data = data; this.status = status;
  }
}

function authHeaders() {
  const h = {};
  if (state.auth && state.credential) h[state.auth.header] = state.auth.prefix + state.credential;
  return h;
}

export function curlFor(call) {
  const q = (s) => "'" + String(s).replace(/'/g, "'\\''") + "'";
  const parts = ["curl -sS"];
  if (call.stream) parts.push("-N");
  parts.push("-X", call.httpMethod, q(call.curlUrl));
  for (const [k, v] of Object.entries(call.headers)) parts.push("-H", q(`${k}: ${v}`));
  // The header's name comes from the card: quoted like the rest, the variable left to the shell.
  if (call.credentialHeader) parts.push("-H", q(`${call.credentialHeader}: ${state.auth.prefix}`) + '"$A2A_CREDENTIAL"');
  if (call.body !== undefined) parts.push("--data-raw", q(JSON.stringify(call.body)));
  return parts.join(" ");
}

// What the page does when the list of calls changes (it redraws the wire view).
export const hooks = { callsChanged: () => {} };
const wireChanged = () => hooks.callsChanged();

function recordCall(call) {
  state.calls.unshift(call);
  // Polls make way before the calls a person made.
  if (state.calls.length > 200) {
    const poll = state.calls.findLastIndex((c) => c.background);
    state.calls.splice(poll >= 0 ? poll : state.calls.length - 1, 1);
  }
  $("#wire-count").textContent = String(state.calls.filter((c) => !c.background).length);
  wireChanged();
}

function friendlyFetchError(e, what) {
  if (e.name === "AbortError") return e;
  return new RpcError(`${what}: the agent cannot be reached (${e.message}). Is it running?`, { code: "network" });
}

// One JSON-RPC call. With `stream`, each SSE event's result goes to `onEvent(result, sseId)`
// and the promise resolves when the stream ends.
export async function rpc(method, params, { stream = false, lastEventId, onEvent, signal, background = false } = {}) {
  if (!state.rpcUrl) throw new RpcError("The console has no JSON-RPC URL for this agent (see the message above).");
  const id = ++state.callSeq;
  if (state.tenant && params && params.tenant === undefined) params = { ...params, tenant: state.tenant };
  const body = { jsonrpc: "2.0", id, method, params };
  const headers = { "Content-Type": "application/json", "A2A-Version": "1.0" };
  if (stream) headers["Accept"] = "text/event-stream";
  if (lastEventId !== undefined && lastEventId !== null) headers["Last-Event-ID"] = String(lastEventId);
  const call = {
    id, method, stream, httpMethod: "POST", url: state.rpcUrl, curlUrl: state.agentUrl, headers: { ...headers },
    credentialHeader: state.auth && state.credential ? state.auth.header : null,
    body, started: Date.now(), status: null, response: null, events: [], error: null, ms: null, background,
  };
  recordCall(call);
  const done = (extra) => { Object.assign(call, extra, { ms: Date.now() - call.started }); wireChanged(); };
  let res;
  try {
    res = await fetch(state.rpcUrl, { method: "POST", headers: { ...headers, ...authHeaders() }, body: JSON.stringify(body), signal });
  } catch (e) {
    const err = friendlyFetchError(e, method);
    done({ error: err.message });
    throw err;
  }
  call.status = res.status;
  const type = res.headers.get("content-type") || "";
  if (!res.ok || !type.includes("text/event-stream")) {
    const text = await res.text().catch(() => "");
    let json = null;
    try { json = JSON.parse(text); } catch (_) { /* not JSON */ }
    done({ response: json ?? text });
    if (res.status === 401) throw new RpcError(authMessage(res), { status: 401 });
    if (json && json.error) throw new RpcError(json.error.message || "error", { code: json.error.code, data: json.error.data, status: res.status });
    if (!res.ok) throw new RpcError(`${method}: HTTP ${res.status} ${text.slice(0, 300)}`, { status: res.status });
    if (!json) throw new RpcError(`${method}: the answer is not JSON`, { status: res.status });
    if (stream && onEvent) { onEvent(json.result, null); return json.result; }
    return json.result;
  }
  // Server-sent events.
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  let pendingCr = false; // a CR at a chunk's end may be half of a CRLF
  let last;
  state.openStreams++;
  try {
    for (;;) {
      const { value, done: finished } = await reader.read();
      if (finished) break;
      let text = (pendingCr ? "\r" : "") + decoder.decode(value, { stream: true });
      pendingCr = text.endsWith("\r");
      if (pendingCr) text = text.slice(0, -1);
      buffer += text.replace(/\r\n?/g, "\n");
      let cut;
      while ((cut = buffer.indexOf("\n\n")) >= 0) {
        const block = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        let sseId = null; const data = [];
        for (const line of block.split("\n")) {
          if (line.startsWith(":")) continue;
          const colon = line.indexOf(":");
          const field = colon < 0 ? line : line.slice(0, colon);
          const val = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
          if (field === "id") sseId = val;
          else if (field === "data") data.push(val);
        }
        if (!data.length) continue;
        let msg;
        try { msg = JSON.parse(data.join("\n")); } catch (_) { msg = { unparsed: data.join("\n") }; }
        if (call.events.length < 1000) call.events.push({ id: sseId, at: Date.now(), data: msg });
        else call.eventsDropped = (call.eventsDropped || 0) + 1;
        wireChanged();
        if (msg.error) throw new RpcError(msg.error.message || "error", { code: msg.error.code, data: msg.error.data });
        last = msg.result;
        if (onEvent) onEvent(msg.result, sseId);
      }
    }
  } catch (e) {
    reader.cancel().catch(() => {});
    if (e instanceof RpcError) { done({ error: e.message }); throw e; }
    if (e.name === "AbortError") { done({ error: "closed by the console" }); throw e; }
    const err = new RpcError(`the stream from the agent broke off: ${e.message}. The agent may have stopped; resubscribe when it is back.`, { code: "stream-lost" });
    done({ error: err.message });
    throw err;
  } finally {
    state.openStreams--;
  }
  done({});
  return last;
}

function authMessage(res) {
  const challenge = res.headers.get("www-authenticate");
  if (!state.auth) return "The agent refused the call: it needs authentication" + (challenge ? ` (${challenge})` : "") + ".";
  return state.credential
    ? `The agent refused the ${state.auth.label}: enter a valid one above.`
    : `This agent needs authentication: enter your ${state.auth.label} above.`;
}

// A console endpoint of our own (JSON in, JSON out), recorded on the wire too.
export async function consoleApi(path, { method = "GET", body, background = false } = {}) {
  const headers = body !== undefined ? { "Content-Type": "application/json" } : {};
  const call = { id: ++state.callSeq, method: `console ${path.split("?")[0]}`, stream: false, httpMethod: method,
    url: path, curlUrl: new URL(path, location.href).href, headers, credentialHeader: state.auth && state.credential ? state.auth.header : null,
    body, started: Date.now(), status: null, response: null, events: [], error: null, ms: null, background };
  recordCall(call);
  let res;
  try {
    res = await fetch(path, { method, headers: { ...headers, ...authHeaders() }, body: body === undefined ? undefined : JSON.stringify(body) });
  } catch (e) {
    const err = friendlyFetchError(e, path);
    call.error = err.message; throw err;
  }
  const json = await res.json().catch(() => null);
  Object.assign(call, { status: res.status, response: json, ms: Date.now() - call.started });
  if (res.status === 401) throw new RpcError(authMessage(res), { status: 401 });
  if (!res.ok) throw new RpcError((json && json.error) || `HTTP ${res.status}`, { status: res.status });
  return json;
}

export function describeError(e) {
  if (!(e instanceof RpcError)) return e.message || String(e);
  let text = e.message;
  const details = Array.isArray(e.data) ? e.data : e.data ? [e.data] : [];
  for (const d of details) {
    const v = d && (d.fieldViolations || (d.metadata && d.metadata.field && [{ field: d.metadata.field, description: d.metadata.reason }]));
    if (Array.isArray(v)) for (const f of v) if (f.field && !text.includes(f.field)) text += ` (${f.field}: ${f.description})`;
  }
  return text;
}
