/** Small helpers for the sentences syncbook writes (lint findings, step messages). */
import { maskUrlPasswords } from "./redact.js";

/** Backtick-quote a value for a message (redaction happens on the whole message where it is emitted). */
export function q(value: unknown): string {
  return `\`${typeof value === "string" ? value : JSON.stringify(value)}\``;
}

/**
 * A byte count for people, the one format of every output: binary units (the service reports
 * bytes and operators compare against disk sizes), one decimal below 100 (`1 KiB`, `1.5 KiB`,
 * `95.4 MiB`, `186 GiB`): the line width stays stable while the number still moves. `?` for a
 * negative or unknown count.
 */
export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes) || bytes < 0) return "?";
  const units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
  let v = bytes;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  if (u === 0) return `${Math.round(v)} B`;
  const text = v < 100 ? v.toFixed(1).replace(/\.0$/, "") : String(Math.round(v));
  return `${text} ${units[u] ?? "?"}`;
}

// XML 1.0 / HTML text: drop characters XML cannot carry, escape the five specials.
// eslint-disable-next-line no-control-regex
const XML_INVALID = /[^\x09\x0A\x0D\x20-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;

/**
 * Text for an XML or HTML text node or quoted attribute value (report.html, junit.xml, lint's
 * JUnit): the one escaper. `'` becomes `&#39;`, not `&apos;`: the same text goes into HTML,
 * where `&apos;` is not an HTML 4 entity, and `&#39;` means `'` in both.
 */
export function escapeXml(s: unknown): string {
  return String(s)
    .replace(XML_INVALID, "")
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&#39;");
}

// C0 controls but tab and line feed, DEL, C1 controls (0x9B is a one-byte CSI), and the Unicode
// formatting characters that reorder or hide what is shown (bidi embeddings, overrides, isolates)
// eslint-disable-next-line no-control-regex
const TERMINAL_UNSAFE = /[\x00-\x08\x0B-\x1F\x7F-\x9F\u200E\u200F\u202A-\u202E\u2066-\u2069]/g;
// eslint-disable-next-line no-control-regex
const TERMINAL_UNSAFE_OR_LF = /[\x00-\x08\x0A-\x1F\x7F-\x9F\u200E\u200F\u202A-\u202E\u2066-\u2069]/g;

/** A control character as one visible character of the same length: `␛` for ESC, `␍` for CR, `␡`, `�`. */
function controlPicture(c: string): string {
  const code = c.charCodeAt(0);
  return code < 0x20 ? String.fromCharCode(0x2400 + code) : code === 0x7f ? "\u2421" : "\ufffd";
}

/**
 * Text from outside (a hook's output, a plugin's log line, a service's error, a runbook string)
 * made safe to draw on a terminal: the one sanitizer. Every control character becomes a visible
 * one of the same length, so a hook printing ESC[1A ESC[2K and a fake "✔ Commit ok" shows those
 * bytes instead of moving the cursor and erasing lines, and a caret under a source line stays
 * where it was. Tabs stay; a line feed stays only with `lines` (a message of several lines), else
 * it is `␊`: a foreign text cannot start a line of its own. syncbook's own colours are drawn
 * after this, around the sanitized text, so they are kept.
 */
export function terminalText(text: string, opts: { lines?: boolean } = {}): string {
  const unsafe = opts.lines ? TERMINAL_UNSAFE : TERMINAL_UNSAFE_OR_LF;
  unsafe.lastIndex = 0;
  return unsafe.test(text) ? text.replace(unsafe, controlPicture) : text;
}

/**
 * `terminalText` over every string of a value (an event), keys included, copying only what
 * changes: an event without a control character is returned as it is.
 */
export function terminalValue<T>(v: T, depth = 0): T {
  if (typeof v === "string") return terminalText(v) as T;
  if (v === null || typeof v !== "object" || depth > 64) return v;
  if (Array.isArray(v)) {
    const arr: readonly unknown[] = v;
    let out: unknown[] | undefined;
    arr.forEach((x, i) => {
      const y = terminalValue(x, depth + 1);
      if (y !== x) (out ??= [...arr])[i] = y;
    });
    return (out ?? v) as T;
  }
  let out: Record<string, unknown> | undefined;
  for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
    const key = terminalText(k);
    const y = terminalValue(x, depth + 1);
    if (key !== k || y !== x) {
      out ??= { ...(v as Record<string, unknown>) };
      if (key !== k) delete out[k];
      out[key] = y;
    }
  }
  return (out ?? v) as T;
}

/** `1 step`, `3 steps`. */
export function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

/**
 * Line `line` (1-based) of `text`, without its line break, with any password written in a URL
 * masked at the same width (a finding's carets still point where they did).
 */
