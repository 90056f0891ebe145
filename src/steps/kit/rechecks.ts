/**
 * A verification that keeps rechecking says so. The verifier re-verifies, generation after
 * generation, what changed on the source while it checked; with writes stopped the generations
 * shrink to nothing and it goes idle. A `recheck` phase that lasts for minutes usually means
 * writes are still arriving (a writer the write stop missed, a job, a replica catching up), and
 * the operator should hear it while there is time, not at the step's timeout.
 */
import { lagSeconds, type VerifierProgress } from "../../api/index.js";
import { instanceLabel } from "../../events.js";
import type { FleetSnapshot } from "../../fleet/index.js";
import { formatDuration } from "../../runbook/duration.js";

/** How long a `recheck` phase lasts before it is said, and then again each time as long. */
export const RECHECK_WARN_MS = 2 * 60_000;

export interface RecheckWatch {
  /** A sample: the message to say now (every `everyMs` of continuous rechecking), or undefined. */
  observe(p: VerifierProgress, now?: number): string | undefined;
}

export function watchRechecks(everyMs: number, now: () => number = Date.now): RecheckWatch {
  let since: number | undefined;
  let said = 0;
  return {
    observe(p, at = now()) {
      if (p.phase !== "recheck") {
        since = undefined;
        said = 0;
        return undefined;
      }
      since ??= at;
      const n = Math.floor((at - since) / everyMs);
      if (n <= said) return undefined;
      said = n;
      return `the verifier has been rechecking for ${formatDuration(at - since)}${p.generation !== undefined ? ` (generation ${p.generation})` : ""}: writes still arriving? Each generation re-verifies what changed on the source meanwhile, so it ends only once writes have stopped`;
    },
  };
}

/**
 * The instances that point at writes still arriving: still applying change events between two
 * readings (`totalEventsApplied` rising), or lagging by more than a few seconds.
 */
export function writingInstances(before: FleetSnapshot | undefined, now: FleetSnapshot): string[] {
  const out: string[] = [];
  for (const i of now.instances) {
    const p = i.progress;
    if (!p) continue;
    const was = before?.instances.find((b) => b.ref.index === i.ref.index)?.progress;
    const applied =
      typeof p.totalEventsApplied === "number" &&
      typeof was?.totalEventsApplied === "number" &&
      p.totalEventsApplied > was.totalEventsApplied;
    const lag = lagSeconds(p);
    const lagging = typeof lag === "number" && lag > 5;
    if (applied || lagging)
      out.push(
        `${instanceLabel(i.ref)} (${[applied ? `applied ${p.totalEventsApplied! - was.totalEventsApplied!} more events` : "", lagging ? `lag ${formatDuration(lag * 1000)}` : ""].filter(Boolean).join(", ")})`,
      );
  }
  return out;
}
