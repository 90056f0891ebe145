/**
 * Defence in depth for reports. The runner redacts events at the source; a report is kept and
 * mailed around for years, so it redacts again: URL userinfo is stripped from every string, header
 * values are never kept, and keys that name a secret lose their value.
 */

import { stripUserinfo as redactText } from "../redact.js";

export const REDACTED = "[redacted]";

const HEADER_CONTAINERS = /^(headers|header|httpheaders)$/i;
const SECRET_KEY = /(authorization|cookie|password|passwd|secret|token|api[-_]?key|credential|private[-_]?key)/i;

/** Strips URL userinfo (`scheme://user:pw@` → `scheme://***@`): the API client's redaction, one rule for both. */
export const stripUserinfo = redactText;

/** A deep copy with userinfo stripped, header values and secret-named values replaced. */
export function redactValue(value: unknown, depth = 0): unknown {
  if (typeof value === "string") return stripUserinfo(value);
  if (value === null || typeof value !== "object") return value;
  if (depth > 64) return REDACTED;
  if (Array.isArray(value)) return value.map((v) => redactValue(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    const key = stripUserinfo(k);
    if (HEADER_CONTAINERS.test(k) && v !== null && typeof v === "object") {
      // never print header values: keep the names so a reader knows which were sent
      const names = Array.isArray(v)
        ? v.map((h) => (Array.isArray(h) ? String(h[0]) : typeof h === "string" ? (h.split(":")[0] ?? "") : ""))
        : Object.keys(v);
      out[key] = Object.fromEntries(names.filter((n) => n !== "").map((n) => [stripUserinfo(n), REDACTED]));
    } else if (SECRET_KEY.test(k) && v !== null && v !== undefined && v !== false) {
      out[key] = REDACTED;
    } else {
      out[key] = redactValue(v, depth + 1);
    }
  }
  return out;
}
