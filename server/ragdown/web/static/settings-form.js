// The one layout of the settings forms (server and folder, docs/web.md#settings-forms): a row per
// setting with its label, its field and a line of help, then the buttons. An empty field means "no
// value of its own": the placeholder shows what applies then, and a save removes the saved value.
import { h } from "./dom.js";

// The hook's settings, in both forms: key and label.
export const HOOK_FIELDS = [["top_k", "Hook: sections per prompt (top_k)"], ["min_score", "Hook: lowest similarity (min_score)"],
  ["min_ratio", "Hook: lowest share of the best hit (min_ratio)"], ["max_chars", "Hook: most characters (max_chars)"]];

// A row: `control` is the field (its id is `id`), `help` the line under it.
export function row(id, label, control, help) {
  control.setAttribute("aria-describedby", `${id}-help`);
  return h("div", { class: "field" },
    h("label", { for: id }, label),
    control,
    h("p", { class: "help", id: `${id}-help` }, help || ""));
}

// A text or number field holding `value` (empty when there is none), `fallback` as its placeholder.
export function input(id, name, type, value, fallback) {
  return h("input", { type, id, name, value: value ?? "", placeholder: fallback ?? "", step: type === "number" ? "any" : null });
}

export function checkbox(id, name, checked) {
  return h("input", { type: "checkbox", id, name, checked: Boolean(checked) });
}

// A yes/no setting that may also have no value of its own: "" (the default, named), "true", "false".
export function choice(id, name, value, fallback) {
  const option = (v, label) => h("option", { value: v, selected: v === String(value ?? "") }, label);
  return h("select", { id, name }, option("", `Default (${onOff(fallback)})`), option("true", "On"), option("false", "Off"));
}

export const onOff = (value) => (value ? "on" : "off");

// A number field's value: null when empty (the default applies), else the number. (Text that is not
// a number never gets here: the browser refuses to submit the form.)
export const numberOf = (field) => (field.value.trim() === "" ? null : Number(field.value));

export function actions(...buttons) {
  return h("div", { class: "actions" }, buttons);
}
