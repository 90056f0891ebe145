/**
 * Redaction, in one place. Secrets are the values taken from `${env.*}` (and what a hook marks as
 * secret, e.g. its env values or header values), a password written literally in a runbook URL,
 * plus URL userinfo anywhere. Every output (renderers, journals, reports, lint, status, plans)
 * passes through a redactor built here, and does so before it cuts a text short: a cut secret is
 * no longer recognisable.
 *
 * - A secret is removed in every spelling a service, a hook or an output can give it: each text is
 *   read as written and decoded up to three levels deep (percent-escapes of any byte in either
 *   case, so every percent-encode set of the URL standard, `'` as `%27` in a query; JSON `\uXXXX`
 *   of any character, Go's `\u0026`; numeric HTML entities, decimal and hex, and the named ones;
 *   Markdown's backslashes), in any letter case, with line breaks skipped (a secret cut across two
 *   lines, base64 wrapped at 76 columns); and searched for the secret, its hex and its base64 and
 *   base64url at each of the three alignments (so inside a longer encoded text too), and inside a
 *   decoded `Basic` credential whatever the user name before it. One pass finds every secret at
 *   once (Aho-Corasick over the readings): linear in the text whatever the number of secrets.
 *   A stream of lines (`Redactor.lines`, a hook's output) is read as one text: a secret cut
 *   between two lines is masked on both.
 * - A JSON body is parsed before it is excerpted (`bodyExcerpt`), redacted leaf by leaf, then cut.
 * - The process's OpenTelemetry exporter headers are secrets too (`environmentSecrets`).
 * - A secret that is a URL also makes its path and query secret (a webhook's token lives there);
 *   its scheme and host stay readable, so a message still says where it went.
 * - Structured values are redacted leaf by leaf (`redactLeaves`), keys included, never as
 *   serialized text: a secret that happens to be a JSON token (`true`) would otherwise break the
 *   structure it was removed from. A second policy, by key name (`redactSecretFields`), is for
 *   what is kept for years or handed to third-party code.
 * - A short common word as an `${env.*}` value (`prod`, `admin`) is a secret like any other: in
 *   free text it is masked wherever it appears, in any case and inside other words too
 *   (`***uction`, `***UCTION`), and a line of a hook's output that ends in its first four letters
 *   loses them (`Redactor.lines`: they may be the start of the secret cut across lines). We chose
 *   legibility as the price, not a leak: the tool cannot tell a name from a password. Structure
 *   never pays it: values are redacted leaf by leaf, and the program's own words (event types,
 *   step kinds) are kept. The one exception is a value that is a boolean or null word (`true`,
 *   `false`, `null`, `yes`, `off`: `NOT_SECRETS`): no password is one, and masking it would
 *   blank every `canCommit: true` of every output; it is shown as it is (in any case: `True`).
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
  /**
   * A redactor for the successive lines of one stream (a hook's stdout): a secret cut across
   * lines is masked on both, the end of a line that starts a secret (4 characters or more of it,
   * 6 of its base64, 8 of its hex) as soon as that line is shown, the rest on the next.
   */
  lines(): (line: string) => string;
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

// ---------------------------------------------------------------------------------------------
// The matcher. A text is read as the service or hook may have spelled it: as written, and decoded
// once, twice and three times (`decode`: percent-escapes of any byte in either case, UTF-8
// sequences included, so every percent-encode set of the URL standard and "every byte encoded";
// JSON `\uXXXX` and `\"`-style escapes, so Go's `\u0026`; `\xHH`; HTML entities, named and
// numeric in decimal and hex; Markdown backslash escapes). Each reading is folded (`fold`: upper
// case as lower case, a space as `+` as forms do, line breaks skipped, so a secret cut across
// lines or base64 wrapped at 76 columns reads whole) and searched in one pass for every needle of
// every secret at once (Aho-Corasick: linear in the text, whatever the number of secrets). Each
// secret's needles are the folded secret, its hex and its base64 and base64url (whole, and the
// cores at each alignment); a match masks the characters of the original text it was read from.
// ---------------------------------------------------------------------------------------------

