/**
 * How the verification steps read the verifier's progress (src/steps/kit/verifier.ts) and what
 * counts as a result (src/steps/verify.ts). Facts: "`idle` means "not running": not started,
 * finished, or a new process"; "A process restarted **without** `--clean` answers `idle`,
 * generation 0, with the persisted counters of generation 0 … until it gets a `check`"; "a
 * verification that finished after `writesOff` therefore always ends in a generation higher than
 * the one current when `writesOff` was accepted".
 */
import { describe, expect, it } from "vitest";
import type { VerifierProgress } from "../../src/api/index.js";
import type { VerifierMemory } from "../../src/steps/index.js";
import {
  describeVerifier,
  EMPTY_500,
  emptyProgress500,
  finished,
  newProcess,
  notStarted,
  persisted,
} from "../../src/steps/kit/verifier.js";
import { notEarned } from "../../src/steps/verify.js";
import { ServiceError, TransportError } from "../../src/api/index.js";

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
  it("idle is 'not started' with generation 0 and no task, 'persisted' with tasks, 'finished' past generation 0", () => {
    expect([notStarted(FRESH), persisted(FRESH), finished(FRESH)]).toEqual([true, false, false]);
    expect([notStarted(DONE), persisted(DONE), finished(DONE)]).toEqual([false, false, true]);
    expect([notStarted(RUNNING), persisted(RUNNING), finished(RUNNING)]).toEqual([false, false, false]);
    const stale = { ...FRESH, verificationStatus: { ...status(8, 2), addedTasks: 4, processingTasks: 2 } };
    expect([notStarted(stale), persisted(stale), finished(stale)]).toEqual([false, true, false]);
    // a verifier without generation: the counters tell whether any task is there
    expect(notStarted({ phase: "idle", error: null, verificationStatus: status(0) })).toBe(true);
    expect(persisted({ phase: "idle", error: null, verificationStatus: status(3) })).toBe(true);
    expect(finished({ phase: "idle", error: null, verificationStatus: status(3) })).toBe(false);
  });

  it("'not started' needs every counter at 0 (absent counts as 0), and idle at generation 0", () => {
    expect(notStarted({ phase: "idle" })).toBe(true);
    expect(notStarted({ phase: "check", generation: 0, verificationStatus: status(0) })).toBe(false);
    expect(notStarted({ phase: "idle", generation: 1, verificationStatus: status(0) })).toBe(false);
    for (const k of [
      "totalTasks",
      "addedTasks",
      "processingTasks",
      "completedTasks",
      "failedTasks",
      "metadataMismatchTasks",
    ]) {
      const p = { phase: "idle", generation: 0, verificationStatus: { ...status(0), [k]: 1 } };
      expect([k, notStarted(p), persisted(p)]).toEqual([k, false, true]);
    }
  });

  it("a new process: idle at generation 0 (with tasks or without), or a generation below the highest seen", () => {
    const m: VerifierMemory = { highestGeneration: 3 };
    expect(newProcess(m, RUNNING)).toBeUndefined();
    expect(newProcess(m, DONE)).toBeUndefined();
    expect(newProcess(m, { ...RUNNING, generation: 2 })).toBe("generation 2, below the 3 it had shown");
    expect(newProcess(m, { ...RUNNING, phase: "check", generation: 0 })).toBe("generation 0, below the 3 it had shown");
    expect(newProcess({}, { ...RUNNING, generation: 0 })).toBeUndefined();
    expect(newProcess({}, FRESH)).toBe(
      "phase idle, generation 0, no task: a process started with --clean (or on a new metadata database)",
    );
    expect(newProcess(m, { ...FRESH, verificationStatus: status(4, 1) })).toBe(
      "phase idle, generation 0, with tasks: a process restarted without --clean, showing its persisted counters until a check",
    );
    expect(newProcess(m, { ...FRESH, [EMPTY_500]: true })).toBe(
      "an empty HTTP 500 on progress: verifier releases v0.1.6 to v0.2.0 answer progress with an empty HTTP 500 until their first check (fixed in v0.2.1), before a check",
    );
    // without a generation nothing tells a restart from an end (judged as a result: not one)
    expect(newProcess(m, { phase: "idle", error: null, verificationStatus: status(3) })).toBeUndefined();
  });

  it("an empty HTTP 500 to progress is the old releases' 'not started'; a non-empty one, or another status, is not", () => {
    const t = (status: number, bodyStart: string | undefined) =>
      new TransportError("http://v", "verifier.progress", "non-json", "x", {
        status,
        requestSent: true,
        ...(bodyStart === undefined ? {} : { bodyStart }),
      });
    expect(emptyProgress500(t(500, ""))).toBe(true);
    expect(emptyProgress500(t(500, "  "))).toBe(true);
    expect(emptyProgress500(t(500, undefined))).toBe(true);
    expect(emptyProgress500(t(500, "panic"))).toBe(false);
    expect(emptyProgress500(t(502, ""))).toBe(false);
    expect(emptyProgress500(new ServiceError("http://v", "verifier.progress", "x", "", 500))).toBe(false);
  });
});

describe("what a result is (notEarned): idle past writesOff's generation, every task done", () => {
  const end = (generation: number, more: Record<string, number> = {}): VerifierProgress => ({
    phase: "idle",
    generation,
    error: null,
    verificationStatus: { ...status(8), ...more },
  });

  it("a generation past the one writesOff was sent in, every counter there, none added or processing: a result", () => {
    expect(notEarned(end(3), 2)).toBeUndefined();
    expect(notEarned(end(1), 0)).toBeUndefined();
    // differences are a result too (judged by the step)
    expect(notEarned(end(3, { failedTasks: 2, metadataMismatchTasks: 1 }), 2)).toBeUndefined();
  });

  it("writesOff's generation or before: not a result", () => {
    expect(notEarned(end(2), 2)).toBe("generation 2 is not past generation 2, the one writesOff was sent in");
    expect(notEarned(end(0), 0)).toBe("generation 0 is not past generation 0, the one writesOff was sent in");
    expect(notEarned(end(1), 2)).toBe("generation 1 is not past generation 2, the one writesOff was sent in");
  });

  it("no generation, or writesOff's unknown: not a result", () => {
    const { generation: _g, ...noGen } = end(3);
    expect(notEarned(noGen, 2)).toBe(
      "the verifier's progress has no generation, so it cannot be tied to this run's writesOff",
    );
    expect(notEarned(end(3), undefined)).toBe(
      "the generation this verification's writesOff was sent in is not known (a journal from an older syncbook?)",
    );
  });

  it("tasks still added or processing, or a counter missing: not a result", () => {
    expect(notEarned(end(3, { addedTasks: 4 }), 2)).toBe("addedTasks 4: tasks not done in a finished verification");
    expect(notEarned(end(3, { processingTasks: 2, addedTasks: 1 }), 2)).toBe(
      "addedTasks 1, processingTasks 2: tasks not done in a finished verification",
    );
    const gap = end(3);
    delete gap.verificationStatus!.processingTasks;
    expect(notEarned(gap, 2)).toBe("no processingTasks counter to read the result from");
    expect(notEarned({ phase: "idle", generation: 3, error: null }, 2)).toBe(
      "no addedTasks, processingTasks, failedTasks, metadataMismatchTasks counters to read the result from",
    );
  });
});

describe("describing the verifier", () => {
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
