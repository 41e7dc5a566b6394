// Writing for a user from the console: add one structured memory (it passes both gates like any write),
// and "try a turn": what the gates would keep from a turn, decided on a copy of the user's memory and
// never stored (POST /turns:preview), with the choice to store it for real afterwards.

import { api, userPath } from "./api.js";
import { badge, errorBox, field, h, memoryLink, notice, replaceChildren } from "./dom.js";
import { slotText } from "./memory.js";

export const KINDS = ["fact", "preference", "relation", "event", "state", "lesson"];
export const consoleDialog = () => `console-${Date.now().toString(36)}`;

function outcomeTable(userId, outcomes, stored) {
  if (!outcomes.length) return h("p", { class: "muted", id: "outcome-none" }, "Nothing would be kept: the gates read no memory in it.");
  return h(
    "div",
    { class: "scroll" },
    h(
      "table",
      { class: "grid outcomes" },
      h("thead", {}, h("tr", {}, ["what happens", "memory", "tier / state", "why"].map((t) => h("th", {}, t)))),
      h(
        "tbody",
        {},
        outcomes.map((o) =>
          h(
            "tr",
            { class: "outcome-row", dataset: { action: o.action } },
            h("td", {}, badge(o.action, "action")),
            h("td", { class: "content" }, o.memory ? [h("div", {}, o.memory.content), o.memory.slot ? h("div", { class: "muted small" }, slotText(o.memory)) : null] : null, stored && o.action !== "ignored" ? memoryLink(userId, o.memory_id) : null),
            h("td", {}, `${o.layer} / ${o.state}`),
            h("td", { class: "small" }, o.detail || "–"),
          ),
        ),
      ),
    ),
  );
}

function tryTurn(ctx, refresh) {
  const text = field("The user says", { tag: "textarea", id: "try-text", name: "text", required: true, maxlength: 8000, rows: 2 });
  const session = field("Session id", { id: "try-session", name: "session_id", required: true, maxlength: 128, value: "console" });
  const result = h("div", { id: "try-result" });
  const body = () => ({ session_id: session.input.value.trim(), turns: [{ text: text.input.value.trim(), dialog_id: consoleDialog() }] });
  const show = (answer, stored) => [
    stored ? notice("Stored.") : h("p", { class: "muted" }, "A preview: nothing was stored."),
    outcomeTable(ctx.userId, answer.outcomes, stored),
    answer.alerts.length ? h("p", { class: "error" }, `${answer.alerts.length} alert(s) would be raised: ${answer.alerts.map((a) => a.kind).join(", ")}`) : null,
  ];
  const store = h("button", { type: "button", id: "try-store", hidden: true, onclick: async () => {
    try {
      const written = await api("POST", userPath(ctx.userId, "/turns"), { body: body() });
      store.hidden = true;
      replaceChildren(result, show(written, true));
      await refresh();
    } catch (error) {
      replaceChildren(result, errorBox(error));
    }
  } }, "Store it");
  const form = h("form", { class: "panel", id: "try-form", onsubmit: async (event) => {
    event.preventDefault();
    try {
      const preview = await api("POST", userPath(ctx.userId, "/turns:preview"), { body: body() });
      replaceChildren(result, show(preview, false));
      store.hidden = false;
    } catch (error) {
      replaceChildren(result, errorBox(error));
    }
  } }, h("h2", {}, "Try a turn"), text.element, session.element, h("div", { class: "row" }, h("button", { type: "submit", id: "try-run" }, "Preview"), store), result);
  return form;
}

function addMemory(ctx, refresh) {
  const content = field("Content (in the user's words)", { tag: "textarea", name: "content", required: true, maxlength: 8000, rows: 2 });
  const kind = h("select", { name: "kind", "aria-label": "kind" }, KINDS.map((k) => h("option", { value: k }, k)));
  const slot = field("Profile slot (optional, e.g. preference.drink)", { name: "slot", maxlength: 64 });
  const value = field("Slot value (optional)", { name: "value", maxlength: 500 });
  const negative = h("input", { type: "checkbox", name: "negative" });
  const session = field("Session id", { name: "session_id", required: true, maxlength: 128, value: "console" });
  const result = h("div", { id: "add-result" });
  return h("form", { class: "panel", id: "add-form", onsubmit: async (event) => {
    event.preventDefault();
    const body = {
      content: content.input.value.trim(),
      kind: kind.value,
      session_id: session.input.value.trim(),
      dialog_ids: [consoleDialog()],
      slot: slot.input.value.trim() || null,
      value: value.input.value.trim() || null,
      polarity: negative.checked ? "negative" : "positive",
      remember: true,
    };
    try {
      const written = await api("POST", userPath(ctx.userId, "/memories"), { body });
      replaceChildren(result, outcomeTable(ctx.userId, written.outcomes.map((o) => ({ ...o, memory: { content: body.content, slot: body.slot, value: body.value, polarity: body.polarity } })), true));
      content.input.value = "";
      await refresh();
    } catch (error) {
      replaceChildren(result, errorBox(error));
    }
  } },
  h("h2", {}, "Add a memory"),
  content.element,
  h("label", { class: "field" }, h("span", {}, "Kind"), kind),
  slot.element,
  value.element,
  h("label", { class: "inline" }, negative, "negative (the user does not / does not want …)"),
  session.element,
  h("div", { class: "row" }, h("button", { type: "submit", id: "add-run" }, "Add")),
  result);
}

export async function renderWrite(el, ctx) {
  replaceChildren(el, h("div", { class: "columns" }, tryTurn(ctx, ctx.refreshUsage), addMemory(ctx, ctx.refreshUsage)));
}
