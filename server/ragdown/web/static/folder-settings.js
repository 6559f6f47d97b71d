// One folder's settings form on the settings screen, and deleting the folder. A folder a
// RagdownFolder manages is shown read-only: its resource is where it changes (docs/cluster.md).
import { api, q } from "./api.js";
import { ask, h, toast } from "./dom.js";
import { actions, checkbox, HOOK_FIELDS, input, numberOf, row } from "./settings-form.js";
import { state } from "./state.js";

// `refresh` shows the settings screen again after a save or a delete; `serverHook` holds the hook
// values the server applies, which a field left empty here falls back to.
export function folderSettings(folder, refresh, serverHook) {
  const id = (name) => `fs-${folder.name}-${name}`;
  const text = (label, name, value, fallback, help) => row(id(name), label, input(id(name), name, "text", value, fallback), help);
  const check = (label, name, value, help) => row(id(name), label, checkbox(id(name), name, value), help);
  const hooks = HOOK_FIELDS.map(([key, label]) => row(id(key), label, input(id(key), key, "number", folder.hook[key], String(serverHook[key] ?? "")),
    folder.hook[key] === undefined ? `Nothing saved for this folder: the server's ${serverHook[key]} applies.` : `Saved for this folder. Empty the field to use the server's ${serverHook[key]}.`));
  const managed = Boolean(folder.managed_by);
  const form = h("form", { class: "editor settings-form", "aria-label": `Settings of ${folder.name}`, onsubmit: async (event) => {
    event.preventDefault();
    try {
      await api("PATCH", `/api/folders/${encodeURIComponent(folder.name)}`, changeOf(form, folder));
      state.folders = [];
      state.docs.clear();
      await refresh(); // first, so that the toast comes with the screen that shows the change
      toast("Saved");
    } catch (error) {
      toast(error.message);
    }
  } },
  h("h3", {}, folder.title, managed ? ` · managed by ${folder.managed_by}` : ""),
  managed ? h("p", { class: "notice" }, `This folder belongs to ${folder.managed_by}: change it there (kubectl edit), not here.`) : null,
  h("p", { class: "help" }, "Saved in the folder's .ragdown.json. An empty field saves nothing: the server's setting applies (shown in grey in the field)."),
  text("Name", "name", folder.name, "", "Renaming re-indexes the folder."),
  text("Title", "title", folder.title === folder.name ? "" : folder.title, folder.name, "Empty: the folder's name."),
  check("MCP: agents can reach it", "mcp", folder.mcp, `At /mcp/${folder.name}; off, the folder is for people only.`),
  check("Read-only for agents", "read_only", folder.read_only, "Agents get no write tools here."),
  text("Tools turned off", "disabled_tools", (folder.disabled_tools || []).join(", "), "none", "Tool names, comma-separated (ragdown_write, ragdown_delete, …)."),
  hooks,
  actions(
    h("button", { class: "primary", type: "submit", disabled: managed }, "Save folder settings"),
    h("button", { type: "button", class: "danger", disabled: managed, onclick: () => deleteFolder(folder, refresh) }, "Delete folder")));
  return form;
}

// The form as PATCH /api/folders/<name> takes it: an empty hook field is null, which removes the
// folder's own value (the server's applies again).
function changeOf(form, folder) {
  const data = new FormData(form);
  const renamed = data.get("name").trim();
  const hook = {};
  for (const [key] of HOOK_FIELDS) hook[key] = numberOf(form.elements[key]);
  const change = {
    title: data.get("title").trim() || null,
    mcp: data.get("mcp") === "on",
    read_only: data.get("read_only") === "on",
    disabled_tools: data.get("disabled_tools").split(",").map((t) => t.trim()).filter(Boolean),
    hook,
  };
  if (renamed && renamed !== folder.name) change.name = renamed;
  return change;
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
