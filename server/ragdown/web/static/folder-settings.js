// One folder's settings form on the settings screen, and deleting the folder. A folder a
// RagdownFolder manages is shown read-only: its resource is where it changes (docs/cluster.md).
import { api, q } from "./api.js";
import { ask, h, toast } from "./dom.js";
import { state } from "./state.js";

const number = (v) => (v === "" ? null : Number(v));

// `refresh` shows the settings screen again after a save or a delete.
export function folderSettings(folder, refresh) {
  const id = (name) => `fs-${folder.name}-${name}`;
  const field = (label, name, value, type = "text") => [h("label", { for: id(name) }, label),
    h("input", { type, id: id(name), name, value: value ?? "", step: "any" })];
  const check = (label, name, value) => h("label", { for: id(name) }, h("input", { type: "checkbox", id: id(name), name, checked: Boolean(value) }), ` ${label}`);
  const managed = Boolean(folder.managed_by);
  const form = h("form", { class: "editor", "aria-label": `Settings of ${folder.name}`, onsubmit: async (event) => {
    event.preventDefault();
    const data = new FormData(form);
    const renamed = data.get("name").trim();
    const change = {
      title: data.get("title") || null,
      mcp: data.get("mcp") === "on",
      read_only: data.get("read_only") === "on",
      disabled_tools: data.get("disabled_tools").split(",").map((t) => t.trim()).filter(Boolean),
      hook: { top_k: number(data.get("top_k")), min_score: number(data.get("min_score")), min_ratio: number(data.get("min_ratio")), max_chars: number(data.get("max_chars")) },
    };
    if (renamed && renamed !== folder.name) change.name = renamed;
    try {
      await api("PATCH", `/api/folders/${encodeURIComponent(folder.name)}`, change);
      state.folders = [];
      state.docs.clear();
      toast("Saved");
      await refresh();
    } catch (error) {
      toast(error.message);
    }
  } },
  h("h3", {}, folder.title, managed ? ` · managed by ${folder.managed_by}` : ""),
  managed ? h("p", { class: "notice" }, `This folder belongs to ${folder.managed_by}: change it there (kubectl edit), not here.`) : null,
  field("Name (renaming re-indexes the folder)", "name", folder.name),
  field("Title", "title", folder.title),
  check("MCP: agents can reach it", "mcp", folder.mcp),
  check("Read-only for agents", "read_only", folder.read_only),
  field("Tools turned off (comma-separated)", "disabled_tools", (folder.disabled_tools || []).join(", ")),
  field("Hook: sections per prompt (top_k)", "top_k", folder.hook.top_k, "number"),
  field("Hook: lowest similarity (min_score)", "min_score", folder.hook.min_score, "number"),
  field("Hook: lowest share of the best hit (min_ratio)", "min_ratio", folder.hook.min_ratio, "number"),
  field("Hook: most characters (max_chars)", "max_chars", folder.hook.max_chars, "number"),
  h("div", { class: "toolbar" },
    h("button", { class: "primary", type: "submit", disabled: managed }, "Save folder settings"),
    h("button", { type: "button", class: "danger", disabled: managed, onclick: () => deleteFolder(folder, refresh) }, "Delete folder")));
  return form;
}

async function deleteFolder(folder, refresh) {
  const { button, values } = await ask(`Delete ${folder.title}?`, [
    h("p", {}, `Every file in ${folder.name}/ is deleted from the disk, attachments included. There is no trash.`),
    h("label", { for: "df-confirm" }, `Type ${folder.name} to confirm`), h("input", { type: "text", id: "df-confirm", name: "confirm" }),
  ], [["cancel", "Cancel"], ["delete", "Delete folder", "danger"]]);
  if (button !== "delete") return;
  try {
    await api("DELETE", `/api/folders/${encodeURIComponent(folder.name)}?${q({ confirm: values.confirm })}`);
    state.folders = [];
    toast("Folder deleted");
    await refresh();
  } catch (error) {
    toast(error.message);
  }
}
