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
  });

  it("describes what it saw: phase, generation, documents compared of the total, the counters", () => {
    expect(describeVerifier({ ...RUNNING, generationStats: { docsCompared: 10, totalDocs: 40 } })).toBe(
      "phase recheck, generation 3, 10 of 40 documents compared, totalTasks 8, completedTasks 5, failedTasks 0, metadataMismatchTasks 0, processingTasks 0, addedTasks 0",
    );
  });
});
