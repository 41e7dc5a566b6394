// The recall playground: run a query as the agent would and see why each hit ranks where it does. The
// total is (semantic weight × relevance + min(relevance, 1) × (decay weight × time decay + importance
// weight × importance)), times any boosts (frozen, negative): freshness and importance count as far as
// the memory matches. The stacked bar draws those three weighted parts, and one bar per route draws that
// route's score.

import { api, userPath } from "./api.js";
import { badge, bar, fmt, guard, h, memoryLink, replaceChildren } from "./dom.js";

const SIGNALS = ["relevance", "time_decay", "importance"];

function contributions(score, fusion) {
  const matched = Math.min(score.relevance, 1);
  const parts = [
    ["relevance", fusion.semantic * score.relevance],
    ["time_decay", matched * fusion.time_decay * score.time_decay],
    ["importance", matched * fusion.importance * score.importance],
  ];
  const stacked = h("span", { class: "stack" });
  for (const [name, value] of parts) {
    const segment = h("span", { class: `seg seg-${name}`, title: `${name} ${fmt.num(value, 3)}` });
    segment.style.width = `${Math.max(0, value) * 100}%`;
    stacked.append(segment);
  }
  return h(
    "div",
    { class: "bar contribution" },
    h("span", { class: "bar-label" }, "weighted"),
    h("span", { class: "track" }, stacked),
    h("span", { class: "bar-value" }, fmt.num(parts.reduce((sum, [, v]) => sum + v, 0), 3)),
  );
}

function hitCard(userId, hit, rank, fusion, maxTotal) {
  const { memory: m, score } = hit;
  const boosts = Object.entries(score.boosts);
  return h(
    "article",
    { class: "card hit", dataset: { memory: m.memory_id } },
    h("div", { class: "row" }, h("span", { class: "rank" }, `#${rank}`), badge(m.state), h("strong", {}, m.content)),
    h("div", { class: "muted small" }, `${m.layer} · ${m.kind} · routes `, hit.routes.map((r) => badge(r, "route")), " · ", memoryLink(userId, m.memory_id)),
    hit.contradicts.length ? h("div", { class: "small" }, badge("contradicts", "alert"), " ", hit.contradicts.map((id) => [memoryLink(userId, id), " "])) : null,
    h(
      "div",
      { class: "score", "aria-label": "score breakdown" },
      bar("total", score.total / maxTotal, fmt.num(score.total, 3), "total"),
      contributions(score, fusion),
      boosts.length ? h("div", { class: "small boosts" }, "boosts ", boosts.map(([name, f]) => badge(`${name} ×${fmt.num(f)}`, "info"))) : null,
      Object.entries(score.routes).map(([name, value]) => bar(name, value, fmt.num(value, 3), `signal-${name}`)),
      SIGNALS.map((name) => bar(name, score[name], fmt.num(score[name], 3), `signal-${name}`)),
    ),
  );
}

export async function renderRecall(el, ctx) {
  const query = h("input", { id: "recall-query", type: "search", required: true, maxlength: 2000, placeholder: "what should I avoid cooking?", "aria-label": "query" });
  const k = h("input", { type: "number", min: 1, max: 50, value: ctx.policy.policy.top_k, "aria-label": "k" });
  const archive = h("input", { type: "checkbox", checked: true });
  const results = h("div", { class: "cards", id: "recall-hits" });
  const fusion = ctx.policy.policy.fusion;
  const legend = h(
    "p",
    { class: "legend small" },
    h("span", { class: "swatch seg-relevance" }), ` relevance × ${fusion.semantic} `,
    h("span", { class: "swatch seg-time_decay" }), ` time decay × ${fusion.time_decay} × match `,
    h("span", { class: "swatch seg-importance" }), ` importance × ${fusion.importance} × match (relevance, at most 1)`,
  );
  const run = async (event) => {
    event.preventDefault();
    const body = { query: query.value.trim(), k: Number(k.value) || 8, include_archive: archive.checked };
    const answer = await api("POST", userPath(ctx.userId, "/recall"), { body });
    if (!ctx.current()) return;
    const maxTotal = Math.max(1, ...answer.hits.map((hit) => hit.score.total));
    replaceChildren(
      results,
      answer.hits.length ? answer.hits.map((hit, i) => hitCard(ctx.userId, hit, i + 1, fusion, maxTotal)) : h("p", { class: "muted" }, "No hits."),
    );
  };
  replaceChildren(
    el,
    h("form", { class: "row", onsubmit: guard(run, results) }, query, h("label", { class: "inline" }, "k ", k), h("label", { class: "inline" }, archive, " archive"), h("button", { type: "submit", id: "recall-run" }, "Recall")),
    h("p", { class: "muted small" }, "A recall counts as an access: the hits' decay is refreshed, as when the agent recalls."),
    legend,
    results,
  );
}
