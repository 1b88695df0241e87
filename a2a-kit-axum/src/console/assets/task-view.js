// A task drawn as it evolves, from its events: state, narration apart from the answer,
// artifacts growing chunk by chunk, a question answered inline.

import { TERMINAL, el, pretty, short, stateName, badge } from "./dom.js";

export function partsText(parts) {
  return (parts || []).map((p) => {
    if (p.text !== undefined) return p.text;
    if (p.data !== undefined) return p.data && p.data.type === "status-indicator" && p.data.text ? p.data.text : pretty(p.data);
    if (p.url) return `[file ${p.filename || ""} ${p.url}]`;
    if (p.raw !== undefined) return `[file ${p.filename || ""} ${p.mediaType || ""}, ${Math.round((p.raw.length * 3) / 4)} bytes]`;
    return pretty(p);
  }).join("\n");
}

export function eventKind(ev) {
  if (!ev || typeof ev !== "object") return "unknown";
  if (ev.task) return "task";
  if (ev.message) return "message";
  if (ev.statusUpdate) return "status";
  if (ev.artifactUpdate) return "artifact";
  if (ev.id && ev.status) return "task";
  if (ev.messageId) return "message";
  return "unknown";
}

export function eventSummary(ev) {
  switch (eventKind(ev)) {
    case "task": { const t = ev.task || ev; return `task ${stateName(t.status && t.status.state)}`; }
    case "message": { const m = ev.message || ev; return `message: ${partsText(m.parts).slice(0, 120)}`; }
    case "status": {
      const s = ev.statusUpdate.status || {};
      const text = s.message ? `: ${partsText(s.message.parts).slice(0, 120)}` : "";
      return `${stateName(s.state)}${text}`;
    }
    case "artifact": {
      const a = ev.artifactUpdate; const art = a.artifact || {};
      return `artifact ${art.name || art.artifactId}${a.append ? " +chunk" : ""}${a.lastChunk ? " (last)" : ""}`;
    }
    default: return "event";
  }
}

// ---------- a task, drawn as it evolves (chat turns and the task page share it) ----------

export class TaskView {
  constructor(onAnswer) {
    this.onAnswer = onAnswer;
    this.root = el("div", { class: "task-block" });
    this.head = el("div", { class: "row" });
    this.narration = el("ul", { class: "narration", "aria-label": "Status updates" });
    this.artifacts = el("div", { class: "artifacts" });
    this.answer = el("div", { class: "answer" });
    this.question = el("div");
    this.error = el("p", { class: "error", role: "alert" });
    this.root.append(this.head, this.narration, this.artifacts, this.question, this.answer, this.error);
    this.arts = new Map();
    this.task = null;
  }

  setHead() {
    const t = this.task;
    this.head.replaceChildren(
      badge(t.status && t.status.state),
      el("a", { href: `#/task/${encodeURIComponent(t.id)}`, class: "mono", text: `task ${short(t.id)}`, title: t.id }),
    );
    this.root.dataset.taskId = t.id;
    this.root.dataset.state = stateName(t.status && t.status.state);
  }

  apply(ev) {
    const kind = eventKind(ev);
    if (kind === "task") {
      const t = ev.task || ev;
      this.task = t;
      this.setHead();
      for (const a of t.artifacts || []) this.artifact({ artifact: a, append: false, lastChunk: true });
      this.status(t.status, true);
    } else if (kind === "status") {
      if (!this.task) this.task = { id: ev.statusUpdate.taskId, contextId: ev.statusUpdate.contextId, status: {} };
      this.task.status = ev.statusUpdate.status;
      this.setHead();
      this.status(ev.statusUpdate.status, false);
    } else if (kind === "artifact") {
      this.artifact(ev.artifactUpdate);
    } else if (kind === "message") {
      const m = ev.message || ev;
      this.answer.textContent = partsText(m.parts);
      this.root.dataset.state = "message";
    }
  }

  status(status, snapshot) {
    if (!status) return;
    const s = status.state;
    const msg = status.message;
    const text = msg ? partsText(msg.parts) : "";
    const kind = msg && msg.metadata && msg.metadata.kind;
    this.question.replaceChildren();
    if (s === "TASK_STATE_INPUT_REQUIRED" || s === "TASK_STATE_AUTH_REQUIRED") {
      this.askUser(text || "The agent needs more input.", s);
    } else if (TERMINAL.has(s)) {
      if (s === "TASK_STATE_COMPLETED") { if (text) this.answer.textContent = text; }
      else {
        const what = { "TASK_STATE_FAILED": "The task failed", "TASK_STATE_CANCELED": "The task was canceled", "TASK_STATE_REJECTED": "The agent rejected the task" }[s];
        this.error.textContent = `${what}${text ? ": " + text : "."}`;
      }
    } else if (text && !snapshot && kind !== "question") {
      this.narration.append(el("li", { text }));
    } else if (text && snapshot && !this.narration.childElementCount) {
      this.narration.append(el("li", { text }));
    }
  }

  artifact(update) {
    const a = update.artifact || {};
    const key = a.artifactId || a.name || "artifact";
    let entry = this.arts.get(key);
    if (!entry) {
      const pre = el("pre", { class: "artifact-text" });
      const box = el("div", { class: "artifact", "data-artifact-id": key }, el("h3", { text: `Artifact: ${a.name || key}` }), pre);
      entry = { box, pre, text: "" };
      this.arts.set(key, entry);
      this.artifacts.append(box);
    }
    const chunk = partsText(a.parts);
    entry.text = update.append ? entry.text + chunk : chunk;
    entry.pre.textContent = entry.text;
    entry.box.dataset.complete = update.lastChunk || !update.append ? "true" : "false";
  }

  askUser(text, s) {
    const input = el("input", { name: "answer", "aria-label": "Your answer", autocomplete: "off" });
    const form = el("form", { class: "answer-form row" }, input, el("button", { type: "submit", text: "Answer" }));
    form.addEventListener("submit", (ev) => {
      ev.preventDefault();
      if (!input.value.trim()) { input.setAttribute("aria-invalid", "true"); input.focus(); return; }
      form.querySelector("button").disabled = true;
      this.onAnswer(this.task, input.value);
    });
    this.question.replaceChildren(el("div", { class: "question" },
      el("p", {}, el("strong", { text: s === "TASK_STATE_AUTH_REQUIRED" ? "The agent needs authorization: " : "The agent asks: " }), text),
      form));
    if (this.root.closest("#view-chat")) setTimeout(() => input.focus(), 0);
  }
}
