// Building the page: every text goes in through textContent (never innerHTML), so what users wrote is
// shown, never interpreted.

/** `h("a", {href: "#/x", class: "link", onclick: fn}, "text", child)` */
export function h(tag, props = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(props || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name === "class") element.className = value;
    else if (name.startsWith("on")) element.addEventListener(name.slice(2), value);
    else if (name === "dataset") Object.assign(element.dataset, value);
    else element.setAttribute(name, value === true ? "" : String(value));
  }
  append(element, children);
  if (tag === "table") labelCells(element);
  return element;
}

/** Each cell gets its column's header as `data-label`: a narrow screen shows rows stacked, labelled. */
function labelCells(table) {
  const heads = [...table.querySelectorAll("thead th")].map((th) => th.textContent);
  for (const row of table.querySelectorAll("tbody tr")) {
    [...row.children].forEach((cell, n) => heads[n] && cell.setAttribute("data-label", heads[n]));
  }
}

function append(element, children) {
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

export function replaceChildren(element, ...children) {
  element.replaceChildren();
  append(element, children);
  return element;
}

export const fmt = {
  num: (x, digits = 2) => (x === null || x === undefined ? "–" : Number(x).toFixed(digits)),
  date: (iso) => (iso ? new Date(iso).toISOString().replace("T", " ").slice(0, 16) : "–"),
  pct: (x) => `${Math.round(x * 100)}%`,
};

/** A horizontal bar: `fraction` of the track filled; `label` on the left, `value` on the right. */
export function bar(label, fraction, value, kind = "") {
  const fill = h("span", { class: `fill ${kind}` });
  fill.style.width = `${Math.max(0, Math.min(1, fraction)) * 100}%`;
  return h(
    "div",
    { class: "bar", dataset: { label } },
    h("span", { class: "bar-label" }, label),
    h("span", { class: "track" }, fill),
    h("span", { class: "bar-value" }, value),
  );
}

/** Capacity of a tier: "working 143 / 200"; full tiers turn red, those past 80% amber. */
export function capacityBar(usage) {
  const { layer, used, capacity } = usage;
  if (capacity === null) return bar(layer, 0, `${used}`, "none");
  const share = used / capacity;
  const kind = share >= 1 ? "full" : share >= 0.8 ? "high" : "";
  return bar(layer, share, `${used} / ${capacity}`, kind);
}

export const badge = (text, kind = text) => h("span", { class: `badge badge-${kind}` }, text);

export const memoryLink = (userId, memoryId) =>
  h("a", { class: "mono", href: `#/users/${encodeURIComponent(userId)}/item/${memoryId}` }, memoryId.slice(0, 10) + "…");

export function errorBox(error) {
  return h("p", { class: "error", role: "alert" }, error.detail || error.message || String(error));
}

/** An event handler running `fn`; a failure is shown in `where` instead of escaping as an unhandled
 * rejection. */
export const guard = (fn, where) => async (event) => {
  try {
    await fn(event);
  } catch (error) {
    replaceChildren(where, errorBox(error));
  }
};

/** Wraps a loader so that only the newest call draws: `fn(isNewest)` checks before drawing. */
export function newestOnly(fn) {
  let calls = 0;
  return (...args) => {
    const mine = ++calls;
    return fn(() => mine === calls, ...args);
  };
}

export const notice = (text) => h("p", { class: "notice", role: "status" }, text);

/** A label + input pair; `attrs` go to the input. */
export function field(label, attrs) {
  const input = h(attrs.tag || "input", { ...attrs, tag: undefined, value: undefined });
  if (attrs.value !== undefined) input.value = attrs.value; // a textarea's text is its value, not an attribute
  return { input, element: h("label", { class: "field" }, h("span", {}, label), input) };
}
