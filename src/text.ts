/** Small helpers for the sentences syncbook writes (lint findings, step messages). */

/** Backtick-quote a value for a message (redaction happens on the whole message where it is emitted). */
export function q(value: unknown): string {
  return `\`${typeof value === "string" ? value : JSON.stringify(value)}\``;
}

/** `1 step`, `3 steps`. */
export function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}
