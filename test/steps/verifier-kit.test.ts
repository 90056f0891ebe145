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
import {
  doneTasks,
  freshStart,
  memoryWhyNot,
  notEarned,
  notFromStart,
  observeVerifier,
  verification,
  verificationText,
  verifierEarned,
} from "../../src/steps/kit/earned.js";
import { ServiceError, TransportError } from "../../src/api/index.js";
import { eventsSeen } from "../../src/api/verifier-memory.js";
import { verifierJournal } from "../../src/journal/verifier.js";

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
      "phase idle, generation 0, no task: a process started on a new metadata database (or with --clean, once a check arrives)",
    );
    // facts: "A process started with `--clean` answers the same way **until its first `check`**"
    expect(newProcess(m, { ...FRESH, verificationStatus: status(4, 1) })).toBe(
      "phase idle, generation 0, with tasks: a process before its check, showing the counters its metadata holds (with or without --clean: they look the same until a check)",
    );
    expect(newProcess(m, { ...FRESH, [EMPTY_500]: true })).toBe(
      "an empty HTTP 500 on progress: verifier releases v0.1.6 to v0.2.0 answer progress with an empty HTTP 500 until their first check (fixed in v0.2.1), before a check",
    );
    // without a generation nothing tells a restart from an end (judged as a result: not one)
    expect(newProcess(m, { phase: "idle", error: null, verificationStatus: status(3) })).toBeUndefined();
  });

  // migration-verifier v0.2.1 internal/verifier/change_reader.go: cumulativeEventCounts "tallies all
  // change events seen since the verifier first started … persisted alongside the resume token so
  // it survives restarts". An adversarial run: a verifier restarted on new metadata, run past the
  // journaled generation by someone else, was taken for this cutover's
  it("a new process: fewer change events counted than the highest seen (both sides summed), whatever its generation", () => {
    const counts = (src: number, dst = 0, extra: Record<string, unknown> = {}) => ({
      srcChangeStats: { eventsPerSecond: 0, eventCounts: { insert: src, update: 0, delete: 0 } },
      dstChangeStats: { eventCounts: { insert: dst, update: 0 }, ...extra },
    });
    expect(eventsSeen({ ...DONE, ...counts(70, 5) })).toBe(75);
    expect(eventsSeen(DONE)).toBeUndefined();
    expect(eventsSeen({ ...DONE, srcChangeStats: { eventCounts: { insert: "x", update: 2 } } })).toBe(2);
    expect(
      eventsSeen({ ...DONE, srcChangeStats: { eventCounts: [1, 2] }, dstChangeStats: null as never }),
    ).toBeUndefined();
    const m: VerifierMemory = { highestGeneration: 3 };
    observeVerifier(m, { ...RUNNING, ...counts(70, 5) });
    expect(m.highestEvents).toBe(75);
    observeVerifier(m, { ...RUNNING, ...counts(10) });
    observeVerifier(m, RUNNING);
    expect(m.highestEvents).toBe(75);
    const none: VerifierMemory = {};
    observeVerifier(none, RUNNING);
    expect("highestEvents" in none).toBe(false);
    expect(newProcess(m, { ...DONE, ...counts(75) })).toBeUndefined();
    expect(newProcess(m, { ...DONE, ...counts(80) })).toBeUndefined();
    expect(newProcess(m, DONE)).toBeUndefined();
    expect(newProcess(m, { ...DONE, generation: 9, ...counts(74) })).toBe(
      "74 change events counted, below the 75 it had shown: a new process (the count is saved with the verification at most every 10 s, so a restart loses the last seconds' and another verification, on other metadata or after --clean, starts from 0)",
    );
    // none seen before: nothing to compare
    expect(newProcess({ highestGeneration: 3 }, { ...DONE, ...counts(0) })).toBeUndefined();
    // the journal's fold keeps the highest too, and a restart followed starts it again
    const j = verifierJournal();
    const sampled = (progress: VerifierProgress) => ({ type: "verifier.sampled", seq: 1, at: 1, progress }) as never;
    j.apply(sampled({ ...RUNNING, ...counts(70, 5) }));
    j.apply(sampled({ ...RUNNING, ...counts(3) }));
    expect(j.state().highestEvents).toBe(75);
    j.apply({ type: "verifier.restarted", seq: 2, at: 2, progress: { ...FRESH, ...counts(0) }, why: "x" });
    expect(j.state().highestEvents).toBe(0);
    j.apply({ type: "verifier.restarted", seq: 3, at: 3, progress: FRESH, why: "x" });
    expect("highestEvents" in j.state()).toBe(false);
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
  // totalTasks the sum of the others, as v0.2.1 counts them (migration_verifier.go), unless given
  const end = (generation: number, more: Record<string, number> = {}): VerifierProgress => {
    const counts: Record<string, number> = { ...status(8), ...more };
    const sum = ["addedTasks", "processingTasks", "failedTasks", "completedTasks", "metadataMismatchTasks"].reduce(
      (n, k) => n + counts[k]!,
      0,
    );
    return {
      phase: "idle",
      generation,
      error: null,
      verificationStatus: { ...counts, totalTasks: more.totalTasks ?? sum },
    };
  };

  it("a generation past the one writesOff was sent in, every counter there, none added or processing: a result", () => {
    expect(notEarned(end(3), 2)).toBeUndefined();
    expect(notEarned(end(1), 0)).toBeUndefined();
    // differences are a result too (judged by the step)
    expect(notEarned(end(3, { failedTasks: 2, metadataMismatchTasks: 1 }), 2)).toBeUndefined();
    // a final generation with no task at all: "API callers expect no tasks when there are no
    // mismatches and no change events" (v0.2.1 internal/verifier/check.go lines 357-360)
    expect(notEarned(end(3, { completedTasks: 0 }), 2)).toBeUndefined();
  });

  // a conformance read of migration-verifier v0.2.1 (migration_verifier.go lines 1709-1780, api.go
  // VerificationStatus): six whole counts by status, totalTasks their sum. An answer it cannot send
  // is no result: `failedTasks: -3` read as "no failed task" said verified
  it("counters the verifier cannot send: not a result", () => {
    expect(notEarned(end(3, { failedTasks: -3, totalTasks: 8 }), 2)).toBe(
      "failedTasks -3: the verifier sends each of its six task counters as a whole number of 0 or more",
    );
    expect(notEarned(end(3, { failedTasks: 0.5, totalTasks: 8 }), 2)).toBe(
      "failedTasks 0.5: the verifier sends each of its six task counters as a whole number of 0 or more",
    );
    const noTotal = end(3);
    delete noTotal.verificationStatus!.totalTasks;
    delete noTotal.verificationStatus!.completedTasks;
    expect(notEarned(noTotal, 2)).toBe(
      "totalTasks missing, completedTasks missing: the verifier sends each of its six task counters as a whole number of 0 or more",
    );
    // a task of a status it does not know counts in the total alone: neither done nor passed
    expect(notEarned(end(3, { totalTasks: 9 }), 2)).toBe(
      "totalTasks 9 is not the sum of the other five counters (8): the verifier counts every task in it, one of a status it does not know there alone, neither done nor passed",
    );
    expect(notEarned(end(3, { totalTasks: 0 }), 2)).toMatch(
      /^totalTasks 0 is not the sum of the other five counters \(8\)/,
    );
    expect(notEarned(end(2.5), 2)).toBe("generation 2.5 is not a whole number: not the verifier's answer");
    expect(notEarned(end(3, { totalTasks: -8, completedTasks: -8 }), 2)).toBe(
      "totalTasks -8, completedTasks -8: the verifier sends each of its six task counters as a whole number of 0 or more",
    );
    // the contract's recheckTasks (v0.2.1 sends none): rechecks still to do
    expect(notEarned(end(3, { recheckTasks: 2 }), 2)).toBe("recheckTasks 2: tasks not done in a finished verification");
    expect(notEarned(end(3, { recheckTasks: 0 }), 2)).toBeUndefined();
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

// issue 36: one home for "is this answer this cutover's" (src/steps/kit/earned.ts), asked by verify,
// waitFor, assert, status and the report
describe("whether an answer is this cutover's check, and its result (verifierEarned)", () => {
  const CHECK = { answered: "ok" as const, at: 1 };
  /** A run that sent its check and writesOff (in generation 2) and has seen generation 3. */
  const told = (more: Partial<VerifierMemory> = {}): VerifierMemory => ({
    baseline: FRESH,
    adopted: false,
    check: CHECK,
    writesOff: { answered: "ok", at: 2 },
    writesOffGeneration: 2,
    highestGeneration: 3,
    fromStart: true,
    ...more,
  });
  const RESULT: VerifierProgress = { ...DONE, generation: 3 };

  it("a result otherwise this cutover's, of a verification not known to have begun at generation 0: no condition counts it (notFromStart)", () => {
    const old = verifierEarned(told({ fromStart: undefined }), RESULT);
    expect(old.notFromStart).toBe(true);
    expect(old.check).toBeUndefined();
    expect(old.result).toMatch(/^this cutover's verification did not begin at generation 0 for this cutover/);
  });

  it("this cutover's result: its check and writesOff, idle past writesOff's generation, every task done", () => {
    expect(verifierEarned(told(), RESULT)).toEqual({});
    // a lost answer that may have arrived counts, as verify counts it
    expect(verifierEarned(told({ check: { answered: "unknown", at: 1 } }), RESULT)).toEqual({});
    expect(verifierEarned(told({ writesOff: { answered: "unknown", at: 2 } }), RESULT)).toEqual({});
  });

  it("the documentation's success test on a verifier that never ran a check of this run's: neither check nor result", () => {
    const never = "no check of this cutover's reached the verifier (a `startVerification` or `verify` step sends it)";
    expect(verifierEarned({}, FRESH)).toEqual({ check: never, result: never });
    expect(verifierEarned({}, DONE)).toEqual({ check: never, result: never });
    expect(verifierEarned(told({ check: { answered: "error", at: 1, error: "refused" } }), RESULT)).toEqual({
      check: never,
      result: never,
    });
  });

  it("after a reverse: what the verifier shows is the sync's before it, said so (status read it as never checked)", () => {
    const why =
      "a reverse was sent (step rollback) since this cutover's last check: what the verifier shows is the sync's before it, and no check since reached it";
    expect(verifierEarned({ reversed: "rollback" }, DONE)).toEqual({ check: why, result: why });
  });

  it("this cutover's check without its writesOff: the check counts, the result does not", () => {
    const noWritesOff =
      "no writesOff of this cutover's reached the verifier (the `verify` step sends it, after the commit): its check never ends before it";
    expect(verifierEarned(told({ writesOff: undefined }), RUNNING)).toEqual({ result: noWritesOff });
    expect(verifierEarned(told({ writesOff: { answered: "error", at: 2, error: "already set" } }), RUNNING)).toEqual({
      result: noWritesOff,
    });
  });

  it("a check whose first answers were not judged, or that was refused: nothing counts", () => {
    const unjudged =
      "this cutover's check has not shown yet whether it started a fresh verification or resumed an earlier one";
    expect(verifierEarned(told({ unproven: "persisted" }), RESULT)).toEqual({ check: unjudged, result: unjudged });
    expect(verifierEarned(told({ unproven: "oldRelease" }), RUNNING)).toEqual({ check: unjudged, result: unjudged });
    const refused =
      "this cutover refused the verification the verifier showed after its check (resumed), and no check of its own runs";
    expect(verifierEarned({ refused: "resumed" }, RUNNING)).toEqual({ check: refused, result: refused });
    // a check of its own since then: judged as any
    expect(verifierEarned(told({ refused: "resumed" }), RESULT)).toEqual({});
  });

  it("another process, an error, a phase that is not idle, a generation not past writesOff's: not the result, each said", () => {
    expect(verifierEarned(told(), { ...RESULT, generation: 1 })).toEqual({
      check: "the verifier does not show this cutover's check (generation 1, below the 3 it had shown)",
      result: "the verifier does not show this cutover's check (generation 1, below the 3 it had shown)",
    });
    expect(verifierEarned(told(), FRESH).check).toMatch(
      /^the verifier does not show this cutover's check \(phase idle, generation 0, no task[^;]*\)$/,
    );
    // a check sent without an answer (a run killed with it in flight): it may not have arrived yet
    const at = Date.UTC(2026, 10, 30, 4, 40, 53);
    for (const ask of [
      { answered: "unknown" as const, at, inFlight: true },
      { answered: "unknown" as const, at },
    ])
      expect(verifierEarned(told({ check: ask }), FRESH).check).toMatch(
        /^the verifier does not show this cutover's check \(phase idle, generation 0, no task.*\); this cutover's check was sent at 2026-11-30T04:40:53\.000Z and no answer came: it may not have reached the verifier$/,
      );
    // a time that is no time (a journal from elsewhere): said without it, never a thrown RangeError
    expect(verifierEarned(told({ check: { answered: "unknown", at: NaN } }), FRESH).check).toMatch(
      /\); this cutover's check was sent and no answer came: it may not have reached the verifier$/,
    );
    // an accepted one arrived: nothing of the kind
    expect(verifierEarned(told({ check: { answered: "ok", at } }), FRESH).check).not.toMatch(/no answer came/);
    expect(verifierEarned(told(), { ...RESULT, error: { msg: "boom" } })).toEqual({
      result: 'the verifier reports an error: {"msg":"boom"}',
    });
    expect(verifierEarned(told(), { ...RESULT, error: undefined })).toEqual({});
    expect(verifierEarned(told(), { ...RUNNING, generation: 3 })).toEqual({
      result: "phase recheck: the verification has not finished",
    });
    expect(verifierEarned(told({ highestGeneration: 2 }), { ...RESULT, generation: 2 })).toEqual({
      result: "generation 2 is not past generation 2, the one writesOff was sent in",
    });
  });

  it("memoryWhyNot: what no progress read can change, by what the condition needs", () => {
    expect(memoryWhyNot(told(), "result")).toBeUndefined();
    expect(memoryWhyNot(told({ writesOff: undefined }), "check")).toBeUndefined();
    expect(memoryWhyNot(told({ writesOff: undefined }), "result")).toMatch(/^no writesOff of this cutover's/);
    expect(memoryWhyNot({}, "check")).toMatch(/^no check of this cutover's/);
    expect(memoryWhyNot(told({ unproven: "persisted" }), "check")).toMatch(/has not shown yet/);
  });

  it("every read moves the highest generation seen up, never down", () => {
    const m: VerifierMemory = {};
    observeVerifier(m, { phase: "check", generation: 0 });
    expect(m.highestGeneration).toBe(0);
    observeVerifier(m, { phase: "recheck", generation: 2 });
    observeVerifier(m, { phase: "recheck", generation: 1 });
    observeVerifier(m, { phase: "idle" });
    expect(m.highestGeneration).toBe(2);
  });
});

// issue 36, points 3 and 4: verifier source check.go `CheckDriver` (tag v0.2.1, and v0.1.6 to
// v0.2.0): "if verifier.startClean { … Drop … } else { genOpt, err := verifier.readGeneration(ctx)
// … Msg("Resuming in-progress verification.") }"
describe("after this run's check: a fresh verification, or a resumed one (freshStart)", () => {
  const persistedBase: VerifierProgress = { ...FRESH, verificationStatus: { ...status(12, 7), addedTasks: 5 } };
  const at = (generation: number, completed: number, failed = 0, mismatched = 0): VerifierProgress => ({
    phase: generation === 0 ? "check" : "recheck",
    generation,
    error: null,
    verificationStatus: {
      ...status(20, completed),
      addedTasks: 20 - completed - failed - mismatched,
      failedTasks: failed,
      metadataMismatchTasks: mismatched,
    },
  });

  it("a generation past 0 at once is a resumed verification (a persisted generation)", () => {
    for (const base of [persistedBase, { ...FRESH, [EMPTY_500]: true }, undefined])
      expect(freshStart(at(4, 0), base)).toBe(
        "it shows generation 4 at once: the check resumed a verification its metadata held (a fresh one starts at generation 0, and leaves it only once every document was compared)",
      );
  });

  // an adversarial run: a slow /progress (2 s) after a restart with --clean; the first answer said
  // "at once" for what came 2 s after the check
  it("a slow first answer says how long after the check it was read, not 'at once'", () => {
    expect(freshStart(at(396, 0), persistedBase, false, 2100)).toBe(
      "it shows generation 396 in its first answer, read 2.1s after the check was sent: the check resumed a verification its metadata held (a fresh one starts at generation 0, and leaves it only once every document was compared)",
    );
    expect(freshStart(at(0, 0), persistedBase, false, 2100)).toBeUndefined();
  });

  it("generation 0 with nothing done is a fresh start, whatever the baseline", () => {
    for (const base of [persistedBase, { ...FRESH, [EMPTY_500]: true }, undefined])
      expect(freshStart(at(0, 0), base)).toBeUndefined();
  });

  it("generation 0 with fewer done tasks than the baseline showed: fresh; as many or more: resumed", () => {
    expect(doneTasks(persistedBase)).toBe(7);
    expect(freshStart(at(0, 6), persistedBase)).toBeUndefined();
    expect(freshStart(at(0, 4, 1, 1), persistedBase)).toBeUndefined();
    expect(freshStart(at(0, 7), persistedBase)).toBe(
      "generation 0 with 7 task(s) already done (the 7 done before the check): the counters of a resumed verification, not of a fresh start",
    );
    expect(freshStart(at(0, 5, 1, 1), persistedBase)).toMatch(/^generation 0 with 7 task\(s\) already done/);
  });

  it("no baseline (an empty HTTP 500 before the check): only nothing done counts as fresh", () => {
    expect(freshStart(at(0, 1), { ...FRESH, [EMPTY_500]: true })).toBe(
      "generation 0 with 1 task(s) already done: the counters of a resumed verification, not of a fresh start",
    );
    expect(freshStart(at(0, 0, 1), undefined)).toMatch(/^generation 0 with 1 task\(s\) already done:/);
  });

  it("no generation, or no counters: cannot tell, so not fresh", () => {
    expect(freshStart({ phase: "check", error: null, verificationStatus: status(3, 0) }, persistedBase)).toBe(
      "its progress has no generation, so a fresh verification cannot be told from a resumed one",
    );
    expect(freshStart({ phase: "check", generation: 0, error: null }, persistedBase)).toBe(
      "generation 0 with no readable counters (the 7 done before the check): the counters of a resumed verification, not of a fresh start",
    );
  });
});

describe("describing the verifier", () => {
  // migration-verifier v0.2.1 internal/verifier/statistics.go: generationStats is the current generation's;
  // totalDocs an estimated count in generation 0, "the # of documents to recheck" later; api.go (v0.1.10+):
  // gen0Stats "the final doc/byte counts from generation 0", absent during it
  it("describes what it saw: phase, generation, the generation's documents in the source's words, the counters", () => {
    expect(describeVerifier({ ...RUNNING, generationStats: { docsCompared: 10, totalDocs: 40 } })).toBe(
      "phase recheck, generation 3, 10 of 40 docs to recheck compared (this generation only, not a total), totalTasks 8, completedTasks 5, failedTasks 0, metadataMismatchTasks 0, processingTasks 0, addedTasks 0",
    );
    expect(
      describeVerifier({
        phase: "idle",
        generation: 4,
        generationStats: { docsCompared: 0, totalDocs: 0 },
        gen0Stats: { docsCompared: 1048576, totalDocs: 1048576 },
      }),
    ).toBe(
      "phase idle, generation 4, 0 of 0 docs to recheck compared (this generation only, not a total; generation 0 compared 1048576 of about 1048576)",
    );
    expect(
      describeVerifier({ phase: "check", generation: 0, generationStats: { docsCompared: 5, totalDocs: 90 } }),
    ).toBe(
      "phase check, generation 0, 5 of about 90 docs compared (the first pass; 90 is the estimated count of the collections sized so far)",
    );
    // a generation that is no number is neither said nor read as generation 0
    expect(
      describeVerifier({
        phase: "check",
        generation: "0" as unknown as number,
        generationStats: { docsCompared: 5, totalDocs: 90 },
      }),
    ).toBe("phase check, 5 of 90 docs compared (the current generation only, not a total)");
    // a gen0Stats without its pair says nothing of generation 0
    expect(
      describeVerifier({ ...RUNNING, generationStats: { docsCompared: 1, totalDocs: 2 }, gen0Stats: { totalDocs: 9 } }),
    ).toMatch(/^phase recheck, generation 3, 1 of 2 docs to recheck compared \(this generation only, not a total\), /);
    // what it did not show is left out: a half of the documents' pair, the generation, a counter
    expect(describeVerifier({ phase: "check", generationStats: { docsCompared: 10 } })).toBe("phase check");
    expect(describeVerifier({ phase: "check", generationStats: { totalDocs: 10 } })).toBe("phase check");
    expect(describeVerifier({ phase: "check", verificationStatus: { recheckTasks: 2, totalTasks: 4 } })).toBe(
      "phase check, totalTasks 4, recheckTasks 2",
    );
  });
});

// issue 36, point 2: "A rehearsal, a run's last line, the report and the wave report say 'not
// verified' where no verification was earned" (every reader asks `verification`)
describe("verification: verified only when a verify step passed on this cutover's result", () => {
  it("the run's memory decides, never the runbook's shape; why not, in the words every output uses", () => {
    expect(verification({ passed: true, kinds: ["verify"] })).toEqual({ verified: true });
    // no filter: none said (a `filter` key, even undefined, reads as a filtered verification)
    expect(verification({ passed: true, kinds: ["verify"] })).not.toHaveProperty("filter");
    expect(verification({ passed: true, kinds: [] })).toEqual({ verified: true });
    expect(verification({ passed: false, kinds: ["startVerification", "verify"] })).toEqual({
      verified: false,
      why: "no `verify` step passed on this cutover's verification result",
    });
    expect(verification({ passed: false, kinds: ["commit", "startVerification"] })).toEqual({
      verified: false,
      why: "the runbook has no `verify` step",
    });
    expect(verificationText(verification({ passed: true, kinds: ["verify"] }))).toBe("verified");
    expect(verificationText(verification({ passed: false, kinds: [] }))).toBe(
      "not verified (the runbook has no `verify` step)",
    );
    expect(verificationText({ verified: false })).toBe("not verified");
    expect(verificationText({ verified: false, why: "" })).toBe("not verified");
  });

  it("after a reverse that ended ok, why not names it; a verify that passed since still verifies", () => {
    expect(verification({ passed: false, kinds: ["verify"], reversed: "rollback" })).toEqual({
      verified: false,
      why: "a reverse was sent (step rollback): the verification before it does not speak for the sync that runs now, and no `verify` step passed since",
    });
    expect(verification({ passed: false, kinds: [], reversed: "rollback" })).toMatchObject({
      why: expect.stringMatching(/^a reverse was sent/) as unknown,
    });
    expect(verification({ passed: true, kinds: ["verify"], reversed: "rollback" })).toEqual({ verified: true });
  });

  // docs-cluster-to-cluster-sync source/includes/fact-verification.rst: "If mongosync stops during
  // commit, before the /progress endpoint reports canWrite: true, you must restart the entire
  // migration to ensure that it's verified"
  it("never verified once an instance stopped during the commit, a verify that passed included, with every instance named", () => {
    expect(verification({ passed: true, kinds: ["verify"], stopped: { instance: "sync1" } })).toEqual({
      verified: false,
      why: "sync1 stopped during the commit before the destination took writes: the documentation says the entire migration must then be restarted to ensure that it is verified, whatever the verify step said",
    });
    expect(
      verification({
        passed: false,
        kinds: ["verify"],
        reversed: "rollback",
        stopped: { instance: "a", also: ["b", "c"] },
      }),
    ).toEqual({
      verified: false,
      why: "a, b, c stopped during the commit before the destination took writes: the documentation says the entire migration must then be restarted to ensure that it is verified",
    });
    expect(verification({ passed: true, kinds: ["verify"] })).toEqual({ verified: true });
  });

  // the report and the watch page said "no `verify` step passed" alone where the verify step had
  // refused the result (the verifier skipped DDL on the source): the why names that step's failure
  it("the last verify step's failure is named in the why, as the step said it; a reverse, a stop in the commit or a verify that passed comes first", () => {
    const failed = {
      step: 9,
      id: "verify",
      error: "not verified: the verifier skipped DDL on the source (createIndexes 1)",
    };
    expect(verification({ passed: false, kinds: ["verify"], failed: failed })).toEqual({
      verified: false,
      why: 'no `verify` step passed on this cutover\'s verification result: step 9 "verify" failed: not verified: the verifier skipped DDL on the source (createIndexes 1)',
    });
    expect(verificationText(verification({ passed: false, kinds: ["verify"], failed: failed }))).toBe(
      'not verified (no `verify` step passed on this cutover\'s verification result: step 9 "verify" failed: not verified: the verifier skipped DDL on the source (createIndexes 1))',
    );
    // a journal that kept no error: the step named alone
    expect(verification({ passed: false, kinds: ["verify"], failed: { step: 3, id: "check-it" } })).toEqual({
      verified: false,
      why: 'no `verify` step passed on this cutover\'s verification result: step 3 "check-it" failed',
    });
    // a verify step failed: never "the runbook has no `verify` step" (kinds a reader could not say)
    expect(verification({ passed: false, kinds: [], failed: failed })).toMatchObject({
      why: expect.stringMatching(
        /^no `verify` step passed on this cutover's verification result: step 9 "verify" failed: /,
      ) as unknown,
    });
    expect(verification({ passed: false, kinds: ["verify"], reversed: "rollback", failed: failed })).toMatchObject({
      why: expect.stringMatching(/^a reverse was sent \(step rollback\)/) as unknown,
    });
    expect(
      verification({ passed: false, kinds: ["verify"], stopped: { instance: "sync1" }, failed: failed }),
    ).toMatchObject({
      why: expect.stringMatching(/^sync1 stopped during the commit/) as unknown,
    });
    expect(verification({ passed: true, kinds: ["verify"], failed: failed })).toEqual({ verified: true });
  });
});

// issue 36, point 3: what the guard says (verify's judge and its adoption refusal use it)
describe("notFromStart: a verification that did not begin at generation 0 for this cutover", () => {
  const END: VerifierProgress = {
    phase: "idle",
    generation: 4,
    generationStats: { docsCompared: 3, totalDocs: 7 },
  };
  it("from its start: nothing to say; otherwise what it compared, and a fresh verification's total where the verifier reports it", () => {
    expect(notFromStart({ fromStart: true }, END)).toBeUndefined();
    expect(notFromStart({ fromStart: false, baseline: { phase: "recheck", generation: 2 } }, END)).toBe(
      "this cutover's verification did not begin at generation 0 for this cutover (it was first seen in generation 2, started outside this run), so it compared, for this cutover, not every document a fresh verification compares in generation 0: its last generation, 4, shows 3 of 7 docs to recheck compared (this generation only, not a total)",
    );
    // gen0Stats (api.go, v0.1.10+): generation 0's total, an estimated count (tasks/task.go)
    expect(notFromStart({}, { ...END, gen0Stats: { docsCompared: 90, totalDocs: 100 } })).toBe(
      "this cutover's verification did not begin at generation 0 for this cutover (not known where it began: a journal from an older syncbook?), so it compared, for this cutover, not every document (about 100: generation 0's estimated count) a fresh verification compares in generation 0: its last generation, 4, shows 3 of 7 docs to recheck compared (this generation only, not a total)",
    );
    // no generation in the answer (or one that is no number): the counters are still said as one generation's only
    for (const generation of [undefined, "4" as unknown as number])
      expect(
        notFromStart({}, { phase: "idle", generation, generationStats: { docsCompared: 3, totalDocs: 7 } }),
      ).toMatch(/: its last generation shows 3 of 7 docs compared \(the current generation only, not a total\)$/);
    // a baseline that was idle (this run sent the check) says nothing of where it began
    const sent = notFromStart({ baseline: { phase: "idle", generation: 0 } }, { phase: "idle", generation: 4 });
    expect(sent).toBe(
      "this cutover's verification did not begin at generation 0 for this cutover (not known where it began: a journal from an older syncbook?), so it compared, for this cutover, not every document a fresh verification compares in generation 0: no documents counted in its last generation",
    );
    for (const generationStats of [{ docsCompared: 3 }, { totalDocs: 7 }])
      expect(notFromStart({}, { ...END, generationStats })).toMatch(/: no documents counted in its last generation$/);
    for (const gen0Stats of [{ totalDocs: "100" as unknown as number }, { totalDocs: 100 }])
      expect(notFromStart({}, { ...END, gen0Stats })).toMatch(/not every document a fresh/);
  });
});
