/**
 * Reading a progress answer the way its version means it. One home for the fields whose meaning
 * moved between versions, so conditions, the live UI, stall detection and reports agree.
 */
import type { Progress } from "./types.js";

/**
 * The instance's lag in seconds: `lag.overallLagSeconds` when the answer has it (1.21+, where
 * `lagTimeSeconds` is deprecated), else `lagTimeSeconds`. Null where the service reports none
 * (IDLE, PAUSED); undefined when the answer has neither.
 */
export function lagSeconds(p: Pick<Progress, "lag" | "lagTimeSeconds">): number | null | undefined {
  const lag = p.lag;
  if (lag !== null && typeof lag === "object" && Object.hasOwn(lag, "overallLagSeconds")) {
    const v = lag.overallLagSeconds;
    return typeof v === "number" ? v : null;
  }
  return p.lagTimeSeconds;
}
