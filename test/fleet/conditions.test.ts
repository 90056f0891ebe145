/**
 * Conditions of `waitFor` / `assert` on hand-built snapshots: every shorthand, `expect`, and the
 * three `on` modes. DESIGN: "Conditions (`waitFor`, `assert`) hold on **every** instance unless
 * `on: any | coordinator` says otherwise."
 */
import { describe, expect, it } from "vitest";
import { ServiceError, TransportError, type Progress, type VerifierProgress } from "../../src/api/index.js";
import {
  evaluate as evaluateCondition,
  progressSignature,
  readCondition,
  readPath,
  unmetExpectations,
  expectationText,
  errorSummary,
  findCoordinator,
  instanceSignature,
  type ConditionBody,
  type FleetSnapshot,
  type VerifierStanding,
} from "../../src/fleet/index.js";
import { down, GiB, idle, running, snap } from "../support/snapshots.js";

/**
 * A body read once and evaluated, as the runner does; the verifier's answer is this cutover's (its
 * check and its result) unless `standing` says otherwise (below, "this cutover's verification").
 */
const evaluate = (body: ConditionBody, s: FleetSnapshot, v?: VerifierProgress, standing: VerifierStanding = {}) =>
  evaluateCondition(readCondition(body), s, v, standing);

const verifier = (over: Partial<VerifierProgress> = {}): VerifierProgress => ({
  phase: "idle",
  error: null,
  verificationStatus: {
    totalTasks: 10,
    addedTasks: 0,
    processingTasks: 0,
    failedTasks: 0,
    completedTasks: 10,
    metadataMismatchTasks: 0,
    recheckTasks: 0,
  },
  ...over,
});

