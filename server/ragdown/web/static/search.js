// The search screen: a folder's hits for the bar's query (within a tag when one is given), or a
// tag's page: the documents carrying it.
import { api, q } from "./api.js";
import { $, fill, h, plural } from "./dom.js";
import { docHref } from "./links.js";
import { renderSide } from "./side.js";

function escapeRegExp(text) {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

// The hit's text with the query's words marked (as text nodes: nothing in it is read as HTML).
function highlighted(text, query) {
  const words = query.split(/\s+/).filter((w) => w.length > 1).map(escapeRegExp);
  const node = h("p", { class: "snippet" });
  if (!words.length) {
    node.textContent = text;
    return node;
  }
  const pattern = new RegExp(`(${words.join("|")})`, "gi");
  for (const [i, part] of text.split(pattern).entries()) node.append(i % 2 ? h("mark", {}, part) : part);
  return node;
}

export async function searchPage(folder, params) {
  await renderSide(folder);
  const query = params.get("q") || "";
  const tag = params.get("tag") || "";
  $("#search-input").value = query;
  if (tag && !query) return tagPage(folder, tag);
  const main = $("#main");
  fill(main, h("h1", {}, tag ? `#${tag}: ${query}` : `Search: ${query}`), h("p", { class: "empty" }, "Searching…"));
  let hits;
  try {
    hits = (await api("GET", `/api/search?${q({ folder, q: query, tag, top_k: 20 })}`)).hits;
  } catch (error) {
    main.lastChild.textContent = error.message;
    return;
  }
  // `snippet` is the hit's text as a reader sees it, without the Markdown's syntax (docs/web.md#search).
  const list = h("ol", { class: "hits" }, hits.map((hit) => h(
    "li", {},
    h("a", { href: docHref(hit.path, `?line=${hit.line_start}`) }, hit.breadcrumb),
    h("div", { class: "where" }, `${hit.path}:${hit.line_start}–${hit.line_end} · similarity ${hit.similarity.toFixed(2)}`),
    highlighted((hit.snippet ?? hit.text).slice(0, 600), query),
  )));
  fill(main, main.firstChild, hits.length ? list : h("p", { class: "empty" }, "No matching sections."));
}

const tagHref = (folder, tag) => `#/search/${encodeURIComponent(folder)}?${q({ tag })}`;

// A tag's page: the folder's documents carrying it (or a tag under it), by title, with their tags.
async function tagPage(folder, tag) {
  const main = $("#main");
  fill(main, h("h1", {}, `#${tag}`), h("p", { class: "empty" }, "Loading…"));
  let docs;
  try {
    docs = (await api("GET", `/api/docs?${q({ folder, tag })}`)).docs;
  } catch (error) {
    main.lastChild.textContent = error.message;
    return;
  }
  docs.sort((a, b) => a.title.localeCompare(b.title, undefined, { sensitivity: "base" }) || a.path.localeCompare(b.path));
  const list = h("ul", { class: "tagged" }, docs.map((doc) => h("li", {},
    h("a", { href: docHref(doc.path) }, doc.title),
    h("div", { class: "where" }, doc.path),
    doc.tags.length ? h("div", { class: "chips" }, doc.tags.map((t) => h("a", { class: "tag", href: tagHref(folder, t) }, `#${t}`))) : null)));
  fill(main, main.firstChild,
    h("p", { class: "count-line" }, `${plural(docs.length, "document")} tagged #${tag} in ${folder}`),
    docs.length ? list : h("p", { class: "empty" }, "No document carries this tag."));
}
