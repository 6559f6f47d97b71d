// ragdown's web UI (docs/web.md): a hash-routed page over the admin API. No framework and no build
// step: the server renders Markdown (sanitised), this file fetches, places and wires it up.
"use strict";

// Where an older page kept the admin token: removed on load. The session is now an HttpOnly cookie
// the server sets (docs/web.md#sign-in), which no script — this one included — can read.
localStorage.removeItem("ragdown-token");
// Every id in a rendered document starts with this (web/render.py), so none can take the page's own.
const ID_PREFIX = "user-content-";
const $ = (selector, root = document) => root.querySelector(selector);
const state = { folders: [], docs: new Map(), folder: null, dirty: false, signedIn: false };

// --- talking to the server -------------------------------------------------------------------

class ApiError extends Error {
  constructor(status, body) {
    super((body && body.error) || `HTTP ${status}`);
    this.status = status;
    this.code = body && body.code;
    this.body = body;
  }
}

async function api(method, path, body) {
  const headers = {};
  const init = { method, headers, credentials: "same-origin" };
  if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const response = await fetch(path, init);
  const data = response.headers.get("content-type")?.includes("json") ? await response.json() : null;
  if (response.status === 401) {
    showLogin(state.signedIn ? "The session has ended: sign in again." : "");
    throw new ApiError(401, data);
  }
  if (!response.ok) throw new ApiError(response.status, data);
  state.signedIn = true;
  return data;
}

const q = (params) => new URLSearchParams(params).toString();

// A file of a folder, straight from the server: the session cookie goes along, and the answer
// carries the server's sandboxing CSP. Never re-hosted (no blob: URLs): a re-hosted SVG would run
// its script as this page.
const fileUrl = (path) => `/api/file?${q({ path })}`;

// --- small helpers ---------------------------------------------------------------------------

function h(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes)) {
    if (value === false || value === null || value === undefined) continue;
    if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children.flat(Infinity)) {
    if (child !== null && child !== undefined && child !== false) {
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
  }
  return node;
}

function toast(message) {
  const box = $("#toast");
  box.textContent = message;
  box.classList.add("show");
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => box.classList.remove("show"), 2600);
}

function docHref(path, extra = "") {
  return `#/doc/${path.split("/").map(encodeURIComponent).join("/")}${extra}`;
}

function plural(count, noun) {
  return `${count} ${noun}${count === 1 ? "" : "s"}`;
}

function folderOf(path) {
  return path.split("/", 1)[0];
}

// A dialog built from fields; resolves with the button pressed and the form's values.
function ask(title, body, buttons) {
  const dialog = $("#dialog");
  const form = $("#dialog-form");
  form.replaceChildren(h("h2", {}, title), ...[].concat(body).filter((node) => node));
  const actions = h("div", { class: "actions" });
  for (const [value, label, kind] of buttons) {
    actions.append(h("button", { value, class: kind || "", type: "submit" }, label));
  }
  form.append(actions);
  return new Promise((resolve) => {
    dialog.onclose = () => {
      const values = Object.fromEntries(new FormData(form));
      resolve({ button: dialog.returnValue, values });
    };
    dialog.returnValue = "";
    dialog.showModal();
    const first = form.querySelector("input, textarea, button.primary");
    if (first) first.focus();
  });
}

function escapeRegExp(text) {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

function highlighted(text, query) {
  const words = query.split(/\s+/).filter((w) => w.length > 1).map(escapeRegExp);
  const node = h("p", { class: "snippet" });
  if (!words.length) {
    node.textContent = text;
    return node;
  }
  const pattern = new RegExp(`(${words.join("|")})`, "gi");
  text.split(pattern).forEach((part, i) => node.append(i % 2 ? h("mark", {}, part) : part));
  return node;
}

async function copy(text) {
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    // Plain HTTP on another host has no clipboard API: select it so Ctrl/Cmd+C works.
    const area = h("textarea", {}, text);
    document.body.append(area);
    area.select();
    document.execCommand("copy");
    area.remove();
  }
  toast("Copied");
}

// --- sign-in ---------------------------------------------------------------------------------