describe("shorthands", () => {
  it("state: one or a list", () => {
    const s = snap([running(0), running(1, { state: "PAUSED", lagTimeSeconds: null })], true);
    expect(evaluate({ state: "RUNNING" }, s)).toEqual({
      met: false,
      failing: [{ instance: "s1", condition: "state RUNNING", value: "PAUSED" }],
    });
    expect(evaluate({ state: ["RUNNING", "PAUSED"] }, s)).toEqual({ met: true, failing: [] });
  });

  it("canCommit, canWrite, info", () => {
    const s = snap([running(0), running(1, { canCommit: false, canWrite: null, info: "collection copy" })]);
    // (canWrite read on the first process, here declared to be instance 1)
    const body: ConditionBody = { canCommit: true, canWrite: false, info: "change event application", on: "all" };
    const r = evaluateCondition(readCondition(body, 1), s);
    expect(r.met).toBe(false);
    expect(r.failing).toEqual([
      { instance: "http://127.0.0.1:27183", condition: "canWrite false", value: null },
      { instance: "http://127.0.0.1:27183", condition: "canCommit true", value: false },
      { instance: "http://127.0.0.1:27183", condition: "info change event application", value: "collection copy" },
    ]);
    expect(evaluate({ canCommit: true }, snap([running(0)])).met).toBe(true);
  });

  // the cutover page (mongodb/docs content/mongosync/current/source/reference/cutover-process.txt): "If you are
  // running multiple mongosync instances, only check that canWrite is true on the first mongosync process. The
  // canWrite status of any subsequent mongosync processes is not valid." Service facts, "Not published": the first
  // is the instance the runbook declares (`startedFirst`); "Never wait on the other instances' `canWrite`"
  it("canWrite is read on the first process only, whatever `on` says; the others' is never read", () => {
    const first = (body: ConditionBody, s: FleetSnapshot, from: number | undefined) =>
      evaluateCondition(readCondition(body, from), s);
    // the first process says false, the others true: not met, and only the first is named
    const s = snap([running(0, { canWrite: false }), running(1, { canWrite: true }), running(2, { canWrite: true })]);
    for (const on of [undefined, "all", "any", "coordinator"] as const)
      expect(first({ canWrite: true, ...(on ? { on } : {}) }, s, 0), String(on)).toEqual({
        met: false,
        failing: [{ instance: "http://127.0.0.1:27182", condition: "canWrite true", value: false }],
      });
    // the first says true, the others false (their value is not valid; the simulator's never turns true): met
    const t = snap([running(0, { canWrite: true }), running(1, { canWrite: false }), running(2, { canWrite: null })]);
    for (const on of [undefined, "all", "any", "coordinator"] as const)
      expect(first({ canWrite: true, ...(on ? { on } : {}) }, t, 0), String(on)).toEqual({ met: true, failing: [] });
    // `expect` on the canWrite path is the same field, read the same way
    expect(first({ expect: [{ path: "canWrite", equals: true }] }, t, 0)).toEqual({ met: true, failing: [] });
    expect(first({ expect: [{ path: "canWrite", equals: true }] }, s, 0).met).toBe(false);
    // whichever instance is declared: its value, no other
    expect(first({ canWrite: true }, s, 1)).toEqual({ met: true, failing: [] });
    expect(first({ canWrite: true }, t, 1)).toEqual({
      met: false,
      failing: [{ instance: "http://127.0.0.1:27183", condition: "canWrite true", value: false }],
    });
    // combined: lag on every instance, canWrite on the first
    const u = snap([running(0, { canWrite: true }), running(1, { canWrite: false, lagTimeSeconds: 9 })]);
    expect(first({ canWrite: true, lagBelow: 5 }, u, 0)).toEqual({
      met: false,
      failing: [{ instance: "http://127.0.0.1:27183", condition: "lagBelow 5", value: 9 }],
    });
    expect(first({ canWrite: true, lagBelow: 10 }, u, 0).met).toBe(true);
    // a first process that does not answer holds the wait; the others answering true changes nothing
    const v = snap([down(0), running(1, { canWrite: true })]);
    expect(first({ canWrite: true }, v, 0)).toEqual({
      met: false,
      failing: [{ instance: "http://127.0.0.1:27182", condition: "progress answered", value: expect.anything() }],
    });
    // a down instance that is not the first process does not hold a canWrite wait
    expect(first({ canWrite: true }, snap([running(0, { canWrite: true }), down(1)]), 0)).toEqual({
      met: true,
      failing: [],
    });
  });

  // service facts, "Not published": without a declared first process no instance's canWrite is read
  it("canWrite on a fleet of several with no first process declared never holds, and says why", () => {
    const all = snap([running(0, { canWrite: true }), running(1, { canWrite: true })]);
    for (const body of [{ canWrite: true }, { canWrite: true, on: "any" as const }, { canWrite: false }])
      expect(evaluate(body, all), JSON.stringify(body)).toEqual({
        met: false,
        failing: [
          {
            instance: "first process",
            condition: `canWrite ${String(body.canWrite)} (no instance is declared the first process: the others' canWrite is not valid)`,
            value: undefined,
          },
        ],
      });
    // a fleet of one: its only instance is the first process
    expect(evaluate({ canWrite: true }, snap([running(0, { canWrite: true })]))).toEqual({ met: true, failing: [] });
    expect(evaluate({ canWrite: true }, snap([running(0, { canWrite: false })])).met).toBe(false);
    // a condition without canWrite needs no first process
    expect(evaluate({ state: "RUNNING" }, all)).toEqual({ met: true, failing: [] });
  });

  // facts: "`lag: { overallLagSeconds, … }` | 1.21 | `lagTimeSeconds` deprecated from 1.21: read `lag.overallLagSeconds` when present"
  it("lagBelow reads lag.overallLagSeconds when present, else lagTimeSeconds", () => {
    const lag = (overall: number | null, old: number | null) =>
      snap([
        running(0, { lagTimeSeconds: old, lag: { overallLagSeconds: overall, crudLagSeconds: 0, ddlLagSeconds: 0 } }),
      ]);
    expect(evaluate({ lagBelow: 5 }, lag(2, 30)).met).toBe(true);
    expect(evaluate({ lagBelow: 5 }, lag(30, 2))).toEqual({
      met: false,
      failing: [{ instance: "http://127.0.0.1:27182", condition: "lagBelow 5", value: 30 }],
    });
    // PAUSED on 1.21: the lag object says null; the deprecated field is not a fallback for it
    expect(evaluate({ lagBelow: 5 }, lag(null, 2)).met).toBe(false);
    // no lag object (before 1.21): lagTimeSeconds
    expect(evaluate({ lagBelow: 5 }, snap([running(0, { lagTimeSeconds: 3 })])).met).toBe(true);
  });

  // "lagTimeSeconds ... It is 0 when source and destination are consistent." and "In state PAUSED,
  // `lagTimeSeconds` is null."
  it("lagBelow: strictly below, seconds or a duration string; null never passes", () => {
    const at = (lag: number | null) => snap([running(0, { lagTimeSeconds: lag })]);
    expect(evaluate({ lagBelow: 5 }, at(4)).met).toBe(true);
    expect(evaluate({ lagBelow: 5 }, at(5))).toEqual({
      met: false,
      failing: [{ instance: "http://127.0.0.1:27182", condition: "lagBelow 5", value: 5 }],
    });
    expect(evaluate({ lagBelow: "5s" }, at(4)).met).toBe(true);
    expect(evaluate({ lagBelow: "1m" }, at(59)).met).toBe(true);
    expect(evaluate({ lagBelow: "500ms" }, at(0)).met).toBe(true);
    expect(evaluate({ lagBelow: "500ms" }, at(1)).met).toBe(false);
    // an interpolated `${vars.maxLag}` arrives as "5": seconds, not ms
    expect(evaluate({ lagBelow: "5" }, at(4)).met).toBe(true);
    expect(evaluate({ lagBelow: 5 }, at(null)).failing).toEqual([
      { instance: "http://127.0.0.1:27182", condition: "lagBelow 5", value: null },
    ]);
    expect(evaluate({ lagBelow: "soon" }, at(0)).failing[0]!.condition).toBe("lagBelow soon (not a duration)");
    expect(readCondition({ lagBelow: "2h" }).model.lagBelowSeconds).toBe(7200);
  });

  // "Copy has begun when progress shows collectionCopy.estimatedCopiedBytes greater than 0"
  it("copyStarted: estimatedCopiedBytes > 0", () => {
    const pre = snap([
      running(0, { info: "collection copy", collectionCopy: { estimatedTotalBytes: 1, estimatedCopiedBytes: 0 } }),
    ]);
    expect(evaluate({ copyStarted: true }, pre)).toEqual({
      met: false,
      failing: [{ instance: "http://127.0.0.1:27182", condition: "copyStarted true", value: 0 }],
    });
    expect(evaluate({ copyStarted: false }, pre).met).toBe(true);
    expect(
      evaluate(
        { copyStarted: true },
        snap([running(0, { collectionCopy: { estimatedTotalBytes: GiB, estimatedCopiedBytes: 1 } })]),
      ).met,
    ).toBe(true);
    expect(evaluate({ copyStarted: true }, snap([idle()])).met).toBe(false);
  });

  // "Before the collection copy phase, estimatedCopiedBytes is 0 and estimatedTotalBytes is 1." and
  // "Progress reaches 100% at the end of collection copy (the two values are equal)."
  it("copyComplete: copied equals total once the copy has begun, never 0 of 1", () => {
    const copy = (copied: number, total: number, info = "collection copy") =>
      running(0, { info, collectionCopy: { estimatedTotalBytes: total, estimatedCopiedBytes: copied } });
    expect(evaluate({ copyComplete: true }, snap([copy(0, 1)]))).toEqual({
      met: false,
      failing: [
        {
          instance: "http://127.0.0.1:27182",
          condition: "copyComplete true",
          value: { estimatedCopiedBytes: 0, estimatedTotalBytes: 1 },
        },
      ],
    });
    expect(evaluate({ copyComplete: true }, snap([copy(0, 0)])).met).toBe(false);
    expect(evaluate({ copyComplete: true }, snap([copy(GiB / 2, GiB)])).met).toBe(false);
    expect(evaluate({ copyComplete: true }, snap([copy(GiB, GiB)])).met).toBe(true);
    expect(evaluate({ copyComplete: false }, snap([copy(GiB / 2, GiB)])).met).toBe(true);
    expect(evaluate({ copyComplete: true }, snap([idle()])).met).toBe(false);
  });

  // "estimatedTotalBytes: Estimated total bytes to copy globally across all instances." /
  // "estimatedCopiedBytes: Estimated bytes copied to the destination by this instance."
  it("copyComplete with several instances: the fleet's copied bytes add up to the global total", () => {
    const part = (i: number, copied: number) =>
      running(i, {
        info: "collection copy",
        collectionCopy: { estimatedTotalBytes: GiB, estimatedCopiedBytes: copied },
      });
    expect(evaluate({ copyComplete: true }, snap([part(0, GiB / 2), part(1, GiB / 2)])).met).toBe(true);
    expect(evaluate({ copyComplete: true }, snap([part(0, GiB / 2), part(1, GiB / 4)])).met).toBe(false);
    // an instance that does not answer leaves the sum unknown
    expect(evaluate({ copyComplete: true }, snap([part(0, GiB / 2), down(1)])).met).toBe(false);
    // instances that disagree on the global total have no fleet sum: each is judged alone
    const own = (i: number, copied: number, total: number) =>
      running(i, {
        info: "collection copy",
        collectionCopy: { estimatedTotalBytes: total, estimatedCopiedBytes: copied },
      });
    const split = evaluate({ copyComplete: true }, snap([own(0, GiB / 2, GiB), own(1, GiB / 2, GiB / 2)]));
    expect(split.failing.map((f) => f.instance)).toEqual(["http://127.0.0.1:27182"]);
  });

  // The instance's own counts, when the fleet has no sum (an instance down): on `any`, one finished instance is enough
  it("copyComplete judged per instance: copied reaches a total above 0", () => {
    const alone = (copied: number, total: number) =>
      evaluate(
        { copyComplete: true, on: "any" },
        snap([
          running(0, {
            info: "collection copy",
            collectionCopy: { estimatedTotalBytes: total, estimatedCopiedBytes: copied },
          }),
          down(1),
        ]),
      ).met;
    expect(alone(GiB, GiB)).toBe(true);
    expect(alone(GiB + 1, GiB)).toBe(true);
    expect(alone(GiB - 1, GiB)).toBe(false);
    expect(alone(5, 0)).toBe(false);
    expect(alone(0, 0)).toBe(false);
  });

  // spec, progress rule 4 (a live upgrade resets the counters to 0 of 1): COMMITTING/COMMITTED imply the copy ended
  it("copyComplete after the copy by state, whatever the counters say", () => {
    for (const state of ["COMMITTING", "COMMITTED"] as const)
      expect(
        evaluate(
          { copyComplete: true },
          snap([
            running(0, { state, info: null, collectionCopy: { estimatedTotalBytes: 1, estimatedCopiedBytes: 0 } }),
          ]),
        ).met,
      ).toBe(true);
  });

  // "After a live upgrade from an earlier version to 1.8.0 or higher, collection copy progress restarts
  // from 0 copied of 1 total" — "A sync phase called change event application (CEA) follows the collection copy."
  it("copyComplete: an instance in change event application (or committing) has finished its copy", () => {
    const upgraded = running(0, {
      info: "change event application",
      collectionCopy: { estimatedTotalBytes: 1, estimatedCopiedBytes: 0 },
    });
    expect(evaluate({ copyComplete: true }, snap([upgraded])).met).toBe(true);
    expect(
      evaluate({ copyComplete: true }, snap([running(0, { state: "COMMITTED", info: "commit completed" })])).met,
    ).toBe(true);
  });

  // "When phase is `idle` and failedTasks is 0, the sync was verified successfully."
  it("phase and failedTasks judge the verifier", () => {
    const s = snap([running(0)]);
    expect(evaluate({ phase: "idle", failedTasks: 0 }, s, verifier())).toEqual({ met: true, failing: [] });
    expect(
      evaluate(
        { phase: "idle", failedTasks: 0 },
        s,
        verifier({ phase: "recheck", verificationStatus: { failedTasks: 2 } }),
      ),
    ).toEqual({
      met: false,
      failing: [
        { instance: "verifier", condition: "phase idle", value: "recheck" },
        { instance: "verifier", condition: "failedTasks 0", value: 2 },
      ],
    });
    expect(evaluate({ phase: "idle" }, s)).toEqual({
      met: false,
      failing: [{ instance: "verifier", condition: "phase idle", value: undefined }],
    });
  });
});

