// One user: tier usage against the tenant's capacities, then one tab at a time.

import { api, userPath } from "./api.js";
import { capacityBar, h, replaceChildren } from "./dom.js";
import { renderUserAlerts } from "./alerts.js";
import { renderItem } from "./item.js";
import { renderFrozen, renderMemory } from "./memory.js";
import { renderProfile } from "./profile.js";
import { renderUserQuality } from "./quality.js";
import { renderRecall } from "./recall.js";
import { renderSession } from "./session.js";
import { renderWrite } from "./write.js";

const TABS = {
  memory: ["Memory", renderMemory],
  profile: ["Profile", renderProfile],
  frozen: ["Frozen", renderFrozen],
  alerts: ["Alerts", renderUserAlerts],
  recall: ["Recall", renderRecall],
  session: ["Session context", renderSession],
  write: ["Write", renderWrite],
  quality: ["Quality", renderUserQuality],
};

/** A user holding nothing (never written for, or every memory forgotten): reading never creates one, so every
 * count is zero; the tenant's user list leaves such a user out too. */
const isUnknown = (summary) => !summary.last_write_at && summary.layers.every((l) => !l.used) && !summary.frozen && !summary.open_alerts;

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
  if (tab !== "write" && isUnknown(await api("GET", userPath(userId, "/summary")))) {
    if (!current()) return;
    return replaceChildren(
      view,
      h(
        "section",
        { class: "gone", id: "no-such-user" },
        h("h1", {}, "No such user"),
        h("p", {}, `No user “${userId}” holds memories in this tenant. User ids are matched exactly, capitals included; a user whose every memory was forgotten holds none either.`),
        h("p", {}, h("a", { href: "#/users" }, "Find a user"), " · ", h("a", { href: `${base}/write` }, `write a first memory for “${userId}”`)),
      ),
    );
  }
  const [, renderTab] = tab === "item" ? [null, (el, c) => renderItem(el, c, arg)] : TABS[tab] || TABS.memory;
  await Promise.all([refreshUsage(), renderTab(body, ctx)]);
}
