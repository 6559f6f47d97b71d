// The settings screen: the server's state and the settings saved over its environment, usage from the
// query log, and each folder's settings.
import { api } from "./api.js";
import { $, describe, h, toast } from "./dom.js";
import { folderSettings } from "./folder-settings.js";
import { loadFolders, renderSide } from "./side.js";
import { state } from "./state.js";
import { usageSection } from "./usage.js";

export async function settingsPage() {
  await loadFolders();
  await renderSide(null);
  const status = await fetch("/api/status").then((r) => r.json());
  const tuning = status.settings || {};
  const hook = tuning.hook || {};
  const usage = await api("GET", "/api/query-log");
  const main = $("#main");
  main.replaceChildren(
    h("div", { class: "settings" },
      h("h1", {}, "Settings"),
      h("section", { "aria-label": "Server" }, h("h2", {}, "Server"),
        describe([["version", status.version], ["role", status.role], ["ready", status.ready],
          ["documents", status.files], ["sections", status.chunks], ["read-only", tuning.read_only],
          ["tools turned off", (tuning.disabled_tools || []).join(", ") || "none"]]),
        hook.min_score !== undefined && hook.min_score < usage.min_score
          ? h("p", { class: "notice" }, `The hook's lowest similarity (${hook.min_score}) is under ${tuning.embedder}'s floor of ${usage.min_score}: it will add sections that barely relate to the prompt.`)
          : null,
        serverSettings(await api("GET", "/api/settings"), hook)),
      usageSection(usage, settingsPage),
      h("section", { "aria-label": "Folders" }, h("h2", {}, "Folders"), state.folders.map((folder) => folderSettings(folder, settingsPage)))),
  );
}

const SERVER_FIELDS = [
  ["embedder", "Embedder (a change rebuilds the index beside the current one)", "text"],
  ["watch", "Watch the folders for changes", "checkbox"],
  ["root_mcp", "Serve every MCP folder at /mcp", "checkbox"],
  ["text_limit", "Characters per hit", "number"],
  ["max_per_document", "Sections per document in a search (0: no cap)", "number"],
  ["follow_links", "Hits whose wikilinks are followed (0: off)", "number"],
  ["query_log", "Keep the query log (for Usage)", "checkbox"],
];
const HOOK_FIELDS = [["top_k", "Hook: sections per prompt"], ["min_score", "Hook: lowest similarity"],
  ["min_ratio", "Hook: lowest share of the best hit"], ["max_chars", "Hook: most characters"]];

// The server settings form: each setting saved over its variable, or given back to it. `hook` holds
// the hook's settings in effect, shown where none is saved.
function serverSettings(data, hook) {
  const env = data.env;
  const rows = SERVER_FIELDS.map(([key, label, type]) => {
    const value = data.settings[key];
    const input = type === "checkbox"
      ? h("input", { type, id: `ss-${key}`, name: key, checked: Boolean(value) })
      : h("input", { type, id: `ss-${key}`, name: key, value: value ?? "" });
    const saved = key in data.saved;
    return h("div", {}, h("label", { for: `ss-${key}` }, label), " ", input,
      h("span", { class: "count" }, saved ? ` saved · the environment says ${env[key] ?? "nothing"} ` : " from the environment "),
      saved ? h("button", { type: "button", class: "link", onclick: () => saveServer({ [key]: null }) }, "use the environment's") : null);
  });
  const hooks = HOOK_FIELDS.map(([key, label]) => h("div", {}, h("label", { for: `ss-hook-${key}` }, label), " ",
    h("input", { type: "number", step: "any", id: `ss-hook-${key}`, name: `hook.${key}`, value: data.saved.hook?.[key] ?? "", placeholder: String(hook[key]) })));
  const form = h("form", { class: "editor", "aria-label": "Server settings", onsubmit: (event) => {
    event.preventDefault();
    const change = changedSettings(form, data);
    if (!Object.keys(change).length) return toast("Nothing changed");
    return saveServer(change);
  } },
  h("h3", {}, "Saved over the environment"),
  h("p", { class: "empty" }, "Saved in .ragdown-server.json in the docs dir: in effect at once and after a restart, until you give a setting back to its variable."),
  rows, hooks,
  h("div", {}, h("button", { class: "primary", type: "submit" }, "Save server settings")));
  return form;
}

// What the form changes, as PATCH /api/settings takes it: an emptied text field changes nothing, an
// emptied hook field gives that setting back to its variable.
function changedSettings(form, data) {
  const change = {};
  for (const [key, , type] of SERVER_FIELDS) {
    const value = fieldValue(form.elements[key], type);
    if (value !== data.settings[key] && !(type === "text" && value === "")) change[key] = value;
  }
  const hookChange = {};
  for (const [key] of HOOK_FIELDS) {
    const raw = form.elements[`hook.${key}`].value;
    const value = raw === "" ? null : Number(raw);
    if ((raw === "" ? undefined : value) !== data.saved.hook?.[key]) hookChange[key] = value;
  }
  if (Object.keys(hookChange).length) change.hook = hookChange;
  return change;
}

function fieldValue(field, type) {
  if (type === "checkbox") return field.checked;
  if (type === "number") return Number(field.value);
  return field.value.trim();
}

async function saveServer(change) {
  try {
    await api("PATCH", "/api/settings", change);
    toast(change.embedder ? "Saved; the index is being rebuilt with the new embedder" : "Saved");
    await settingsPage();
  } catch (error) {
    toast(error.message);
  }
}