describe("verification shorthands", () => {
  // facts: "Success: phase `idle` after a check ran, `error` null, `failedTasks` 0 and `metadataMismatchTasks` 0"
  it("metadataMismatchTasks judges the verifier's metadata differences", () => {
    const s = snap([running(0)]);
    const mismatched = verifier({ verificationStatus: { failedTasks: 0, metadataMismatchTasks: 4 } });
    expect(evaluate({ phase: "idle", failedTasks: 0, metadataMismatchTasks: 0 }, s, mismatched)).toEqual({
      met: false,
      failing: [{ instance: "verifier", condition: "metadataMismatchTasks 0", value: 4 }],
    });
    expect(evaluate({ metadataMismatchTasks: 0 }, s, verifier()).met).toBe(true);
  });

  // facts (1.9): "`verification.source` / `.destination` … `lagTimeSeconds`, … `phase` (`"not started"`,
  // `"initial hashing"`, `"stream hashing"`)"; the recommended cutover: "both `verification` phases in `stream
  // hashing`, their lag near 0"
  it("verification: both sides of the embedded verifier, on every instance; null (IDLE) and absent (< 1.9) fail", () => {
    const side = (phase: string, lag: number | null) => ({
      phase,
      lagTimeSeconds: lag,
      totalCollectionCount: 3,
      scannedCollectionCount: 3,
    });
    const streaming = { source: side("stream hashing", 1), destination: side("stream hashing", 2) };
    const body: ConditionBody = { verification: { phase: "stream hashing", lagBelow: 5 } };
    expect(evaluate(body, snap([running(0, { verification: streaming })], true))).toEqual({ met: true, failing: [] });
    const behind = { source: side("stream hashing", 9), destination: side("initial hashing", null) };
    expect(evaluate(body, snap([running(0, { verification: behind })], true))).toEqual({
      met: false,
      failing: [
        { instance: "s0", condition: "verification.destination.phase stream hashing", value: "initial hashing" },
        { instance: "s0", condition: "verification.source lagBelow 5", value: 9 },
        { instance: "s0", condition: "verification.destination lagBelow 5", value: null },
      ],
    });
    expect(
      evaluate({ verification: { phase: "stream hashing" } }, snap([{ ...idle(), verification: null }], true)).failing,
    ).toEqual([
      { instance: "s0", condition: "verification.source.phase stream hashing", value: null },
      { instance: "s0", condition: "verification.destination.phase stream hashing", value: null },
    ]);
    expect(evaluate({ verification: { phase: "stream hashing" } }, snap([running(0)])).met).toBe(false);
    expect(readCondition(body).text).toBe("verification phase stream hashing, verification lagBelow 5");
  });
});

describe("expect", () => {
  const s = snap([running(0), running(1, { lagTimeSeconds: 9, totalEventsApplied: 5 })], true);

  it("equals, below, atLeast, in, matches on dotted paths", () => {
    expect(evaluate({ expect: [{ path: "collectionCopy.estimatedCopiedBytes", equals: GiB }] }, s).met).toBe(true);
    expect(evaluate({ expect: [{ path: "lagTimeSeconds", below: 5 }] }, s)).toEqual({
      met: false,
      failing: [{ instance: "s1", condition: "lagTimeSeconds below 5", value: 9 }],
    });
    expect(evaluate({ expect: [{ path: "totalEventsApplied", atLeast: 100 }] }, s).failing).toEqual([
      { instance: "s1", condition: "totalEventsApplied atLeast 100", value: 5 },
    ]);
    expect(evaluate({ expect: [{ path: "state", in: ["RUNNING", "COMMITTING"] }] }, s).met).toBe(true);
    expect(evaluate({ expect: [{ path: "directionMapping.Destination", matches: "^cluster1: " }] }, s).met).toBe(true);
    expect(evaluate({ expect: [{ path: "directionMapping.Destination", matches: "^cluster0: " }] }, s).met).toBe(false);
    expect(evaluate({ expect: [{ path: "info", matches: "(" }] }, s).failing[0]!.condition).toBe(
      "info matches ( (invalid regular expression)",
    );
  });

  it("a missing path fails; equals null matches a null field", () => {
    expect(evaluate({ expect: [{ path: "no.such.field", equals: 1 }] }, s).failing[0]).toEqual({
      instance: "s0",
      condition: "no.such.field equals 1",
      value: undefined,
    });
    expect(evaluate({ expect: [{ path: "lagTimeSeconds", equals: null }] }, snap([idle()])).met).toBe(true);
  });

  it("unknown fields of newer versions are reachable", () => {
    expect(
      evaluate(
        { expect: [{ path: "verification.source.phase", equals: "stream hashing" }] },
        snap([running(0, { verification: { source: { phase: "stream hashing" } } })]),
      ).met,
    ).toBe(true);
  });

  it("a `verifier.` prefix reads the verifier's progress", () => {
    expect(
      evaluate({ expect: [{ path: "verifier.verificationStatus.completedTasks", atLeast: 10 }] }, s, verifier()).met,
    ).toBe(true);
    expect(evaluate({ expect: [{ path: "verifier.error", equals: null }] }, s, verifier({ error: "boom" }))).toEqual({
      met: false,
      failing: [{ instance: "verifier", condition: "verifier.error equals null", value: "boom" }],
    });
  });
});

