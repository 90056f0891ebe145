/**
 * Issue 14, point 7: "a verify that sees rechecks for minutes says so periodically ('writes still
 * arriving?') and names the instances it hints at."
 */
import { describe, expect, it } from "vitest";
import { RECHECK_WARN_MS, watchRechecks, writingInstances } from "../../src/steps/kit/rechecks.js";
import type { FleetSnapshot } from "../../src/fleet/index.js";
import type { VerifierProgress } from "../../src/api/index.js";

const p = (phase: string, generation = 3): VerifierProgress => ({ phase, generation });

describe("a verification that keeps rechecking", () => {
  it("is said after RECHECK_WARN_MS of continuous rechecking, and again each time as long; a check or idle resets it", () => {
    const w = watchRechecks(RECHECK_WARN_MS);
    const t0 = 1_000_000;
    expect(w.observe(p("check"), t0)).toBeUndefined();
    expect(w.observe(p("recheck"), t0)).toBeUndefined();
    expect(w.observe(p("recheck"), t0 + RECHECK_WARN_MS - 1)).toBeUndefined();
    expect(w.observe(p("recheck", 7), t0 + RECHECK_WARN_MS)).toBe(
      "the verifier has been rechecking for 2m 00s (generation 7): writes still arriving? Each generation re-verifies what changed on the source meanwhile, so it ends only once writes have stopped",
    );
    expect(w.observe(p("recheck"), t0 + RECHECK_WARN_MS + 1000)).toBeUndefined();
    expect(w.observe(p("recheck"), t0 + 2 * RECHECK_WARN_MS)).toMatch(/rechecking for 4m 00s/);
    expect(w.observe(p("idle"), t0 + 2 * RECHECK_WARN_MS + 1)).toBeUndefined();
    expect(w.observe(p("recheck"), t0 + 3 * RECHECK_WARN_MS)).toBeUndefined();
  });

  it("names the instances still applying change events or lagging", () => {
    const snap = (applied: number[], lag: number[]): FleetSnapshot => ({
      at: 0,
      instances: applied.map((a, i) => ({
        ref: { url: `http://h:${i}`, name: `shard-${i}`, index: i },
        progress: { state: "RUNNING", totalEventsApplied: a, lagTimeSeconds: lag[i]! },
      })),
    });
    expect(writingInstances(snap([10, 10, 10], [1, 1, 1]), snap([10, 25, 10], [1, 2, 30]))).toEqual([
      "shard-1 (applied 15 more events)",
      "shard-2 (lag 30s)",
    ]);
    expect(writingInstances(undefined, snap([10], [1]))).toEqual([]);
  });
});
