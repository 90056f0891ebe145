// XML 1.0 / HTML text: drop characters XML cannot carry, escape the five specials.
// eslint-disable-next-line no-control-regex
const INVALID = /[^\x09\x0A\x0D\x20-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;

/** Escapes text for an XML/HTML text node or a quoted attribute value. */
export const esc = (s: unknown): string =>
  String(s)
    .replace(INVALID, "")
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&#39;");
