// ragdown's web UI (docs/web.md): a hash-routed page over the admin API. No framework and no build
// step: the server renders Markdown (sanitised), these ES modules fetch, place and wire it up. This
// one starts the page; the others hold a screen each (home, folder, doc, editor, search, settings)
// and the parts they share (api, dom, links, state, side, router).
import { onUnauthorized, q } from "./api.js";
import { $, typing } from "./dom.js";
import { saveShortcut } from "./editor.js";
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
  if (saveShortcut(event)) return;
  if (event.key === "/" && !typing() && !$("#search-form").hidden) {
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

// The first screen: the sign-in straight away when this browser has no session (the server says so
// without a refused call), else the one the URL names.
async function start() {
  const session = await fetch("/api/session", { credentials: "same-origin" })
    .then((response) => (response.ok ? response.json() : null))
    .catch(() => null);
  if (session?.signed_in === false) showLogin();
  else await route(); // it shows its own errors
}
void start();