describe("on", () => {
  const mixed = snap([running(0, { lagTimeSeconds: 9 }), running(1, { lagTimeSeconds: 1 }), down(2)], true);

  it("all (default): every instance; an instance that did not answer fails", () => {
    const r = evaluate({ lagBelow: 5 }, mixed);
    expect(r.met).toBe(false);
    expect(r.failing).toEqual([
      { instance: "s0", condition: "lagBelow 5", value: 9 },
      { instance: "s2", condition: "progress answered", value: "cannot connect: connect ECONNREFUSED" },
    ]);
    expect(evaluate({ on: "all", state: "RUNNING" }, snap([running(0), running(1)])).met).toBe(true);
  });

  it("any: one instance meeting every condition is enough", () => {
    expect(evaluate({ on: "any", lagBelow: 5 }, mixed)).toEqual({ met: true, failing: [] });
    // the conditions must hold on the same instance
    expect(evaluate({ on: "any", lagBelow: 5, canCommit: false }, mixed).met).toBe(false);
    expect(evaluate({ on: "any", state: "COMMITTED" }, mixed).failing.map((f) => f.instance)).toEqual([
      "s0",
      "s1",
      "s2",
    ]);
  });

  // facts: "`mongosyncID` and `coordinatorID` (strings): this instance and the coordinator (1.3)."
  it("coordinator: the instance whose mongosyncID is the coordinatorID", () => {
    const s = snap(
      [
        running(0, { coordinatorID: "id-1", lagTimeSeconds: 9 }),
        running(1, { coordinatorID: "id-1", lagTimeSeconds: 1 }),
      ],
      true,
    );
    expect(evaluate({ on: "coordinator", lagBelow: 5 }, s)).toEqual({ met: true, failing: [] });
    expect(evaluate({ on: "coordinator", lagBelow: 1 }, s)).toEqual({
      met: false,
      failing: [{ instance: "s1", condition: "lagBelow 1", value: 1 }],
    });
  });

  it("coordinator: unknown (IDLE nulls, or the coordinator does not answer) fails with the reason", () => {
    expect(evaluate({ on: "coordinator", state: "IDLE" }, snap([idle(), idle()]))).toEqual({
      met: false,
      failing: [{ instance: "coordinator", condition: "coordinator answered", value: null }],
    });
    expect(evaluate({ on: "coordinator", state: "RUNNING" }, snap([down(0), running(1)]))).toEqual({
      met: false,
      failing: [{ instance: "coordinator", condition: "coordinator answered", value: "id-0" }],
    });
    // a fleet of one is its own coordinator
    expect(evaluate({ on: "coordinator", state: "IDLE" }, snap([idle()])).met).toBe(true);
  });

  it("verifier conditions hold whatever `on` says; no condition at all is met", () => {
    expect(evaluate({ on: "any", phase: "idle" }, mixed, verifier()).met).toBe(true);
    expect(evaluate({}, mixed)).toEqual({ met: true, failing: [] });
  });

  it("timing fields are ignored", () => {
    expect(
      evaluate({ state: "RUNNING", timeout: "1h", pollInterval: "2s", slowAfter: "5m" }, snap([running(0)])).met,
    ).toBe(true);
  });
});

describe("progressSignature", () => {
  it("changes with lag, copied bytes, events applied or state; not with unrelated fields", () => {
    const base = progressSignature(snap([running(0), running(1)]));
    expect(progressSignature(snap([running(0, { canWrite: true, info: "x" }), running(1)]))).toBe(base);
    expect(progressSignature(snap([running(0, { lagTimeSeconds: 3 }), running(1)]))).not.toBe(base);
    expect(progressSignature(snap([running(0, { totalEventsApplied: 1001 }), running(1)]))).not.toBe(base);
    expect(
      progressSignature(
        snap([running(0, { collectionCopy: { estimatedTotalBytes: GiB, estimatedCopiedBytes: 5 } }), running(1)]),
      ),
    ).not.toBe(base);
    expect(progressSignature(snap([running(0, { state: "COMMITTING" }), running(1)]))).not.toBe(base);
  });

  it("an instance that keeps failing does not look like movement; the verifier's counters count", () => {
    const a = down(1);
    const b = new TransportError("http://127.0.0.1:27183", "progress", "timeout", "no answer within 2 s", {
      requestSent: true,
    });
    expect(progressSignature(snap([running(0), a]))).toBe(progressSignature(snap([running(0), b])));
    const s = snap([running(0)]);
    expect(progressSignature(s, verifier())).not.toBe(
      progressSignature(s, verifier({ verificationStatus: { completedTasks: 11 } })),
    );
  });
});

describe("instanceSignature: what a condition reads on one instance (a watch's hint)", () => {
  const sig = (body: ConditionBody, p: Progress | TransportError) =>
    instanceSignature(readCondition(body), snap([p]).instances[0]!);

  it("changes when the instance's state changes, or any one of the condition's checks turns on it", () => {
    const body: ConditionBody = { canCommit: true, lagBelow: 5 };
    const base = sig(body, running(0, { canCommit: false, lagTimeSeconds: 10 }));
    expect(sig(body, running(0, { canCommit: false, lagTimeSeconds: 9 }))).toBe(base);
    expect(sig(body, running(0, { canCommit: true, lagTimeSeconds: 10 }))).not.toBe(base);
    expect(sig(body, running(0, { canCommit: false, lagTimeSeconds: 4 }))).not.toBe(base);
    expect(sig(body, running(0, { canCommit: true, lagTimeSeconds: 4 }))).not.toBe(
      sig(body, running(0, { canCommit: false, lagTimeSeconds: 4 })),
    );
    expect(sig(body, running(0, { canCommit: false, lagTimeSeconds: 10, state: "PAUSED" }))).not.toBe(base);
    // fields the condition does not read are no change
    expect(sig(body, running(0, { canCommit: false, lagTimeSeconds: 10, canWrite: true }))).toBe(base);
  });

  it("whatever `on` says: another instance turning is a hint for the one that counts", () => {
    const body: ConditionBody = { canCommit: true, on: "coordinator" };
    expect(sig(body, running(1, { canCommit: true }))).not.toBe(sig(body, running(1, { canCommit: false })));
  });

  // the cutover page (mongodb/docs content/mongosync/current/source/reference/cutover-process.txt):
  // "only check that canWrite is true on the first mongosync process. The canWrite status of any
  // subsequent mongosync processes is not valid": only the first process's canWrite turning is a hint
  it("canWrite turns only on the first process: another's canWrite is no hint, and none is without a first process", () => {
    const body: ConditionBody = { canWrite: true };
    const at = (first: number | undefined, p: Progress) =>
      instanceSignature(readCondition(body, first), snap([running(0), p]).instances[1]!);
    expect(at(1, running(1, { canWrite: true }))).not.toBe(at(1, running(1, { canWrite: false })));
    expect(at(0, running(1, { canWrite: true }))).toBe(at(0, running(1, { canWrite: false })));
    expect(at(undefined, running(1, { canWrite: true }))).toBe(at(undefined, running(1, { canWrite: false })));
  });

  it("an instance that did not answer has one signature, whatever its error, apart from any answer", () => {
    const body: ConditionBody = { state: "RUNNING" };
    expect(sig(body, down(0))).toBe("error");
    expect(sig(body, running(0))).not.toBe("error");
    expect(sig({ state: "COMMITTED" }, running(0))).toBe(JSON.stringify(["RUNNING", false]));
  });
});

