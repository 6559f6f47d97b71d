// Sign-in (docs/web.md#sign-in): the admin token is sent once and becomes an HttpOnly session cookie
// the server sets, which no script, this page's included, can read.
import { $, fill, h } from "./dom.js";
import { route } from "./router.js";
import { state } from "./state.js";

export function showLogin(message) {
  fill($("#side"));
  $("#search-form").hidden = true;
  $("#bar-links").hidden = true;
  const input = h("input", { type: "password", id: "token", autocomplete: "current-password", required: true });
  const form = h(
    "form",
    { class: "login", onsubmit: async (event) => {
      event.preventDefault();
      const response = await fetch("/api/session", {
        method: "POST", credentials: "same-origin",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ token: input.value.trim() }),
      });
      input.value = "";
      if (!response.ok) {
        const data = await response.json().catch(() => null);
        $(".error", form).textContent = data?.error || `HTTP ${response.status}`;
        return;
      }
      state.signedIn = true;
      await route();
    } },
    h("h1", {}, "Sign in to ragdown"),
    h("label", { for: "token" }, "Admin token (RAGDOWN_ADMIN_TOKEN)"),
    input,
    h("p", { class: "error", role: "alert" }, message || ""),
    h("button", { class: "primary", type: "submit" }, "Sign in"),
    h("p", { class: "empty" }, "The token is sent once; the server keeps this browser signed in for 12 hours, or until Sign out."),
  );
  fill($("#main"), form);
  input.focus();
}

// The server ends the session (a copied cookie dies with it) and tells the browser to drop it.
export async function signOut() {
  await fetch("/api/session", { method: "DELETE", credentials: "same-origin" }).catch(() => null);
  state.signedIn = false;
  showLogin();
}
