// The first screen: every folder, a new one, and the Markdown lying outside every folder.
import { api, q } from "./api.js";
import { $, ask, fill, h, plural, toast } from "./dom.js";
import { folderHref } from "./links.js";
import { mcpWhere, renderSide } from "./side.js";
import { state } from "./state.js";

export async function home() {
  const data = await renderSide(null);
  const main = $("#main");
  const rows = state.folders.map((folder) => h(
    "li", {},
    h("a", { href: folderHref(folder.name) }, folder.title),
    h("span", { class: "count" }, `${plural(folder.files, "document")}, ${plural(folder.chunks, "section")}`),
    mcpWhere(folder),
  ));
  fill(main,
    h("h1", {}, "Folders"),
    rows.length ? h("ul", { class: "folders" }, rows) : h("p", { class: "empty" }, "No folders yet: a folder is a directory at the top of the docs dir."),
    h("div", { class: "toolbar" }, h("button", { onclick: newFolder }, "New folder")),
    data.loose_files?.length
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
    await home();
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
    location.hash = folderHref(data.folder.name);
  } catch (error) {
    toast(error.message);
  }
}
