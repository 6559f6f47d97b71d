// A document's screen: the rendered page, its tags and aliases, its backlinks; rename and delete.
import { api, q } from "./api.js";
import { Code } from "./codes.js";
import { $, ask, fill, h, plural, toast } from "./dom.js";
import { docHref, editHref, folderHref, folderOf } from "./links.js";
import { followAnchors, jumpTo, loadImages } from "./rendered.js";
import { renderSide } from "./side.js";
import { state } from "./state.js";

export async function docPage(path, anchor, line) {
  const folder = folderOf(path);
  await renderSide(folder, path);
  let doc;
  try {
    doc = await api("GET", `/api/render?${q({ path })}`);
  } catch (error) {
    fill($("#main"), h("h1", {}, "Not found"), h("p", {}, error.message));
    return;
  }
  const body = h("article", { class: "doc" });
  body.innerHTML = doc.html; // sanitised by the server (docs/web.md#rendering)
  const chips = [...doc.tags.map((tag) => h("a", { class: "tag", href: `#/search/${encodeURIComponent(folder)}?${q({ tag })}` }, `#${tag}`)),
    ...doc.aliases.map((alias) => h("span", { class: "chip", title: "alias" }, alias))];
  const links = doc.backlinks.map((b) => h("li", {}, h("a", { href: docHref(b.path, `?line=${b.lines[0] ? b.lines[0].line : 1}`) }, b.title),
    b.lines.slice(0, 3).map((l) => h("span", { class: "line" }, `${l.line}: ${l.text}`))));
  fill($("#main"),
    h("div", { class: "toolbar" },
      h("span", { class: "path" }, path),
      h("a", { class: "button", href: editHref(path) }, "Edit"),
      h("button", { onclick: () => moveDocument(path) }, "Rename / move"),
      h("button", { class: "danger", onclick: () => deleteDocument(path, doc.hash) }, "Delete"),
    ),
    chips.length ? h("div", { class: "chips" }, chips) : null,
    ...(doc.superseded_by.length ? [h("p", { class: "notice superseded", role: "note" }, "Hidden from search: superseded by ",
      doc.superseded_by.map((p, i) => [i ? ", " : "", h("a", { href: docHref(p) }, p)]))] : []),
    body,
    h("section", { class: "backlinks", "aria-label": "Backlinks" },
      h("h2", {}, `Linked from ${plural(doc.backlinks.length, "document")}`),
      links.length ? h("ul", {}, links) : h("p", { class: "empty" }, "Nothing links here yet.")),
  );
  loadImages(body);
  followAnchors(body, path);
  jumpTo(body, line, anchor);
}

async function moveDocument(path) {
  const { button, values } = await ask("Rename or move", [
    h("label", { for: "mv-to" }, "New path (in the same folder)"), h("input", { type: "text", id: "mv-to", name: "to", value: path }),
  ], [["cancel", "Cancel"], ["move", "Move", "primary"]]);
  if (button !== "move" || values.to === path) return;
  try {
    const moved = await api("POST", "/api/move", { from: path, to: values.to });
    state.docs.delete(folderOf(path));
    toast(moved.updated.length ? `Moved; links updated in ${moved.updated.length} document(s)` : "Moved");
    location.hash = docHref(moved.to);
  } catch (error) {
    toast(error.message);
  }
}

async function deleteDocument(path, hash) {
  const { button } = await ask("Delete this document?", h("p", {}, `${path} will be deleted from the disk. There is no trash.`),
    [["cancel", "Cancel"], ["delete", "Delete", "danger"]]);
  if (button !== "delete") return;
  try {
    await api("DELETE", `/api/doc?${q({ path, base_hash: hash })}`);
    state.docs.delete(folderOf(path));
    toast("Deleted");
    location.hash = folderHref(folderOf(path));
  } catch (error) {
    toast(error.code === Code.CHANGED ? "It changed on disk since you opened it: nothing was deleted" : error.message);
  }
}
