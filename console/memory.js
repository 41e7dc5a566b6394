// A user's memories by tier, with state badges, decay and provenance; and the frozen facts with their
// actions.

import { memoryActions } from "./actions.js";
import { api, userPath } from "./api.js";
import { badge, bar, fmt, guard, h, memoryLink, newestOnly, notice, replaceChildren } from "./dom.js";

const LAYERS = ["working", "longterm", "core", "archive"];
const STATES = ["pending", "confirmed", "frozen", "unfrozen", "superseded", "expired", "archived"];
const PAGE = 100;

const selector = (label, options, onchange) =>
  h("select", { "aria-label": label, onchange }, h("option", { value: "" }, `any ${label}`), options.map((o) => h("option", { value: o }, o)));

export const slotText = (m) => (m.slot ? `${m.slot}: ${m.polarity === "negative" ? "not " : ""}${m.value ?? ""}` : "");

function memoryRow(userId, m) {
  return h(
    "tr",
    { class: "memory-row", dataset: { memory: m.memory_id, state: m.state, layer: m.layer } },
    h("td", {}, badge(m.state)),
    h("td", {}, m.layer),
    h("td", {}, m.kind),
    h("td", { class: "content" }, h("div", {}, m.content), m.slot ? h("div", { class: "muted small" }, slotText(m)) : null),
    h("td", { class: "decay" }, bar("decay", m.decay_score, fmt.num(m.decay_score), "decay")),
    h("td", { class: "num" }, fmt.num(m.importance)),
    h("td", { class: "num" }, fmt.num(m.confidence)),
    h("td", { class: "mono small" }, m.source_session_id || "–"),
    h("td", { class: "mono small" }, m.source_dialog_ids.join(", ") || "–"),
    h("td", { class: "small" }, fmt.date(m.created_at)),
    h("td", {}, memoryLink(userId, m.memory_id)),
  );
}

export function memoryTable(userId, items) {
  const head = ["state", "tier", "kind", "content", "decay", "importance", "confidence", "session", "dialogs", "created", "id"];
  return h("table", { class: "grid memories" }, h("thead", {}, h("tr", {}, head.map((t) => h("th", {}, t)))), h("tbody", {}, items.map((m) => memoryRow(userId, m))));
}

export async function renderMemory(el, ctx) {
  let layer = "";
  let state = "";
  let offset = 0;
  const list = h("div", { id: "memory-list" });
  const more = h("button", { type: "button", hidden: true, onclick: guard(() => load(false), list) }, "More");
  const count = h("span", { class: "muted", id: "memory-count" });
  replaceChildren(
    el,
    h(
      "div",
      { class: "row" },
      selector("tier", LAYERS, guard((e) => ((layer = e.target.value), load(true)), list)),
      selector("state", STATES, guard((e) => ((state = e.target.value), load(true)), list)),
      count,
    ),
    list,
    more,
  );
  let shown = [];
  const load = newestOnly(async (newest, reset) => {
    if (reset) (offset = 0), (shown = []);
    const page = await api("GET", userPath(ctx.userId, "/memories"), { query: { layer, state, limit: PAGE, offset } });
    if (!ctx.current() || !newest()) return;
    shown = shown.concat(page.items);
    offset += page.items.length;
    count.textContent = `${page.total} memories${layer || state ? " match" : ""}`;
    more.hidden = offset >= page.total;
    replaceChildren(list, shown.length ? memoryTable(ctx.userId, shown) : h("p", { class: "muted" }, "Nothing remembered here."));
  });
  await load(true);
}

export async function renderFrozen(el, ctx) {
  const status = h("div");
  const cards = h("div", { class: "cards", id: "frozen-list" });
  replaceChildren(
    el,
    h("p", { class: "muted" }, "Frozen facts: ordinary writes cannot change them; an unfreeze needs a reason and the dialog id that asked for it, and is kept in the audit trail."),
    status,
    cards,
  );
  const load = newestOnly(async (newest) => {
    const page = await api("GET", userPath(ctx.userId, "/memories"), { query: { state: "frozen", limit: 500 } });
    if (!ctx.current() || !newest()) return;
    if (!page.items.length) return replaceChildren(cards, h("p", { class: "muted" }, "No frozen facts."));
    replaceChildren(
      cards,
      page.items.map((m) =>
        h(
          "article",
          { class: "card frozen-card", dataset: { memory: m.memory_id } },
          h("div", { class: "row" }, badge(m.state), h("strong", {}, m.content)),
          m.slot ? h("div", { class: "muted" }, slotText(m)) : null,
          h("div", { class: "muted small" }, `frozen ${fmt.date(m.frozen_at)} · version ${m.version} · dialogs ${m.source_dialog_ids.join(", ")} · `, memoryLink(ctx.userId, m.memory_id)),
          memoryActions(ctx.userId, m, async (action) => {
            replaceChildren(status, notice(`${action}: done for ${m.memory_id}`));
            await Promise.all([load(), ctx.refreshUsage()]);
          }),
        ),
      ),
    );
  });
  await load();
}
