/**
 * Reading a progress answer the way its version means it: the one home for the fields whose
 * meaning or place moved between versions, so conditions, the live UI, `status`, stall and
 * recheck detection and the report agree. Each reader takes the answer as sent (or as a journal
 * kept it: anything), and never reads a field's absence as a version (service facts: several
 * fields are omitted where they do not apply).
 */
import type { GenerationDocs } from "../text.js";

type Loose = { readonly [k: string]: unknown };

const isObject = (v: unknown): v is Loose => v !== null && typeof v === "object" && !Array.isArray(v);
const finite = (v: unknown): number | undefined => (typeof v === "number" && Number.isFinite(v) ? v : undefined);

/**
 * The instance's lag in seconds: `lag.overallLagSeconds` when the answer has it (1.21+, where
 * `lagTimeSeconds` is deprecated; facts: "read `lag.overallLagSeconds` when present"), else
 * `lagTimeSeconds`. Null where the service reports none (IDLE, PAUSED); undefined when the
 * answer has neither.
 */
export function lagSeconds(p: unknown): number | null | undefined {
  if (!isObject(p)) return undefined;
  const lag = p.lag;
  if (isObject(lag) && Object.hasOwn(lag, "overallLagSeconds")) return finite(lag.overallLagSeconds) ?? null;
  const old = p.lagTimeSeconds;
  return old === null ? null : finite(old);
}

/**
 * The instance's round trip to the clusters, in ms: the larger of `source.pingLatencyMs` and
 * `destination.pingLatencyMs` (1.17+); -1 when the last ping to either failed (the documented
 * value); undefined when neither is there (under 1 ms, not pinged yet, or an older service).
 */
export function pingLatencyMs(p: unknown): number | undefined {
  if (!isObject(p)) return undefined;
  const sides = [p.source, p.destination].map((s) => (isObject(s) ? finite(s.pingLatencyMs) : undefined));
  const known = sides.filter((v): v is number => v !== undefined);
  if (known.length === 0) return undefined;
  return known.some((v) => v < 0) ? -1 : Math.max(...known);
}

/**
 * A migration verifier's generation's documents from `generationStats` or `gen0Stats` (answer or
 * journal: anything): compared and total, or undefined when either is not a number (`gen0Stats` is
 * absent during generation 0 and before v0.1.10: api.go `Gen0Stats … omitempty`). What they mean is
 * verifierDocsText's (src/text.ts).
 */
export function generationDocs(stats: unknown): GenerationDocs | undefined {
  if (!isObject(stats)) return undefined;
  const compared = finite(stats.docsCompared);
  const total = finite(stats.totalDocs);
  return compared !== undefined && total !== undefined ? { compared, total } : undefined;
}
