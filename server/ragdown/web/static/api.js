// Talking to the server: the admin API with the session cookie (docs/web.md#sign-in).
import { state } from "./state.js";

export class ApiError extends Error {
  constructor(status, body) {
    super(body?.error || `HTTP ${status}`);
    this.status = status;
    this.code = body?.code;
    this.body = body;
  }
}

// What a 401 does (app.js shows the sign-in): set once at start, so that this module needs no screen.
let unauthorized = () => {};
export function onUnauthorized(handler) {
  unauthorized = handler;
}

export async function api(method, path, body) {
  const headers = {};
  const init = { method, headers, credentials: "same-origin" };
  if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const response = await fetch(path, init);
  const data = response.headers.get("content-type")?.includes("json") ? await response.json() : null;
  if (response.status === 401) {
    unauthorized(state.signedIn ? "The session has ended: sign in again." : "");
    throw new ApiError(401, data);
  }
  if (!response.ok) throw new ApiError(response.status, data);
  state.signedIn = true;
  return data;
}

export const q = (params) => new URLSearchParams(params).toString();

// A file of a folder, straight from the server: the session cookie goes along, and the answer
// carries the server's sandboxing CSP. Never re-hosted (no blob: URLs): a re-hosted SVG would run
// its script as this page.
export const fileUrl = (path) => `/api/file?${q({ path })}`;
