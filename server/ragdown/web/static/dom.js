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
  for (const child of children.flat(Infinity)) {
    if (!absent(child)) node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

const absent = (value) => value === false || value === null || value === undefined;

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
  form.replaceChildren(h("h2", {}, title), ...[].concat(body).filter((node) => node));
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
