// A document as the server renders it (sanitised HTML, docs/web.md#rendering), placed in the page:
// its images and attachments fetched from the server, its anchors followed within it.
import { fileUrl } from "./api.js";
import { h } from "./dom.js";
import { docHref } from "./links.js";
import { state } from "./state.js";

// Every id in a rendered document starts with this (web/render.py), so none can take the page's own.
const ID_PREFIX = "user-content-";

export function loadImages(root) {
  for (const img of root.querySelectorAll("img[data-src]")) {
    img.addEventListener("error", () => img.replaceWith(h("span", { class: "missing" }, img.alt || img.dataset.src)), { once: true });
    img.src = fileUrl(img.dataset.src);
  }
  for (const link of root.querySelectorAll("a[data-file]")) {
    link.href = fileUrl(link.dataset.file);
    link.setAttribute("download", link.dataset.file.split("/").pop());
  }
}

// The element a heading anchor names: `restore` (as links and URLs write it) or its prefixed id.
function anchored(root, anchor) {
  const id = anchor.startsWith(ID_PREFIX) ? anchor : ID_PREFIX + anchor;
  return root.querySelector(`[id="${CSS.escape(id)}"]`);
}

// In-page links (`#restore`, footnotes) move within the document, not through the router: the URL
// becomes the document's own with the anchor, so it can be bookmarked.
export function followAnchors(root, path) {
  root.addEventListener("click", (event) => {
    const link = event.target.closest("a[href^='#']");
    const href = link?.getAttribute("href");
    if (!href || href.startsWith("#/")) return;
    event.preventDefault();
    let anchor = href.slice(1);
    try {
      anchor = decodeURIComponent(anchor);
    } catch {
      // a stray `%`: the anchor as written
    }
    const bare = anchor.startsWith(ID_PREFIX) ? anchor.slice(ID_PREFIX.length) : anchor;
    history.replaceState(null, "", docHref(path, `#${encodeURIComponent(bare)}`));
    state.shownHash = location.hash;
    jumpTo(root, null, bare);
  });
}

// Scroll to the heading `anchor` names, else to the last block starting at or before `line`, and
// mark it for a moment.
export function jumpTo(root, line, anchor) {
  let target = anchor ? anchored(root, anchor) : null;
  if (!target && line) {
    for (const node of root.querySelectorAll("[data-line]")) {
      if (Number(node.dataset.line) <= line) target = node;
    }
  }
  if (target) {
    for (const marked of root.querySelectorAll(".target")) marked.classList.remove("target");
    target.scrollIntoView({ block: "start" });
    target.classList.add("target");
    setTimeout(() => target.classList.remove("target"), 2500);
  }
}
