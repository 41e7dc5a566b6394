// The HTTP API client of the console. The tenant key lives in sessionStorage (this tab only) and travels
// only in the X-API-Key header: never in a URL, never in a log line.

const KEY_SLOT = "hermes.console.apiKey";

export const credentials = {
  get: () => sessionStorage.getItem(KEY_SLOT),
  set: (key) => sessionStorage.setItem(KEY_SLOT, key),
  clear: () => sessionStorage.removeItem(KEY_SLOT),
};

export class ApiError extends Error {
  constructor(status, error, detail) {
    super(`${status} ${error}: ${detail}`);
    this.status = status;
    this.error = error;
    this.detail = detail;
  }
}

/** One call to the API: `api("GET", "/v1/users", {query: {limit: 50}})`; resolves to the JSON body. */
export async function api(method, path, { query, body, key } = {}) {
  const url = new URL(path, window.location.origin);
  for (const [name, value] of Object.entries(query || {})) {
    if (value !== undefined && value !== null && value !== "") url.searchParams.set(name, value);
  }
  const headers = { "X-API-Key": key ?? credentials.get() ?? "" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const response = await fetch(url, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    cache: "no-store",
    credentials: "omit",
  });
  const payload = await response.json().catch(() => ({}));
  if (response.status === 401) {
    credentials.clear();
    window.dispatchEvent(new CustomEvent("hermes:signed-out", { detail: payload.detail }));
  }
  if (!response.ok) {
    throw new ApiError(response.status, payload.error || "http_error", payload.detail || response.statusText);
  }
  return payload;
}

export const userPath = (userId, rest = "") => `/v1/users/${encodeURIComponent(userId)}${rest}`;
