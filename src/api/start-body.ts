/**
 * The start body as it goes on the wire. The runbook's `x-passthrough` holds fields the format
 * does not know yet; the service reads every start option at the top level of the body (facts:
 * "A field the format does not know yet must reach the service as a top-level field too"), so
 * they are merged there, never sent nested. The runner, `--dry-run` and the journal all send
 * and show this one shape.
 */
export const PASSTHROUGH = "x-passthrough";

/**
 * `{ ...body without x-passthrough, ...its fields }`. A passthrough field named like a field of
 * the body is a lint error (`passthrough-collision`); should one get here anyway (a library
 * caller that skipped lint), the field the format checked wins.
 */
export function wireStartBody(start: object): Record<string, unknown> {
  const body = start as Readonly<Record<string, unknown>>;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(body)) if (k !== PASSTHROUGH) define(out, k, v);
  const pass = body[PASSTHROUGH];
  if (pass !== null && typeof pass === "object" && !Array.isArray(pass)) {
    for (const [k, v] of Object.entries(pass)) if (!Object.hasOwn(out, k)) define(out, k, v);
  }
  return out;
}

/** Own enumerable data property, whatever the key (a `__proto__` key must not set the prototype). */
function define(o: Record<string, unknown>, k: string, v: unknown): void {
  Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
}