// issue 12 item 14: "A negative `lagTimeSeconds` is a service fault, never 'below 5'." The spec: lagTimeSeconds is
// the "seconds between the latest event timestamp seen on the source and the last applied event … It is 0 when
// source and destination are consistent": it cannot be negative.
describe("a negative lag is a fault of the service, never a small lag", () => {
  const at = (lag: number) => snap([running(0, { lagTimeSeconds: lag })]);

  it("lagBelow fails on it, and the value shown says why", () => {
    const r = evaluate({ lagBelow: 5 }, at(-3));
    expect(r.met).toBe(false);
    expect(r.failing).toEqual([
      {
        instance: "http://127.0.0.1:27182",
        condition: "lagBelow 5",
        value: "-3 (a negative lag is a fault of the service, not a small lag)",
      },
    ]);
    expect(evaluate({ lagBelow: 5 }, at(0)).met).toBe(true);
  });

  it("the same through expect on any lag field (below and atLeast); other fields keep their numbers", () => {
    expect(evaluate({ expect: [{ path: "lagTimeSeconds", below: 5 }] }, at(-1)).met).toBe(false);
    expect(evaluate({ expect: [{ path: "lagTimeSeconds", atLeast: -10 }] }, at(-1)).met).toBe(false);
    const nested = snap([running(0, { lag: { overallLagSeconds: -2 } })]);
    expect(evaluate({ expect: [{ path: "lag.overallLagSeconds", below: 5 }] }, nested).met).toBe(false);
    expect(
      evaluate({ expect: [{ path: "totalEventsApplied", below: 5 }] }, snap([running(0, { totalEventsApplied: -1 })]))
        .met,
    ).toBe(true);
  });
});

// `expect` paths read own fields of objects only: never a string's `length`, never through null
describe("readPath", () => {
  it("reads nested own fields, and nothing of a primitive or through null", () => {
    expect(readPath({ a: { b: 3 } }, "a.b")).toBe(3);
    expect(readPath({ a: "xyz" }, "a.length")).toBeUndefined();
    expect(readPath({ a: null }, "a.b")).toBeUndefined();
    expect(readPath({ a: {} }, "a.toString")).toBeUndefined();
  });
});

// `on: coordinator`: which instance is the coordinator decides whose answer a condition reads
describe("the coordinator", () => {
  it("is the instance the most instances name, not the first named", () => {
    const s = snap([
      running(0, { coordinatorID: "id-2" }),
      running(1, { coordinatorID: "id-1" }),
      running(2, { coordinatorID: "id-1" }),
    ]);
    expect(findCoordinator(s)).toEqual({ sample: s.instances[1], coordinatorID: "id-1" });
    const two = snap([running(0, { coordinatorID: "id-1" }), running(1, { coordinatorID: "id-1" }), down(2)]);
    expect(findCoordinator(two).coordinatorID).toBe("id-1");
  });

  it("is unknown while no instance names one (a dead instance is not taken for it)", () => {
    expect(findCoordinator(snap([down(0), idle()]))).toEqual({});
  });

  it("a condition holds only when every instance answers: one down holds the wait (unless on: coordinator)", () => {
    const s = snap([running(0), down(1)]);
    expect(evaluate({ state: "RUNNING" }, s).met).toBe(false);
    expect(evaluate({ state: "RUNNING" }, s).failing).toEqual([
      { instance: "http://127.0.0.1:27183", condition: "progress answered", value: expect.anything() },
    ]);
    expect(evaluate({ state: "RUNNING", on: "coordinator" }, s)).toEqual({ met: true, failing: [] });
  });

  it("a condition without coordinator checks does not need a coordinator; nor one of verifier checks only", () => {
    const noCoordinator = snap([running(1, { coordinatorID: "id-9" }), running(2, { coordinatorID: "id-9" })]);
    expect(evaluate({ state: "RUNNING" }, noCoordinator).met).toBe(true);
    expect(evaluate({ phase: "idle", on: "coordinator" }, snap([down(0), down(1)]), verifier()).met).toBe(true);
  });
});

