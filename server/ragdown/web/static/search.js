// The search screen: a folder's hits for the bar's query, or the sections carrying a tag.
import { api, q } from "./api.js";
import { $, h } from "./dom.js";
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
  const main = $("#main");
  main.replaceChildren(h("h1", {}, tag ? `#${tag}` : `Search: ${query}`), h("p", { class: "empty" }, "Searching…"));
  let hits;
  try {
    hits = (await api("GET", `/api/search?${q({ folder, q: query || tag, tag, top_k: 20 })}`)).hits;
  } catch (error) {
    main.lastChild.textContent = error.message;
    return;
  }
  const list = h("ol", { class: "hits" }, hits.map((hit) => h(
    "li", {},
    h("a", { href: docHref(hit.path, `?line=${hit.line_start}`) }, hit.breadcrumb),
    h("div", { class: "where" }, `${hit.path}:${hit.line_start}–${hit.line_end} · similarity ${hit.similarity.toFixed(2)}`),
    highlighted(hit.text.slice(0, 600), query),
  )));
  main.replaceChildren(h("h1", {}, tag ? `#${tag}` : `Search: ${query}`), hits.length ? list : h("p", { class: "empty" }, "No matching sections."));
}
