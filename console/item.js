// One memory in full: every field, its links to other memories, its actions and its audit trail.

import { memoryActions } from "./actions.js";
import { api, userPath } from "./api.js";
import { badge, errorBox, fmt, h, memoryLink, notice, replaceChildren } from "./dom.js";
import { slotText } from "./memory.js";

const links = (userId, ids) => (ids && ids.length ? ids.map((id) => [memoryLink(userId, id), " "]) : "–");

function facts(userId, m) {
  const rows = [
    ["state", badge(m.state)],
    ["tier", m.layer],
    ["kind", m.kind],
    ["content", m.content],
    ["slot", slotText(m) || "–"],
    ["importance / confidence", `${fmt.num(m.importance)} / ${fmt.num(m.confidence)}`],
    ["decay", fmt.num(m.decay_score, 3)],
    ["accessed", `${m.access_count} times, last ${fmt.date(m.last_accessed_at)}`],
    ["source", m.source],
    ["source session", m.source_session_id || "–"],
    ["source dialogs", m.source_dialog_ids.join(", ") || "–"],
    ["confirmed in sessions", m.confirmed_sessions.join(", ") || "–"],
    ["created / updated", `${fmt.date(m.created_at)} / ${fmt.date(m.updated_at)}`],
    ["frozen at", fmt.date(m.frozen_at)],
    ["version", m.version],
    ["supersedes", links(userId, m.supersedes)],
    ["superseded by", m.superseded_by ? memoryLink(userId, m.superseded_by) : "–"],
    ["conflicts with", links(userId, m.conflicts_with)],
    ["merged from", links(userId, m.merged_from)],
  ];
  return h("dl", { class: "facts" }, rows.map(([k, v]) => [h("dt", {}, k), h("dd", {}, v)]));
}

const shown = (value) => (typeof value === "string" ? value : JSON.stringify(value));

/** What an audit entry changed, field by field: "state: pending → confirmed". */
function changes(before, after) {
  if (!before && !after) return "–";
  if (!before) return Object.entries(after).map(([k, v]) => h("div", {}, `${k}: ${shown(v)}`));
  if (!after) return "removed";
  const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])];
  const changed = keys.filter((k) => shown(before[k]) !== shown(after[k]));
  if (!changed.length) return "no field changed";
  return changed.map((k) => h("div", {}, `${k}: ${shown(before[k] ?? "–")} → ${shown(after[k] ?? "–")}`));
}

export function auditTable(events) {
  if (!events.length) return h("p", { class: "muted" }, "No audit entries.");
  return h(
    "table",
    { class: "grid audit", id: "audit-trail" },
    h("thead", {}, h("tr", {}, ["at", "action", "actor", "reason", "dialog", "change"].map((t) => h("th", {}, t)))),
    h(
      "tbody",
      {},
      events.map((e) =>
        h(
          "tr",
          { class: "audit-row", dataset: { action: e.action } },
          h("td", { class: "small" }, fmt.date(e.at)),
          h("td", {}, badge(e.action, "action")),
          h("td", {}, e.actor),
          h("td", {}, e.reason || "–"),
          h("td", { class: "mono small" }, e.source_dialog_id || "–"),
          h("td", { class: "mono small json" }, changes(e.before, e.after)),
        ),
      ),
    ),
  );
}

export async function renderItem(el, ctx, memoryId, message = "") {
  let detail;
  try {
    detail = await api("GET", userPath(ctx.userId, `/memories/${memoryId}`));
  } catch (error) {
    if (!ctx.current()) return;
    const gone = error.status === 404 ? "This memory is gone (forgotten, or never existed for this user)." : null;
    return replaceChildren(el, message ? notice(message) : null, gone ? h("p", { class: "gone", id: "item-gone" }, gone) : errorBox(error));
  }
  if (!ctx.current()) return;
  const m = detail.memory;
  const after = async (action, result) => {
    if (action === "edit") {
      window.location.hash = `${ctx.base}/item/${result.memory_id}`; // the replacement, with its own trail
      return;
    }
    await ctx.refreshUsage();
    await renderItem(el, ctx, memoryId, `${action}: done`);
  };
  replaceChildren(
    el,
    message ? notice(message) : null,
    h("section", { class: "item", id: "item", dataset: { memory: memoryId, state: m.state } }, h("h2", {}, m.content), facts(ctx.userId, m), memoryActions(ctx.userId, m, after)),
    h("h2", {}, "Audit trail"),
    auditTable(detail.audit),
  );
}
