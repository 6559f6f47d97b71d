// Wikilink completion in the editor: typing `[[` offers the folder's document names.
import { h } from "./dom.js";

const OPEN_LINK = /\[\[([^\]\n|#]*)$/;

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
    menu.replaceChildren(...choices.map((name, i) => h("li", { role: "option", "aria-selected": String(i === chosen), onmousedown: (e) => { e.preventDefault(); accept(i); } }, name)));
    menu.style.left = `${textarea.offsetLeft + 16}px`;
    menu.style.top = `${textarea.offsetTop + 40}px`;
    menu.hidden = false;
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
