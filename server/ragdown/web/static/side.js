// The side bar: the folders with their MCP switches, and the open folder's documents as a tree.
import { api, q } from "./api.js";
import { $, fill, h, toast } from "./dom.js";
import { docHref, folderHref } from "./links.js";
import { state } from "./state.js";

// The folders, into `state.folders`; the answer also names the Markdown files outside every folder.
export async function loadFolders() {
  const data = await api("GET", "/api/folders");
  state.folders = data.folders;
  return data;
}

async function loadDocs(folder) {
  const data = await api("GET", `/api/docs?${q({ folder })}`);
  state.docs.set(folder, data.docs);
  return data.docs;
}

// Where agents reach a folder, as the Folders screen (`long` false) and a folder's screen show it; the
// switch below rewrites every one on the screen when it turns MCP on or off.
export function mcpWhere(folder, long = false) {
  return h("span", { class: long ? "path" : "chip", "data-mcp": folder.name, "data-long": long }, mcpText(folder, long));
}

function mcpText(folder, long) {
  if (!folder.mcp) return long ? "human-only: agents cannot reach it" : "human-only";
  return long ? `${location.origin}${folder.mcp_path}` : folder.mcp_path;
}

function mcpSwitch(folder) {
  const box = h("input", {
    type: "checkbox",
    checked: folder.mcp,
    disabled: Boolean(folder.managed_by),
    "aria-label": `MCP for ${folder.name}`,
    onchange: async () => {
      try {
        const data = await api("PATCH", `/api/folders/${encodeURIComponent(folder.name)}`, { mcp: box.checked });
        folder.mcp = data.folder.mcp;
        folder.mcp_path = data.folder.mcp_path;
        for (const shown of document.querySelectorAll("[data-mcp]")) {
          if (shown.dataset.mcp === folder.name) shown.textContent = mcpText(folder, shown.hasAttribute("data-long"));
        }
        toast(folder.mcp ? `MCP on: ${data.folder.mcp_path}` : "MCP off");
      } catch (error) {
        box.checked = folder.mcp;
        toast(error.message);
      }
    },
  });
  return h("label", { class: "switch", title: folder.managed_by ? `managed by ${folder.managed_by}` : "" }, box, "MCP");
}

function tree(docs, current) {
  const root = { dirs: new Map(), files: [] };
  for (const doc of docs) {
    const parts = doc.path.split("/").slice(1);
    let node = root;
    for (const dir of parts.slice(0, -1)) {
      if (!node.dirs.has(dir)) node.dirs.set(dir, { dirs: new Map(), files: [] });
      node = node.dirs.get(dir);
    }
    node.files.push(doc);
  }
  const list = (node) => h(
    "ul", {},
    [...node.dirs.entries()].sort().map(([name, child]) => h("li", {}, h("div", { class: "dir" }, `${name}/`), list(child))),
    node.files.map((doc) => h("li", {}, h("a", {
      href: docHref(doc.path), "aria-current": doc.path === current ? "page" : false, title: doc.path,
    }, doc.title || doc.path.split("/").pop()))),
  );
  const top = list(root);
  top.classList.add("tree");
  return top;
}

// The bar for a screen: with `folderName`, that folder's documents too (`current` marked) and the
// search box, which then searches it. The folders are fetched afresh for each screen, so that their
// counts follow a document just made or deleted; the answer is returned (home.js shows the rest).
export async function renderSide(folderName, current) {
  const data = await loadFolders();
  const side = $("#side");
  const items = state.folders.map((folder) => h(
    "li", {},
    h("a", { href: folderHref(folder.name), "aria-current": folder.name === folderName ? "page" : false }, folder.title),
    h("span", { class: "count" }, String(folder.files)),
    mcpSwitch(folder),
  ));
  fill(side, h("h2", {}, "Folders"), h("ul", { class: "folders" }, items));
  if (folderName) {
    const docs = state.docs.get(folderName) || (await loadDocs(folderName));
    side.append(h("h2", {}, "Documents"), docs.length ? tree(docs, current) : h("p", { class: "empty" }, "No documents yet."));
  }
  const search = $("#search-form");
  search.hidden = !folderName;
  state.folder = folderName;
  return data;
}