// issue 36 (facts, "The migration verifier": "`idle` means "not running": not started, finished, or
// a new process"; "The documentation's success test … holds only for a verification this client
// started and told `writesOff`"): a verifier condition counts only on an answer that
// src/steps/kit/earned.ts says is this cutover's check (phase check/recheck, generation) or result
// (everything an idle verifier meets, every counter)
describe("verifier conditions count only for this cutover's verification", () => {
  const s = snap([running(0)]);
  const NO_CHECK = "no check of this cutover's";
  const NO_RESULT = "no writesOff of this cutover's";
  // the documentation's own success test, on a verifier that meets it
  const SUCCESS: ConditionBody = { phase: "idle", failedTasks: 0, metadataMismatchTasks: 0 };

  it("the documentation's success test on an idle verifier with no failure: met only when the result is this cutover's", () => {
    expect(evaluate(SUCCESS, s, verifier())).toEqual({ met: true, failing: [] });
    expect(evaluate(SUCCESS, s, verifier(), { check: NO_CHECK, result: NO_CHECK })).toEqual({
      met: false,
      failing: [
        {
          instance: "verifier",
          condition: "phase idle",
          value: `idle; not this cutover's verification result: ${NO_CHECK}`,
        },
        {
          instance: "verifier",
          condition: "failedTasks 0",
          value: `0; not this cutover's verification result: ${NO_CHECK}`,
        },
        {
          instance: "verifier",
          condition: "metadataMismatchTasks 0",
          value: `0; not this cutover's verification result: ${NO_CHECK}`,
        },
      ],
    });
    // this cutover's check, but not its result (no writesOff): still not met
    expect(evaluate(SUCCESS, s, verifier(), { result: NO_RESULT }).failing.map((f) => f.value)).toEqual([
      `idle; not this cutover's verification result: ${NO_RESULT}`,
      `0; not this cutover's verification result: ${NO_RESULT}`,
      `0; not this cutover's verification result: ${NO_RESULT}`,
    ]);
  });

  it("without a standing (no one judged the answer), nothing on the verifier is met", () => {
    const r = evaluateCondition(readCondition({ phase: "recheck" }), s, verifier({ phase: "recheck" }));
    expect(r).toEqual({
      met: false,
      failing: [
        {
          instance: "verifier",
          condition: "phase recheck",
          value: "recheck; not this cutover's check: whether it is this cutover's verification was not judged",
        },
      ],
    });
    expect(evaluateCondition(readCondition(SUCCESS), s, verifier()).met).toBe(false);
    // a condition with no verifier part needs no standing
    expect(evaluateCondition(readCondition({ state: "RUNNING" }), s).met).toBe(true);
  });

  it("a running check's phase and its generation need this cutover's check only; counters and idle need its result", () => {
    const checking = verifier({ phase: "recheck", generation: 2 });
    const checkOnly: VerifierStanding = { result: NO_RESULT };
    expect(evaluate({ phase: "recheck" }, s, checking, checkOnly).met).toBe(true);
    expect(evaluate({ phase: "check" }, s, verifier({ phase: "check" }), checkOnly).met).toBe(true);
    expect(evaluate({ expect: [{ path: "verifier.generation", atLeast: 1 }] }, s, checking, checkOnly).met).toBe(true);
    expect(
      evaluate({ expect: [{ path: "verifier.phase", in: ["check", "recheck"] }] }, s, checking, checkOnly).met,
    ).toBe(true);
    expect(evaluate({ expect: [{ path: "verifier.phase", matches: "^re" }] }, s, checking, checkOnly).met).toBe(true);
    // each of these an idle verifier meets, or reads a counter: the result's
    for (const body of [
      { phase: "idle" },
      { failedTasks: 0 },
      { metadataMismatchTasks: 0 },
      { expect: [{ path: "verifier.phase", equals: "idle" }] },
      { expect: [{ path: "verifier.phase", in: ["idle", "recheck"] }] },
      { expect: [{ path: "verifier.phase", matches: "dle" }] },
      { expect: [{ path: "verifier.phase" }] },
      { expect: [{ path: "verifier.verificationStatus.failedTasks", equals: 0 }] },
      { expect: [{ path: "verifier.error", equals: null }] },
      { expect: [{ path: "verifier.generationStats.docsCompared", atLeast: 0 }] },
    ] as ConditionBody[]) {
      const idleDone = verifier({ generation: 3, generationStats: { docsCompared: 5, totalDocs: 5 } });
      expect(evaluate(body, s, idleDone).met, JSON.stringify(body)).toBe(true);
      expect(evaluate(body, s, idleDone, checkOnly).met, JSON.stringify(body)).toBe(false);
      expect(readCondition(body).model.verifierNeeds, JSON.stringify(body)).toBe("result");
    }
    for (const body of [
      { phase: "recheck" },
      { expect: [{ path: "verifier.generation", atLeast: 1 }] },
      { expect: [{ path: "verifier.phase", in: ["check", "recheck"] }] },
    ] as ConditionBody[]) {
      expect(evaluate(body, s, checking, { check: NO_CHECK, result: NO_CHECK }).met, JSON.stringify(body)).toBe(false);
      expect(readCondition(body).model.verifierNeeds, JSON.stringify(body)).toBe("check");
    }
    // one result condition among check ones: the whole needs the result
    expect(readCondition({ phase: "recheck", failedTasks: 0 }).model.verifierNeeds).toBe("result");
    expect(readCondition({ state: "RUNNING" }).model.verifierNeeds).toBeUndefined();
  });

  it("an answer not earned fails even where the test itself fails: its value says both", () => {
    expect(evaluate({ phase: "idle" }, s, verifier({ phase: "recheck" }), { result: NO_RESULT }).failing).toEqual([
      {
        instance: "verifier",
        condition: "phase idle",
        value: `recheck; not this cutover's verification result: ${NO_RESULT}`,
      },
    ]);
    expect(evaluate({ failedTasks: 0 }, s, { phase: "idle", error: null }, { result: NO_RESULT }).failing).toEqual([
      {
        instance: "verifier",
        condition: "failedTasks 0",
        value: `undefined; not this cutover's verification result: ${NO_RESULT}`,
      },
    ]);
    // and an earned answer that fails its test: the value as seen
    expect(evaluate({ phase: "idle" }, s, verifier({ phase: "recheck" })).failing).toEqual([
      { instance: "verifier", condition: "phase idle", value: "recheck" },
    ]);
  });
});

describe("errorSummary", () => {
  it("says what went wrong in one line: the transport's detail, or the service's error and description", () => {
    expect(errorSummary(down(0))).toBe("cannot connect: connect ECONNREFUSED");
    const url = "http://127.0.0.1:27182";
    expect(errorSummary(new ServiceError(url, "commit", "NotReady", "lag too high", 400))).toBe(
      "NotReady: lag too high",
    );
    expect(errorSummary(new ServiceError(url, "commit", "NotReady", "", 400))).toBe("NotReady");
  });
});

/**
 * What lint reads of a condition (its model: which states it accepts, what it needs that IDLE
 * leaves null) and how the plan and the messages name it (its text). Lint's sequence rules decide
 * from the model whether a wait can ever be met ("waitFor canCommit before start never passes"),
 * so every field of it is pinned here, not only through the lint fixtures.
 */
describe("a condition as lint models it", () => {
  const model = (body: ConditionBody) => readCondition(body).model;
  it("state: one, a list, and only real states", () => {
    expect(model({ state: "RUNNING" })).toStrictEqual({ states: ["RUNNING"] });
    expect(model({ state: ["RUNNING", "PAUSED"] })).toStrictEqual({ states: ["RUNNING", "PAUSED"] });
    expect(model({ state: ["RUNNING", "NOPE"] } as unknown as ConditionBody)).toStrictEqual({ states: ["RUNNING"] });
    expect(model({})).toStrictEqual({});
  });
  it("canCommit, info, and what each needs that IDLE leaves null", () => {
    expect(model({ canCommit: false })).toStrictEqual({ canCommit: false });
    expect(model({ canCommit: true })).toStrictEqual({ canCommit: true });
    expect(model({ info: "change event application" })).toStrictEqual({
      info: "change event application",
      needsProgress: "info",
    });
    expect(model({ canWrite: true })).toStrictEqual({ needsProgress: "canWrite" });
    expect(model({ canWrite: false })).toStrictEqual({});
    expect(model({ copyComplete: true })).toStrictEqual({ needsProgress: "collectionCopy" });
    expect(model({ copyStarted: true })).toStrictEqual({ needsProgress: "collectionCopy" });
    expect(model({ copyComplete: false, copyStarted: false })).toStrictEqual({});
  });
  it("lagBelow: seconds or a duration; not a duration keeps the need but no limit; it outranks the others", () => {
    expect(model({ lagBelow: 5 })).toStrictEqual({ lagBelowSeconds: 5, needsProgress: "lagTimeSeconds" });
    expect(model({ lagBelow: "2m" })).toStrictEqual({ lagBelowSeconds: 120, needsProgress: "lagTimeSeconds" });
    expect(model({ lagBelow: "soon" })).toStrictEqual({ needsProgress: "lagTimeSeconds" });
    expect(model({ lagBelow: 5, info: "x", canWrite: true, copyComplete: true })).toStrictEqual({
      lagBelowSeconds: 5,
      info: "x",
      needsProgress: "lagTimeSeconds",
    });
    expect(model({ info: "x", canWrite: true })).toStrictEqual({ info: "x", needsProgress: "info" });
    expect(model({ canWrite: true, copyComplete: true })).toStrictEqual({ needsProgress: "canWrite" });
    expect(model({ copyStarted: true, verification: { phase: "stream hashing" } })).toStrictEqual({
      needsProgress: "collectionCopy",
      embedded: { phase: "stream hashing" },
    });
  });
  it("expect on state, canCommit, info and verifier.phase counts as the shorthands do", () => {
    expect(model({ expect: [{ path: "state", equals: "PAUSED" }] })).toStrictEqual({ states: ["PAUSED"] });
    expect(model({ expect: [{ path: "state", in: ["PAUSED", "RUNNING"] }] })).toStrictEqual({
      states: ["PAUSED", "RUNNING"],
    });
    // a state and an expect on it: only what both accept
    expect(
      model({ state: ["RUNNING", "PAUSED"], expect: [{ path: "state", in: ["PAUSED", "COMMITTED"] }] }),
    ).toStrictEqual({
      states: ["PAUSED"],
    });
    // a value that is not a state says nothing lint can use
    expect(model({ expect: [{ path: "state", in: ["PAUSED", "NOPE"] }] })).toStrictEqual({});
    expect(model({ expect: [{ path: "state", matches: "RUN" }] })).toStrictEqual({});
    expect(model({ expect: [{ path: "canCommit", equals: true }] })).toStrictEqual({ canCommit: true });
    expect(model({ expect: [{ path: "canCommit", equals: false }] })).toStrictEqual({});
    expect(model({ expect: [{ path: "info", equals: "done" }] })).toStrictEqual({
      info: "done",
      needsProgress: "info",
    });
    expect(model({ expect: [{ path: "info", equals: 3 }] })).toStrictEqual({});
    expect(model({ expect: [{ path: "verifier.phase", equals: "idle" }] })).toStrictEqual({
      verifierIdle: true,
      verifierNeeds: "result",
    });
    expect(model({ expect: [{ path: "verifier.phase", equals: "check" }] })).toStrictEqual({ verifierNeeds: "check" });
    expect(model({ expect: [{ path: "lagTimeSeconds", below: 3 }] })).toStrictEqual({});
    expect(model({ phase: "idle" })).toStrictEqual({ verifierIdle: true, verifierNeeds: "result" });
    expect(model({ phase: "check" })).toStrictEqual({ verifierNeeds: "check" });
  });
  it("verification: the embedded verifier's phase and lag limit", () => {
    expect(model({ verification: {} })).toStrictEqual({ embedded: {}, needsProgress: "verification" });
    expect(model({ verification: { phase: "stream hashing", lagBelow: "30s" } })).toStrictEqual({
      embedded: { phase: "stream hashing", lagBelowSeconds: 30 },
      needsProgress: "verification",
    });
    expect(model({ verification: { lagBelow: "never" } })).toStrictEqual({
      embedded: {},
      needsProgress: "verification",
    });
  });
});

