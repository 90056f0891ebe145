/**
 * Redaction for everything the API client says: instance URLs may carry `user:password@`
 * (a proxy in front of the service), and answer bodies quoted in errors may hold connection
 * strings. Nothing this module returns contains either.
 */

// scheme://user[:password]@host → scheme://***@host, for any scheme (http, mongodb, mongodb+srv…)
const USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)[^/?#\s@"'<>]+@/gi;

/** Strips URL userinfo from every URL-looking part of a text. */
export function redactText(text: string): string {
  return text.replace(USERINFO, "$1***@");
}

/**
 * A URL fit for messages and logs: userinfo replaced by `***`, query values replaced by `***`,
 * no fragment, no trailing slash. A string that is not a URL is redacted as text.
 */
export function redactUrl(url: string | URL): string {
  let u: URL;
  try {
    u = new URL(String(url));
  } catch {
    // not a URL: still never echo anything that looks like userinfo
    return redactText(String(url)).replace(/^[^/@\s]*:[^/@\s]*@/, "***@");
  }
  const hadUserinfo = u.username !== "" || u.password !== "";
  u.username = "";
  u.password = "";
  for (const k of [...u.searchParams.keys()]) u.searchParams.set(k, "***");
  u.hash = "";
  let out = u.toString();
  if (hadUserinfo) out = out.replace("://", "://***@");
  return out.endsWith("/") ? out.slice(0, -1) : out;
}

/** The first bytes of an answer body, redacted and shown on one line, for error messages. */
export function bodyExcerpt(text: string, max = 120): string {
  const oneLine = redactText(text).replace(/\s+/g, " ").trim();
  return oneLine.length > max ? `${oneLine.slice(0, max)}…` : oneLine;
}

/** A JSON-like value with every string redacted as text (bodies quoted in events and reports). */
export function redactDeep(value: unknown): unknown {
  if (typeof value === "string") return redactText(value);
  if (Array.isArray(value)) return value.map(redactDeep);
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redactDeep(v)]));
  }
  return value;
}
