// Marking a search's hits from the Usage section (docs/web.md#marking-hits): a person picks the hit
// that answers a query, or says none does, and the folder's golden file (.ragdown-golden.jsonl, which
// `ragdown eval` scores) gets or updates that query's line through /api/golden.
import { api, q } from "./api.js";
import { ask, h, toast } from "./dom.js";

// The folder a logged search belongs to: its top folder (a sub-folder endpoint logs `ops/db`). A
// search over every folder has none and cannot be marked.
const topFolder = (search) => (search.folder || "").split("/")[0];
const fold = (text) => text.split(/\s+/).filter(Boolean).join(" ").toLowerCase();

// The button beside a search, with a place for what the golden set says of it.
export function markButton(search) {
  const folder = topFolder(search);
  if (!folder) return null;
  const status = h("span", { class: "golden-status", "data-folder": folder, "data-query": fold(search.query) });
  const button = h("button", { type: "button", class: "link", onclick: () => markHits(folder, search.query, status) }, "Mark hits");
  return [" · ", button, " ", status];
}

// Each listed search's standing in its folder's golden set, once the files are read.
export async function showMarks(section) {
  const statuses = [...section.querySelectorAll(".golden-status")];
  const folders = [...new Set(statuses.map((s) => s.dataset.folder))];
  for (const folder of folders) {
    let golden;
    try {
      golden = await api("GET", `/api/golden?${q({ folder })}`);
    } catch {
      continue; // the list works without it
    }
    const lines = new Map(golden.lines.map((line) => [fold(line.query), line]));
    for (const status of statuses.filter((s) => s.dataset.folder === folder)) {
      const line = lines.get(status.dataset.query);
      if (line) status.textContent = standing(line);
    }
  }
}

function standing(line) {
  const how = line.unanswerable ? "marked unanswerable" : `answer: ${line.expected.join(", ")}`;
  return line.draft ? `draft, ${how}` : how;
}

async function markHits(folder, query, status) {
  let found;
  try {
    found = await api("GET", `/api/golden/hits?${q({ folder, q: query })}`);
  } catch (error) {
    toast(error.message);
    return;
  }
  const choices = found.hits.map((hit, n) => h("label", { class: "mark-hit" },
    h("input", { type: "radio", name: "target", value: hit.target, checked: n === 0 ? true : null }),
    h("span", {}, h("strong", {}, hit.breadcrumb || hit.path), " ", h("code", {}, hit.target), h("br"), h("small", {}, hit.snippet))));
  const body = [
    h("p", {}, `In ${folder}: pick the hit that answers “${query}”. It goes into ${folder}/.ragdown-golden.jsonl, the questions ragdown eval scores.`),
    status.textContent ? h("p", {}, `Now: ${status.textContent}.`) : null,
    choices.length ? h("fieldset", { class: "mark-hits" }, h("legend", {}, "Hits"), choices) : h("p", { class: "empty" }, "The search finds nothing in this folder now."),
  ];
  const buttons = [["cancel", "Cancel"], ["none", "None of these is right"]];
  if (choices.length) buttons.push(["right", "Mark as right", "primary"]);
  const { button, values } = await ask(`Mark the hits of “${query}”`, body, buttons);
  if (button !== "right" && button !== "none") return;
  const mark = button === "right" ? { target: values.target } : { unanswerable: true };
  try {
    const done = await api("POST", "/api/golden", { folder, query, ...mark });
    status.textContent = standing(done.line);
    toast(`Marked in ${done.file}`);
  } catch (error) {
    toast(error.message);
  }
}
