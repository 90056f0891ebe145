/**
 * How the verification steps read the verifier's progress (src/steps/kit/verifier.ts). Facts:
 * "Phases: `idle`, `check`, `recheck`. `idle` means either "not started" or "finished": a client
 * must track what it asked for."
 */
import { describe, expect, it } from "vitest";
import type { VerifierProgress } from "../../src/api/index.js";
import { describeVerifier, finished, lostSince, notStarted } from "../../src/steps/kit/verifier.js";

const status = (totalTasks: number, completedTasks = totalTasks) => ({
  totalTasks,
  addedTasks: 0,
  processingTasks: 0,
  failedTasks: 0,
  completedTasks,
  metadataMismatchTasks: 0,
});
const FRESH: VerifierProgress = { phase: "idle", generation: 0, error: null, verificationStatus: status(0) };
const RUNNING: VerifierProgress = { phase: "recheck", generation: 3, error: null, verificationStatus: status(8, 5) };
const DONE: VerifierProgress = { phase: "idle", generation: 4, error: null, verificationStatus: status(6) };

describe("reading the verifier", () => {
  it("idle is 'not started' only with generation 0 and no task; otherwise a finished verification", () => {
    expect(notStarted(FRESH)).toBe(true);
    expect(finished(FRESH)).toBe(false);
    expect(notStarted(DONE)).toBe(false);
    expect(finished(DONE)).toBe(true);
    expect(notStarted(RUNNING) || finished(RUNNING)).toBe(false);
    // a verifier without generation (older versions): the counters tell
    expect(notStarted({ phase: "idle", error: null, verificationStatus: status(0) })).toBe(true);
    expect(finished({ phase: "idle", error: null, verificationStatus: status(3) })).toBe(true);
  });

  it("a verification is lost when the verifier shows no check, or an earlier generation than its baseline", () => {
    expect(lostSince(FRESH, RUNNING)).toBe(false);
    expect(lostSince(FRESH, FRESH)).toBe(true);
    // adopted at generation 3: generation 1 now is another process's check
    expect(lostSince(RUNNING, { ...RUNNING, generation: 1 })).toBe(true);
    expect(lostSince(RUNNING, DONE)).toBe(false);
    // the same generation, no baseline, or no generation on either side: not lost
    expect(lostSince(RUNNING, { ...RUNNING, phase: "check" })).toBe(false);
    expect(lostSince(undefined, RUNNING)).toBe(false);
    expect(lostSince(undefined, FRESH)).toBe(true);
    expect(lostSince({ phase: "recheck" }, RUNNING)).toBe(false);
    expect(lostSince(RUNNING, { phase: "recheck", error: null, verificationStatus: status(8, 5) })).toBe(false);
    // a generation that is not a number (null, a string) is no evidence of a restart, on either side
    const odd = (generation: unknown) => ({ ...RUNNING, generation }) as unknown as VerifierProgress;
    expect(lostSince(RUNNING, odd(null))).toBe(false);
    expect(lostSince(RUNNING, odd("1"))).toBe(false);
    expect(lostSince(odd("5"), RUNNING)).toBe(false);
  });

  it("'not started' needs every counter at 0 (absent counts as 0), and idle", () => {
    expect(notStarted({ phase: "idle" })).toBe(true);
    expect(notStarted({ phase: "check", generation: 0, verificationStatus: status(0) })).toBe(false);
    expect(notStarted({ phase: "idle", generation: 1, verificationStatus: status(0) })).toBe(false);
    for (const k of ["totalTasks", "completedTasks", "failedTasks", "metadataMismatchTasks"])
      expect(notStarted({ phase: "idle", generation: 0, verificationStatus: { ...status(0), [k]: 1 } })).toBe(false);
    // the others are no evidence of a check
    expect(notStarted({ phase: "idle", generation: 0, verificationStatus: { ...status(0), addedTasks: 2 } })).toBe(
      true,
    );
  });

  it("describes what it saw: phase, generation, documents compared of the total, the counters", () => {
    expect(describeVerifier({ ...RUNNING, generationStats: { docsCompared: 10, totalDocs: 40 } })).toBe(
      "phase recheck, generation 3, 10 of 40 documents compared, totalTasks 8, completedTasks 5, failedTasks 0, metadataMismatchTasks 0, processingTasks 0, addedTasks 0",
    );
    // what it did not show is left out: a half of the documents' pair, the generation, a counter
    expect(describeVerifier({ phase: "check", generationStats: { docsCompared: 10 } })).toBe("phase check");
    expect(describeVerifier({ phase: "check", generationStats: { totalDocs: 10 } })).toBe("phase check");
    expect(describeVerifier({ phase: "check", verificationStatus: { recheckTasks: 2, totalTasks: 4 } })).toBe(
      "phase check, totalTasks 4, recheckTasks 2",
    );
  });
});
