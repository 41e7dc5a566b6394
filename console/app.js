// Entry point: sign-in, the header, and the hash router (#/users, #/alerts, #/quality, #/users/<id>/<tab>, ...).

import { api, credentials } from "./api.js";
import { errorBox, replaceChildren } from "./dom.js";
import { renderTenantAlerts } from "./alerts.js";
import { renderTenantQuality } from "./quality.js";
import { renderUser } from "./user.js";
import { renderUsers } from "./users.js";

const $ = (id) => document.getElementById(id);
const context = { policy: null };
let renders = 0;

function route() {
  const parts = window.location.hash.replace(/^#\/?/, "").split("/").map(decodeURIComponent);
  if (parts[0] === "alerts") return { view: "alerts" };
  if (parts[0] === "quality") return { view: "quality" };
  if (parts[0] === "users" && parts[1]) return { view: "user", userId: parts[1], tab: parts[2] || "memory", arg: parts[3] };
  return { view: "users" };
}

async function render() {
  const view = $("view");
  if (!credentials.get() || !context.policy) return showLogin();
  const generation = ++renders;
  const current = () => generation === renders; // a newer navigation makes older renders stop drawing
  try {
    const where = route(); // inside the try: a malformed #fragment is an error shown, not thrown
    if (where.view === "alerts") await renderTenantAlerts(view, context, current);
    else if (where.view === "quality") await renderTenantQuality(view, context, current);
    else if (where.view === "user") await renderUser(view, where, context, current);
    else await renderUsers(view, context, current);
  } catch (error) {
    if (current()) replaceChildren(view, errorBox(error));
  }
}

function showLogin(message = "") {
  context.policy = null;
  $("login").hidden = false;
  $("nav").hidden = true;
  $("logout").hidden = true;
  $("tenant").textContent = "";
  replaceChildren($("view"));
  $("login-error").textContent = message;
  $("api-key").focus();
}

async function signIn(key) {
  // the policy read proves the key and tells the console the tenant's capacities and budget split
  context.policy = await api("GET", "/v1/policy", { key });
  credentials.set(key);
  $("login").hidden = true;
  $("nav").hidden = false;
  $("logout").hidden = false;
  $("tenant").textContent = `tenant ${context.policy.tenant_id}`;
}

$("login-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const input = $("api-key");
  const key = input.value.trim();
  input.value = "";
  try {
    await signIn(key);
    await render();
  } catch (error) {
    showLogin(error.status === 401 ? "That key was refused: nothing is shown." : error.detail || String(error));
  }
});

$("logout").addEventListener("click", () => {
  credentials.clear();
  showLogin();
});

window.addEventListener("hermes:signed-out", () => showLogin("The key was refused or revoked: signed out."));
window.addEventListener("hashchange", render);

(async () => {
  const key = credentials.get();
  if (!key) return showLogin();
  try {
    await signIn(key);
    await render();
  } catch (error) {
    credentials.clear();
    showLogin(error.detail || String(error));
  }
})();