export function sourceLine(text: string | undefined, line: number): string | undefined {
  if (text === undefined) return undefined;
  let start = 0;
  for (let l = 1; l < line; l++) {
    const nl = text.indexOf("\n", start);
    if (nl < 0) return undefined;
    start = nl + 1;
  }
  const end = text.indexOf("\n", start);
  return maskUrlPasswords(text.slice(start, end < 0 ? undefined : end).replace(/\r$/, ""));
}

/** A place in a runbook: its file, 1-based line and column, and that line's (redacted) text. */
export interface Place {
  file: string;
  line: number;
  column: number;
  /** The source line, when known. */
  source?: string;
  /** Columns to underline (default 1). */
  width?: number;
}

export interface FramePaint {
  gutter(s: string): string;
  caret(s: string): string;
}

const plain: FramePaint = { gutter: (s) => s, caret: (s) => s };

/**
 * Where something is, as a compiler says it (lint's findings and a run's failing step alike):
 *
 *       --> runbooks/x.yaml:12:5
 *        |
 *     12 |   - commit: {}
 *        |     ^^^^^^
 */
export function codeFrame(p: Place, paint: FramePaint = plain): string[] {
  const pad = " ".repeat(String(p.line).length);
  const lines = [`${pad}${paint.gutter("-->")} ${terminalText(p.file)}:${p.line}:${p.column}`];
  // a runbook's line drawn on a terminal: its control characters shown, one for one (the caret stays)
  const source = p.source === undefined ? undefined : terminalText(p.source);
  if (source !== undefined) {
    // keep tabs in the indent so the caret lines up however the terminal shows them
    const before = source.slice(0, Math.max(0, p.column - 1)).replace(/[^\t]/g, " ");
    const shown = Math.max(1, Math.min(p.width ?? 1, source.length - (p.column - 1)));
    lines.push(`${pad} ${paint.gutter("|")}`);
    lines.push(`${paint.gutter(`${p.line} |`)} ${source}`);
    lines.push(`${pad} ${paint.gutter("|")} ${before}${paint.caret("^".repeat(shown))}`);
  }
  return lines;
}

/**
 * One JSON line for an event (journal, `--renderer json`): JSON with a fallback for values
 * JSON.stringify refuses (BigInt, cycles) instead of losing the event.
 */
export function jsonLine(value: object): string {
  try {
    return JSON.stringify(value);
  } catch {
    const seen = new WeakSet<object>();
    return JSON.stringify(value, (_k, v: unknown) => {
      if (typeof v === "bigint") return v.toString();
      if (typeof v === "object" && v !== null) {
        if (seen.has(v)) return "[circular]";
        seen.add(v);
      }
      return v;
    });
  }
}

/** One generation's documents as the migration verifier counts them (`generationStats`, `gen0Stats`). */
export interface GenerationDocs {
  compared: number;
  total: number;
}

/**
 * What the verifier's document counters say, in the words of its source (the one home of these
 * words: the live UI, the report, the step messages and the watch page, which inlines this source).
 * migration-verifier tag v0.2.1 (the same meaning from v0.1.6), internal/verifier/statistics.go
 * `perNsStatsPipelineTemplate` counts the **current generation** only: `docsCompared` the documents
 * its finished tasks found on the source; `totalDocs` "In generation 0 … the total docs from the
 * verify-collection tasks" (tasks/task.go: "the source collection's estimated docs count", set as
 * each collection is sized) and "In generation 1+ … the # of documents to recheck". `gen0Stats`
 * (api.go, v0.1.10 and later) holds "the final doc/byte counts from generation 0"; without it
 * nothing is said of generation 0 past generation 0. `count` formats a number. Uses nothing
 * outside itself: the watch page runs its source.
 */
export function verifierDocsText(
  generation: number | undefined,
  docs: GenerationDocs,
  gen0?: GenerationDocs,
  count: (n: number) => string = String,
): string {
  const c = count(docs.compared);
  const t = count(docs.total);
  if (generation === 0)
    return docs.compared > docs.total
      ? `${c} docs compared (the first pass), more than the ${t} estimated as the collections were sized (an estimate; the source may have grown since)`
      : `${c} of about ${t} docs compared (the first pass; ${t} is the estimated count of the collections sized so far)`;
  if (generation === undefined) return `${c} of ${t} docs compared (the current generation only, not a total)`;
  const first = gen0 ? `; generation 0 compared ${count(gen0.compared)} of about ${count(gen0.total)}` : "";
  return `${c} of ${t} docs to recheck compared (this generation only, not a total${first})`;
}

/**
 * argv as a POSIX shell command an operator can paste: an argument with anything but
 * `[A-Za-z0-9_@%+=:,./-]` is single-quoted (a `'` inside as `'\''`), so `$`, `;`, `*` and spaces
 * reach the program as written, as they do when syncbook runs it (no shell).
 */
export function shellCommand(argv: readonly string[]): string {
  return argv.map((a) => (/^[A-Za-z0-9_@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`)).join(" ");
}