describe("a condition as the plan and the messages name it", () => {
  const text = (body: ConditionBody) => readCondition(body).text;
  it("each field as written, timing fields left out, `on` unless it is all", () => {
    expect(text({ canCommit: true, lagBelow: 5 })).toBe("canCommit true, lagBelow 5");
    expect(text({ state: ["RUNNING", "PAUSED"] })).toBe("state RUNNING|PAUSED");
    expect(text({ lagBelow: "2m", timeout: "5m", pollInterval: "1s", slowAfter: "1m", on: "all" })).toBe("lagBelow 2m");
    expect(text({ canWrite: true, on: "coordinator" })).toBe("canWrite true (on coordinator)");
    expect(text({ state: "RUNNING", on: "any" })).toBe("state RUNNING (on any)");
  });
  it("expect: the path then the rest of the expectation", () => {
    expect(
      text({
        expect: [
          { path: "lagTimeSeconds", below: 3 },
          { path: "state", in: ["A", "B"] },
        ],
      }),
    ).toBe('lagTimeSeconds {"below":3}, state {"in":["A","B"]}');
  });
  it("verification: each of its fields", () => {
    expect(text({ verification: { phase: "stream hashing", lagBelow: 30 } })).toBe(
      "verification phase stream hashing, verification lagBelow 30",
    );
  });
});

describe("each check as the failing list names it, and what it accepts", () => {
  const one = (over: Partial<Progress>) => snap([running(0, over)]);
  const failing = (body: ConditionBody, s: FleetSnapshot, v?: VerifierProgress) => evaluate(body, s, v).failing;
  const at = "http://127.0.0.1:27182";

  it("an expect with no operator asks for a value: absent and null fail, 0 and false pass", () => {
    const body: ConditionBody = { expect: [{ path: "x" }] };
    expect(failing(body, one({}))).toStrictEqual([{ instance: at, condition: "x is present", value: undefined }]);
    expect(failing(body, one({ x: null }))).toStrictEqual([{ instance: at, condition: "x is present", value: null }]);
    expect(evaluate(body, one({ x: 0 })).met).toBe(true);
    expect(evaluate(body, one({ x: false })).met).toBe(true);
  });

  it("below and atLeast: numbers only, below strictly", () => {
    const below = { expect: [{ path: "n", below: 5 }] };
    expect(evaluate(below, one({ n: 4 })).met).toBe(true);
    expect(evaluate(below, one({ n: 5 })).met).toBe(false);
    expect(evaluate(below, one({ n: "3" })).met).toBe(false);
    const least = { expect: [{ path: "n", atLeast: 5 }] };
    expect(evaluate(least, one({ n: 5 })).met).toBe(true);
    expect(evaluate(least, one({ n: 4 })).met).toBe(false);
    expect(evaluate(least, one({ n: "7" })).met).toBe(false);
    expect(failing(below, one({ n: 6 }))).toStrictEqual([{ instance: at, condition: "n below 5", value: 6 }]);
  });

  it("in: one of the list, named with the list", () => {
    const body = { expect: [{ path: "state", in: ["PAUSED", "COMMITTED"] }] };
    expect(failing(body, one({}))).toStrictEqual([
      { instance: at, condition: 'state in ["PAUSED","COMMITTED"]', value: "RUNNING" },
    ]);
    expect(evaluate(body, one({ state: "PAUSED" })).met).toBe(true);
  });

  it("matches: strings only; an invalid expression never passes and says so", () => {
    expect(evaluate({ expect: [{ path: "n", matches: "1" }] }, one({ n: 12 })).met).toBe(false);
    expect(evaluate({ expect: [{ path: "info", matches: "^change" }] }, one({})).met).toBe(true);
    expect(failing({ expect: [{ path: "info", matches: "(" }] }, one({}))).toStrictEqual([
      { instance: at, condition: "info matches ( (invalid regular expression)", value: "change event application" },
    ]);
  });

  it("a lag field is any *lag* / *LagSeconds field or one under `lag.`, and nothing else", () => {
    const neg = "-1 (a negative lag is a fault of the service, not a small lag)";
    const lagOf = (path: string, value: unknown) =>
      failing(
        { expect: [{ path, below: 5 }] },
        one({ [path.split(".")[0]!]: path.includes(".") ? { [path.split(".")[1]!]: value } : value }),
      );
    expect(lagOf("x.overallLagSeconds", -1)).toMatchObject([{ value: neg }]);
    expect(lagOf("lag.sourceSeconds", -1)).toMatchObject([{ value: neg }]);
    expect(lagOf("lagoon.count", -1)).toStrictEqual([]);
    expect(lagOf("x.lagoonCount", -1)).toMatchObject([{ value: neg }]);
    // a string is no lag, negative or not: shown as it is
    expect(lagOf("lagTimeSeconds", "-1")).toMatchObject([{ value: "-1" }]);
  });

  it("state and lagBelow as named; a lagBelow that is no duration never passes and says so", () => {
    expect(failing({ state: ["PAUSED", "COMMITTED"] }, one({}))).toStrictEqual([
      { instance: at, condition: "state PAUSED|COMMITTED", value: "RUNNING" },
    ]);
    expect(failing({ lagBelow: "soon" }, one({ lagTimeSeconds: 0 }))).toStrictEqual([
      { instance: at, condition: "lagBelow soon (not a duration)", value: 0 },
    ]);
  });

  it("copyStarted and copyComplete: a copy that is not there shows null; copied bytes that are not a number never started", () => {
    expect(failing({ copyStarted: true }, one({ collectionCopy: undefined }))).toStrictEqual([
      { instance: at, condition: "copyStarted true", value: null },
    ]);
    expect(
      failing({ copyComplete: true }, one({ state: "RUNNING", info: "collection copy", collectionCopy: undefined })),
    ).toStrictEqual([{ instance: at, condition: "copyComplete true", value: null }]);
    const copied = { estimatedTotalBytes: 10, estimatedCopiedBytes: "5" };
    expect(evaluate({ copyStarted: true }, one({ collectionCopy: copied } as never)).met).toBe(false);
    expect(failing({ copyStarted: false }, one({}))).toStrictEqual([
      { instance: at, condition: "copyStarted false", value: GiB },
    ]);
  });

  it("failedTasks and metadataMismatchTasks of a verifier without its counters: not met, nothing thrown", () => {
    const bare = { phase: "idle", error: null } as VerifierProgress;
    const s = one({});
    expect(failing({ failedTasks: 0 }, s, bare)).toStrictEqual([
      { instance: "verifier", condition: "failedTasks 0", value: undefined },
    ]);
    expect(failing({ metadataMismatchTasks: 0 }, s, bare)).toStrictEqual([
      { instance: "verifier", condition: "metadataMismatchTasks 0", value: undefined },
    ]);
  });

  it("verification: lagBelow alone does not ask for a phase; the limit is strict; no verification fails without a throw", () => {
    const side = (phase: string, lagTimeSeconds: number) => ({ phase, lagTimeSeconds });
    const v = (lag: number) =>
      one({ verification: { source: side("stream hashing", lag), destination: side("stream hashing", lag) } });
    expect(evaluate({ verification: { lagBelow: 5 } }, v(4)).met).toBe(true);
    expect(evaluate({ verification: { lagBelow: 5 } }, v(5)).met).toBe(false);
    expect(failing({ verification: { lagBelow: 5 } }, one({ verification: null }))).toStrictEqual([
      { instance: at, condition: "verification.source lagBelow 5", value: undefined },
      { instance: at, condition: "verification.destination lagBelow 5", value: undefined },
    ]);
    expect(failing({ verification: { lagBelow: "soon" } }, v(0)).map((f) => f.condition)).toStrictEqual([
      "verification.source lagBelow soon (not a duration)",
      "verification.destination lagBelow soon (not a duration)",
    ]);
  });

  it("`on` is all unless the body says otherwise", () => {
    expect(readCondition({}).on).toBe("all");
    expect(readCondition({ on: "any" }).on).toBe("any");
  });

  it("lint's model ignores expect paths it does not know, whatever they equal", () => {
    expect(readCondition({ expect: [{ path: "canWrite", equals: true }] }).model).toStrictEqual({});
    expect(readCondition({ expect: [{ path: "x", equals: "idle" }] }).model).toStrictEqual({});
  });
});