function showLogin(message) {
  $("#side").replaceChildren();
  $("#search-form").hidden = true;
  const input = h("input", { type: "password", id: "token", autocomplete: "current-password", required: true });
  const form = h(
    "form",
    { class: "login", onsubmit: async (event) => {
      event.preventDefault();
      const response = await fetch("/api/session", {
        method: "POST", credentials: "same-origin",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ token: input.value.trim() }),
      });
      input.value = "";
      if (!response.ok) {
        const data = await response.json().catch(() => null);
        $(".error", form).textContent = (data && data.error) || `HTTP ${response.status}`;
        return;
      }
      state.signedIn = true;
      route();
    } },
    h("h1", {}, "Sign in to ragdown"),
    h("label", { for: "token" }, "Admin token (RAGDOWN_ADMIN_TOKEN)"),
    input,
    h("p", { class: "error", role: "alert" }, message || ""),
    h("button", { class: "primary", type: "submit" }, "Sign in"),
    h("p", { class: "empty" }, "The token is sent once; the server keeps this browser signed in for 12 hours, or until Sign out."),
  );
  $("#main").replaceChildren(form);
  input.focus();
}

// --- the side bar: folders, and the open folder's documents ------------------------------------

async function loadFolders() {
  const data = await api("GET", "/api/folders");
  state.folders = data.folders;
  state.loose = data.loose_files || [];
  return data;
}

