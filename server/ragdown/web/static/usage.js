// The settings screen's usage section, from the query log (docs/web.md): how often the hook added
// context, the searches that found nothing good enough, the documents read most.
import { api } from "./api.js";
import { ask, describe, h, plural, toast } from "./dom.js";
import { docHref } from "./links.js";

// `refresh` shows the settings screen again once the log is emptied.
export function usageSection(usage, refresh) {
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
      if (button !== "clear") return;
      try {
        await api("DELETE", "/api/query-log");
        await refresh();
      } catch (error) {
        toast(error.message);
      }
    } }, "Empty the query log"));
}
