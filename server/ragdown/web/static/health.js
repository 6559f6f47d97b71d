// The settings screen's health panel: the checks `ragdown doctor` makes (docs/doctor.md), one line
// each, ok / warn / fail with what to do. They read every folder, so the panel fills in once they
// answer rather than holding the screen back; "Check again" asks for them anew.
import { api } from "./api.js";
import { fill, h, toast } from "./dom.js";

export function healthSection() {
  const list = h("ul", { class: "health", "aria-label": "Checks" });
  const summary = h("p", { class: "empty" }, "Checking…");
  const load = async () => {
    try {
      show(summary, list, await api("GET", "/api/doctor"));
    } catch (error) {
      fill(summary, `The checks did not answer: ${error.message}`);
      toast(error.message);
    }
  };
  void load(); // load catches its own errors
  return h("section", { "aria-label": "Health" }, h("h2", {}, "Health"), summary, list,
    h("button", { onclick: load }, "Check again"));
}

function show(summary, list, checks) {
  const count = (status) => checks.filter((check) => check.status === status).length;
  summary.className = "";
  fill(summary, `${count("fail")} failed, ${count("warn")} to look at, ${count("ok")} fine.`);
  fill(list, checks.map(line));
}

function line(check) {
  return h("li", { class: `check ${check.status}`, "data-status": check.status, "data-check": check.check },
    h("strong", { class: "status" }, check.status), " ", h("span", { class: "name" }, check.check), `: ${check.message}`,
    check.fix ? h("span", { class: "fix" }, ` — ${check.fix}`) : null);
}
