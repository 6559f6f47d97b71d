// The settings screen: the server's state and the settings saved here (over the environment's), the
// doctor's checks, usage from the query log, and each folder's settings.
import { api } from "./api.js";
import { $, describe, fill, h, toast } from "./dom.js";
import { folderSettings } from "./folder-settings.js";
import { healthSection } from "./health.js";
import { actions, choice, HOOK_FIELDS, input, numberOf, onOff, row } from "./settings-form.js";
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
  fill(main,
    h("div", { class: "settings" },
      h("h1", {}, "Settings"),
      h("section", { "aria-label": "Server" }, h("h2", {}, "Server"),
        describe([["version", status.version], ["role", status.role], ["ready", status.ready],
          ["documents", status.files], ["sections", status.chunks], ["read-only", tuning.read_only],
          ["tools turned off", (tuning.disabled_tools || []).join(", ") || "none"]]),
        hook.min_score !== undefined && hook.min_score < usage.min_score
          ? h("p", { class: "notice" }, `The hook's lowest similarity (${hook.min_score}) is under ${tuning.embedder}'s floor of ${usage.min_score}: it will add sections that barely relate to the prompt.`)
          : null,
        serverSettings(await api("GET", "/api/settings"))),
      healthSection(),
      usageSection(usage, settingsPage),
      h("section", { "aria-label": "Folders" }, h("h2", {}, "Folders"), state.folders.map((folder) => folderSettings(folder, settingsPage, hook)))),
  );
}

// Each server setting: its key, label, kind of field and what its values mean.
const SERVER_FIELDS = [
  ["embedder", "Embedder", "text", "A change builds a new index beside the current one, which answers until it is ready."],
  ["watch", "Watch the folders for changes", "choice", ""],
  ["root_mcp", "Serve every MCP folder at /mcp", "choice", ""],
  ["text_limit", "Characters per hit", "number", "0 never cuts a hit."],
  ["max_per_document", "Sections per document in a search", "number", "0: no cap."],
  ["follow_links", "Hits whose wikilinks are followed", "number", "0: off."],
  ["query_log", "Keep the query log (for Usage)", "choice", ""],
];

const shown = (value, type) => (type === "choice" ? onOff(value) : String(value));

// Where a setting's value comes from, in a person's words: saved here (over what), or what applies.
// `builtIn` names what applies when the variable is not set either.
function origin(saved, fallback, type, builtIn = "the built-in default") {
  const source = fallback.set
    ? `${fallback.variable}=${fallback.value} from the environment`
    : `${builtIn} (${shown(fallback.value, type)})`;
  return saved
    ? `Saved here; this overrides ${source}. ${type === "choice" ? "Choose Default" : "Empty the field"} to use that again.`
    : `Nothing saved here: ${source} applies.${fallback.set ? "" : ` ${fallback.variable} would set it.`}`;
}

// The server settings form (docs/web.md#server-settings): each field holds the value saved here, or
// nothing, and then shows what applies instead.
function serverSettings(data) {
  const rows = SERVER_FIELDS.map(([key, label, type, meaning]) => {
    const id = `ss-${key}`;
    const fallback = data.defaults[key];
    const saved = data.saved[key];
    const control = type === "choice" ? choice(id, key, saved, fallback.value) : input(id, key, type, saved, shown(fallback.value, type));
    const builtIn = key === "embedder" ? "the index's embedder" : undefined;
    return row(id, label, control, `${meaning} ${origin(key in data.saved, fallback, type, builtIn)}`.trim());
  });
  const hooks = HOOK_FIELDS.map(([key, label]) => {
    const id = `ss-hook-${key}`;
    const saved = data.saved.hook?.[key];
    const fallback = data.defaults.hook[key];
    return row(id, label, input(id, `hook.${key}`, "number", saved, String(fallback.value)), origin(saved !== undefined, fallback, "number"));
  });
  const form = h("form", { class: "editor settings-form", "aria-label": "Server settings", onsubmit: (event) => {
    event.preventDefault();
    const change = changedSettings(form, data);
    if (!Object.keys(change).length) return toast("Nothing changed");
    return saveServer(change);
  } },
  h("h3", {}, "Server settings"),
  h("p", { class: "help" }, "A value saved here applies at once and after a restart, and overrides the RAGDOWN_… environment variable of the same setting. An empty field saves nothing: the environment's value applies, or the built-in default when the variable is not set (shown in grey in the field)."),
  rows, hooks,
  actions(h("button", { class: "primary", type: "submit" }, "Save server settings")));
  return form;
}

// A field's value as PATCH /api/settings takes it: null for an empty field (no saved value).
function fieldValue(field, type) {
  if (type === "choice") return field.value === "" ? null : field.value === "true";
  if (type === "number") return numberOf(field);
  return field.value.trim() || null;
}

// What the form changes: a field whose value differs from the saved one, null where a saved value
// is emptied (the server then removes it).
function changedSettings(form, data) {
  const change = {};
  for (const [key, , type] of SERVER_FIELDS) {
    const value = fieldValue(form.elements[key], type);
    if ((value ?? undefined) !== data.saved[key]) change[key] = value;
  }
  const hookChange = {};
  for (const [key] of HOOK_FIELDS) {
    const value = numberOf(form.elements[`hook.${key}`]);
    if ((value ?? undefined) !== data.saved.hook?.[key]) hookChange[key] = value;
  }
  if (Object.keys(hookChange).length) change.hook = hookChange;
  return change;
}

async function saveServer(change) {
  try {
    await api("PATCH", "/api/settings", change);
    await settingsPage(); // first, so that the toast comes with the screen that shows the change
    toast(change.embedder ? "Saved; the index is being rebuilt with the new embedder" : "Saved");
  } catch (error) {
    toast(error.message);
  }
}
