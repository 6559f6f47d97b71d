// The settings screen's health panel: the checks `ragdown doctor` makes (docs/doctor.md), one line
// each, ok / warn / fail with what to do; "Check again" asks the server for them anew.
import { api } from "./api.js";
import { fill, h, toast } from "./dom.js";

export function healthSection(checks) {
  const list = h("ul", { class: "health", "aria-label": "Checks" });
  const summary = h("p", {});
  const show = (found) => {
    const count = (status) => found.filter((check) => check.status === status).length;
    fill(summary, `${count("fail")} failed, ${count("warn")} to look at, ${count("ok")} fine.`);
    fill(list, found.map(line));
  };
  show(checks);
  return h("section", { "aria-label": "Health" }, h("h2", {}, "Health"), summary, list,
    h("button", { onclick: async () => {
      try {
        show(await api("GET", "/api/doctor"));
      } catch (error) {
        toast(error.message);
      }
    } }, "Check again"));
}

function line(check) {
  return h("li", { class: `check ${check.status}`, "data-status": check.status, "data-check": check.check },
    h("strong", { class: "status" }, check.status), " ", h("span", { class: "name" }, check.check), `: ${check.message}`,
    check.fix ? h("span", { class: "fix" }, ` — ${check.fix}`) : null);
}