const CR = 13;
const LF = 10;
const wideFold = new Map<number, number>();

/** One UTF-16 unit as the matcher compares it; -1: skipped (a line break). */
function fold(c: number): number {
  if (c < 128) {
    if (c >= 65 && c <= 90) return c + 32;
    if (c === 32) return 43; // `+`: a form-encoded space, and the space of a secret so written
    return c === LF || c === CR ? -1 : c;
  }
  let f = wideFold.get(c);
  if (f === undefined) {
    const lower = String.fromCharCode(c).toLowerCase();
    f = lower.length === 1 ? lower.charCodeAt(0) : c;
    if (wideFold.size < 4096) wideFold.set(c, f);
  }
  return f;
}

function foldText(s: string): string {
  let out = "";
  for (let i = 0; i < s.length; i++) {
    const f = fold(s.charCodeAt(i));
    if (f >= 0) out += String.fromCharCode(f);
  }
  return out;
}

/** A string to find, folded, and how much of its start at a line's end masks that end in a stream. */
interface Needle {
  text: string;
  /** A line that ends in at least this many of its first characters has that end masked (`Redactor.lines`). */
  tailMin: number;
}

/** In a stream, a line ending in this much of a secret (or of its hex, or its base64) has that end masked. */
const TAIL_PLAIN = 4;
const TAIL_BASE64 = 6;
const TAIL_HEX = 8;