async function loadDocs(folder) {
  const data = await api("GET", `/api/docs?${q({ folder })}`);
  state.docs.set(folder, data.docs);
  return data.docs;
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

async function renderSide(folderName, current) {
  if (!state.folders.length) await loadFolders();
  const side = $("#side");
  const items = state.folders.map((folder) => h(
    "li", {},
    h("a", { href: `#/folder/${encodeURIComponent(folder.name)}`, "aria-current": folder.name === folderName ? "page" : false }, folder.title),
    h("span", { class: "count" }, String(folder.files)),
    mcpSwitch(folder),
  ));
  side.replaceChildren(h("h2", {}, "Folders"), h("ul", { class: "folders" }, items));
  if (folderName) {
    const docs = state.docs.get(folderName) || (await loadDocs(folderName));
    side.append(h("h2", {}, "Documents"), docs.length ? tree(docs, current) : h("p", { class: "empty" }, "No documents yet."));
  }
  const search = $("#search-form");
  search.hidden = !folderName;
  state.folder = folderName;
}

// --- screens ---------------------------------------------------------------------------------

async function home() {
  const data = await loadFolders();
  await renderSide(null);
  const main = $("#main");
  const rows = state.folders.map((folder) => h(
    "li", {},
    h("a", { href: `#/folder/${encodeURIComponent(folder.name)}` }, folder.title),
    h("span", { class: "count" }, `${plural(folder.files, "document")}, ${plural(folder.chunks, "section")}`),
    folder.mcp ? h("span", { class: "chip" }, folder.mcp_path) : h("span", { class: "chip" }, "human-only"),
  ));
  main.replaceChildren(
    h("h1", {}, "Folders"),
    rows.length ? h("ul", { class: "folders" }, rows) : h("p", { class: "empty" }, "No folders yet: a folder is a directory at the top of the docs dir."),
    h("div", { class: "toolbar" }, h("button", { onclick: newFolder }, "New folder")),
    data.loose_files && data.loose_files.length
      ? h("div", { class: "notice" }, h("p", {}, "Markdown outside every folder is not indexed: move it into a folder, or delete it."),
        h("ul", {}, data.loose_files.map((name) => h("li", {}, name, " ", h("button", { class: "link", onclick: () => deleteLoose(name) }, `Delete ${name}`)))))
      : null,
  );
}

async function deleteLoose(name) {
  const { button } = await ask(`Delete ${name}?`, h("p", {}, "It is deleted from the top of the docs dir. There is no trash."), [["cancel", "Cancel"], ["delete", "Delete", "danger"]]);
  if (button !== "delete") return;
  try {
    await api("DELETE", `/api/loose?${q({ name })}`);
    home();
  } catch (error) {
    toast(error.message);
  }
}

async function newFolder() {
  const { button, values } = await ask("New folder", [
    h("label", { for: "nf-name" }, "Name (the directory)"), h("input", { type: "text", id: "nf-name", name: "name", required: true }),
    h("label", { for: "nf-title" }, "Title"), h("input", { type: "text", id: "nf-title", name: "title" }),
  ], [["cancel", "Cancel"], ["create", "Create", "primary"]]);
  if (button !== "create") return;
  try {
    const data = await api("POST", "/api/folders", { name: values.name, title: values.title || null });
    state.folders = [];
    location.hash = `#/folder/${encodeURIComponent(data.folder.name)}`;
  } catch (error) {
    toast(error.message);
  }
}

async function folderPage(name) {
  state.docs.delete(name);
  await renderSide(name);
  const folder = state.folders.find((f) => f.name === name);
  if (!folder) {
    $("#main").replaceChildren(h("h1", {}, "No such folder"), h("p", {}, name));
    return;
  }
  const docs = state.docs.get(name) || [];
  const recent = [...docs].sort((a, b) => b.mtime_ms - a.mtime_ms).slice(0, 12);
  $("#main").replaceChildren(
    h("h1", {}, folder.title),
    h("div", { class: "toolbar" },
      h("span", { class: "path" }, folder.mcp ? `${location.origin}${folder.mcp_path}` : "human-only: agents cannot reach it"),
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

async function upload(folder, list) {
  let done = 0;
  for (const file of list) {
    try {
      await api("POST", "/api/doc", { path: `${folder}/${file.name}`, text: await file.text() });
      done += 1;
    } catch (error) {
      if (error.status !== 409) {
        toast(`${file.name}: ${error.message}`);
        continue;
      }
      const { button } = await ask(`${file.name} exists`, h("p", {}, `${folder}/${file.name} is already there. Replace it?`), [["skip", "Keep it"], ["replace", "Replace", "danger"]]);
      if (button === "replace") {
        await api("POST", "/api/doc", { path: `${folder}/${file.name}`, text: await file.text(), overwrite: true });
        done += 1;
      }
    }
  }
  toast(`Uploaded ${plural(done, "document")}`);
  folderPage(folder);
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
    location.hash = `#/edit/${path.split("/").map(encodeURIComponent).join("/")}`;
  } catch (error) {
    if (error.status === 409) {
      const open = await ask("That name is taken", h("p", {}, `${path} already exists.`), [["cancel", "Cancel"], ["open", "Open it", "primary"]]);
      if (open.button === "open") location.hash = docHref(path);
    } else toast(error.message);
  }
}

async function loadImages(root) {
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
function followAnchors(root, path) {
  root.addEventListener("click", (event) => {
    const link = event.target.closest("a[href^='#']");
    const href = link && link.getAttribute("href");
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
    shownHash = location.hash;
    jumpTo(root, null, bare);
  });
}

function jumpTo(root, line, anchor) {
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

async function docPage(path, anchor, line) {
  const folder = folderOf(path);
  await renderSide(folder, path);
  let doc;
  try {
    doc = await api("GET", `/api/render?${q({ path })}`);
  } catch (error) {
    $("#main").replaceChildren(h("h1", {}, "Not found"), h("p", {}, error.message));
    return;
  }
  const body = h("article", { class: "doc" });
  body.innerHTML = doc.html; // sanitised by the server (docs/web.md#rendering)
  const chips = [...doc.tags.map((tag) => h("a", { class: "tag", href: `#/search/${encodeURIComponent(folder)}?${q({ tag })}` }, `#${tag}`)),
    ...doc.aliases.map((alias) => h("span", { class: "chip", title: "alias" }, alias))];
  const links = doc.backlinks.map((b) => h("li", {}, h("a", { href: docHref(b.path, `?line=${b.lines[0] ? b.lines[0].line : 1}`) }, b.title),
    b.lines.slice(0, 3).map((l) => h("span", { class: "line" }, `${l.line}: ${l.text}`))));
  $("#main").replaceChildren(
    h("div", { class: "toolbar" },
      h("span", { class: "path" }, path),
      h("a", { class: "button", href: `#/edit/${path.split("/").map(encodeURIComponent).join("/")}` }, "Edit"),
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
  await loadImages(body);
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
    location.hash = `#/folder/${encodeURIComponent(folderOf(path))}`;
  } catch (error) {
    toast(error.code === "changed" ? "It changed on disk since you opened it: nothing was deleted" : error.message);
  }
}

async function searchPage(folder, params) {
  await renderSide(folder);
  const query = params.get("q") || "";
  const tag = params.get("tag") || "";
  $("#search-input").value = query;
  const main = $("#main");
  main.replaceChildren(h("h1", {}, tag ? `#${tag}` : `Search: ${query}`), h("p", { class: "empty" }, "Searching…"));
  let hits = [];
  try {
    hits = (await api("GET", `/api/search?${q({ folder, q: query || tag, tag, top_k: 20 })}`)).hits;
  } catch (error) {
    main.lastChild.textContent = error.message;
    return;
  }
  const list = h("ol", { class: "hits" }, hits.map((hit) => h(
    "li", {},
    h("a", { href: docHref(hit.path, `?line=${hit.line_start}`) }, hit.heading || hit.title),
    h("div", { class: "where" }, `${hit.path}:${hit.line_start}–${hit.line_end} · similarity ${hit.similarity.toFixed(2)}`),
    highlighted(hit.text.slice(0, 600), query),
  )));
  main.replaceChildren(h("h1", {}, tag ? `#${tag}` : `Search: ${query}`), hits.length ? list : h("p", { class: "empty" }, "No matching sections."));
}

// --- the editor ------------------------------------------------------------------------------

function completion(textarea, names) {
  const menu = h("ul", { class: "complete", role: "listbox", hidden: true });
  let choices = [];
  let chosen = 0;
  textarea.after(menu);
  const open = () => {
    const before = textarea.value.slice(0, textarea.selectionStart);
    const match = /\[\[([^\]\n|#]*)$/.exec(before);
    if (!match) return (menu.hidden = true);
    const typed = match[1].toLowerCase();
    choices = names.filter((n) => n.toLowerCase().includes(typed)).slice(0, 8);
    if (!choices.length) return (menu.hidden = true);
    chosen = 0;
    menu.replaceChildren(...choices.map((name, i) => h("li", { role: "option", "aria-selected": String(i === chosen), onmousedown: (e) => { e.preventDefault(); accept(i); } }, name)));
    menu.style.left = `${textarea.offsetLeft + 16}px`;
    menu.style.top = `${textarea.offsetTop + 40}px`;
    menu.hidden = false;
  };
  const accept = (i) => {
    const caret = textarea.selectionStart;
    const before = textarea.value.slice(0, caret).replace(/\[\[([^\]\n|#]*)$/, `[[${choices[i]}]]`);
    textarea.value = before + textarea.value.slice(caret).replace(/^\]\]/, "");
    textarea.selectionStart = textarea.selectionEnd = before.length;
    menu.hidden = true;
    textarea.dispatchEvent(new Event("input"));
  };
  textarea.addEventListener("input", open);
  textarea.addEventListener("keydown", (event) => {
    if (menu.hidden) return;
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      event.preventDefault();
      chosen = (chosen + (event.key === "ArrowDown" ? 1 : choices.length - 1)) % choices.length;
      [...menu.children].forEach((li, i) => li.setAttribute("aria-selected", String(i === chosen)));
    } else if (event.key === "Enter" || event.key === "Tab") {
      event.preventDefault();
      accept(chosen);
    } else if (event.key === "Escape") menu.hidden = true;
  });
}

async function editPage(path) {
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
  const save = async (overwrite) => {
    try {
      const saved = await api("POST", "/api/doc", { path, text: area.value, base_hash: overwrite || baseHash });
      baseHash = saved.hash;
      doc.text = area.value;
      setDirty(false);
      toast("Saved");
    } catch (error) {
      if (error.code !== "changed") return toast(error.message);
      const now = await api("GET", `/api/doc?${q({ path })}`);
      const choice = await ask("It changed on disk", h("p", {}, `${path} was changed since you opened it (by an agent, another window or a sync). Save over it, or discard your edit and load what is there now?`),
        [["cancel", "Keep editing"], ["discard", "Discard my edit", "danger"], ["overwrite", "Save over it", "primary"]]);
      if (choice.button === "overwrite") await save(now.hash);
      if (choice.button === "discard") {
        area.value = doc.text = now.text;
        baseHash = now.hash;
        setDirty(false);
      }
    }
  };
  area.addEventListener("keydown", (event) => {
    if ((event.ctrlKey || event.metaKey) && event.key.toLowerCase() === "s") {
      event.preventDefault();
      save();
    }
  });
  const toggle = h("button", { "aria-pressed": "false", onclick: async () => {
    const showing = preview.hidden;
    if (showing) {
      const rendered = await api("POST", "/api/preview", { path, text: area.value });
      preview.innerHTML = rendered.html; // sanitised by the server
      await loadImages(preview);
    }
    preview.hidden = !showing;
    area.hidden = showing;
    toggle.textContent = showing ? "Write" : "Preview";
    toggle.setAttribute("aria-pressed", String(showing));
  } }, "Preview");
  const names = (state.docs.get(folder) || []).map((d) => d.path.split("/").pop().replace(/\.(md|markdown|mdx)$/, ""));
  $("#main").replaceChildren(
    h("div", { class: "toolbar" }, status, toggle,
      h("a", { class: "button", href: docHref(path) }, "Close"),
      h("button", { class: "primary", onclick: () => save() }, "Save")),
    h("div", { class: "editor" }, area, preview),
  );
  completion(area, names);
  area.focus();
  setDirty(false);
}

// --- settings ---------------------------------------------------------------------------------

function describe(rows) {
  return h("dl", {}, rows.map(([k, v]) => [h("dt", {}, k), h("dd", {}, String(v))]));
}

async function settingsPage() {
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
      usageSection(usage),
      h("section", { "aria-label": "Folders" }, h("h2", {}, "Folders"), state.folders.map((folder) => folderSettings(folder)))),
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
    h("input", { type: "number", step: "any", id: `ss-hook-${key}`, name: `hook.${key}`, value: (data.saved.hook || {})[key] ?? "", placeholder: String(hook[key]) })));
  const form = h("form", { class: "editor", "aria-label": "Server settings", onsubmit: async (event) => {
    event.preventDefault();
    const change = {};
    for (const [key, , type] of SERVER_FIELDS) {
      const field = form.elements[key];
      const value = type === "checkbox" ? field.checked : type === "number" ? Number(field.value) : field.value.trim();
      if (value !== data.settings[key] && !(type === "text" && value === "")) change[key] = value;
    }
    const hookChange = {};
    for (const [key] of HOOK_FIELDS) {
      const raw = form.elements[`hook.${key}`].value;
      const before = (data.saved.hook || {})[key];
      if ((raw === "" ? undefined : Number(raw)) !== before) hookChange[key] = raw === "" ? null : Number(raw);
    }
    if (Object.keys(hookChange).length) change.hook = hookChange;
    if (!Object.keys(change).length) return toast("Nothing changed");
    saveServer(change);
  } },
  h("h3", {}, "Saved over the environment"),
  h("p", { class: "empty" }, "Saved in .ragdown-server.json in the docs dir: in effect at once and after a restart, until you give a setting back to its variable."),
  rows, hooks,
  h("div", {}, h("button", { class: "primary", type: "submit" }, "Save server settings")));
  return form;
}

async function saveServer(change) {
  try {
    await api("PATCH", "/api/settings", change);
    toast(change.embedder ? "Saved; the index is being rebuilt with the new embedder" : "Saved");
    settingsPage();
  } catch (error) {
    toast(error.message);
  }
}

function usageSection(usage) {
  const summary = usage.summary;
  const rate = summary.hook_rate === null ? "no hook calls" : `${Math.round(summary.hook_rate * 100)}% of ${plural(summary.hook_calls, "call")}`;
  const gaps = summary.gaps.map((gap) => h("li", {}, h("strong", {}, gap.query), ` · ${gap.folder || "every folder"} · ${plural(gap.count, "time")} · best ${gap.best === null ? "nothing found" : gap.best.toFixed(2)}`));
  const reads = summary.most_read.map((read) => h("li", {}, h("a", { href: docHref(read.path) }, read.path), ` · ${plural(read.reads, "read")}, ${read.after_search} after a search`));
  return h("section", { "aria-label": "Usage" }, h("h2", {}, "Usage"),
    usage.enabled ? null : h("p", { class: "notice" }, "The query log is off (RAGDOWN_QUERY_LOG=true turns it on); what it holds from before is shown."),
    describe([["searches", summary.searches], ["hook added context", rate], ["documents read", summary.reads]]),
    h("h3", {}, "Gaps: searches that found nothing good enough"),
    gaps.length ? h("ul", {}, gaps) : h("p", { class: "empty" }, "None."),
    h("h3", {}, "Most read"),
    reads.length ? h("ul", {}, reads) : h("p", { class: "empty" }, "Nothing read yet."),
    h("button", { onclick: async () => {
      const { button } = await ask("Empty the query log?", h("p", {}, "Every logged search, hook call and read is removed."), [["cancel", "Cancel"], ["clear", "Empty it", "danger"]]);
      if (button === "clear") {
        await api("DELETE", "/api/query-log");
        settingsPage();
      }
    } }, "Empty the query log"));
}

function folderSettings(folder) {
  const id = (name) => `fs-${folder.name}-${name}`;
  const field = (label, name, value, type = "text") => [h("label", { for: id(name) }, label),
    h("input", { type, id: id(name), name, value: value ?? "", step: "any" })];
  const check = (label, name, value) => h("label", { for: id(name) }, h("input", { type: "checkbox", id: id(name), name, checked: Boolean(value) }), ` ${label}`);
  const managed = Boolean(folder.managed_by);
  const form = h("form", { class: "editor", "aria-label": `Settings of ${folder.name}`, onsubmit: async (event) => {
    event.preventDefault();
    const data = new FormData(form);
    const number = (v) => (v === "" ? null : Number(v));
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
      settingsPage();
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
    h("button", { type: "button", class: "danger", disabled: managed, onclick: () => deleteFolder(folder) }, "Delete folder")));
  return form;
}

async function deleteFolder(folder) {
  const { button, values } = await ask(`Delete ${folder.title}?`, [
    h("p", {}, `Every file in ${folder.name}/ is deleted from the disk, attachments included. There is no trash.`),
    h("label", { for: "df-confirm" }, `Type ${folder.name} to confirm`), h("input", { type: "text", id: "df-confirm", name: "confirm" }),
  ], [["cancel", "Cancel"], ["delete", "Delete folder", "danger"]]);
  if (button !== "delete") return;
  try {
    await api("DELETE", `/api/folders/${encodeURIComponent(folder.name)}?${q({ confirm: values.confirm })}`);
    state.folders = [];
    toast("Folder deleted");
    settingsPage();
  } catch (error) {
    toast(error.message);
  }
}

// --- routing ---------------------------------------------------------------------------------

function parse() {
  const raw = location.hash.slice(1) || "/";
  const [pathPart, anchor] = raw.split("#");
  const [path, query] = pathPart.split("?");
  const parts = path.split("/").filter(Boolean).map(decodeURIComponent);
  let decoded = anchor || null;
  try {
    decoded = decoded && decodeURIComponent(decoded);
  } catch {
    // a stray `%`: the anchor as written
  }
  return { parts, params: new URLSearchParams(query || ""), anchor: decoded };
}

async function route() {
  // Without a session the first call answers 401, which shows the sign-in; a server on a trusted
  // network (SECURE_LOCAL_NET) asks for none.
  const { parts, params, anchor } = parse();
  const [screen, ...rest] = parts;
  try {
    if (screen === "folder") await folderPage(rest.join("/"));
    else if (screen === "doc") await docPage(rest.join("/"), anchor, Number(params.get("line")) || null);
    else if (screen === "edit") await editPage(rest.join("/"));
    else if (screen === "search") await searchPage(rest.join("/"), params);
    else if (screen === "settings") await settingsPage();
    else await home();
  } catch (error) {
    if (error.status !== 401) $("#main").replaceChildren(h("h1", {}, "Something went wrong"), h("p", { class: "error" }, error.message));
  }
  $("#main").focus({ preventScroll: true });
}

let shownHash = location.hash;
window.addEventListener("hashchange", () => {
  if (state.dirty && !confirm("Leave without saving your changes?")) {
    history.replaceState(null, "", shownHash);
    return;
  }
  state.dirty = false;
  shownHash = location.hash;
  route();
});
window.addEventListener("beforeunload", (event) => {
  if (state.dirty) event.preventDefault();
});
document.addEventListener("keydown", (event) => {
  const typing = /^(INPUT|TEXTAREA|SELECT)$/.test(document.activeElement.tagName);
  if (event.key === "/" && !typing && !$("#search-form").hidden) {
    event.preventDefault();
    $("#search-input").focus();
  }
});
document.addEventListener("DOMContentLoaded", () => {
  $("#search-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const query = $("#search-input").value.trim();
    if (query && state.folder) location.hash = `#/search/${encodeURIComponent(state.folder)}?${q({ q: query })}`;
  });
  $("#sign-out").addEventListener("click", async () => {
    // The server ends the session (a copied cookie dies with it) and tells the browser to drop it.
    await fetch("/api/session", { method: "DELETE", credentials: "same-origin" }).catch(() => null);
    state.signedIn = false;
    showLogin();
  });
  route();
});
