// The a2a-kit console: a page that talks to one A2A v1.0 agent over JSON-RPC, as any client
// does, with the credentials its user enters. No dependencies, no build step.

import { TERMINAL, el, $, pretty, short, badge, time, banner } from "./dom.js";
import { state, hooks, rpc, consoleApi, describeError, curlFor } from "./wire.js";
import { partsText, eventSummary, TaskView } from "./task-view.js";
import { schemaEditor } from "./schema-form.js";

const MAX_LIVE = 3; // task subscriptions the task list keeps open (a browser allows 6 connections per origin: the chat's stream and the polls need theirs)

// The wire view redrawn at most once a frame, however fast events come.
let wireFrame = 0;
hooks.callsChanged = () => {
  if (currentView() !== "wire" || wireFrame) return;
  wireFrame = requestAnimationFrame(() => { wireFrame = 0; renderWire(); });
};

// ---------- views ----------

function currentView() {
  const h = location.hash.replace(/^#\/?/, "");
  return h.split("/")[0] || "chat";
}

let routed = false;
function route() {
  const [view, arg] = location.hash.replace(/^#\/?/, "").split("/");
  const name = view || "chat";
  for (const s of document.querySelectorAll(".view")) s.hidden = s.id !== `view-${name}`;
  // A new view is announced by moving to its heading (not on the first load).
  const heading = document.querySelector(`#view-${name} h2`);
  if (heading && routed) { heading.setAttribute("tabindex", "-1"); heading.focus({ preventScroll: true }); }
  routed = true;
  for (const a of document.querySelectorAll(".tabs a")) {
    if (a.dataset.view === name) a.setAttribute("aria-current", "page"); else a.removeAttribute("aria-current");
  }
  if (state.taskPage && !(name === "task" && arg && decodeURIComponent(arg) === state.taskPage.id)) {
    state.taskPage.abort.abort(); state.taskPage = null;
  }
  if (name !== "tasks") stopTaskList();
  if (!state.card) return;
  if (name === "tasks") startTaskList();
  if (name === "task" && arg) openTask(decodeURIComponent(arg));
  if (name === "wire") renderWire();
}

// Card.

function renderCard() {
  const c = state.card;
  $("#agent-name").textContent = c.name || "A2A agent";
  $("#agent-url").textContent = state.config.mode === "remote" ? `${state.config.remote} (through this console)` : state.agentUrl;
  document.title = `${c.name} — A2A console`;
  const kv = (pairs) => el("dl", { class: "kv" }, pairs.filter(([, v]) => v !== undefined && v !== null && v !== "").map(([k, v]) => [el("dt", { text: k }), el("dd", {}, v)]));
  const caps = c.capabilities || {};
  const ifaces = (c.supportedInterfaces || []).map((i) => el("li", { class: "mono", text: `${i.protocolBinding} ${i.protocolVersion || ""} ${i.url}` }));
  const schemes = Object.entries(c.securitySchemes || {}).map(([name, s]) => el("li", { text: `${name}: ${describeScheme(s)}` }));
  const skills = (c.skills || []).map((s) => el("li", {}, el("strong", { text: s.name || s.id }), ` (${s.id}) — ${s.description || ""}`));
  $("#card-rendered").replaceChildren(
    el("div", { class: "grid2" },
      el("div", { class: "panel" }, el("h3", { text: c.name }), el("p", { text: c.description || "" }),
        kv([["Version", c.version], ["Provider", c.provider && `${c.provider.organization || ""} ${c.provider.url || ""}`],
          ["Documentation", c.documentationUrl], ["Input", (c.defaultInputModes || []).join(", ")], ["Output", (c.defaultOutputModes || []).join(", ")]])),
      el("div", { class: "panel" }, el("h3", { text: "Capabilities" }),
        kv([["Streaming", String(!!caps.streaming)], ["Push notifications", String(!!caps.pushNotifications)],
          ["Extended card", String(!!caps.extendedAgentCard)], ["Extensions", (caps.extensions || []).map((e) => e.uri).join("\n")]])),
      el("div", { class: "panel" }, el("h3", { text: "Interfaces" }), el("ul", {}, ifaces)),
      el("div", { class: "panel" }, el("h3", { text: "Security" }), schemes.length ? el("ul", {}, schemes) : el("p", { class: "muted", text: "None: anyone may call this agent." })),
    ),
    el("div", { class: "panel" }, el("h3", { text: `Skills (${(c.skills || []).length})` }), el("ul", {}, skills)),
  );
  $("#card-raw").textContent = pretty(c);
}

function describeScheme(s) {
  if (s.apiKeySecurityScheme) return `API key in ${s.apiKeySecurityScheme.location} \`${s.apiKeySecurityScheme.name}\``;
  if (s.httpAuthSecurityScheme) return `HTTP ${s.httpAuthSecurityScheme.scheme}${s.httpAuthSecurityScheme.bearerFormat ? " (" + s.httpAuthSecurityScheme.bearerFormat + ")" : ""}`;
  if (s.oauth2SecurityScheme) return "OAuth 2.0 (bearer token)";
  if (s.openIdConnectSecurityScheme) return "OpenID Connect (bearer token)";
  if (s.mtlsSecurityScheme) return "mutual TLS";
  return pretty(s);
}

async function checkSignature() {
  const box = $("#card-signature");
  box.textContent = "Checking the card's signature…";
  try {
    const r = await consoleApi("api/verify-card", { method: "POST", body: state.card });
    box.className = `signature ${r.status}`;
    box.textContent = {
      unsigned: "Signature: the card is not signed.",
      verified: `Signature: verified (key ${r.kid}).`,
      invalid: `Signature: INVALID — ${r.detail}`,
      unverifiable: `Signature: present but not checked — ${r.detail}`,
    }[r.status] || r.status;
  } catch (e) {
    box.className = "signature invalid";
    box.textContent = `Signature: not checked — ${describeError(e)}`;
  }
}

// Authentication: the card's first security requirement says which header carries what.

function setUpAuth() {
  const c = state.card;
  const schemes = c.securitySchemes || {};
  const names = Object.keys(schemes);
  const required = (c.securityRequirements || []).flatMap((r) => Object.keys(r.schemes || {}));
  const name = required.find((n) => schemes[n]) || names[0];
  if (!name) { state.auth = null; $("#credentials").hidden = true; return; }
  const s = schemes[name];
  if (s.apiKeySecurityScheme && (s.apiKeySecurityScheme.location || "header").toLowerCase() === "header") {
    state.auth = { header: s.apiKeySecurityScheme.name, prefix: "", label: `API key (${s.apiKeySecurityScheme.name})` };
  } else if (s.httpAuthSecurityScheme && /^basic$/i.test(s.httpAuthSecurityScheme.scheme)) {
    state.auth = { header: "Authorization", prefix: "Basic ", label: "Basic credentials (base64 of user:password)" };
  } else {
    state.auth = { header: "Authorization", prefix: "Bearer ", label: "bearer token" };
  }
  const form = $("#credentials");
  form.hidden = false;
  $("#credential-label").textContent = state.auth.label[0].toUpperCase() + state.auth.label.slice(1);
  $("#credential").value = state.credential;
}

$("#credentials").addEventListener("submit", (ev) => {
  ev.preventDefault();
  state.credential = $("#credential").value.trim();
  sessionStorage.setItem("a2a-console-credential", state.credential);
  banner("");
  // What was read with the old credential is read again with the new one.
  if (state.taskPage) { state.taskPage.abort.abort(); state.taskPage = null; }
  stopTaskList();
  route();
});

// Skills: a form from the skill's JSON Schema, else a text box.

function safeId(id) { return String(id).replace(/[^a-zA-Z0-9_-]/g, "_"); }

function skillSchema(id) { return state.schemas[id] && state.schemas[id].input; }

function renderSkills() {
  const list = $("#skill-list");
  list.replaceChildren();
  const select = $("#chat-skill");
  select.replaceChildren(el("option", { value: "", text: "(the agent chooses)" }));
  for (const s of state.card.skills || []) {
    select.append(el("option", { value: s.id, text: s.name || s.id }));
    const schema = skillSchema(s.id);
    const form = el("form", { class: "skill-form", novalidate: true, "data-skill": s.id });
    const formError = el("p", { class: "form-error error", role: "alert" });
    let read;
    let editor = null;
    if (schema) {
      try { editor = schemaEditor(schema, s.id); } catch (e) { editor = null; }
    }
    if (editor) {
      read = editor.read;
      form.append(editor.node);
    } else if (schema) {
      const id = `skill-${safeId(s.id)}-json`;
      const area = el("textarea", { id, name: "raw-json", rows: 6, class: "mono" });
      form.append(el("div", { class: "field" }, el("label", { for: id, text: "The data part, as JSON (the skill's schema is too deep for a form)" }), area));
      read = () => {
        try { area.removeAttribute("aria-invalid"); return { parts: [{ data: JSON.parse(area.value) }] }; } catch (e) {
          area.setAttribute("aria-invalid", "true");
          return { errors: [`the JSON does not parse: ${e.message}`] };
        }
      };
    } else {
      const id = `skill-${safeId(s.id)}-text`;
      const area = el("textarea", { id, name: "text", rows: 3 });
      form.append(el("div", { class: "field" }, el("label", { for: id, text: "Message" }), area));
      read = () => {
        if (!area.value.trim()) { area.setAttribute("aria-invalid", "true"); return { errors: ["Message: write something for the skill to work on"] }; }
        area.removeAttribute("aria-invalid");
        return { parts: [{ text: area.value }] };
      };
      if ((s.examples || []).length) {
        form.append(el("div", { class: "row" }, el("span", { class: "muted", text: "Examples:" }),
          s.examples.map((x) => el("button", { type: "button", class: "example", text: x, onclick: () => { area.value = x; area.focus(); } }))));
      }
    }
    const send = (mode) => {
      const r = read();
      if (r.errors) {
        formError.textContent = `Fix the input: ${r.errors.join("; ")}`;
        const bad = form.querySelector('[aria-invalid="true"]');
        if (bad) bad.focus();
        return;
      }
      formError.textContent = "";
      location.hash = "#/chat";
      sendChat({ parts: r.parts, skillId: s.id, mode });
    };
    form.addEventListener("submit", (ev) => { ev.preventDefault(); send(ev.submitter && ev.submitter.value === "blocking" ? "blocking" : "stream"); });
    form.append(formError, el("div", { class: "row" },
      el("button", { type: "submit", value: "stream", "data-send": "stream", text: "Run (streaming)" }),
      el("button", { type: "submit", value: "blocking", "data-send": "blocking", class: "secondary", text: "Run (wait for the result)" })));
    list.append(el("section", { class: "skill", "data-skill": s.id, "aria-labelledby": `skill-h-${safeId(s.id)}` },
      el("h3", { id: `skill-h-${safeId(s.id)}`, text: s.name || s.id }),
      el("p", { text: s.description || "" }),
      (s.tags || []).length ? el("p", { class: "tags" }, s.tags.map((t) => el("span", { text: t }))) : null,
      form));
  }
}

// Chat.

function chatMode() { return document.querySelector('#chat-form input[name="mode"]:checked').value; }

function userTurn(parts) {
  $("#chat-log").append(el("div", { class: "turn user" }, el("div", { class: "who", text: "You" }), el("div", { class: "answer", text: partsText(parts) })));
}

async function sendChat({ parts, skillId, mode = chatMode(), taskId, contextId, view }) {
  $("#chat-error").textContent = "";
  const message = { messageId: crypto.randomUUID(), role: "ROLE_USER", parts };
  if (taskId) message.taskId = taskId;
  if (contextId) message.contextId = contextId;
  if (skillId) message.metadata = { skillId };
  // A reply to the agent's question stays with its task; a new message is a new turn.
  if (view) view.narration.append(el("li", { class: "reply" }, el("strong", { text: "You: " }), partsText(parts)));
  else userTurn(parts);
  let turn = view;
  if (!turn) {
    turn = new TaskView((task, text) => sendChat({ parts: [{ text }], taskId: task.id, contextId: task.contextId, mode, view: turn }));
    $("#chat-log").append(el("div", { class: "turn agent" }, el("div", { class: "who", text: "Agent" }), turn.root));
  }
  turn.error.textContent = "";
  const params = { message };
  const streaming = mode === "stream" && state.card.capabilities && state.card.capabilities.streaming;
  if (!streaming) params.configuration = { returnImmediately: false };
  const log = $("#chat-log");
  log.setAttribute("aria-busy", "true");
  try {
    if (streaming) {
      await rpc("SendStreamingMessage", params, { stream: true, onEvent: (ev) => turn.apply(ev) });
    } else {
      turn.apply(await rpc("SendMessage", params));
    }
  } catch (e) {
    turn.error.textContent = describeError(e) + (turn.task ? ` (task ${short(turn.task.id)}: open it under Tasks to resubscribe)` : "");
    turn.root.dataset.error = "true";
    for (const b of turn.question.querySelectorAll("button")) b.disabled = false;
  } finally {
    log.removeAttribute("aria-busy");
  }
  turn.root.scrollIntoView({ block: "end" });
}

$("#chat-form").addEventListener("submit", (ev) => {
  ev.preventDefault();
  const input = $("#chat-input");
  if (!input.value.trim()) { $("#chat-error").textContent = "Write a message first."; input.focus(); return; }
  const text = input.value;
  input.value = "";
  sendChat({ parts: [{ text }], skillId: $("#chat-skill").value || undefined });
});

// The task list: ListTasks, kept fresh; open tasks followed with SubscribeToTask.

function stopTaskList() {
  clearInterval(state.tasksTimer); state.tasksTimer = null;
  for (const a of state.live.values()) a.abort();
  state.live.clear();
}

function startTaskList() {
  if (state.tasksTimer) return;
  refreshTasks();
  state.tasksTimer = setInterval(refreshTasks, 3000);
}

function deliveryItems(list) {
  return list.map((d) => el("li", {},
    el("span", { class: d.refused ? "error" : "", text: `${new Date(d.at).toLocaleTimeString()} HTTP ${d.status} ` }),
    d.taskId ? el("span", { class: "mono", title: d.taskId, text: `task ${short(d.taskId)} ` }) : null,
    d.refused ? d.refused : eventSummary(d.event),
    d.event ? el("details", {}, el("summary", { text: "body" }), el("pre", { text: pretty(d.event) })) : null));
}

// Replace `box`'s list only when the deliveries changed (an open body stays open).
function showDeliveries(box, list, id, empty) {
  const key = `${list.length}:${list.length ? list[list.length - 1].at : ""}`;
  if (box.dataset.key === key) return;
  box.dataset.key = key;
  box.replaceChildren(list.length ? el("ol", { id }, deliveryItems(list)) : el("p", { class: "muted", text: empty }));
}

async function refreshReceiver() {
  if (!state.config.receiver) return;
  $("#receiver-panel").hidden = false;
  const box = $("#receiver-deliveries");
  try {
    const r = await consoleApi("api/deliveries", { background: true });
    showDeliveries(box, r.deliveries || [], "receiver-list", "No deliveries yet.");
  } catch (e) {
    box.dataset.key = "";
    box.replaceChildren(el("p", { class: "error", text: describeError(e) }));
  }
}

async function refreshTasks() {
  if (state.tasksBusy) return; // the last one is still on its way
  state.tasksBusy = true;
  try { await refreshTasksOnce(); } finally { state.tasksBusy = false; }
}

async function refreshTasksOnce() {
  refreshReceiver();
  const body = $("#task-list tbody");
  let res;
  try {
    res = await rpc("ListTasks", { pageSize: 50, historyLength: 0 }, { background: true });
    $("#tasks-error").textContent = "";
    if (!state.tasksTimer) return; // the list was left meanwhile
  } catch (e) {
    $("#tasks-error").textContent = describeError(e);
    if (e.status === 401) { body.replaceChildren(); stopTaskList(); }
    return;
  }
  const tasks = res.tasks || [];
  const rows = tasks.map((t) => {
    const existing = body.querySelector(`tr[data-task-id="${CSS.escape(t.id)}"]`);
    const st = t.status && t.status.state;
    if (existing) {
      // In place: a link with the keyboard's focus keeps it.
      if (existing.dataset.state !== st) existing.querySelector("td.state").replaceChildren(badge(st));
      existing.dataset.state = st;
      existing.children[2].textContent = time(t.status && t.status.timestamp);
      return existing;
    }
    return el("tr", { "data-task-id": t.id, "data-state": st },
      el("td", {}, el("a", { href: `#/task/${encodeURIComponent(t.id)}`, class: "mono", title: t.id, text: short(t.id) })),
      el("td", { class: "state" }, badge(st)),
      el("td", { text: time(t.status && t.status.timestamp) }),
      el("td", { class: "mono", title: t.contextId, text: short(t.contextId) }));
  });
  const same = rows.length === body.children.length && rows.every((r, i) => body.children[i] === r);
  if (!same) body.replaceChildren(...rows);
  if (!tasks.length) body.append(el("tr", {}, el("td", { colspan: "4", class: "muted", text: "No tasks yet: run a skill." })));
  // Follow the open ones, newest first, up to MAX_LIVE.
  // Followed live within the connections left (chat streams hold theirs).
  const budget = Math.max(0, MAX_LIVE - Math.max(0, state.openStreams - state.live.size));
  const open = tasks.filter((t) => !TERMINAL.has(t.status && t.status.state)).slice(0, budget).map((t) => t.id);
  for (const [id, abort] of state.live) if (!open.includes(id)) { abort.abort(); state.live.delete(id); }
  for (const id of open) {
    if (state.live.has(id) || !(state.card.capabilities || {}).streaming) continue;
    const abort = new AbortController();
    state.live.set(id, abort);
    rpc("SubscribeToTask", { id }, {
      stream: true, signal: abort.signal, background: true,
      onEvent: (ev) => {
        const row = body.querySelector(`tr[data-task-id="${CSS.escape(id)}"]`);
        const s = ev && (ev.statusUpdate ? ev.statusUpdate.status.state : ev.task ? ev.task.status.state : null);
        if (row && s && row.dataset.state !== s) { row.dataset.state = s; row.querySelector("td.state").replaceChildren(badge(s)); }
      },
    }).catch(() => {}).finally(() => { if (state.live.get(id) === abort) state.live.delete(id); });
  }
}

// The task page.

async function openTask(id) {
  if (state.taskPage && state.taskPage.id === id) return;
  if (state.taskPage) state.taskPage.abort.abort();
  const page = { id, abort: new AbortController(), events: [] };
  state.taskPage = page;
  const root = $("#task-page");
  root.replaceChildren(el("p", { class: "muted", text: "Loading…" }));
  let task;
  try {
    task = await rpc("GetTask", { id }, { signal: page.abort.signal });
  } catch (e) {
    if (!page.abort.signal.aborted) root.replaceChildren(el("p", { class: "error", role: "alert", text: describeError(e) }));
    return;
  }
  if (page.abort.signal.aborted) return; // left before the task came
  const view = new TaskView((t, text) => {
    sendChat({ parts: [{ text }], taskId: t.id, contextId: t.contextId, mode: "stream", view: null });
    location.hash = "#/chat";
  });
  view.apply({ task });
  const actionsError = el("p", { class: "error", role: "alert", id: "task-action-error" });
  const timeline = el("ol", { class: "timeline", id: "task-timeline", "aria-label": "Events" });
  const cancel = el("button", { type: "button", id: "task-cancel", text: "Cancel task", disabled: TERMINAL.has(task.status.state) });
  const resub = el("button", { type: "button", id: "task-resubscribe", text: "Resubscribe" });
  const history = el("ol", { id: "task-history" }, (task.history || []).map((m) =>
    el("li", {}, el("strong", { text: m.role === "ROLE_USER" ? "user: " : "agent: " }), partsText(m.parts))));
  const artifacts = el("div", { id: "task-artifacts" }, (task.artifacts || []).map((a) =>
    el("div", { class: "artifact" }, el("h4", { text: a.name || a.artifactId }), el("pre", { text: partsText(a.parts) }))));
  const push = el("div", { id: "task-push" });
  const deliveries = el("div", { id: "task-deliveries" });
  root.replaceChildren(
    el("dl", { class: "kv" }, el("dt", { text: "Task" }), el("dd", { class: "mono", text: task.id }),
      el("dt", { text: "Context" }), el("dd", { class: "mono", text: task.contextId }),
      el("dt", { text: "State" }), el("dd", { id: "task-state" }, badge(task.status.state))),
    el("div", { class: "row" }, cancel, resub), actionsError,
    el("div", { class: "panel" }, el("h3", { text: "Live" }), view.root),
    el("div", { class: "panel" }, el("h3", { text: "Event timeline" }),
      el("p", { class: "muted", text: "Events as the agent streamed them, with their SSE ids; resume after any one of them." }), timeline),
    el("div", { class: "panel" }, el("h3", { text: "History" }), history),
    el("div", { class: "panel" }, el("h3", { text: "Artifacts" }), artifacts),
    el("div", { class: "panel" }, el("h3", { text: "Push notifications" }), push, el("h4", { text: "Deliveries" }), deliveries),
  );
  const setState = (s) => { $("#task-state").replaceChildren(badge(s)); cancel.disabled = TERMINAL.has(s); };
  // `live`: the event moves the Live view on; a replay after an event the view has already
  // seen goes to the timeline only (its artifact chunks would be appended twice).
  const addEvent = (ev, sseId, live) => {
    const s = ev.statusUpdate ? ev.statusUpdate.status.state : ev.task ? ev.task.status.state : null;
    if (live && s) setState(s);
    if (live) view.apply(ev);
    const resume = el("button", { type: "button", class: "resume-from", text: "Resume after", "aria-label": `Resume after event ${sseId}`, disabled: sseId === null });
    resume.addEventListener("click", () => subscribe(sseId, false, false));
    timeline.append(el("li", { "data-event-id": sseId ?? "" },
      el("span", { class: "mono", text: sseId === null ? "—" : `#${sseId}` }),
      el("span", { text: new Date().toLocaleTimeString() }),
      el("span", { text: eventSummary(ev) }), resume,
      el("details", {}, el("summary", { text: "raw" }), el("pre", { text: pretty(ev) }))));
  };
  let continuations = 0;
  const subscribe = async (after, continued, live = true) => {
    if (page.abort.signal.aborted) return;
    if (!continued) continuations = 0;
    if (page.stream) page.stream.abort();
    const abort = new AbortController();
    page.stream = abort;
    page.abort.signal.addEventListener("abort", () => abort.abort());
    actionsError.textContent = "";
    if (after !== undefined && !continued) timeline.append(el("li", { class: "muted note" }, el("span", {}), el("span", {}), el("span", { text: after === 0 ? "replaying the task's events" : `resubscribed after event #${after}` }), el("span", {})));
    let lastId = null; let lastState = null;
    const onEvent = (ev, sseId) => {
      addEvent(ev, sseId, live);
      if (sseId !== null) lastId = sseId;
      // Only an update says the stream stopped at a question (a snapshot may be of one).
      lastState = ev.statusUpdate ? ev.statusUpdate.status.state : null;
    };
    try {
      await rpc("SubscribeToTask", { id }, { stream: true, lastEventId: after, signal: abort.signal, onEvent });
      // A stream ends where the task waited for input; what came after is read on.
      if (lastId !== null && String(lastId) !== String(after) && continuations++ < 20
          && (lastState === "TASK_STATE_INPUT_REQUIRED" || lastState === "TASK_STATE_AUTH_REQUIRED")) {
        subscribe(lastId, true, live);
      }
    } catch (e) {
      if (e.name === "AbortError") return;
      if (e.code === -32004 || /terminal/i.test(e.message)) actionsError.textContent = `${describeError(e)} (This agent may not replay a finished task's events.)`;
      else actionsError.textContent = describeError(e);
    }
  };
  cancel.addEventListener("click", async () => {
    cancel.disabled = true;
    try {
      const t = await rpc("CancelTask", { id });
      setState(t.status.state);
      view.apply({ task: t });
    } catch (e) {
      actionsError.textContent = describeError(e);
      cancel.disabled = false;
    }
  });
  resub.addEventListener("click", () => subscribe(undefined));
  renderPush(page, task, push, deliveries);
  const streaming = (state.card.capabilities || {}).streaming;
  if (streaming && !TERMINAL.has(task.status.state)) subscribe(undefined);
  // A finished task: its events replayed for the timeline (the Live view has the task).
  else if (streaming) subscribe(0, false, false);
}

async function renderPush(page, task, box, deliveriesBox) {
  const caps = state.card.capabilities || {};
  if (!caps.pushNotifications) {
    box.replaceChildren(el("p", { class: "muted", text: "This agent does not offer push notifications." }));
  } else {
    const list = el("ul", { id: "push-configs" });
    const error = el("p", { class: "error", role: "alert" });
    const add = el("button", { type: "button", id: "push-add", text: "Add a push config to the console's inbox" });
    const load = async () => {
      try {
        const r = await rpc("ListTaskPushNotificationConfigs", { taskId: task.id });
        list.replaceChildren(...(r.configs || []).map((c) => {
          const del = el("button", { type: "button", text: "Delete", "aria-label": `Delete push config ${c.id}` });
          del.addEventListener("click", async () => {
            try { await rpc("DeleteTaskPushNotificationConfig", { taskId: task.id, id: c.id }); load(); } catch (e) { error.textContent = describeError(e); }
          });
          return el("li", {}, el("span", { class: "mono", text: `${c.id} → ${c.url}` }), " ", del);
        }));
        if (!list.childElementCount) list.append(el("li", { class: "muted", text: "No push configs." }));
      } catch (e) { error.textContent = describeError(e); }
    };
    add.addEventListener("click", async () => {
      error.textContent = "";
      try {
        const inbox = await consoleApi(`api/inbox-config?task=${encodeURIComponent(task.id)}`, { method: "POST", body: {} });
        const url = new URL(inbox.path, location.href).href;
        await rpc("CreateTaskPushNotificationConfig", { taskId: task.id, url, token: inbox.token, authentication: { scheme: "Bearer", credentials: inbox.token } });
        load();
      } catch (e) { error.textContent = describeError(e); }
    });
    const remoteHost = state.config.mode === "remote" ? new URL(state.config.remoteOrigin).hostname : null;
    if (remoteHost && !["localhost", "127.0.0.1", "[::1]", "::1"].includes(remoteHost)) {
      add.disabled = true;
      add.title = "The agent is on another machine: it cannot reach this console's inbox.";
      box.replaceChildren(list, add, el("p", { class: "muted", text: add.title }), error);
    } else {
      box.replaceChildren(list, add, error);
    }
    load();
  }
  const refresh = async () => {
    try {
      const r = await consoleApi(`api/deliveries?task=${encodeURIComponent(task.id)}`, { background: true });
      showDeliveries(deliveriesBox, r.deliveries || [], "delivery-list", "No deliveries received for this task.");
    } catch (e) {
      deliveriesBox.dataset.key = "";
      deliveriesBox.replaceChildren(el("p", { class: "error", text: describeError(e) }));
    }
  };
  refresh();
  const timer = setInterval(refresh, 2000);
  page.abort.signal.addEventListener("abort", () => clearInterval(timer));
}

// The wire log.

function renderWire() {
  const list = $("#wire-log");
  const open = new Set([...list.querySelectorAll("details[open]")].map((d) => d.dataset.call));
  const all = $("#wire-background").checked;
  list.replaceChildren(...state.calls.filter((c) => all || !c.background).map((c) => {
    const ok = c.status && c.status < 400 && !c.error;
    const response = c.events.length
      ? c.events.map((e) => `id: ${e.id ?? ""}\ndata: ${JSON.stringify(e.data)}\n`).join("\n")
      : c.response === null ? "" : typeof c.response === "string" ? c.response : pretty(c.response);
    const curl = curlFor(c);
    const copy = el("button", { type: "button", class: "copy-curl", text: "Copy as curl" });
    copy.addEventListener("click", () => copyText(curl, copy));
    return el("li", { class: "call", "data-call": String(c.id) }, el("details", { "data-call": String(c.id), open: open.has(String(c.id)) },
      el("summary", {}, el("strong", { text: c.method }), " ",
        el("span", { class: ok ? "status-ok" : "status-bad", text: c.error ? `error` : c.status ? `HTTP ${c.status}` : "…" }),
        c.ms !== null ? ` ${c.ms} ms` : " (open)", c.stream ? ` · ${c.events.length + (c.eventsDropped || 0)} events${c.eventsDropped ? ` (the first ${c.events.length} kept)` : ""}` : "", c.error ? ` — ${c.error}` : ""),
      el("h3", { text: "Request" }), el("pre", { class: "code", text: `${c.httpMethod} ${c.curlUrl}\n${Object.entries(c.headers).map(([k, v]) => `${k}: ${v}`).join("\n")}${c.credentialHeader ? `\n${c.credentialHeader}: (hidden)` : ""}\n\n${c.body === undefined ? "" : pretty(c.body)}` }),
      el("h3", { text: "Response" }), el("pre", { class: "code", text: response }),
      el("div", { class: "row" }, copy), el("pre", { class: "code curl", text: curl })));
  }));
}

async function copyText(text, button) {
  try {
    await navigator.clipboard.writeText(text);
    button.textContent = "Copied";
  } catch (_) {
    button.textContent = "Select the text below to copy";
  }
  setTimeout(() => { button.textContent = "Copy as curl"; }, 1500);
}

$("#wire-background").addEventListener("change", renderWire);

document.addEventListener("click", (ev) => {
  const b = ev.target.closest("button.copy");
  if (b) copyText($("#" + b.dataset.copy).textContent, b);
});

// ---------- start ----------

function mapUrl(url) {
  // The card names the agent's URLs; the page calls them on its own origin (or the proxy).
  const u = new URL(url, location.href);
  if (state.config.mode === "remote") {
    if (u.origin !== state.config.remoteOrigin) {
      // The card names another host for itself (localhost for 127.0.0.1, a public name):
      // its path is called on the origin the console was given, and the user told.
      state.offOrigin = u.origin;
    }
    return `${location.origin}${state.config.agentBase}${u.pathname}${u.search}`;
  }
  return `${location.origin}${u.pathname}${u.search}`;
}

async function start() {
  window.addEventListener("hashchange", route);
  try {
    state.config = await (await fetch("config.json")).json();
  } catch (e) {
    banner(`The console could not load its configuration: ${e.message}`);
    return;
  }
  let card;
  try {
    const res = await fetch(state.config.cardPath.startsWith("/") ? state.config.cardPath : "/" + state.config.cardPath, { headers: { Accept: "application/json" } });
    const text = await res.text();
    if (!res.ok) throw new Error(`HTTP ${res.status}: ${text.slice(0, 200)}`);
    card = JSON.parse(text);
  } catch (e) {
    banner(`The agent's card could not be read (${e.message}). Is the agent running${state.config.mode === "remote" ? ` at ${state.config.remote}` : ""}?`);
    return;
  }
  state.card = card;
  const jsonrpc = (card.supportedInterfaces || []).find((i) => i.protocolBinding === "JSONRPC" && (i.protocolVersion || "1.0").startsWith("1."));
  if (!jsonrpc) { renderCard(); banner("This agent offers no JSON-RPC interface for A2A 1.0: the console speaks JSON-RPC."); route(); return; }
  state.agentUrl = jsonrpc.url;
  state.tenant = jsonrpc.tenant || null;
  state.rpcUrl = mapUrl(jsonrpc.url);
  if (state.offOrigin) banner(`The card names ${state.offOrigin} for the agent; the console calls the same paths at ${state.config.remoteOrigin}, the URL it was given.`);
  const ext = ((card.capabilities || {}).extensions || []).find((e) => /skill-schemas/.test(e.uri || ""));
  state.schemas = (ext && ext.params && ext.params.skills) || {};
  setUpAuth();
  renderCard();
  renderSkills();
  checkSignature();
  if (!location.hash) location.hash = "#/chat";
  route();
}

start();
