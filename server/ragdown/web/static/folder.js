// A folder's screen: its recently changed documents, a new document, uploads, and how to connect an
// agent to it.
import { api } from "./api.js";
import { $, ask, copy, fill, h, plural, toast } from "./dom.js";
import { docHref, editHref } from "./links.js";
import { mcpWhere, renderSide } from "./side.js";
import { state } from "./state.js";

export async function folderPage(name) {
  state.docs.delete(name);
  await renderSide(name);
  const folder = state.folders.find((f) => f.name === name);
  if (!folder) {
    fill($("#main"), h("h1", {}, "No such folder"), h("p", {}, name));
    return;
  }
  const docs = state.docs.get(name) || [];
  const recent = [...docs].sort((a, b) => b.mtime_ms - a.mtime_ms).slice(0, 12);
  fill($("#main"),
    h("h1", {}, folder.title),
    h("div", { class: "toolbar" },
      mcpWhere(folder, true),
      h("button", { onclick: () => newDocument(name) }, "New document"),
      h("label", { class: "button", for: "upload" }, "Upload"),
      h("input", { type: "file", id: "upload", accept: ".md,.markdown,.mdx", multiple: true, class: "sr-only", onchange: (event) => upload(name, event.target.files) }),
      h("button", { onclick: () => mcpConfig(folder) }, "Copy MCP config"),
    ),
    h("h2", {}, "Recently changed"),
    recent.length
      ? h("ul", { class: "hits" }, recent.map((doc) => h("li", {}, h("a", { href: docHref(doc.path) }, doc.title), h("div", { class: "where" }, doc.path))))
      : h("p", { class: "empty" }, "No documents yet."),
  );
}

// Each file as a new document; one that exists is replaced only when the person says so.
async function upload(folder, list) {
  let done = 0;
  for (const file of list) {
    const path = `${folder}/${file.name}`;
    try {
      await api("POST", "/api/doc", { path, text: await file.text() });
      done += 1;
    } catch (error) {
      if (error.status !== 409) {
        toast(`${file.name}: ${error.message}`);
        continue;
      }
      const { button } = await ask(`${file.name} exists`, h("p", {}, `${path} is already there. Replace it?`), [["skip", "Keep it"], ["replace", "Replace", "danger"]]);
      if (button !== "replace") continue;
      try {
        await api("POST", "/api/doc", { path, text: await file.text(), overwrite: true });
        done += 1;
      } catch (again) {
        toast(`${file.name}: ${again.message}`);
      }
    }
  }
  toast(`Uploaded ${plural(done, "document")}`);
  await folderPage(folder);
}

async function mcpConfig(folder) {
  const url = `${location.origin}${folder.mcp_path}`;
  const line = `claude mcp add --transport http ${folder.name} ${url} --header "Authorization: Bearer <RAGDOWN_TOKEN>"`;
  const entry = JSON.stringify({ mcpServers: { [folder.name]: { type: "http", url, headers: { Authorization: "Bearer <RAGDOWN_TOKEN>" } } } }, null, 2);
  const note = folder.mcp ? null : h("p", { class: "notice" }, "MCP is off for this folder: turn it on before an agent connects.");
  const { button } = await ask(`Connect an agent to ${folder.title}`, [
    note, h("p", {}, "Claude Code:"), h("pre", { id: "mcp-line" }, line),
    h("p", {}, "Or a JSON entry:"), h("pre", { id: "mcp-json" }, entry),
    h("p", { class: "empty" }, "Replace <RAGDOWN_TOKEN> with the agents' token (or the folder's own)."),
  ], [["close", "Close"], ["json", "Copy JSON"], ["line", "Copy command", "primary"]]);
  if (button === "line") await copy(line);
  if (button === "json") await copy(entry);
}

async function newDocument(folder, subfolder = "") {
  const { button, values } = await ask("New document", [
    h("label", { for: "nd-title" }, "Title"), h("input", { type: "text", id: "nd-title", name: "title", required: true }),
    h("label", { for: "nd-sub" }, "Subfolder (optional, made if missing)"), h("input", { type: "text", id: "nd-sub", name: "sub", value: subfolder }),
  ], [["cancel", "Cancel"], ["create", "Create", "primary"]]);
  if (button !== "create" || !values.title.trim()) return;
  const title = values.title.trim();
  const file = `${title.replace(/[\\/:*?"<>|#^[\]]+/g, " ").trim()}.md`;
  const path = [folder, ...values.sub.split("/").filter(Boolean), file].join("/");
  try {
    await api("POST", "/api/doc", { path, text: `# ${title}\n` });
    state.docs.delete(folder);
    location.hash = editHref(path);
  } catch (error) {
    if (error.status === 409) {
      const open = await ask("That name is taken", h("p", {}, `${path} already exists.`), [["cancel", "Cancel"], ["open", "Open it", "primary"]]);
      if (open.button === "open") location.hash = docHref(path);
    } else toast(error.message);
  }
}
