// The quality figures the last consolidation run computed: the tenant's (#/quality) and one user's (the
// user page's Quality tab). What each figure means and cannot tell: docs/quality.md, section 9.

import { api, userPath } from "./api.js";
import { fmt, h, replaceChildren } from "./dom.js";

const share = (x) => (x === null || x === undefined ? "–" : fmt.pct(x));

// [field, label, what it says] of a user's or the tenant's figures; the words follow docs/quality.md
const FIGURES = [
  ["eviction_hit_rate", "eviction hit rate", "of the items evicted in the look-back window, the share not wanted back (restored, recalled from the archive or restated)"],
  ["profile_drift", "profile drift", "share of the profile's slots whose conclusion changed since the run before: a move as much as a misreading"],
  ["profile_agreement", "profile agreement", "share of the profile's conclusions no active memory contradicts: agreement, not truth"],
];

function figureTable(figures, extra = []) {
  const rows = FIGURES.map(([name, label, means]) =>
    h("tr", { dataset: { figure: name } }, h("td", {}, label), h("td", { class: "num figure" }, share(figures[name])), h("td", { class: "muted small" }, means)),
  );
  return h("table", { class: "grid quality" }, h("thead", {}, h("tr", {}, ["figure", "value", "what it says"].map((t) => h("th", {}, t)))), h("tbody", {}, rows, extra));
}

const countRow = (label, text) => h("tr", {}, h("td", {}, label), h("td", { class: "num" }, text), h("td", {}));

/** When and over what the figures were computed; the "no run yet" state when nothing covered them. */
function runLine(run, what) {
  if (!run.run_id) return h("p", { class: "notice", id: "no-quality-run" }, `No consolidation run has covered ${what} yet: the figures are computed by the consolidation job (hermes-memory jobs consolidate).`);
  return h("p", { class: "muted", id: "quality-run" }, `computed by consolidation run ${run.run_id} · finished ${fmt.date(run.finished_at)} · look-back window ${run.hit_window_days} days`);
}

function extractionSection(extraction) {
  if (!extraction) return null;
  const labels = Object.entries(extraction.per_label);
  return [
    h("h2", {}, "Extraction (the semantic reader on the shipped labelled set)"),
    h("p", { class: "muted small" }, `Held-out part, ${extraction.held_out} of ${extraction.labelled_set} labelled utterances; the same for every tenant: a regression check on the reader, not a measure of this tenant's users.`),
    h(
      "table",
      { class: "grid narrow", id: "quality-extraction" },
      h("thead", {}, h("tr", {}, ["label", "n", "precision", "recall"].map((t) => h("th", {}, t)))),
      h("tbody", {}, h("tr", { class: "total" }, h("td", {}, h("strong", {}, "all slotted")), h("td", {}), h("td", { class: "num" }, share(extraction.precision)), h("td", { class: "num" }, share(extraction.recall))), labels.map(([label, f]) => h("tr", {}, h("td", { class: "mono small" }, label), h("td", { class: "num" }, f.n), h("td", { class: "num" }, share(f.precision)), h("td", { class: "num" }, share(f.recall))))),
    ),
  ];
}

export async function renderTenantQuality(view, context, current) {
  const quality = await api("GET", "/v1/quality");
  if (!current()) return;
  const figures = quality.figures;
  const users = figures ? Object.entries(figures.per_user) : [];
  replaceChildren(
    view,
    h("h1", {}, "Quality"),
    runLine(quality, "this tenant"),
    figures
      ? [
          h("section", { id: "tenant-quality" }, figureTable(figures, [countRow("evictions in the window", `${figures.evictions_in_window} (${figures.evictions_missed} missed)`), countRow("users drifted / compared", `${figures.users_drifted} / ${figures.users_compared}`), countRow("users · memories", `${figures.users} · ${figures.memories}`)])),
          h("h2", {}, "Per user"),
          h(
            "table",
            { class: "grid", id: "quality-users" },
            h("thead", {}, h("tr", {}, ["user", "eviction hit rate", "evictions (missed)", "profile drift", "profile agreement"].map((t) => h("th", {}, t)))),
            h("tbody", {}, users.map(([userId, f]) => h("tr", { dataset: { user: userId } }, h("td", {}, h("a", { href: `#/users/${encodeURIComponent(userId)}/quality` }, userId)), h("td", { class: "num" }, share(f.eviction_hit_rate)), h("td", { class: "num" }, `${f.evictions_in_window} (${f.evictions_missed})`), h("td", { class: "num" }, share(f.profile_drift)), h("td", { class: "num" }, share(f.profile_agreement))))),
          ),
        ]
      : null,
    extractionSection(quality.extraction),
  );
}

export async function renderUserQuality(el, ctx) {
  const quality = await api("GET", userPath(ctx.userId, "/quality"));
  if (!ctx.current()) return;
  const f = quality.figures;
  replaceChildren(
    el,
    runLine(quality, "this user"),
    quality.run_id && !f ? h("p", { class: "notice", id: "no-quality-run" }, "The last consolidation run did not see this user (new since): the next run computes their figures.") : null,
    f ? h("section", { id: "user-quality" }, figureTable(f, [countRow("evictions in the window", `${f.evictions_in_window} (${f.evictions_missed} missed)`)])) : null,
    h("p", { class: "small" }, h("a", { href: "#/quality" }, "the tenant's figures")),
  );
}
