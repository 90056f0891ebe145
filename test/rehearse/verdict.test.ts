/**
 * The rehearsal's verdict line in the terminal (src/rehearse/index.ts `formatVerdict`) says what
 * the job summary's headline says: a run that failed and was unsafe too says both (an outside
 * review: the terminal said "FAILED" alone where the summary said "UNSAFE verdict").
 */
import { describe, expect, it } from "vitest";
import { formatVerdict } from "../../src/rehearse/index.js";
import { metadataDiffers, verifierText, type Verdict } from "../../src/rehearse/verdict.js";

const verdict = (p: Partial<Verdict> = {}): Verdict => ({
  committed: 0,
  instances: 2,
  states: ["RUNNING", "RUNNING"],
  writesLost: 0,
  verifier: { phase: "idle", failedTasks: 0, metadataMismatchTasks: 0, error: null, checks: 0, exited: null },
  fleetErrors: [],
  simSeconds: 1,
  safe: true,
  verified: false,
  ...p,
});

const headline = (v: Verdict, exit?: number): string => formatVerdict(v, 1000, exit)[0]!;

describe("formatVerdict's headline", () => {
  it("a failed run: FAILED and its exit; unsafe too, its reasons after it, as the job summary says UNSAFE", () => {
    expect(headline(verdict(), 1)).toBe("rehearsal verdict: FAILED (exit 1: a step failed)");
    expect(headline(verdict({ verified: true }), 3)).toBe(
      "rehearsal verdict: FAILED (exit 3: stopped by an interlock)",
    );
    expect(headline(verdict({ safe: false, fleetErrors: ["sync1: start refused"] }), 1)).toBe(
      "rehearsal verdict: FAILED (exit 1: a step failed) · UNSAFE (fleet errors)",
    );
    expect(
      headline(
        verdict({
          safe: false,
          writesLost: 3,
          verifier: { phase: "idle", failedTasks: 2, metadataMismatchTasks: 0, error: null, checks: 1, exited: null },
        }),
        130,
      ),
    ).toBe("rehearsal verdict: FAILED (exit 130: interrupted) · UNSAFE (writes lost, verification failed)");
  });

  it("a finished run: UNSAFE with its reasons, NOT VERIFIED, SAFE", () => {
    expect(headline(verdict({ safe: false, writesLost: 1 }), 0)).toBe(
      "rehearsal verdict: UNSAFE (exit 1: writes lost)",
    );
    expect(headline(verdict({ verified: true }), 0)).toBe("rehearsal verdict: SAFE (exit 0)");
    expect(headline(verdict({ unverified: "no verify step" }), 0)).toMatch(
      /^rehearsal verdict: NOT VERIFIED \(exit 0: /,
    );
  });
});

// an adversarial run (helper 132): a rehearsal that ended before its commit read "UNSAFE (exit 1: )"
// and "← the clusters differ" on a clean run, the verifier reading the index metadata the simulator
// keeps different until every instance is COMMITTED (src/sim/verifier.ts)
describe("index metadata that differs", () => {
  const mismatch = (): Verdict["verifier"] => ({
    phase: "recheck",
    failedTasks: 0,
    metadataMismatchTasks: 3,
    error: null,
    checks: 1,
    exited: null,
  });
  it("counts once every instance is COMMITTED, with its reason and the clusters said to differ", () => {
    expect(metadataDiffers(3, 2, 2)).toBe(true);
    const v = verdict({ safe: false, committed: 2, verifier: mismatch() });
    const lines = formatVerdict(v, 1000, 0);
    expect(lines[0]).toBe("rehearsal verdict: UNSAFE (exit 1: index metadata differs)");
    expect(lines.join("\n")).toMatch(/metadataMismatchTasks 3 {2}← the clusters differ/);
  });
  it("before that, does not: said expected, never that the clusters differ", () => {
    expect(metadataDiffers(3, 1, 2)).toBe(false);
    expect(metadataDiffers(0, 2, 2)).toBe(false);
    expect(metadataDiffers(null, 2, 2)).toBe(false);
    const text = verifierText(verdict({ committed: 1, verifier: mismatch() }));
    expect(text).toBe(
      "phase recheck, failedTasks 0, metadataMismatchTasks 3  (index metadata differs until commit: expected before it)",
    );
  });
});
