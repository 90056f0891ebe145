/**
 * Redaction, in one place. Secrets are the values taken from `${env.*}` (and what a hook marks as
 * secret, e.g. its env values or header values), plus URL userinfo anywhere.
 *
 * - A secret is removed in every encoding it can travel in: as written, JSON-escaped (a secret
 *   with `"` or `\` inside a serialized body), percent-encoded (in a URL or a form), and, when it
 *   is a URL's password, as the base64 of the `user:password` a client sends as Basic auth.
 * - A secret that is a URL also makes its path and query secret (a webhook's token lives there);
 *   its scheme and host stay readable, so a message still says where it went.
 * - Structured values are redacted leaf by leaf (`redact.value`), never as serialized text: a
 *   secret that happens to be a JSON token or a key name (`true`, `type`) would otherwise break
 *   the structure it was removed from. Keys are kept (they are the format's names, not data).
 * - Secrets shorter than `MIN_SECRET_LENGTH` cannot be removed without mangling ordinary text
 *   (`1`, `on`): they are not redacted, and lint warns about them.
 */

export const MIN_SECRET_LENGTH = 3;
export const MASK = "***";

/** A function that removes every secret from a text, and `value` for structured data. */
export interface Redactor {
  (text: string): string;
  /**
   * A deep copy with every string (not key) redacted; numbers, booleans and null as they are.
   * `keep` names fields whose string values are the program's own words (an event's `type`,
   * `kind`, `method`…), kept as they are at any depth so a secret like `step` cannot break them.
   */
  value<T>(v: T, keep?: ReadonlySet<string>): T;
}

// scheme://user[:password]@host → scheme://***@host, for any scheme (http, mongodb, mongodb+srv…)
const USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)[^/?#\s@"'<>]+@/gi;

/** Strips URL userinfo from every URL-looking part of a text. */
export function stripUserinfo(text: string): string {
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
    // not a URL: still never echo anything that looks like userinfo, even one with `#`, `/` or
    // `?` in it (what made it unparseable): everything from the scheme to the last `@` goes
    return stripUserinfo(String(url).replace(/^([a-z][a-z0-9+.-]*:\/\/)[^\s]*@/i, "$1***@")).replace(
      /^[^/@\s]*:[^/@\s]*@/,
      "***@",
    );
  }
  const hadUserinfo = u.username !== "" || u.password !== "";
  u.username = "";
  u.password = "";
  for (const k of [...u.searchParams.keys()]) u.searchParams.set(k, MASK);
  u.hash = "";
  let out = u.toString();
  if (hadUserinfo) out = out.replace("://", "://***@");
  return out.endsWith("/") ? out.slice(0, -1) : out;
}

const safeDecode = (s: string): string => {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
};

/** Every form a secret can take in output (the secret itself first). */
export function secretForms(secret: string): string[] {
  if (secret.length < MIN_SECRET_LENGTH) return [];
  const forms = new Set<string>([secret]);
  forms.add(JSON.stringify(secret).slice(1, -1));
  forms.add(encodeURIComponent(secret));
  forms.add(encodeURIComponent(secret).replace(/%20/g, "+"));
  forms.add(encodeURI(secret));
  forms.add(Buffer.from(secret, "utf8").toString("base64"));
  let u: URL | undefined;
  try {
    u = /^[a-z][a-z0-9+.-]*:\/\//i.test(secret) ? new URL(secret) : undefined;
  } catch {
    u = undefined;
  }
  if (u) {
    if (u.password !== "") {
      const user = safeDecode(u.username);
      const pass = safeDecode(u.password);
      forms.add(pass);
      forms.add(u.password);
      forms.add(Buffer.from(`${user}:${pass}`, "utf8").toString("base64"));
    } else if (u.username !== "") {
      // a user name without a password is a token
      forms.add(safeDecode(u.username));
      forms.add(u.username);
    }
    const rest = `${u.pathname === "/" ? "" : u.pathname}${u.search}`;
    if (rest !== "") {
      forms.add(rest);
      forms.add(safeDecode(rest));
      if (u.pathname !== "/") forms.add(u.pathname);
      if (u.search !== "") forms.add(u.search.slice(1));
    }
  }
  return [...forms].filter((f) => f.length >= MIN_SECRET_LENGTH);
}

/**
 * A redactor for a set of secrets (live: secrets added to the set later count too), on top of
 * `base` (another redactor: a hook's own secrets on top of the run's).
 */
export function createRedactor(secrets: Iterable<string>, base?: (text: string) => string): Redactor {
  const source = secrets instanceof Set ? (secrets as Set<string>) : new Set(secrets);
  let seen = -1;
  let forms: string[] = [];
  const current = (): string[] => {
    if (source.size !== seen) {
      seen = source.size;
      forms = [...new Set([...source].flatMap((s) => secretForms(s)))].sort((a, b) => b.length - a.length);
    }
    return forms;
  };
  const text = (t: string): string => {
    let out = base ? base(t) : t;
    // longest first, so a secret containing another is removed whole
    for (const f of current()) if (out.includes(f)) out = out.split(f).join(MASK);
    return stripUserinfo(out);
  };
  const redactor = text as Redactor;
  redactor.value = <T>(v: T, keep?: ReadonlySet<string>): T => deepStrings(v, text, keep, 0) as T;
  return redactor;
}

/** Only URL userinfo, for output that carries no run's secrets (the API client's own messages). */
export const userinfoRedactor: Redactor = createRedactor([]);

function deepStrings(
  v: unknown,
  text: (s: string) => string,
  keep: ReadonlySet<string> | undefined,
  depth: number,
): unknown {
  if (typeof v === "string") return text(v);
  if (v === null || typeof v !== "object") return v;
  if (depth > 64) return MASK;
  if (Array.isArray(v)) return v.map((x) => deepStrings(x, text, keep, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v as Record<string, unknown>))
    out[k] = keep?.has(k) && typeof x === "string" ? x : deepStrings(x, text, keep, depth + 1);
  return out;
}

/** The password part of a connection string's userinfo (`scheme://user:password@host`), if any. */
export function uriPassword(uri: string): string | undefined {
  const m = /^[a-z][a-z0-9+.-]*:\/\/([^/?#]*)@/i.exec(uri);
  const userinfo = m?.[1];
  if (userinfo === undefined) return undefined;
  const colon = userinfo.indexOf(":");
  if (colon < 0) return undefined;
  const password = userinfo.slice(colon + 1);
  return password === "" ? undefined : password;
}
