// Wikilink completion in the editor: typing `[[` offers the folder's document names.
import { fill, h } from "./dom.js";

const OPEN_LINK = /\[\[([^\]\n|#]*)$/;

// What decides where a text area's lines wrap and how tall they are.
const LAYOUT = ["boxSizing", "width", "paddingTop", "paddingRight", "paddingBottom", "paddingLeft", "borderTopWidth",
  "borderRightWidth", "borderBottomWidth", "borderLeftWidth", "borderStyle", "fontFamily", "fontSize", "fontWeight",
  "fontStyle", "letterSpacing", "lineHeight", "tabSize", "textIndent", "textTransform", "wordSpacing", "overflowWrap", "wordBreak"];

// The caret's place, in the coordinates the text area and the menu share (their offset parent): the
// bottom and top of its line, so that the menu opens beside the line being typed, never over it, and
// its left. A hidden copy of the text up to the caret, laid out in the text area's box and font,
// says where.
function caretAt(textarea) {
  const style = getComputedStyle(textarea);
  const marker = h("span", {}, "\u200b");
  const copy = h("div", { "aria-hidden": "true" }, textarea.value.slice(0, textarea.selectionStart), marker);
  for (const name of LAYOUT) copy.style[name] = style[name];
  Object.assign(copy.style, { position: "absolute", top: "0", left: "-10000px", visibility: "hidden", whiteSpace: "pre-wrap", overflow: "hidden" });
  document.body.append(copy);
  const lineHeight = Number.parseFloat(style.lineHeight) || marker.offsetHeight;
  const borderTop = Number.parseFloat(style.borderTopWidth) || 0;
  const paddingTop = Number.parseFloat(style.paddingTop) || 0;
  const borderLeft = Number.parseFloat(style.borderLeftWidth) || 0;
  // The marker's box sits inside its line, a little below the line's top: count whole lines.
  const lines = Math.floor((marker.offsetTop - paddingTop) / lineHeight + 0.5) + 1;
  const place = {
    below: textarea.offsetTop + borderTop + paddingTop + lines * lineHeight - textarea.scrollTop,
    above: textarea.offsetTop + borderTop + paddingTop + (lines - 1) * lineHeight - textarea.scrollTop,
    left: textarea.offsetLeft + borderLeft + marker.offsetLeft - textarea.scrollLeft,
  };
  copy.remove();
  return place;
}

export function completion(textarea, names) {
  const menu = h("ul", { class: "complete", role: "listbox", hidden: true });
  let choices = [];
  let chosen = 0;
  textarea.after(menu);
  const accept = (i) => {
    const caret = textarea.selectionStart;
    const before = textarea.value.slice(0, caret).replace(OPEN_LINK, `[[${choices[i]}]]`);
    textarea.value = before + textarea.value.slice(caret).replace(/^\]\]/, "");
    textarea.selectionStart = before.length;
    textarea.selectionEnd = before.length;
    menu.hidden = true;
    textarea.dispatchEvent(new Event("input"));
  };
  const open = () => {
    const match = OPEN_LINK.exec(textarea.value.slice(0, textarea.selectionStart));
    const typed = match ? match[1].toLowerCase() : null;
    choices = typed === null ? [] : names.filter((n) => n.toLowerCase().includes(typed)).slice(0, 8);
    if (!choices.length) {
      menu.hidden = true;
      return;
    }
    chosen = 0;
    fill(menu, choices.map((name, i) => h("li", { role: "option", "aria-selected": String(i === chosen), onmousedown: (e) => { e.preventDefault(); accept(i); } }, name)));
    const caret = caretAt(textarea);
    menu.style.left = `${Math.max(textarea.offsetLeft, Math.min(caret.left, textarea.offsetLeft + textarea.offsetWidth - 260))}px`;
    menu.hidden = false;
    // Under the line, or above it when the text area ends first (the caret on its last visible line).
    const fits = caret.below + 2 + menu.offsetHeight <= textarea.offsetTop + textarea.offsetHeight;
    menu.style.top = `${fits ? caret.below + 2 : caret.above - 2 - menu.offsetHeight}px`;
  };
  textarea.addEventListener("input", open);
  const move = (step) => {
    chosen = (chosen + step + choices.length) % choices.length;
    for (const [i, li] of [...menu.children].entries()) li.setAttribute("aria-selected", String(i === chosen));
  };
  textarea.addEventListener("keydown", (event) => {
    if (menu.hidden) return;
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      event.preventDefault();
      move(event.key === "ArrowDown" ? 1 : -1);
    } else if (event.key === "Enter" || event.key === "Tab") {
      event.preventDefault();
      accept(chosen);
    } else if (event.key === "Escape") menu.hidden = true;
  });
}
