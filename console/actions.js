// What a person may do to a memory, by its state: confirm, edit (reason), freeze (reason), the audited
// unfreeze (reason and dialog id required; a frozen fact is edited there), forget (reason). Each opens a
// small form; `done(action, result)` follows success.
//
// An edit is a new statement of the same kind and slot, written through both gates, then the old memory
// forgotten with the reason (naming its replacement): a memory is never rewritten in place.

import { api, userPath } from "./api.js";
import { errorBox, field, h, replaceChildren } from "./dom.js";
import { consoleDialog } from "./write.js";

const ACTIVE = new Set(["pending", "confirmed", "frozen", "unfrozen"]);

export function memoryActions(userId, memory, done) {
  const path = (rest) => userPath(userId, `/memories/${memory.memory_id}${rest}`);
  const panel = h("div", { class: "action-form" });
  const open = (form) => replaceChildren(panel, form);

  function form(action, fields, submitLabel, send, danger = false) {
    const status = h("div");
    const element = h(
      "form",
      {
        class: `inline-form ${danger ? "danger" : ""}`,
        dataset: { action },
        onsubmit: async (event) => {
          event.preventDefault();
          const values = Object.fromEntries(fields.map(([name, f]) => [name, f.input.value.trim()]));
          try {
            const result = await send(values);
            replaceChildren(panel);
            await done(action, result);
          } catch (error) {
            replaceChildren(status, errorBox(error));
          }
        },
      },
      fields.map(([, f]) => f.element),
      h("div", { class: "row" }, h("button", { type: "submit", class: danger ? "danger" : "" }, submitLabel), h("button", { type: "button", onclick: () => replaceChildren(panel) }, "Cancel")),
      status,
    );
    open(element);
    fields[0]?.[1].input.focus();
  }

  const buttons = [];
  if (memory.state === "pending" || memory.state === "frozen" || memory.state === "confirmed") {
    buttons.push(h("button", { type: "button", dataset: { do: "confirm" }, onclick: async () => {
      try {
        await done("confirm", await api("POST", path("/confirm"), { body: { reason: "confirmed in the console" } }));
      } catch (error) {
        replaceChildren(panel, errorBox(error));
      }
    } }, "Confirm"));
  }
  if (memory.state === "pending" || memory.state === "confirmed" || memory.state === "unfrozen") {
    const edit = async (v) => {
      const written = await api("POST", userPath(userId, "/memories"), { body: {
        content: v.content,
        kind: memory.kind,
        polarity: memory.polarity,
        slot: memory.slot,
        value: memory.slot ? v.value || memory.value : null,
        session_id: memory.source_session_id || "console",
        dialog_ids: [consoleDialog()],
        remember: true,
      } });
      const kept = written.outcomes.find((o) => o.memory_id !== memory.memory_id && o.action !== "ignored" && o.action !== "conflict");
      if (!kept) throw new Error(written.outcomes.map((o) => o.detail || o.action).join("; ") || "the gates kept nothing of the edit");
      await api("DELETE", path(""), { query: { reason: `edited, replaced by ${kept.memory_id}: ${v.reason}` } });
      return kept;
    };
    buttons.push(h("button", { type: "button", dataset: { do: "edit" }, onclick: () =>
      form(
        "edit",
        [
          ["content", field("New content", { tag: "textarea", name: "content", required: true, maxlength: 8000, rows: 2, value: memory.content })],
          ...(memory.slot ? [["value", field(`New value of ${memory.slot}`, { name: "value", maxlength: 500, value: memory.value || "" })]] : []),
          ["reason", field("Reason (required, audited)", { name: "reason", required: true, maxlength: 1000 })],
        ],
        "Save the edit",
        edit,
      ) }, "Edit…"));
  }
  if (memory.state === "confirmed" || memory.state === "unfrozen") {
    buttons.push(h("button", { type: "button", dataset: { do: "freeze" }, onclick: () =>
      form("freeze", [["reason", field("Reason (required)", { name: "reason", required: true, maxlength: 1000 })]], "Freeze",
        (v) => api("POST", path("/freeze"), { body: { reason: v.reason } })) }, "Freeze…"));
  }
  if (memory.state === "frozen") {
    buttons.push(h("button", { type: "button", dataset: { do: "unfreeze" }, onclick: () =>
      form(
        "unfreeze",
        [
          ["reason", field("Reason (required, audited)", { name: "reason", required: true, maxlength: 1000 })],
          ["dialog_id", field("Dialog id (required: the turn that asked for it)", { name: "dialog_id", required: true, maxlength: 128, pattern: "[A-Za-z0-9][A-Za-z0-9_.:@\\-]*" })],
          ["new_content", field("New content (optional: the fact is changed and ends frozen again; empty leaves it unfrozen)", { tag: "textarea", name: "new_content", maxlength: 8000, rows: 2 })],
          ["new_value", field("New slot value (optional)", { name: "new_value", maxlength: 500 })],
        ],
        "Unfreeze with audit",
        (v) => api("POST", path("/unfreeze"), { body: {
          reason: v.reason,
          dialog_id: v.dialog_id,
          new_content: v.new_content || null,
          new_value: v.new_value || null,
        } }),
      ) }, "Unfreeze…"));
  }
  if (ACTIVE.has(memory.state) || memory.layer === "archive") {
    buttons.push(h("button", { type: "button", class: "danger", dataset: { do: "forget" }, onclick: () =>
      form("forget", [["reason", field("Reason", { name: "reason", maxlength: 1000, value: "user request" })]], "Forget for good",
        (v) => api("DELETE", path(""), { query: { reason: v.reason || "user request" } }), true) }, "Forget…"));
  }
  return h("div", { class: "actions" }, h("div", { class: "row" }, buttons), panel);
}
