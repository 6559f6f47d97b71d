// ragdown's web UI (docs/web.md): a hash-routed page over the admin API. No framework and no build
// step: the server renders Markdown (sanitised), these ES modules fetch, place and wire it up. This
// one starts the page; the others hold a screen each (home, folder, doc, editor, search, settings)
// and the parts they share (api, dom, links, state, side, router).
import { onUnauthorized, q } from "./api.js";
import { $ } from "./dom.js";
import { route } from "./router.js";
import { showLogin, signOut } from "./signin.js";
import { state } from "./state.js";

// Where an older page kept the admin token: removed on load. The session is now an HttpOnly cookie
// the server sets (docs/web.md#sign-in), which no script — this one included — can read.
localStorage.removeItem("ragdown-token");
onUnauthorized(showLogin);

window.addEventListener("hashchange", () => {
  if (state.dirty && !confirm("Leave without saving your changes?")) {
    history.replaceState(null, "", state.shownHash);
    return;
  }
  state.dirty = false;
  state.shownHash = location.hash;
  void route(); // it shows its own errors
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
// A module runs once the page is parsed, so the bar's elements are there.
$("#search-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const query = $("#search-input").value.trim();
  if (query && state.folder) location.hash = `#/search/${encodeURIComponent(state.folder)}?${q({ q: query })}`;
});
$("#sign-out").addEventListener("click", signOut);
void route();
