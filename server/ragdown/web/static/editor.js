// The editor: a document's Markdown source, saved against the version that was opened, a preview
// the server renders, and wikilink completion (docs/web.md).
import { api, q } from "./api.js";
import { Code } from "./codes.js";
import { completion } from "./complete.js";
import { $, ask, fill, h, toast } from "./dom.js";
import { diffView } from "./diff.js";
import { docHref, folderOf } from "./links.js";
import { loadImages } from "./rendered.js";
import { renderSide } from "./side.js";
import { state } from "./state.js";

// The editor on screen, if any: Ctrl/Cmd+S saves it from anywhere in the page (the preview, the
// toolbar), not only from its text area.
let onScreen = null;

// Whether `event` is the save key while the editor is shown; then it saves (app.js listens).
export function saveShortcut(event) {
  if (!((event.ctrlKey || event.metaKey) && event.key.toLowerCase() === "s")) return false;
  if (!onScreen?.area.isConnected) return false;
  event.preventDefault(); // never the browser's "Save page as"
  if (!$("#dialog").open) void onScreen.save(); // it says how it went
  return true;
}

export async function editPage(path) {
  const folder = folderOf(path);
  await renderSide(folder, path);
  const doc = await api("GET", `/api/doc?${q({ path })}`);
  let baseHash = doc.hash;
  const area = h("textarea", { "aria-label": `Source of ${path}`, spellcheck: "true" }, doc.text);
  const preview = h("article", { class: "doc preview", hidden: true });
  const status = h("span", { class: "path" }, path);
  const setDirty = (dirty) => {
    state.dirty = dirty;
    status.textContent = dirty ? `${path} · unsaved` : path;
  };
  area.addEventListener("input", () => setDirty(area.value !== doc.text));
  // A save names the version it replaces: if the file changed since, the person chooses.
  const save = async (overwrite) => {
    try {
      const saved = await api("POST", "/api/doc", { path, text: area.value, base_hash: overwrite || baseHash });
      baseHash = saved.hash;
      doc.text = area.value;
      setDirty(false);
      toast("Saved");
    } catch (error) {
      if (error.code === Code.CHANGED) await changedOnDisk().catch((failed) => toast(failed.message));
      else toast(error.message);
    }
  };
  const changedOnDisk = async () => {
    const now = await api("GET", `/api/doc?${q({ path })}`);
    const choice = await ask("It changed on disk", [
      h("p", {}, `${path} was changed since you opened it (by an agent, another window or a sync). Save over it, or discard your edit and load what is there now?`),
      h("p", { class: "legend" }, h("span", { class: "disk" }, "on disk now: Save over it throws these away"), h("span", { class: "mine" }, "your edit")),
      diffView(now.text, area.value),
    ], [["cancel", "Keep editing"], ["discard", "Discard my edit", "danger"], ["overwrite", "Save over it", "primary"]]);
    if (choice.button === "overwrite") await save(now.hash);
    if (choice.button === "discard") {
      doc.text = now.text;
      area.value = now.text;
      baseHash = now.hash;
      setDirty(false);
    }
  };
  onScreen = { area, save };
  const toggle = h("button", { "aria-pressed": "false", onclick: async () => {
    const showing = preview.hidden;
    if (showing) {
      let rendered;
      try {
        rendered = await api("POST", "/api/preview", { path, text: area.value });
      } catch (error) {
        toast(error.message);
        return;
      }
      preview.innerHTML = rendered.html; // sanitised by the server
      loadImages(preview);
    }
    preview.hidden = !showing;
    area.hidden = showing;
    toggle.textContent = showing ? "Write" : "Preview";
    toggle.setAttribute("aria-pressed", String(showing));
    if (!showing) area.focus();
  } }, "Preview");
  const names = (state.docs.get(folder) || []).map((d) => d.path.split("/").pop().replace(/\.(md|markdown|mdx)$/, ""));
  fill($("#main"),
    h("div", { class: "toolbar" }, status, toggle,
      h("a", { class: "button", href: docHref(path) }, "Close"),
      h("button", { class: "primary", onclick: () => save() }, "Save")),
    h("div", { class: "editor" }, area, preview),
  );
  completion(area, names);
  area.focus();
  setDirty(false);
}
