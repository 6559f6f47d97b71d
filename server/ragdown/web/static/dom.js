// Small DOM helpers every screen uses: building elements, the toast, the dialog, the clipboard.

export const $ = (selector, root = document) => root.querySelector(selector);

// An element with attributes (`on…` ones become listeners; false, null and undefined are left out)
// and children (nested arrays flattened; strings become text, never HTML).
export function h(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes)) {
    if (absent(value)) continue;
    if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : value);
  }
  node.append(...nodes(children));
  return node;
}

// What replaces `parent`'s children: the same as `h` takes. The DOM's own `replaceChildren` would
// print a left-out part (`cond ? node : null`) as the text "null"; screens place their content here.
export function fill(parent, ...children) {
  parent.replaceChildren(...nodes(children));
  return parent;
}

const absent = (value) => value === false || value === null || value === undefined;

// Children as nodes: nested arrays flattened, left-out ones dropped, the rest as text, never HTML.
const nodes = (children) => children.flat(Infinity).filter((child) => !absent(child))
  .map((child) => (child instanceof Node ? child : document.createTextNode(String(child))));

// Whether the focus is in a field that takes text, where a key is the person's typing, not a shortcut,
// and which a screen that finished loading leaves the focus in.
export function typing() {
  const focused = document.activeElement;
  if (!focused || focused.isContentEditable) return Boolean(focused);
  if (focused.tagName === "INPUT") return !/^(checkbox|radio|button|submit|reset|file|range|color)$/.test(focused.type);
  return /^(TEXTAREA|SELECT)$/.test(focused.tagName);
}

let toastTimer;
export function toast(message) {
  const box = $("#toast");
  box.textContent = message;
  box.classList.add("show");
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => box.classList.remove("show"), 2600);
}

export function plural(count, noun) {
  return `${count} ${noun}${count === 1 ? "" : "s"}`;
}

// A list of terms and their values.
export function describe(rows) {
  return h("dl", {}, rows.map(([k, v]) => [h("dt", {}, k), h("dd", {}, String(v))]));
}

// A dialog built from fields; resolves with the button pressed and the form's values.
export function ask(title, body, buttons) {
  const dialog = $("#dialog");
  const form = $("#dialog-form");
  fill(form, h("h2", {}, title), body);
  const actions = h("div", { class: "actions" });
  for (const [value, label, kind] of buttons) {
    actions.append(h("button", { value, class: kind || "", type: "submit" }, label));
  }
  form.append(actions);
  return new Promise((resolve) => {
    dialog.onclose = () => {
      const values = Object.fromEntries(new FormData(form));
      resolve({ button: dialog.returnValue, values });
    };
    dialog.returnValue = "";
    dialog.showModal();
    const first = form.querySelector("input, textarea, button.primary");
    if (first) first.focus();
  });
}

export async function copy(text) {
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    // Plain HTTP on another host has no clipboard API: select it so Ctrl/Cmd+C works.
    const area = h("textarea", {}, text);
    document.body.append(area);
    area.select();
    document.execCommand("copy");
    area.remove();
  }
  toast("Copied");
}
