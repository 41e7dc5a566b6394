// One user: tier usage against the tenant's capacities, then one tab at a time.

import { api, userPath } from "./api.js";
import { capacityBar, h, replaceChildren } from "./dom.js";
import { renderUserAlerts } from "./alerts.js";
import { renderItem } from "./item.js";
import { renderFrozen, renderMemory } from "./memory.js";
import { renderProfile } from "./profile.js";
import { renderRecall } from "./recall.js";
import { renderSession } from "./session.js";

const TABS = {
  memory: ["Memory", renderMemory],
  profile: ["Profile", renderProfile],
  frozen: ["Frozen", renderFrozen],
  alerts: ["Alerts", renderUserAlerts],
  recall: ["Recall", renderRecall],
  session: ["Session context", renderSession],
};

export async function renderUser(view, where, context, current) {
  const { userId, tab, arg } = where;
  const base = `#/users/${encodeURIComponent(userId)}`;
  const usage = h("div", { class: "capacity", id: "capacity" });
  const body = h("div", { class: "tab-body" });
  const nav = h(
    "nav",
    { class: "tabs" },
    Object.entries(TABS).map(([name, [label]]) =>
      h("a", { href: `${base}/${name}`, class: name === tab ? "active" : "", "aria-current": name === tab ? "page" : null }, label),
    ),
  );
  replaceChildren(view, h("h1", {}, h("span", { class: "muted" }, "user "), userId), usage, nav, body);

  const refreshUsage = async () => {
    const summary = await api("GET", userPath(userId, "/summary"));
    if (!current()) return;
    replaceChildren(
      usage,
      summary.layers.map(capacityBar),
      capacityBar({ layer: "frozen", used: summary.frozen, capacity: summary.frozen_limit }),
    );
  };
  const ctx = { ...context, userId, base, current, refreshUsage };
  const [, renderTab] = tab === "item" ? [null, (el, c) => renderItem(el, c, arg)] : TABS[tab] || TABS.memory;
  await Promise.all([refreshUsage(), renderTab(body, ctx)]);
}
