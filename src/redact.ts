/**
 * Redaction, in one place. Secrets are the values taken from `${env.*}` (and what a hook marks as
 * secret, e.g. its env values or header values), a password written literally in a runbook URL,
 * plus URL userinfo anywhere. Every output (renderers, journals, reports, lint, status, plans)
 * passes through a redactor built here, and does so before it cuts a text short: a cut secret is
 * no longer recognisable.
 *
 * - A secret is removed in every form it can travel in (`secretForms`): as written, JSON-escaped,
 *   percent-encoded, HTML- and Markdown-escaped, hex in either case, base64 and base64url at each
 *   of the three alignments (so inside a longer encoded text too), and inside a decoded `Basic`
 *   credential whatever the user name before it.
 * - A secret that is a URL also makes its path and query secret (a webhook's token lives there);
 *   its scheme and host stay readable, so a message still says where it went.
 * - Structured values are redacted leaf by leaf (`redactLeaves`), keys included, never as
 *   serialized text: a secret that happens to be a JSON token (`true`) would otherwise break the
 *   structure it was removed from. A second policy, by key name (`redactSecretFields`), is for
 *   what is kept for years or handed to third-party code.
 * - A short common word as an `${env.*}` value (`prod`, `admin`) is a secret like any other: in
 *   free text it is masked wherever it appears, inside other words too (`***uction`). We chose
 *   legibility as the price, not a leak: the tool cannot tell a name from a password. Structure
 *   never pays it: values are redacted leaf by leaf, and the program's own words (event types,
 *   step kinds) are kept. The one exception is a value that is a boolean or null word (`true`,
 *   `false`, `null`, `yes`, `off`: `NOT_SECRETS`): no password is one, and masking it would
 *   blank every `canCommit: true` of every output; it is shown as it is.
 * - Secrets shorter than `MIN_SECRET_LENGTH` cannot be removed without mangling ordinary text
 *   (`1`, `on`): they are not redacted, and lint warns about them.
 */

export const MIN_SECRET_LENGTH = 3;
/** `${env.*}` values that are words of the output's own grammar, never a password (see above). */
export const NOT_SECRETS: ReadonlySet<string> = new Set(["true", "false", "null", "yes", "off"]);
export const MASK = "***";

