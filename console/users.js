// The tenant's users: search by id, see how full each one's tiers are, open one.

import { api } from "./api.js";
import { capacityBar, fmt, guard, h, newestOnly, replaceChildren } from "./dom.js";

export async function renderUsers(view, context, current) {
  const search = h("input", {
    id: "user-search",
    type: "search",
    placeholder: "search user ids",
    pattern: "[A-Za-z0-9_.:@\\-]*",
    maxlength: 128,
    "aria-label": "search user ids",
  });
  const results = h("div", { id: "user-results" });
  replaceChildren(
    view,
    h("h1", {}, "Users"),
    h("form", { class: "row", onsubmit: guard((e) => (e.preventDefault(), load()), results) }, search, h("button", { type: "submit", id: "user-search-run" }, "Search")),
    results,
  );

  const load = newestOnly(async (newest) => {
    const found = await api("GET", "/v1/users", { query: { query: search.value.trim(), limit: 100 } });
    if (!current() || !newest()) return;
    if (!found.users.length) return replaceChildren(results, h("p", { class: "muted" }, "No users match."));
    const rows = found.users.map((user) =>
      h(
        "tr",
        { class: "user-row", dataset: { user: user.user_id } },
        h("td", {}, h("a", { href: `#/users/${encodeURIComponent(user.user_id)}` }, user.user_id)),
        user.layers.map((usage) => h("td", { class: "cap" }, capacityBar(usage))),
        h("td", { class: "num" }, `${user.frozen} / ${user.frozen_limit}`),
        h("td", { class: "num" }, user.open_alerts ? h("a", { href: `#/users/${encodeURIComponent(user.user_id)}/alerts`, class: "badge badge-alert" }, user.open_alerts) : "0"),
        h("td", {}, fmt.date(user.last_write_at)),
      ),
    );
    replaceChildren(
      results,
      h(
        "table",
        { class: "grid" },
        h("thead", {}, h("tr", {}, ["user", "working", "long-term", "core", "archive", "frozen", "open alerts", "last write"].map((t) => h("th", {}, t)))),
        h("tbody", {}, rows),
      ),
      found.truncated ? h("p", { class: "muted" }, "More users match: narrow the search.") : null,
    );
  });

  await load();
}
