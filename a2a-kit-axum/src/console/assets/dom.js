// Small DOM helpers the console's modules share (text only: nothing is parsed as HTML).

export const TERMINAL = new Set(["TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_CANCELED", "TASK_STATE_REJECTED"]);

export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  // A <pre> scrolls when long (CSS caps its height): the keyboard must be able to reach it.
  if (tag === "pre") node.tabIndex = 0;
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") node.className = v;
    else if (k === "text") node.textContent = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else if (k in node && typeof v !== "string") node[k] = v;
    else node.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
}
export const $ = (sel, root = document) => root.querySelector(sel);
export const pretty = (v) => JSON.stringify(v, null, 2);
export const short = (id) => (id && id.length > 13 ? id.slice(0, 8) + "…" + id.slice(-4) : id || "");
export const stateName = (s) => (s || "").replace("TASK_STATE_", "").toLowerCase().replace(/_/g, "-");
export const badge = (s) => el("span", { class: `badge state state-${stateName(s)}`, text: stateName(s) || "unknown" });
export const time = (ts) => (ts ? new Date(ts).toLocaleTimeString() : "");

export function banner(message) {
  const b = $("#banner");
  b.textContent = message || "";
  b.hidden = !message;
}
