// The settings screen's usage section, from the query log (docs/web.md): how often the hook added
// context, the recent searches and those that found nothing good enough (each with its hits to mark
// for the folder's golden set), the documents read most, and charts of those per day.
import { api } from "./api.js";
import { barChart, shareChart } from "./charts.js";
import { $, ask, describe, h, plural, toast } from "./dom.js";
import { docHref } from "./links.js";
import { markButton, showMarks } from "./usage-marks.js";

// `refresh` shows the settings screen again once the log is emptied.
export function usageSection(usage, refresh) {
  const summary = usage.summary;
  const rate = summary.hook_rate === null ? "no hook calls" : `${Math.round(summary.hook_rate * 100)}% of ${plural(summary.hook_calls, "call")}`;
  const best = (value) => `best ${value === null ? "nothing found" : value.toFixed(2)}`;
  const gaps = summary.gaps.map((gap) => h("li", {}, h("strong", {}, gap.query), ` · ${gap.folder || "every folder"} · ${plural(gap.count, "time")} · ${best(gap.best)}`, markButton(gap)));
  const recent = (summary.recent || []).map((search) => h("li", {}, h("strong", {}, search.query), ` · ${search.folder || "every folder"} · ${plural(search.count, "time")} · ${best(search.best)}`, markButton(search)));
  const reads = summary.most_read.map((read) => h("li", {}, h("a", { href: docHref(read.path) }, read.path), ` · ${plural(read.reads, "read")}, ${read.after_search} after a search`));
  const section = h("section", { "aria-label": "Usage" }, h("h2", {}, "Usage"),
    usage.enabled ? null : logOff(),
    describe([["searches", summary.searches], ["hook added context", rate], ["documents read", summary.reads]]),
    dayCharts(summary.days || []),
    h("h3", {}, "Recent searches"),
    recent.length ? [h("p", {}, "Mark the hit that answers a search, or that none does: the folder's golden set grows, and ragdown eval measures the search on it."), h("ul", {}, recent)] : h("p", { class: "empty" }, "None yet."),
    h("h3", {}, "Gaps: searches that found nothing good enough"),
    gaps.length ? h("ul", {}, gaps) : h("p", { class: "empty" }, "None."),
    h("h3", {}, "Most read"),
    reads.length ? h("ul", {}, reads) : h("p", { class: "empty" }, "Nothing read yet."),
    h("button", { onclick: async () => {
      const { button } = await ask("Empty the query log?", h("p", {}, "Every logged search, hook call and read is removed."), [["cancel", "Cancel"], ["clear", "Empty it", "danger"]]);
      if (button !== "clear") return;
      try {
        await api("DELETE", "/api/query-log");
        await refresh();
      } catch (error) {
        toast(error.message);
      }
    } }, "Empty the query log"));
  void showMarks(section); // the statuses fill in once read; the section shows at once
  return section;
}

// The server settings' "Keep the query log" field above turns the log on; the variable is the
// deployment's way.
function logOff() {
  const show = () => {
    const box = $('[name="query_log"]');
    if (!box) return;
    box.scrollIntoView({ block: "center" });
    box.focus();
  };
  return h("p", { class: "notice" }, "The query log is off, so nothing new is counted: set ",
    h("button", { type: "button", class: "link", onclick: show }, "Keep the query log"),
    " to On in the server settings above (RAGDOWN_QUERY_LOG=true does it for a whole deployment). What it holds from before is shown.");
}

// Searches, hook calls and their gaps per UTC day, oldest first, as the server counted them.
function dayCharts(days) {
  if (!days.length) return null;
  const searches = days.map((d) => ({ day: d.day, total: d.searches, gap: d.gaps }));
  const hooks = days.map((d) => ({ day: d.day, total: d.hook_calls, gap: d.hook_empty }));
  const foundNothing = "found nothing good enough";
  const addedNothing = "added nothing";
  return [h("h3", {}, `The last ${days.length} days (UTC)`),
    h("div", { class: "charts" },
      barChart("Searches per day", searches, { noun: ["search", "searches"], good: "found something", gap: foundNothing }),
      barChart("Hook calls per day", hooks, { noun: ["hook call", "hook calls"], good: "added context", gap: addedNothing }),
      shareChart("Gaps per day", [[`searches that ${foundNothing}`, searches, "searches"], [`hook calls that ${addedNothing}`, hooks, "hook calls"]]))];
}