function addEncoded(needles: Needle[], s: string): void {
  const bytes = Buffer.from(s, "utf8");
  needles.push({ text: bytes.toString("hex"), tailMin: TAIL_HEX });
  for (const b64 of [bytes.toString("base64").replace(/=+$/, ""), bytes.toString("base64url")])
    needles.push({ text: foldText(b64), tailMin: TAIL_BASE64 });
  for (const core of base64Cores(bytes))
    if (core.length >= MIN_CORE_LENGTH)
      for (const c of [core, core.replace(/\+/g, "-").replace(/\//g, "_")])
        needles.push({ text: foldText(c), tailMin: TAIL_BASE64 });
}

function addPlain(needles: Needle[], s: string, encoded: boolean): void {
  const text = foldText(s);
  if (text.length < MIN_SECRET_LENGTH) return;
  needles.push({ text, tailMin: TAIL_PLAIN });
  if (encoded) addEncoded(needles, s);
}

/**
 * What is searched for one secret: the secret in every encoding (`addPlain`), and for a secret
 * that is a URL, its password or token and its path and query too (a webhook's token lives
 * there); its scheme and host stay readable, so a message still says where it went.
 */
function needlesOf(secret: string): Needle[] {
  if (secret.length < MIN_SECRET_LENGTH || isNotSecret(secret)) return [];
  const needles: Needle[] = [];
  addPlain(needles, secret, true);
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
      addPlain(needles, pass, true);
      addPlain(needles, u.password, false);
      needles.push({ text: foldText(Buffer.from(`${user}:${pass}`, "utf8").toString("base64")), tailMin: TAIL_BASE64 });
    } else if (u.username !== "") {
      // a user name without a password is a token
      addPlain(needles, safeDecode(u.username), true);
      addPlain(needles, u.username, false);
    }
    const rest = `${u.pathname === "/" ? "" : u.pathname}${u.search}`;
    if (rest !== "") {
      addPlain(needles, rest, false);
      if (u.pathname !== "/") addPlain(needles, u.pathname, false);
      if (u.search !== "") addPlain(needles, u.search.slice(1), false);
    }
  }
  return needles.filter((n) => n.text.length >= MIN_SECRET_LENGTH);
}

const isNotSecret = (s: string): boolean => NOT_SECRETS.has(s.toLowerCase());

/** Aho-Corasick over folded UTF-16 units: a trie of every needle with failure links. */
class Matcher {
  /** Children: the root's ASCII ones in an array, the rest as first-child / next-sibling lists. */
  readonly #rootAscii = new Int32Array(128);
  readonly #rootWide = new Map<number, number>();
  #char: number[] = [0];
  #firstChild: number[] = [0];
  #sibling: number[] = [0];
  #fail: number[] = [0];
  #depth: number[] = [0];
  /** The longest needle that ends here (this node or a suffix of it): 0 for none. */
  #out: number[] = [0];
  /** The least `tailMin` of the needles through this node. */
  #tailMin: number[] = [Infinity];
  readonly empty: boolean;

  constructor(needles: readonly Needle[]) {
    this.empty = needles.length === 0;
    for (const n of needles) this.#insert(n);
    this.#link();
  }

  #child(node: number, c: number): number {
    if (node === 0) return c < 128 ? this.#rootAscii[c]! : (this.#rootWide.get(c) ?? 0);
    for (let k = this.#firstChild[node]!; k !== 0; k = this.#sibling[k]!) if (this.#char[k] === c) return k;
    return 0;
  }

  #insert(n: Needle): void {
    let node = 0;
    for (let i = 0; i < n.text.length; i++) {
      const c = n.text.charCodeAt(i);
      let next = this.#child(node, c);
      if (next === 0) {
        next = this.#char.length;
        this.#char.push(c);
        this.#firstChild.push(0);
        this.#fail.push(0);
        this.#depth.push(i + 1);
        this.#out.push(0);
        this.#tailMin.push(Infinity);
        if (node === 0) {
          this.#sibling.push(0);
          if (c < 128) this.#rootAscii[c] = next;
          else this.#rootWide.set(c, next);
        } else {
          this.#sibling.push(this.#firstChild[node]!);
          this.#firstChild[node] = next;
        }
      }
      node = next;
      this.#tailMin[node] = Math.min(this.#tailMin[node]!, n.tailMin);
    }
    this.#out[node] = Math.max(this.#out[node]!, n.text.length);
  }

  /** Failure links, breadth first; `out` takes the longest needle among the suffixes. */
  #link(): void {
    const queue: number[] = [];
    for (const k of this.#rootAscii) if (k !== 0) queue.push(k);
    for (const k of this.#rootWide.values()) queue.push(k);
    for (let h = 0; h < queue.length; h++) {
      const node = queue[h]!;
      for (let k = this.#firstChild[node]!; k !== 0; k = this.#sibling[k]!) {
        const c = this.#char[k]!;
        let f = this.#fail[node]!;
        while (f !== 0 && this.#child(f, c) === 0) f = this.#fail[f]!;
        const target = this.#child(f, c);
        this.#fail[k] = target === k ? 0 : target;
        this.#out[k] = Math.max(this.#out[k]!, this.#out[this.#fail[k]!]!);
        queue.push(k);
      }
    }
  }

  step(state: number, c: number): number {
    let s = state;
    for (;;) {
      const next = this.#child(s, c);
      if (next !== 0) return next;
      if (s === 0) return 0;
      s = this.#fail[s]!;
    }
  }

  /** The longest needle ending at `state` (0: none). */
  out(state: number): number {
    return this.#out[state]!;
  }

  /** How much of a needle's start `state` has read, when that is enough to mask a line's end; else 0. */
  tail(state: number): number {
    for (let s = state; s !== 0; s = this.#fail[s]!) if (this.#depth[s]! >= this.#tailMin[s]!) return this.#depth[s]!;
    return 0;
  }
}

/** A reading of a text: UTF-16 units, each from `[from, to)` of the original. */
interface View {
  codes: ArrayLike<number>;
  from: ArrayLike<number>;
  to: ArrayLike<number>;
  length: number;
}

function rawView(text: string): View {
  const n = text.length;
  const codes = new Uint16Array(n);
  const from = new Int32Array(n);
  const to = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    codes[i] = text.charCodeAt(i);
    from[i] = i;
    to[i] = i + 1;
  }
  return { codes, from, to, length: n };
}

const hexValue = (c: number | undefined): number =>
  c === undefined ? -1 : c >= 48 && c <= 57 ? c - 48 : c >= 97 && c <= 102 ? c - 87 : c >= 65 && c <= 70 ? c - 55 : -1;
const isPunct = (c: number): boolean =>
  (c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) || (c >= 123 && c <= 126);
const JSON_CONTROL: Record<number, number> = { 98: 8, 102: 12, 110: 10, 114: 13, 116: 9 };
const NAMED: Record<string, number> = { amp: 38, lt: 60, gt: 62, quot: 34, apos: 39, nbsp: 160 };

/** Whether a reading holds an escape `decode` reads: `%`, `\` or `&`. */
function hasEscape(v: View): boolean {
  for (let i = 0; i < v.length; i++) {
    const c = v.codes[i];
    if (c === 37 || c === 92 || c === 38) return true;
  }
  return false;
}

/**
 * The reading of `v` with one level of escapes decoded (see above); undefined when it has none.
 * A malformed escape is read as written.
 */
function decode(v: View): View | undefined {
  const n = v.length;
  const codes: number[] = [];
  const from: number[] = [];
  const to: number[] = [];
  let changed = false;
  const emitPoint = (cp: number, a: number, b: number): void => {
    const units = cp > 0xffff ? [0xd800 + ((cp - 0x10000) >> 10), 0xdc00 + ((cp - 0x10000) & 0x3ff)] : [cp];
    for (const u of units) {
      codes.push(u);
      from.push(v.from[a]!);
      to.push(v.to[b]!);
    }
    changed = true;
  };
  const pct = (i: number): number =>
    v.codes[i] === 37 && i + 2 < n
      ? ((h, l) => (h < 0 || l < 0 ? -1 : h * 16 + l))(hexValue(v.codes[i + 1]), hexValue(v.codes[i + 2]))
      : -1;
  let i = 0;
  while (i < n) {
    const c = v.codes[i]!;
    if (c === 37) {
      const b = pct(i);
      if (b >= 0 && b < 0x80) {
        emitPoint(b, i, i + 2);
        i += 3;
        continue;
      }
      // a UTF-8 sequence, each byte percent-encoded
      const more = b >= 0xf0 && b <= 0xf4 ? 3 : b >= 0xe0 && b <= 0xef ? 2 : b >= 0xc2 && b <= 0xdf ? 1 : 0;
      if (more > 0) {
        let cp = b & (0x3f >> more);
        let j = i + 3;
        let ok = true;
        for (let k = 0; k < more && ok; k++, j += 3) {
          const cb = pct(j);
          ok = cb >= 0x80 && cb <= 0xbf;
          cp = (cp << 6) | (cb & 0x3f);
        }
        if (ok && cp <= 0x10ffff) {
          emitPoint(cp, i, j - 1);
          i = j;
          continue;
        }
      }
    } else if (c === 92 && i + 1 < n) {
      const d = v.codes[i + 1]!;
      if (d === 117 && i + 5 < n) {
        const h = [2, 3, 4, 5].map((k) => hexValue(v.codes[i + k]));
        if (h.every((x) => x >= 0)) {
          emitPoint(((h[0]! * 16 + h[1]!) * 16 + h[2]!) * 16 + h[3]!, i, i + 5);
          i += 6;
          continue;
        }
      } else if (d === 120 && i + 3 < n && hexValue(v.codes[i + 2]) >= 0 && hexValue(v.codes[i + 3]) >= 0) {
        emitPoint(hexValue(v.codes[i + 2]) * 16 + hexValue(v.codes[i + 3]), i, i + 3);
        i += 4;
        continue;
      } else if (JSON_CONTROL[d] !== undefined || isPunct(d)) {
        emitPoint(JSON_CONTROL[d] ?? d, i, i + 1);
        i += 2;
        continue;
      }
    } else if (c === 38 && i + 2 < n) {
      let j = i + 1;
      let cp = -1;
      if (v.codes[j] === 35) {
        const hex = v.codes[j + 1] === 120 || v.codes[j + 1] === 88;
        j += hex ? 2 : 1;
        let value = 0;
        let digits = 0;
        for (; j < n && digits < 8; j++, digits++) {
          const h = hexValue(v.codes[j]);
          if (h < 0 || (!hex && h > 9)) break;
          value = value * (hex ? 16 : 10) + h;
        }
        if (digits > 0 && value > 0 && value <= 0x10ffff) cp = value;
        // the `;` is optional for a numeric reference, as browsers read it
        if (cp >= 0 && v.codes[j] === 59) j++;
      } else {
        let name = "";
        for (; j < n && j < i + 6 && name.length < 5; j++) {
          const l = v.codes[j]! | 0x20;
          if (l < 97 || l > 122) break;
          name += String.fromCharCode(l);
        }
        if (v.codes[j] === 59 && NAMED[name] !== undefined) {
          cp = NAMED[name]!;
          j++;
        }
      }
      if (cp >= 0) {
        emitPoint(cp, i, j - 1);
        i = j;
        continue;
      }
    }
    codes.push(c);
    from.push(v.from[i]!);
    to.push(v.to[i]!);
    i++;
  }
  return changed ? { codes, from, to, length: codes.length } : undefined;
}

/** Readings beyond the text as written: a secret percent-encoded inside a percent-encoded URL is two deep. */
const MAX_DECODES = 3;

/** Every reading of a text: as written, then each level of decoding while one changes something. */
function readings(text: string): (View | string)[] {
  const out: (View | string)[] = [text];
  if (!/[%\\&]/.test(text)) return out;
  let v: View | undefined = rawView(text);
  for (let k = 0; k < MAX_DECODES && v && hasEscape(v); k++) {
    v = decode(v);
    if (v) out.push(v);
  }
  return out;
}

/**
 * Searches one reading from `state`, adding the `[from, to)` ranges of the original it masks to
 * `marks`; returns the state after it. A match that began before this text (a stream's earlier
 * line) masks from the text's start. With `tail`, an end that is a needle's start is masked too.
 */
function scan(m: Matcher, r: View | string, state: number, marks: number[], tail: boolean): number {
  const isText = typeof r === "string";
  const n = r.length;
  // the reading's index of each character read (line breaks are skipped), to find a match's start
  const read = new Int32Array(n);
  let count = 0;
  let s = state;
  for (let p = 0; p < n; p++) {
    const f = fold(isText ? r.charCodeAt(p) : r.codes[p]!);
    if (f < 0) continue;
    read[count++] = p;
    s = m.step(s, f);
    const len = m.out(s);
    if (len > 0) {
      const first = count - len;
      marks.push(first >= 0 ? (isText ? read[first]! : r.from[read[first]!]!) : 0, isText ? p + 1 : r.to[p]!);
    }
  }
  if (tail) {
    const len = m.tail(s);
    const first = count - len;
    if (len > 0 && count > 0)
      marks.push(first >= 0 ? (isText ? read[first]! : r.from[read[first]!]!) : 0, Number.MAX_SAFE_INTEGER);
  }
  return s;
}

/** `text` with every range of `marks` (pairs) replaced by one mask, overlapping or touching ranges as one. */
function applyMarks(text: string, marks: number[]): string {
  if (marks.length === 0) return text;
  const ranges: [number, number][] = [];
  for (let i = 0; i < marks.length; i += 2) ranges.push([marks[i]!, Math.min(marks[i + 1]!, text.length)]);
  ranges.sort((x, y) => x[0] - y[0]);
  let out = "";
  let at = 0;
  let open: [number, number] | undefined;
  for (const r of ranges) {
    if (open && r[0] <= open[1]) {
      open[1] = Math.max(open[1], r[1]);
      continue;
    }
    if (open) {
      out += text.slice(at, open[0]) + MASK;
      at = open[1];
    }
    open = [r[0], r[1]];
  }
  if (open) {
    out += text.slice(at, open[0]) + MASK;
    at = open[1];
  }
  return out + text.slice(at);
}

/** What a redactor searches for: live sets of secrets, each matcher built again when its set grew. */
interface Source {
  secrets: ReadonlySet<string>;
  size: number;
  matcher: Matcher | undefined;
}

function matcherOf(src: Source): Matcher {
  if (!src.matcher || src.size !== src.secrets.size) {
    src.size = src.secrets.size;
    src.matcher = new Matcher([...src.secrets].flatMap(needlesOf));
  }
  return src.matcher;
}

interface Parts {
  sources: Source[];
  /** A redaction we cannot look into (a plain function), applied first. */
  foreign?: (text: string) => string;
}

const PARTS = new WeakMap<object, Parts>();

/**
 * A redactor for a set of secrets (live: secrets added to the set later count too), on top of
 * `base` (another redactor: a hook's own secrets on top of the run's; its secrets are searched in
 * the same pass, so a stream of lines sees both cut across lines).
 */
export function createRedactor(secrets: Iterable<string>, base?: (text: string) => string): Redactor {
  const own: Source = {
    secrets: secrets instanceof Set ? (secrets as Set<string>) : new Set(secrets),
    size: -1,
    matcher: undefined,
  };
  const inner = base ? PARTS.get(base) : undefined;
  const parts: Parts = inner
    ? { sources: [own, ...inner.sources], ...(inner.foreign ? { foreign: inner.foreign } : {}) }
    : { sources: [own], ...(base ? { foreign: base } : {}) };

  /**
   * The masks of one text. A stream keeps, per source, the matcher it read with and its state
   * after each reading of the last line (a matcher built again for new secrets starts afresh).
   */
  const redactOnce = (t: string, stream?: { m: Matcher; states: number[] }[]): string => {
    const input = parts.foreign ? parts.foreign(t) : t;
    const ms = parts.sources.map(matcherOf);
    if (ms.every((m) => m.empty)) return stripUserinfo(input);
    const marks: number[] = [];
    const rs = readings(input);
    ms.forEach((m, k) => {
      if (m.empty) return;
      if (!stream) {
        for (const r of rs) scan(m, r, 0, marks, false);
        return;
      }
      let carried = stream[k];
      if (carried?.m !== m) carried = stream[k] = { m, states: [] };
      const st = carried.states;
      // a deeper reading an earlier line needed still carries what it began: read this line there too
      const levels = Math.max(rs.length, st.length);
      for (let level = 0; level < levels; level++)
        st[level] = scan(m, rs[Math.min(level, rs.length - 1)]!, st[level] ?? 0, marks, true);
    });
    // a Basic credential is decoded: the user name before the secret shifts its base64 by any amount
    for (const b of input.matchAll(BASIC)) {
      const b64 = b[1]!;
      const decoded = Buffer.from(b64, "base64").toString("utf8");
      const found: number[] = [];
      for (const m of ms) if (!m.empty) for (const r of readings(decoded)) scan(m, r, 0, found, false);
      if (found.length > 0) marks.push(b.index + b[0].length - b64.length, b.index + b[0].length);
    }
    return stripUserinfo(applyMarks(input, marks));
  };

  // the same short strings come back in every answer (field names, states, cluster names): each is
  // redacted once per set of secrets (a fleet of 64 read every 100 ms inside the write-stop window
  // spent more on this than on anything else of the read, issue 41). Not over a foreign redaction:
  // its secrets may change without this one knowing; every source's matcher is checked instead.
  const cache = new Map<string, string>();
  let cachedFor: Matcher[] = [];
  /** The cache is for the secrets as they are now: forgotten when a source's matcher was built again. */
  const current = (): void => {
    const ms = parts.sources.map(matcherOf);
    if (ms.length !== cachedFor.length || ms.some((m, k) => m !== cachedFor[k])) {
      cache.clear();
      cachedFor = ms;
    }
  };
  /** Once `current()` held for this synchronous pass (no secret can be added inside it). */
  const lookup = (t: string): string => {
    if (t.length > CACHED_LENGTH) return redactOnce(t);
    let out = cache.get(t);
    if (out === undefined) {
      if (cache.size >= CACHED_STRINGS) cache.clear();
      out = redactOnce(t);
      cache.set(t, out);
    }
    return out;
  };
  const cached = (t: string): string => {
    if (parts.foreign) return redactOnce(t);
    current();
    return lookup(t);
  };
  const redactor = cached as Redactor;
  // a value's leaves in one pass: the secrets are checked once for all of them, not per leaf (a
  // progress answer has some forty; issue 41: per answer of a 64-instance read inside the window)
  redactor.value = <T>(v: T, keep?: ReadonlySet<string>): T => {
    if (parts.foreign) return redactLeaves(v, redactor, keep);
    current();
    return redactLeaves(v, lookup, keep);
  };
  redactor.lines = () => {
    const stream: { m: Matcher; states: number[] }[] = [];
    return (line: string) => redactOnce(line, stream);
  };
  PARTS.set(redactor, parts);
  return redactor;
}

/** Strings up to this long are redacted once and remembered, up to this many (then forgotten at once). */
const CACHED_LENGTH = 256;
const CACHED_STRINGS = 8192;

const BASIC = /\bBasic\s+([A-Za-z0-9+/_-]{4,}={0,2})/gi;

/** Only URL userinfo, for output that carries no run's secrets (the API client's own messages). */
export const userinfoRedactor: Redactor = createRedactor([]);

/**
 * The first bytes of an answer body for a message: redacted before it is cut (half a secret is no
 * longer recognisable), on one line. A JSON body is parsed first and redacted leaf by leaf, then
 * shown as JSON again: its escapes (`\u0026`) are read as the characters they are, and a secret
 * that is a key is removed too.
 */
export function bodyExcerpt(text: string, max = 120, redact: (text: string) => string = stripUserinfo): string {
  let shown: string | undefined;
  const trimmed = text.trim();
  if (trimmed.startsWith("{") || trimmed.startsWith("[")) {
    try {
      shown = JSON.stringify(redactLeaves(JSON.parse(trimmed) as unknown, redact));
    } catch {
      shown = undefined;
    }
  }
  const oneLine = (shown ?? redact(text)).replace(/\s+/g, " ").trim();
  return oneLine.length > max ? `${oneLine.slice(0, max)}…` : oneLine;
}

/**
 * Secrets a process's environment holds besides `${env.*}` values: the header values of the
 * OpenTelemetry exporter (`OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_EXPORTER_OTLP_TRACES_HEADERS`, and
 * the other signals'), an API key a collector may echo back. Read as the exporter reads them
 * (`key=value` pairs separated by `,`, properties after `;`, values percent-decoded:
 * @opentelemetry/core, baggage/utils.js `parseKeyPairsIntoRecord`): each value as written and
 * decoded, and the credential after an authorization scheme (`Bearer x`, `Basic x` and its
 * password, `Api-Key x`).
 */
export function environmentSecrets(env: Readonly<Record<string, string | undefined>>): string[] {
  const out: string[] = [];
  for (const [name, raw] of Object.entries(env)) {
    if (raw === undefined || !/^OTEL_EXPORTER_OTLP_(?:[A-Z]+_)?HEADERS$/.test(name)) continue;
    for (const item of raw.split(",")) {
      const pair = item.split(";")[0] ?? "";
      const eq = pair.indexOf("=");
      if (eq <= 0) continue;
      const value = pair.slice(eq + 1).trim();
      if (value === "") continue;
      const decoded = safeDecode(value);
      out.push(value, decoded);
      const credential = /^(?:bearer|basic|token|apikey|api-key|key|splunk|digest|negotiate)\s+(\S.*)$/i.exec(
        decoded,
      )?.[1];
      if (credential) {
        out.push(credential);
        if (/^basic\s/i.test(decoded)) {
          const userPass = Buffer.from(credential, "base64").toString("utf8");
          const colon = userPass.indexOf(":");
          if (colon >= 0) out.push(userPass.slice(colon + 1));
        }
      }
    }
  }
  return [...new Set(out)].filter((s) => s.length >= MIN_SECRET_LENGTH);
}

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
