// Alerts the gates raised (freeze conflicts, a full core, contradictions to review). A frozen fact
// contradicted by a new statement is shown side by side with it, in plain words, and settled one way or
// the other: "accept" applies the statement to the fact (the audited unfreeze, ending frozen again with
// the new content), "reject" forgets the statement. Either needs a reason, which goes into the audit
// trail with the alert's resolution; any other alert is resolved with a reason.

import { api, userPath } from "./api.js";
import { badge, errorBox, fmt, guard, h, memoryLink, newestOnly, notice, replaceChildren } from "./dom.js";
import { slotText } from "./memory.js";

const memoryPath = (alert, id, rest = "") => userPath(alert.user_id, `/memories/${id}${rest}`);
// forgetting a statement already forgotten (by another tab, say) is what was asked: not an error
const forget = (alert, id, reason) =>
  api("DELETE", memoryPath(alert, id), { query: { reason } }).catch((error) => {
    if (error.status !== 404) throw error;
  });
const resolve = (alert, reason) => api("POST", userPath(alert.user_id, `/alerts/${alert.alert_id}/resolve`), { body: { reason } });

/** One side of a conflict: what the memory says, where it came from. */
function side(title, role, alert, m) {
  return h(
    "section",
    { class: `side side-${role}`, dataset: { memory: m.memory_id, role } },
    h("h3", {}, title),
    h("p", { class: "said" }, `“${m.content}”`),
    m.slot ? h("p", { class: "muted" }, slotText(m)) : null,
    h("p", { class: "muted small" }, `${m.state} · said ${fmt.date(m.created_at)} in session ${m.source_session_id || "–"} · `, memoryLink(alert.user_id, m.memory_id)),
  );
}

/** The reason box and the buttons of an alert; `choices` are [label, do, run(reason)] triples. */
function decision(choices, done) {
  const reason = h("textarea", { name: "reason", required: true, maxlength: 1000, rows: 2, placeholder: "why (required, kept in the audit trail)", "aria-label": "reason" });
  const status = h("div");
  const act = (run, label) => async (event) => {
    event.preventDefault();
    const why = reason.value.trim();
    if (!why) {
      reason.focus();
      return replaceChildren(status, h("p", { class: "error", role: "alert" }, "Give a reason first: it is kept in the audit trail."));
    }
    try {
      await done(await run(why), label);
    } catch (error) {
      replaceChildren(status, errorBox(error));
    }
  };
  const buttons = choices.map(([label, what, run, kind]) => h("button", { type: "button", class: kind || "", dataset: { do: what }, onclick: act(run, label) }, label));
  return h("form", { class: "decision", onsubmit: (e) => e.preventDefault() }, reason, h("div", { class: "row" }, buttons), status);
}

/** A frozen fact and the statement contradicting it, side by side, with accept and reject. */
async function conflictBody(alert, done) {
  const [frozen, challenger] = await Promise.all([
    api("GET", memoryPath(alert, alert.memory_id)).then((d) => d.memory),
    api("GET", memoryPath(alert, alert.related_ids[0])).then((d) => d.memory),
  ]);
  const accept = async (reason) => {
    const body = { reason, dialog_id: challenger.source_dialog_ids[0] || "console", new_content: challenger.content };
    if (challenger.slot === frozen.slot && challenger.value) body.new_value = challenger.value;
    await api("POST", memoryPath(alert, frozen.memory_id, "/unfreeze"), { body });
    await forget(alert, challenger.memory_id, `applied to ${frozen.memory_id}: ${reason}`);
    return resolve(alert, `accepted: ${reason}`);
  };
  const reject = async (reason) => {
    await forget(alert, challenger.memory_id, `rejected: ${reason}`);
    return resolve(alert, `rejected: ${reason}`);
  };
  const open = alert.status === "open" && frozen.state === "frozen";
  return [
    h("p", {}, "The user said something that contradicts a frozen fact. The fact was kept as it is; decide whether the new statement replaces it."),
    h("div", { class: "sides" }, side("Frozen fact", "frozen", alert, frozen), side("New statement", "challenger", alert, challenger)),
    open
      ? decision(
          [
            ["Accept: the new statement replaces the fact", "accept", accept],
            ["Reject: forget the new statement", "reject", reject, "danger"],
          ],
          done,
        )
      : null,
  ];
}

function plainMessage(alert) {
  if (alert.kind === "contradiction_review") return "A frozen fact keeps being contradicted: review it.";
  if (alert.kind === "core_full") return "The core tier is full: nothing more can be frozen until something leaves it.";
  if (alert.kind === "repeated_correction") return "The user keeps correcting the same fact: which value holds?";
  return alert.message;
}

async function alertCard(alert, resolved) {
  let body = [];
  let settled = false; // a conflict whose two sides could be read is settled by accept or reject
  if (alert.kind === "frozen_conflict" && alert.memory_id && alert.related_ids.length) {
    try {
      body = await conflictBody(alert, resolved);
      settled = true;
    } catch (error) {
      body = [errorBox(error)]; // one side is gone (forgotten since): the alert is resolved plainly
    }
  }
  if (!settled) {
    body.push(h("p", {}, plainMessage(alert)));
    if (alert.status === "open") body.push(decision([["Resolve", "resolve", (reason) => resolve(alert, reason)]], resolved));
  }
  return h(
    "article",
    { class: "card alert-card", dataset: { alert: alert.alert_id, status: alert.status, kind: alert.kind } },
    h("div", { class: "row" }, badge(alert.kind, "alert"), badge(alert.status)),
    h(
      "div",
      { class: "muted small" },
      "user ",
      h("a", { href: `#/users/${encodeURIComponent(alert.user_id)}` }, alert.user_id),
      ` · raised ${fmt.date(alert.created_at)}`,
      alert.memory_id ? [" · memory ", memoryLink(alert.user_id, alert.memory_id)] : null,
    ),
    body,
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
    const cards = await Promise.all(
      alerts.map((a) =>
        alertCard(a, async (done, label) => {
          replaceChildren(message, notice(`${label.split(":")[0]}: done (${done.status})`));
          await Promise.all([draw(), after()]);
        }),
      ),
    );
    if (current() && newest()) replaceChildren(list, cards);
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
