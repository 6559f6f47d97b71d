// The routes, in the URL's fragment so that every screen can be bookmarked (docs/web.md#the-page):
// `#/`, `#/folder/<name>`, `#/doc/<path>[?line=N][#heading]`, `#/edit/<path>`,
// `#/search/<folder>?q=…[&tag=…]`, `#/settings`.
import { docPage } from "./doc.js";
import { $, fill, h, typing } from "./dom.js";
import { editPage } from "./editor.js";
import { folderPage } from "./folder.js";
import { home } from "./home.js";
import { searchPage } from "./search.js";
import { settingsPage } from "./settings.js";

function parse() {
  const raw = location.hash.slice(1) || "/";
  const [pathPart, anchor] = raw.split("#");
  const [path, query] = pathPart.split("?");
  const parts = path.split("/").filter(Boolean).map((part) => decodeURIComponent(part));
  let decoded = anchor || null;
  try {
    decoded = decoded && decodeURIComponent(decoded);
  } catch {
    // a stray `%`: the anchor as written
  }
  return { parts, params: new URLSearchParams(query || ""), anchor: decoded };
}

// Show the screen the URL names.
export async function route() {
  // Without a session the first call answers 401, which shows the sign-in; a server on a trusted
  // network (SECURE_LOCAL_NET) asks for none.
  let signedIn = true;
  try {
    // Inside the try: a stray `%` in a path is a URL no screen can show.
    const { parts, params, anchor } = parse();
    const [screen, ...rest] = parts;
    if (screen === "folder") await folderPage(rest.join("/"));
    else if (screen === "doc") await docPage(rest.join("/"), anchor, Number(params.get("line")) || null);
    else if (screen === "edit") await editPage(rest.join("/"));
    else if (screen === "search") await searchPage(rest.join("/"), params);
    else if (screen === "settings") await settingsPage();
    else await home();
  } catch (error) {
    signedIn = error.status !== 401;
    if (signedIn) fill($("#main"), h("h1", {}, "Something went wrong"), h("p", { class: "error" }, error.message));
  }
  // Settings and Sign out mean nothing before the sign-in (index.html starts with them hidden).
  $("#bar-links").hidden = !signedIn;
  // The screen takes the focus (for a screen reader, and so that Tab starts there), unless the person
  // is typing in a field meanwhile (the search box after `/`, the editor's text, the token).
  if (!typing()) $("#main").focus({ preventScroll: true });
}
