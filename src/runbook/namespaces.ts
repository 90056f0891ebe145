/**
 * The namespace filter language (lint and preflight read it): which entry selects which `db.collection`,
 * and the service's regular expressions (PCRE, option letters i, m, s, x) checked with
 * JavaScript's engine after translating the PCRE spellings JavaScript lacks.
 *
 * Answers are three-valued: `true` / `false` when certain, `undefined` when lint cannot
 * tell (an invalid pattern, a PCRE construct JavaScript has no equivalent for). Rules only
 * report what is certain.
 */
import type { FilterEntry } from "./types.js";
import { errorMessage } from "../errors.js";

export const REGEX_FIELDS = ["collectionsRegex", "databaseRegex"] as const;
export type RegexField = (typeof REGEX_FIELDS)[number];
export const REGEX_OPTION_LETTERS = "imsx";

export type RegexResult = { ok: true; regex: RegExp } | { ok: false; error: string; unsupported: boolean };

/** PCRE constructs with no JavaScript translation: a pattern using them is not judged. */
const PCRE_ONLY = /\(\?R\)|\(\?[+-]?\d+\)|\(\?P>|\(\?&|\(\?\||\\Q|\(\*[A-Z]|\\G|\\K|\(\?#|\(\?C/;

/**
 * Translate a PCRE pattern to JavaScript: leading inline flags `(?i)`, atomic groups,
 * possessive quantifiers, `\A` `\z` `\Z`, Python-style named groups, and extended mode (`x`).
 */
function translate(pattern: string, options: string): { source: string; flags: string } {
  let flags = "";
  let extended = options.includes("x");
  for (const f of "ims") if (options.includes(f)) flags += f;
  let src = pattern;
  const inline = /^\(\?([imsx]+)\)/.exec(src);
  if (inline?.[1]) {
    for (const f of inline[1]) {
      if (f === "x") extended = true;
      else if (!flags.includes(f)) flags += f;
    }
    src = src.slice(inline[0].length);
  }
  let out = "";
  let inClass = false;
  /** The last token emitted is a quantifier (so a following `+` makes it possessive). */
  let lastQuant = false;
  for (let i = 0; i < src.length; i++) {
    const c = src[i] as string;
    const next = src[i + 1];
    const wasQuant: boolean = lastQuant;
    lastQuant = false;
    if (c === "\\") {
      if (!inClass && next === "A") out += "^";
      else if (!inClass && (next === "z" || next === "Z")) out += "$";
      else out += c + (next ?? "");
      i++;
      continue;
    }
    if (inClass) {
      if (c === "]") inClass = false;
      out += c;
      continue;
    }
    if (c === "[") {
      inClass = true;
      out += c;
      // a `]` right after `[` or `[^` is literal in PCRE
      if (src[i + 1] === "^") out += src[++i];
      if (src[i + 1] === "]") out += "\\" + src[++i];
      continue;
    }
    if (extended && /\s/.test(c)) {
      lastQuant = wasQuant;
      continue;
    }
    if (extended && c === "#") {
      while (i < src.length && src[i] !== "\n") i++;
      lastQuant = wasQuant;
      continue;
    }
    if (c === "(" && src.startsWith("(?>", i)) {
      out += "(?:";
      i += 2;
      continue;
    }
    if (c === "(" && src.startsWith("(?P<", i)) {
      out += "(?<";
      i += 3;
      continue;
    }
    if (c === "(" && src.startsWith("(?P=", i)) {
      const end = src.indexOf(")", i);
      if (end > 0) {
        out += `\\k<${src.slice(i + 4, end)}>`;
        i = end;
        continue;
      }
    }
    if (c === "+" && wasQuant) continue; // possessive `a++`, `a*+`, `a?+`, `a{2}+` → greedy
    if (c === "*" || c === "+" || c === "}" || (c === "?" && !out.endsWith("("))) lastQuant = true;
    out += c;
  }
  return { source: out, flags };
}

export function compileServiceRegex(pattern: string, options = ""): RegexResult {
  if (PCRE_ONLY.test(pattern))
    return { ok: false, error: "uses a PCRE construct lint cannot check", unsupported: true };
  const { source, flags } = translate(pattern, options);
  try {
    return { ok: true, regex: new RegExp(source, flags) };
  } catch (err) {
    const raw = errorMessage(err);
    // "Invalid regular expression: /…/: Unterminated group" → "Unterminated group"
    const reason = raw.replace(/^Invalid regular expression: \/.*\/[a-z]*: /s, "");
    return { ok: false, error: reason, unsupported: false };
  }
}

/** Letters of `options` the service does not accept, and letters given twice. */
export function badOptionLetters(options: string): { unknown: string[]; repeated: string[] } {
  const unknown: string[] = [];
  const repeated: string[] = [];
  const seen = new Set<string>();
  for (const ch of options) {
    if (!REGEX_OPTION_LETTERS.includes(ch)) {
      if (!unknown.includes(ch)) unknown.push(ch);
    } else if (seen.has(ch)) {
      if (!repeated.includes(ch)) repeated.push(ch);
    }
    seen.add(ch);
  }
  return { unknown, repeated };
}

/** One filter entry, ready for matching. */
export interface Selector {
  entry: FilterEntry;
  /** Index in its list. */
  index: number;
  /** No `collections` and no collection regex: the entry selects every collection of its database(s). */
  databaseLevel: boolean;
  /** Collection regex field used, if any. */
  collRegexField?: "collectionsRegex";
  db: (name: string) => boolean | undefined;
  coll: (name: string) => boolean | undefined;
}

function regexTest(
  spec: { pattern: string; options?: string } | undefined,
): ((s: string) => boolean | undefined) | undefined {
  if (!spec) return undefined;
  const r = compileServiceRegex(spec.pattern, spec.options ?? "");
  if (!r.ok) return () => undefined;
  return (s) => r.regex.test(s);
}

export function selector(entry: FilterEntry, index: number): Selector {
  const dbRegex = regexTest(entry.databaseRegex);
  const collRegexField = entry.collectionsRegex ? "collectionsRegex" : undefined;
  const collRegex = regexTest(entry.collectionsRegex);
  const names = entry.collections;
  const databaseLevel = names === undefined && collRegexField === undefined;
  const sel: Selector = {
    entry,
    index,
    databaseLevel,
    db: (name) => {
      if (entry.database !== undefined && dbRegex) {
        // both given: lint does not assume how the service combines them
        const byName = entry.database === name;
        return byName === dbRegex(name) ? byName : undefined;
      }
      if (entry.database !== undefined) return entry.database === name;
      if (dbRegex) return dbRegex(name);
      return undefined;
    },
    coll: (name) => {
      if (databaseLevel) return true;
      const byName = names === undefined ? undefined : names.includes(name);
      const byRegex = collRegex ? collRegex(name) : undefined;
      if (names !== undefined && collRegex) return byName === byRegex ? byName : undefined;
      return byName ?? byRegex;
    },
  };
  if (collRegexField) sel.collRegexField = collRegexField;
  return sel;
}

/** Whether a filter list selects `db.coll`: true / false when certain, undefined otherwise. */
export function listSelects(
  list: readonly Selector[],
  db: string,
  coll: string,
): { selected: boolean | undefined; by?: Selector } {
  let unsure = false;
  for (const s of list) {
    const d = s.db(db);
    const c = d === false ? false : s.coll(coll);
    if (d === true && c === true) return { selected: true, by: s };
    if (d === undefined || c === undefined) unsure = true;
  }
  return { selected: unsure ? undefined : false };
}
