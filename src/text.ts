/** Small helpers for the sentences syncbook writes (lint findings, step messages). */

/** Backtick-quote a value for a message (redaction happens on the whole message where it is emitted). */
export function q(value: unknown): string {
  return `\`${typeof value === "string" ? value : JSON.stringify(value)}\``;
}

/** `1 step`, `3 steps`. */
export function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

/** Line `line` (1-based) of `text`, without its line break. */
export function sourceLine(text: string | undefined, line: number): string | undefined {
  if (text === undefined) return undefined;
  let start = 0;
  for (let l = 1; l < line; l++) {
    const nl = text.indexOf("\n", start);
    if (nl < 0) return undefined;
    start = nl + 1;
  }
  const end = text.indexOf("\n", start);
  return text.slice(start, end < 0 ? undefined : end).replace(/\r$/, "");
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
  const lines = [`${pad}${paint.gutter("-->")} ${p.file}:${p.line}:${p.column}`];
  if (p.source !== undefined) {
    // keep tabs in the indent so the caret lines up however the terminal shows them
    const before = p.source.slice(0, Math.max(0, p.column - 1)).replace(/[^\t]/g, " ");
    const shown = Math.max(1, Math.min(p.width ?? 1, p.source.length - (p.column - 1)));
    lines.push(`${pad} ${paint.gutter("|")}`);
    lines.push(`${paint.gutter(`${p.line} |`)} ${p.source}`);
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

/**
 * The verifier's documents compared of a generation's total, said so that more than the total
 * is not read as 277 % done: a recheck compares a document again, and each comparison counts.
 */
export function docsComparedText(compared: string, total: string, over: boolean): string {
  return over
    ? `${compared} comparisons of ${total} docs (a recheck compares a document again)`
    : `${compared} of ${total} docs compared`;
}
