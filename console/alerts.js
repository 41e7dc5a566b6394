// Alerts the gates raised (freeze conflicts, a full core, contradictions to review), and resolving one
// with a reason that goes into the audit trail.

import { api, userPath } from "./api.js";
import { badge, errorBox, fmt, guard, h, memoryLink, newestOnly, notice, replaceChildren } from "./dom.js";

function alertCard(alert, resolved) {
  const reason = h("input", { name: "reason", maxlength: 1000, placeholder: "reason (kept in the audit trail)", "aria-label": "reason" });
  const status = h("div");
  const resolve = async (event) => {
    event.preventDefault();
    try {
      const body = { reason: reason.value.trim() };
      const done = await api("POST", userPath(alert.user_id, `/alerts/${alert.alert_id}/resolve`), { body });
      await resolved(done);
    } catch (error) {
      replaceChildren(status, errorBox(error));
    }
  };
  return h(
    "article",
    { class: "card alert-card", dataset: { alert: alert.alert_id, status: alert.status } },
    h("div", { class: "row" }, badge(alert.kind, "alert"), badge(alert.status), h("strong", {}, alert.message)),
    h(
      "div",
      { class: "muted small" },
      "user ",
      h("a", { href: `#/users/${encodeURIComponent(alert.user_id)}` }, alert.user_id),
      ` · raised ${fmt.date(alert.created_at)}`,
      alert.memory_id ? [" · memory ", memoryLink(alert.user_id, alert.memory_id)] : null,
      alert.related_ids.length ? [" · related ", alert.related_ids.map((id) => [memoryLink(alert.user_id, id), " "])] : null,
    ),
    alert.status === "open" ? h("form", { class: "row", onsubmit: resolve }, reason, h("button", { type: "submit", dataset: { do: "resolve" } }, "Resolve")) : null,
    status,
  );
}

async function renderAlerts(el, load, current, after = async () => {}) {
  let status = "open";
  const message = h("div");
  const list = h("div", { class: "cards", id: "alert-list" });
  const filter = h(
    "select",
    { "aria-label": "alert status", onchange: guard((e) => ((status = e.target.value), draw()), message) },
    ["open", "resolved", "all"].map((s) => h("option", { value: s }, s)),
  );
  replaceChildren(el, h("div", { class: "row" }, filter), message, list);
  const draw = newestOnly(async (newest) => {
    const { alerts } = await load(status);
    if (!current() || !newest()) return;
    if (!alerts.length) return replaceChildren(list, h("p", { class: "muted" }, `No ${status === "all" ? "" : status + " "}alerts.`));
    replaceChildren(
      list,
      alerts.map((a) =>
        alertCard(a, async (done) => {
          replaceChildren(message, notice(`Resolved: ${done.message}`));
          await Promise.all([draw(), after()]);
        }),
      ),
    );
  });
  await draw();
}

export async function renderUserAlerts(el, ctx) {
  await renderAlerts(el, (status) => api("GET", userPath(ctx.userId, "/alerts"), { query: { status } }), ctx.current, ctx.refreshUsage);
}

export async function renderTenantAlerts(view, context, current) {
  const body = h("div");
  replaceChildren(view, h("h1", {}, "Alerts"), body);
  await renderAlerts(body, (status) => api("GET", "/v1/alerts", { query: { status, limit: 200 } }), current);
}