describe("progressSignature: each counter that shows movement counts, and absent ones do not throw", () => {
  const s = snap([running(0, { collectionCopy: undefined })]);
  it("every verifier counter and the generation", () => {
    const base = verifier({ generation: 1, generationStats: { docsCompared: 5, totalDocs: 9 } });
    // non-zero counters: a change from 1 to 2 must count as much as one from 0 to 1
    base.verificationStatus = { ...base.verificationStatus!, failedTasks: 1, processingTasks: 1 };
    const sig = (v: VerifierProgress) => progressSignature(s, v);
    const status = base.verificationStatus;
    for (const changed of [
      { ...base, verificationStatus: { ...status, completedTasks: 9 } },
      { ...base, verificationStatus: { ...status, failedTasks: 2 } },
      { ...base, verificationStatus: { ...status, processingTasks: 2 } },
      { ...base, generation: 2 },
      { ...base, generationStats: { docsCompared: 6, totalDocs: 9 } },
    ])
      expect(sig(changed)).not.toBe(sig(base));
    expect(() => sig({ phase: "idle", error: null })).not.toThrow();
  });
});

describe("the fleet's copied bytes", () => {
  it("add up only over instances that agree on the total; an empty reading has none (and throws nothing)", () => {
    const copy = (copied: number, total: number) =>
      running(0, {
        state: "RUNNING",
        info: "collection copy",
        collectionCopy: { estimatedCopiedBytes: copied, estimatedTotalBytes: total },
      });
    // 6 + 6 of a total of 10 would be complete, but the instances disagree on the total (10, 20)
    expect(evaluate({ copyComplete: true }, snap([copy(6, 10), copy(6, 20)])).met).toBe(false);
    expect(evaluate({ copyComplete: true }, snap([copy(6, 10), copy(6, 10)])).met).toBe(true);
    expect(evaluate({ copyComplete: true }, snap([])).met).toBe(true);
  });
});

// issue 39, point 2: a stopWrites check's `expect` uses these very comparisons on what its hook read
describe("unmetExpectations and expectationText: waitFor.expect's comparisons on any value", () => {
  it("each comparison, met and unmet, with the value read; nested paths; a missing field", () => {
    const v = { writes: { enabled: false, rate: 0 }, mode: "ro", lag: -1 };
    expect(
      unmetExpectations(
        [
          { path: "writes.enabled", equals: false },
          { path: "writes.rate", below: 1 },
          { path: "writes.rate", atLeast: 0 },
          { path: "mode", in: ["ro", "off"] },
          { path: "mode", matches: "^r" },
          { path: "writes" },
        ],
        v,
      ),
    ).toEqual([]);
    expect(
      unmetExpectations(
        [
          { path: "writes.enabled", equals: true },
          { path: "writes.rate", below: 0 },
          { path: "writes.rate", atLeast: 1 },
          { path: "mode", in: ["rw"] },
          { path: "mode", matches: "^w" },
          { path: "gone" },
          { path: "mode", matches: "(" },
          { path: "lag", below: 5 },
        ],
        v,
      ),
    ).toEqual([
      { condition: "writes.enabled equals true", value: false },
      { condition: "writes.rate below 0", value: 0 },
      { condition: "writes.rate atLeast 1", value: 0 },
      { condition: 'mode in ["rw"]', value: "ro" },
      { condition: "mode matches ^w", value: "ro" },
      { condition: "gone is present", value: undefined },
      { condition: "mode matches ( (invalid regular expression)", value: "ro" },
      { condition: "lag below 5", value: "-1 (a negative lag is a fault of the service, not a small lag)" },
    ]);
    expect(unmetExpectations([{ path: "a", equals: 1 }], undefined)).toEqual([
      { condition: "a equals 1", value: undefined },
    ]);
    expect(unmetExpectations([], v)).toEqual([]);
  });

  it("expectationText names an expectation as a wait does", () => {
    expect(expectationText({ path: "writes.enabled", equals: false })).toBe("writes.enabled equals false");
    expect(expectationText({ path: "n", below: 3, atLeast: 1 })).toBe("n below 3, n atLeast 1");
    expect(expectationText({ path: "n" })).toBe("n is present");
  });
});
