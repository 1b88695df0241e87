import { el } from "./dom.js";

// A form for a JSON Schema (objects, strings, numbers, integers, booleans, enums, arrays of
// scalars, nested objects, $ref into $defs), with a raw JSON box as the way out.
export function schemaEditor(root, skillId) {
  const defs = root.$defs || root.definitions || {};
  const resolve = (s) => {
    let seen = 0;
    const description = s && s.description;
    while (s && s.$ref && seen++ < 20) s = { ...defs[s.$ref.split("/").pop()], description: description || (defs[s.$ref.split("/").pop()] || {}).description };
    if (s && (s.anyOf || s.oneOf)) {
      const alts = (s.anyOf || s.oneOf).map(resolve);
      if (alts.length && alts.every((a) => a.const !== undefined)) {
        return { ...s, type: typeof alts[0].const, enum: alts.map((a) => a.const), enumLabels: alts.map((a) => a.description) };
      }
      const real = alts.filter((a) => a.type !== "null");
      if (real.length === 1) return { ...real[0], nullable: alts.length > real.length, description: s.description || real[0].description };
    }
    if (s && Array.isArray(s.type)) { const t = s.type.filter((x) => x !== "null"); return { ...s, type: t[0], nullable: t.length < s.type.length }; }
    return s || {};
  };
  const fields = [];
  const build = (schema, path, label, required) => {
    // A schema that refers to itself (a tree) gets a JSON box for its objects below a few levels.
    const resolved = resolve(schema);
    const s = path.length > 6 && resolved.type === "object" ? { description: resolved.description, nullable: resolved.nullable } : resolved;
    const id = `f-${skillId}-${path.join(".") || "value"}`.replace(/[^a-zA-Z0-9_.-]/g, "_");
    const errId = id + "-error";
    const title = label || s.title || "value";
    const hint = s.description ? el("span", { class: "hint", id: id + "-hint", text: s.description }) : null;
    const describedBy = [hint ? id + "-hint" : null, errId].filter(Boolean).join(" ");
    const err = el("span", { class: "field-error", id: errId });
    if (s.type === "object" && s.properties) {
      const req = new Set(s.required || []);
      const children = Object.entries(s.properties)
        .filter(([k]) => k !== "__proto__" && k !== "constructor" && k !== "prototype")
        .map(([k, v]) => build(v, [...path, k], k, req.has(k)));
      if (!path.length) return el("div", {}, children);
      return el("fieldset", {}, el("legend", { text: title + (required ? " *" : "") }), hint, children);
    }
    let input;
    let kind = s.type;
    if (Array.isArray(s.enum)) {
      kind = "enum";
      input = el("select", { id, name: path.join("."), "aria-describedby": describedBy },
        el("option", { value: "", text: required ? "— choose —" : "—" }),
        s.enum.map((v, i) => el("option", { value: String(i), text: s.enumLabels && s.enumLabels[i] ? `${v} — ${s.enumLabels[i]}` : String(v) })));
    } else if (s.type === "boolean") {
      input = el("input", { id, type: "checkbox", name: path.join("."), "aria-describedby": describedBy });
    } else if (s.type === "integer" || s.type === "number") {
      input = el("input", { id, type: "text", inputmode: s.type === "integer" ? "numeric" : "decimal", name: path.join("."), "aria-describedby": describedBy });
    } else if (s.type === "array" && s.items) {
      kind = "array";
      input = el("textarea", { id, rows: 3, name: path.join("."), "aria-describedby": describedBy, placeholder: "one value per line" });
    } else if (s.type === "string") {
      input = el("input", { id, type: s.format === "date" ? "date" : "text", name: path.join("."), "aria-describedby": describedBy });
    } else {
      kind = "json";
      input = el("textarea", { id, rows: 3, name: path.join("."), "aria-describedby": describedBy, placeholder: "JSON" });
    }
    if (required) input.setAttribute("aria-required", "true");
    fields.push({ path, s, kind, input, err, required, title });
    return el("div", { class: "field" }, el("label", { for: id, text: title + (required ? " *" : "") }), hint, input, err);
  };
  const formNode = build(root, [], null, true);
  const rawId = `f-${skillId}-raw`;
  const raw = el("textarea", { id: rawId, rows: 6, class: "mono", name: "raw-json" });
  const rawBox = el("details", { class: "raw" }, el("summary", { text: "Edit as JSON instead" }),
    el("label", { for: rawId, class: "sr-only", text: "The data part, as JSON" }), raw);

  const scalar = (f, text) => {
    const s = resolve(f.s.items ? f.s.items : f.s);
    const t = s.type;
    if (t === "integer" || t === "number") {
      if (!/^-?\d+(\.\d+)?([eE][-+]?\d+)?$/.test(text)) throw new Error(`${f.title}: \`${text}\` is not a number`);
      const n = Number(text);
      if (t === "integer" && !Number.isInteger(n)) throw new Error(`${f.title}: must be a whole number, not ${text}`);
      if (s.minimum !== undefined && n < s.minimum) throw new Error(`${f.title}: must be at least ${s.minimum}, not ${n}`);
      if (s.maximum !== undefined && n > s.maximum) throw new Error(`${f.title}: must be at most ${s.maximum}, not ${n}`);
      return n;
    }
    if (t === "boolean") { if (!/^(true|false)$/.test(text)) throw new Error(`${f.title}: true or false`); return text === "true"; }
    if (s.minLength !== undefined && text.length < s.minLength) throw new Error(`${f.title}: at least ${s.minLength} characters`);
    if (s.maxLength !== undefined && text.length > s.maxLength) throw new Error(`${f.title}: at most ${s.maxLength} characters`);
    if (s.pattern && text.length <= 1000) {
      let re = null;
      try { re = new RegExp(s.pattern, "u"); } catch (_) { /* a pattern JavaScript cannot read: the agent checks */ }
      if (re && !re.test(text)) throw new Error(`${f.title}: must match ${s.pattern}`);
    }
    return text;
  };
  const set = (obj, path, v) => {
    if (!path.length) return v;
    let o = obj;
    for (const k of path.slice(0, -1)) o = o[k] = o[k] || {};
    o[path[path.length - 1]] = v;
    return obj;
  };
  const read = () => {
    if (rawBox.open && raw.value.trim()) {
      try { return { parts: [{ data: JSON.parse(raw.value) }] }; } catch (e) {
        raw.setAttribute("aria-invalid", "true");
        return { errors: [`the JSON does not parse: ${e.message}`] };
      }
    }
    raw.removeAttribute("aria-invalid");
    const errors = [];
    let value = {};
    for (const f of fields) {
      f.err.textContent = ""; f.input.removeAttribute("aria-invalid");
      try {
        let v;
        if (f.kind === "boolean") v = f.input.checked;
        else if (f.kind === "enum") v = f.input.value === "" ? undefined : f.s.enum[Number(f.input.value)];
        else {
          const text = f.input.value.trim();
          if (!text) v = undefined;
          else if (f.kind === "array") v = text.split("\n").map((x) => x.trim()).filter(Boolean).map((x) => scalar(f, x));
          else if (f.kind === "json") { try { v = JSON.parse(text); } catch (e) { throw new Error(`${f.title}: not JSON (${e.message})`); } }
          else v = scalar(f, text);
        }
        if (v === undefined) {
          if (f.required && !f.s.nullable) throw new Error(`${f.title}: required`);
          continue;
        }
        value = set(value, f.path, v);
      } catch (e) {
        f.err.textContent = e.message;
        f.input.setAttribute("aria-invalid", "true");
        errors.push(e.message);
      }
    }
    return errors.length ? { errors } : { parts: [{ data: value }] };
  };
  return { node: el("div", {}, formNode, rawBox), read };
}
