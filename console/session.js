// The session-context preview: the snapshot a session starts with, and how its character budget is shared
// among core facts, profile, recent items and temporary state.

import { api, userPath } from "./api.js";
import { errorBox, fmt, h, replaceChildren } from "./dom.js";

const LABELS = { core: "core facts", profile: "profile", cohort: "cohort (cold start)", recent: "recent", state: "state" };

function budgetBar(split, sections, budget) {
  // the cohort section, when present, is paid from the profile's share
  const names = Object.keys(split);
  const track = h("div", { class: "budget", id: "budget-split" });
  const rows = [];
  for (const name of names) {
    const shown = name === "profile" && sections.cohort !== undefined ? "cohort" : name;
    const allotted = Math.floor(budget * split[name]);
    const used = (sections[shown] || "").length;
    const segment = h(
      "div",
      { class: `budget-seg seg-${name}`, dataset: { section: name } },
      h("span", { class: "budget-used" }),
      h("span", { class: "budget-label" }, `${LABELS[shown]} ${fmt.pct(split[name])}`),
    );
    segment.style.width = `${split[name] * 100}%`;
    segment.firstChild.style.width = `${Math.min(1, used / Math.max(1, allotted)) * 100}%`;
    track.append(segment);
    rows.push(h("tr", {}, h("td", {}, LABELS[shown]), h("td", { class: "num" }, fmt.pct(split[name])), h("td", { class: "num" }, allotted), h("td", { class: "num" }, used)));
  }
  return [
    track,
    h("table", { class: "grid narrow" }, h("thead", {}, h("tr", {}, ["section", "share", "chars allotted", "chars used"].map((t) => h("th", {}, t)))), h("tbody", {}, rows)),
  ];
}

const block = (title, text, limit) =>
  h("section", { class: "block" }, h("h3", {}, `${title} `, h("span", { class: "muted small" }, `${text.length}${limit ? ` / ${limit}` : ""} chars`)), h("pre", {}, text || "(empty)"));

export async function renderSession(el, ctx) {
  const policy = ctx.policy.policy;
  const stamp = new Date().toISOString().replace(/[-:T]/g, "").slice(0, 14);
  const sessionId = h("input", { id: "session-id", value: `console-${stamp}`, maxlength: 128, pattern: "[A-Za-z0-9][A-Za-z0-9_.:@\\-]*", "aria-label": "session id" });
  const budget = h("input", { type: "number", min: 200, max: 20000, value: policy.context_budget_chars, "aria-label": "budget chars" });
  const out = h("div", { id: "session-preview" });
  const start = async (event) => {
    event.preventDefault();
    const chars = Number(budget.value) || policy.context_budget_chars;
    try {
      const context = await api("POST", userPath(ctx.userId, "/sessions"), { body: { session_id: sessionId.value.trim(), budget_chars: chars } });
      if (!ctx.current()) return;
      replaceChildren(
        out,
        h("h2", {}, "Budget split"),
        budgetBar(ctx.policy.context_budget_split, context.sections, chars),
        block("Snapshot", context.text, chars),
        block("USER block", context.user_block, policy.user_block_chars),
        block("MEMORY block", context.memory_block, policy.memory_block_chars),
      );
    } catch (error) {
      replaceChildren(out, errorBox(error));
    }
  };
  replaceChildren(
    el,
    h("form", { class: "row", onsubmit: start }, h("label", { class: "inline" }, "session ", sessionId), h("label", { class: "inline" }, "budget ", budget), h("button", { type: "submit", id: "session-run" }, "Preview")),
    h("p", { class: "muted small" }, "Starting a session stores its snapshot: the same session id shows the same bytes for the whole session; a new id shows what the memory holds now."),
    out,
  );
}