/** A function that removes every secret from a text, and `value` for structured data. */
export interface Redactor {
  (text: string): string;
  /**
   * A deep copy with every string and key redacted (`redactLeaves`); numbers, booleans and null
   * as they are. `keep` names fields whose string values are the program's own words (an event's
   * `type`, `kind`, `method`…), kept at any depth so a secret like `step` cannot break them; with
   * it, the top-level keys (the record's own names) are kept too.
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

/**
 * A runbook's source text with every password written in a URL masked by as many `*` (quotes and
 * brackets included, which end no password); `${env.*}` placeholders are kept: they are not secrets.
 */
export function maskUrlPasswords(text: string): string {
  return text.replace(/\b([a-z][a-z0-9+.-]*:\/\/[^\s/?#@:]*:)([^\s@]+)@/gi, (whole, head: string, pw: string) =>
    pw.includes("${") ? whole : `${head}${"*".repeat(pw.length)}@`,
  );
}

const safeDecode = (s: string): string => {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
};

/** HTML/XML escapes, in the spellings our escapers and others use (`&#39;`, `&apos;`, `&#x27;`). */
function htmlForms(s: string): string[] {
  const base = s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  const forms: string[] = [];
  // each quote escaped or left as it is (a text node needs neither), in any combination
  for (const quot of ['"', "&quot;", "&#34;", "&#x22;"])
    for (const apos of ["'", "&#39;", "&apos;", "&#x27;"]) forms.push(base.replace(/"/g, quot).replace(/'/g, apos));
  return forms;
}

/** Markdown backslash escapes: every punctuation CommonMark allows, and the job summary's cell set. */
function markdownForms(s: string): string[] {
  return [s.replace(/[!-/:-@[-`{-~]/g, (c) => `\\${c}`), s.replace(/[\\`*_[\]|~]/g, (c) => `\\${c}`)];
}

/**
 * The base64 of `bytes` wherever they sit in a longer encoded text (a Basic auth `user:secret`,
 * a token with a prefix): at each of the three alignments, the characters that depend on the
 * secret's bytes only. Whatever comes before or after, one of the three is in the encoding.
 */
export function base64Cores(bytes: Buffer): string[] {
  const out: string[] = [];
  for (let shift = 0; shift < 3; shift++) {
    const enc = Buffer.concat([Buffer.alloc(shift), bytes])
      .toString("base64")
      .replace(/=+$/, "");
    const total = shift + bytes.length;
    // a leading unknown byte leaves 2 (one byte) or 3 (two bytes) mixed characters; a trailing partial group 1
    out.push(enc.slice([0, 2, 3][shift], total % 3 === 0 ? enc.length : enc.length - 1));
  }
  return out;
}

/** Cores shorter than this are not masked alone: they would hit ordinary words (a Basic header is still decoded). */
const MIN_CORE_LENGTH = 6;

/**
 * Every form a secret can take in output (the secret itself first): as written, JSON-escaped,
 * percent-encoded, HTML- and Markdown-escaped, hex (lower and upper case), base64 and base64url
 * at every alignment.
 */
export function secretForms(secret: string): string[] {
  if (secret.length < MIN_SECRET_LENGTH || NOT_SECRETS.has(secret)) return [];
  const forms = new Set<string>([secret]);
  const derived = (s: string): void => {
    forms.add(s);
    forms.add(JSON.stringify(s).slice(1, -1));
    forms.add(encodeURIComponent(s));
    forms.add(encodeURIComponent(s).replace(/%20/g, "+"));
    forms.add(encodeURI(s));
    for (const f of htmlForms(s)) forms.add(f);
    for (const f of markdownForms(s)) forms.add(f);
    const bytes = Buffer.from(s, "utf8");
    const hex = bytes.toString("hex");
    forms.add(hex);
    forms.add(hex.toUpperCase());
    forms.add(bytes.toString("base64"));
    forms.add(bytes.toString("base64url"));
    for (const core of base64Cores(bytes))
      if (core.length >= MIN_CORE_LENGTH) {
        forms.add(core);
        forms.add(core.replace(/\+/g, "-").replace(/\//g, "_"));
      }
  };
  derived(secret);
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
      derived(pass);
      forms.add(u.password);
      forms.add(Buffer.from(`${user}:${pass}`, "utf8").toString("base64"));
    } else if (u.username !== "") {
      // a user name without a password is a token
      derived(safeDecode(u.username));
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
  let plain: string[] = [];
  // the same short strings come back in every answer (field names, states, cluster names): each is
  // redacted once per set of secrets (a fleet of 64 read every 100 ms inside the write-stop window
  // spent more on this than on anything else of the read, issue 41)
  const cache = new Map<string, string>();
  const current = (): string[] => {
    if (source.size !== seen) {
      seen = source.size;
      cache.clear();
      plain = [...source].filter((s) => s.length >= MIN_SECRET_LENGTH && !NOT_SECRETS.has(s));
      forms = [...new Set(plain.flatMap((s) => secretForms(s)))].sort((a, b) => b.length - a.length);
    }
    return forms;
  };
  const text = (t: string): string => {
    const all = current();
    // not over another redactor: its secrets may change without this one knowing
    if (base || t.length > CACHED_LENGTH) return redactText(t, all);
    let out = cache.get(t);
    if (out === undefined) {
      if (cache.size >= CACHED_STRINGS) cache.clear();
      out = redactText(t, all);
      cache.set(t, out);
    }
    return out;
  };
  const redactText = (t: string, all: string[]): string => {
    let out = base ? base(t) : t;
    // a Basic credential is decoded: the user name before the secret shifts its base64 by any amount
    if (plain.length > 0)
      out = out.replace(BASIC, (whole, b64: string) => {
        const decoded = Buffer.from(b64, "base64").toString("utf8");
        return plain.some((p) => decoded.includes(p)) ? `${whole.slice(0, whole.length - b64.length)}${MASK}` : whole;
      });
    // longest first, so a secret containing another is removed whole
    for (const f of all) if (out.includes(f)) out = out.split(f).join(MASK);
    return stripUserinfo(out);
  };
  const redactor = text as Redactor;
  redactor.value = <T>(v: T, keep?: ReadonlySet<string>): T => redactLeaves(v, text, keep);
  return redactor;
}

/** Strings up to this long are redacted once and remembered, up to this many (then forgotten at once). */
const CACHED_LENGTH = 256;
const CACHED_STRINGS = 8192;

const BASIC = /\bBasic\s+([A-Za-z0-9+/_-]{4,}={0,2})/gi;

/** Only URL userinfo, for output that carries no run's secrets (the API client's own messages). */
export const userinfoRedactor: Redactor = createRedactor([]);

/**
 * A deep copy of structured data with `text` applied leaf by leaf, never to serialized text (a
 * secret that is a JSON token, `true`, must not break the structure). Every string is redacted,
 * and so is every key (data, a service's answer or a hook's options, may carry a secret as a key).
 * `keep` is for the program's own records (an event): it names fields whose string values are
 * the program's own words (`type`), kept whole at any depth, and the record's top-level keys are
 * its own names, kept too.
 */
export function redactLeaves<T>(v: T, text: (s: string) => string, keep?: ReadonlySet<string>): T {
  return deepStrings(v, text, keep, 0, false) as T;
}

const HEADER_CONTAINERS = /^(headers|header|httpheaders)$/i;
const SECRET_KEY = /(authorization|cookie|password|passwd|secret|token|api[-_]?key|credential|private[-_]?key)/i;
export const REDACTED = "[redacted]";

/**
 * The second policy, by key name, for what is kept for years (reports) or handed to third-party
 * code (a hook's view of its step): on top of `text` leaf by leaf, header values are never kept
 * (their names are) and a field whose name says it is a secret (`password`, `token`…) loses its
 * value, whether or not that value came from `${env.*}`.
 */
export function redactSecretFields<T>(v: T, text: (s: string) => string = stripUserinfo): T {
  return deepStrings(v, text, undefined, 0, true) as T;
}

function deepStrings(
  v: unknown,
  text: (s: string) => string,
  keep: ReadonlySet<string> | undefined,
  depth: number,
  byName: boolean,
): unknown {
  if (typeof v === "string") return text(v);
  if (v === null || typeof v !== "object") return v;
  if (depth > 64) return MASK;
  if (Array.isArray(v)) return v.map((x) => deepStrings(x, text, keep, depth + 1, byName));
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
    const key = depth === 0 && keep ? k : text(k);
    if (byName && HEADER_CONTAINERS.test(k) && x !== null && typeof x === "object") {
      // never print header values: keep the names so a reader knows which were sent
      const names = Array.isArray(x)
        ? x.map((h) => (Array.isArray(h) ? String(h[0]) : typeof h === "string" ? (h.split(":")[0] ?? "") : ""))
        : Object.keys(x);
      out[key] = Object.fromEntries(names.filter((n) => n !== "").map((n) => [text(n), REDACTED]));
    } else if (byName && SECRET_KEY.test(k) && x !== null && x !== undefined && x !== false) {
      out[key] = REDACTED;
    } else {
      out[key] = keep?.has(k) && typeof x === "string" ? x : deepStrings(x, text, keep, depth + 1, byName);
    }
  }
  return out;
}
