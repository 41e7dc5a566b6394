// The USER profile slot by slot: each conclusion with its confidence and the memories behind it, the
// values it replaced, the relations between entities, and the current temporary state.

import { api, userPath } from "./api.js";
import { badge, bar, fmt, h, memoryLink, replaceChildren } from "./dom.js";

function conclusion(userId, c, historical = false) {
  const value = `${c.polarity === "negative" ? "not " : ""}${c.value}`;
  return h(
    "li",
    { class: historical ? "conclusion history" : "conclusion" },
    h("div", { class: "row" }, h("strong", {}, value), c.frozen ? badge("frozen") : c.state ? badge(c.state) : null, c.contested_by.length ? badge("contested", "alert") : null),
    historical ? null : bar("confidence", c.confidence, fmt.num(c.confidence)),
    h(
      "div",
      { class: "muted small" },
      historical
        ? [`until ${fmt.date(c.updated_at)}`, c.superseded_by ? [" · replaced by ", memoryLink(userId, c.superseded_by)] : null]
        : `${c.sessions} session(s) · first ${fmt.date(c.first_stated_at)} · last ${fmt.date(c.updated_at)} · weight ${fmt.num(c.weight)}`,
    ),
    h("div", { class: "small" }, "backed by ", c.memory_ids.map((id) => [memoryLink(userId, id), " "])),
    c.contested_by.length ? h("div", { class: "small" }, "contested by ", c.contested_by.map((id) => [memoryLink(userId, id), " "])) : null,
  );
}

function slotCard(userId, slot) {
  return h(
    "article",
    { class: "card slot-card", dataset: { slot: slot.slot } },
    h("div", { class: "row" }, h("h3", {}, slot.label), h("span", { class: "muted mono small" }, slot.slot), slot.single_valued ? badge("single", "info") : badge("multi", "info")),
    bar("slot confidence", slot.confidence, fmt.num(slot.confidence)),
    h("ul", { class: "conclusions" }, slot.conclusions.map((c) => conclusion(userId, c))),
    slot.history.length
      ? h("details", {}, h("summary", {}, `${slot.history.length} superseded value(s)`), h("ul", { class: "conclusions" }, slot.history.map((c) => conclusion(userId, c, true))))
      : null,
  );
}

export async function renderProfile(el, ctx) {
  const profile = await api("GET", userPath(ctx.userId, "/profile"));
  if (!ctx.current()) return;
  const groups = new Map();
  for (const slot of profile.slots) {
    const group = slot.group || "other";
    if (!groups.has(group)) groups.set(group, []);
    groups.get(group).push(slot);
  }
  replaceChildren(
    el,
    profile.slots.length ? null : h("p", { class: "muted" }, "No profile conclusions yet."),
    [...groups].map(([group, slots]) => [h("h2", {}, group), h("div", { class: "cards", id: `profile-${group}` }, slots.map((s) => slotCard(ctx.userId, s)))]),
    profile.relations.length
      ? [
          h("h2", {}, "Relations"),
          h("table", { class: "grid" }, h("tbody", {}, profile.relations.map((r) => h("tr", {}, h("td", {}, r.source), h("td", {}, `–${r.label}→`), h("td", {}, r.target), h("td", {}, r.memory_ids.map((id) => [memoryLink(ctx.userId, id), " "])))))),
        ]
      : null,
    profile.state.length
      ? [
          h("h2", {}, "Current state"),
          h("ul", {}, profile.state.map((s) => h("li", {}, `${s.content} `, h("span", { class: "muted small" }, fmt.date(s.stated_at)), " ", memoryLink(ctx.userId, s.memory_id)))),
        ]
      : null,
  );
}
