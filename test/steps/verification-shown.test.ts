/**
 * Where every output says whether the cutover is verified, and in which words: one helper on the
 * read model (src/steps/kit/earned.ts `verificationShown`, asking the one rule with the arguments
 * `modelVerification` gives it), asked by report.html's banner and title, the job summary's
 * headline and the watch page's runner section and cutover line. A review: the job summary said
 * NOT VERIFIED over a run that failed before any commit, where the report said nothing, and the
 * page's cutover line said no verdict where its runner section did.
 */
import { describe, expect, it } from "vitest";
import type { CutoverModel, ModelRun } from "../../src/model/contract.js";
import { CutoverFold } from "../../src/model/fold.js";
import { traitsOf } from "../../src/steps/index.js";
import {
  modelVerification,
  verification,
  verificationHeadline,
  verificationShown,
  verificationText,
} from "../../src/steps/kit/earned.js";

type Patch = {
  cutover?: Partial<CutoverModel["cutover"]>;
  runs?: Partial<ModelRun>[];
  states?: string[];
  commitRequested?: CutoverModel["commitRequested"];
  commits?: CutoverModel["commits"];
  kinds?: string[];
  windows?: CutoverModel["windows"];
};

/** An empty cutover's model, as the fold makes it, with `p` laid over it. */
function model(p: Patch = {}): CutoverModel {
  const m = new CutoverFold({ traits: traitsOf }).view();
  return {
    ...m,
    cutover: { ...m.cutover, ...p.cutover },
    runs: (p.runs ?? []).map((r, i) => ({ n: i + 1, outcome: "failed", ...r }) as ModelRun),
    fleet: { ...m.fleet, instances: (p.states ?? []).map((state, index) => ({ index, label: `i${index}`, state })) },
    ...(p.commitRequested ? { commitRequested: p.commitRequested } : {}),
    commits: p.commits ?? [],
    steps: (p.kinds ?? ["commit", "verify"]).map(
      (kind, index) => ({ index, id: kind, kind, outcome: "pending" }) as CutoverModel["steps"][number],
    ),
    windows: p.windows ?? [],
  } as CutoverModel;
}

/** A commit request of run 1 with these answers. */
const req = (answers: Record<string, "ok" | "error" | "unknown" | "pending">, at = 10) => ({
  at,
  run: 1,
  instances: Object.keys(answers),
  answers,
});

const NOT = "no `verify` step passed on this cutover's verification result";

describe("modelVerification: the one rule, asked with the read model's arguments", () => {
  it("passes the model's verify, kinds, reverse, stop in the commit, filter and failed verify to `verification`", () => {
    expect(modelVerification(model())).toEqual({ verified: false, why: NOT });
    expect(modelVerification(model({ kinds: ["commit"] }))).toEqual({
      verified: false,
      why: "the runbook has no `verify` step",
    });
    expect(modelVerification(model({ cutover: { verified: { at: 1, step: "verify" } } }))).toEqual({ verified: true });
    expect(modelVerification(model({ cutover: { verified: { filter: '{"a":1}' } } }))).toEqual({
      verified: true,
      filter: '{"a":1}',
    });
    expect(modelVerification(model({ cutover: { verificationReversed: "rollback" } }))).toEqual(
      verification({ passed: false, kinds: ["commit", "verify"], reversed: "rollback" }),
    );
    const failed = { step: 2, id: "verify", error: "refused" };
    expect(modelVerification(model({ cutover: { verifyFailed: failed } }))).toEqual(
      verification({ passed: false, kinds: ["commit", "verify"], failed }),
    );
    // the last window's stop in the commit, whatever a verify said
    const stopped = { instance: "i0" };
    const windows = [{}, {}, { stoppedInCommit: stopped }] as unknown as CutoverModel["windows"];
    expect(modelVerification(model({ windows, cutover: { verified: {} } }))).toEqual(
      verification({ passed: true, kinds: ["commit", "verify"], stopped }),
    );
    const earlier = [{ stoppedInCommit: stopped }, {}] as unknown as CutoverModel["windows"];
    expect(modelVerification(model({ windows: earlier, cutover: { verified: {} } }))).toEqual({ verified: true });
  });
});

describe("verificationHeadline: the verdict in capitals", () => {
  it("VERIFIED, VERIFIED (FILTERED), NOT VERIFIED", () => {
    expect(verificationHeadline({ verified: true })).toBe("VERIFIED");
    expect(verificationHeadline({ verified: true, filter: "{}" })).toBe("VERIFIED (FILTERED)");
    expect(verificationHeadline({ verified: false })).toBe("NOT VERIFIED");
    expect(verificationHeadline({ verified: false, filter: "{}" })).toBe("NOT VERIFIED");
  });
});

describe("verificationShown: the verdict where the destination may take writes, or after a run that ended ok", () => {
  // a run that failed after its commit (said so at its end: a commit of this cutover on record)
  const failedRun = [{ outcome: "failed" as const, committed: true as const }];

  it("before any commit, a run that failed: nothing said", () => {
    expect(verificationShown(model({ runs: failedRun }))).toBeUndefined();
    expect(verificationShown(model({ runs: [{ outcome: "interrupted" }] }))).toBeUndefined();
    expect(verificationShown(model({ runs: [{ outcome: "unfinished" }] }))).toBeUndefined();
    expect(verificationShown(model({ runs: [{ outcome: "skipped" }] }))).toBeUndefined();
    // no run at all
    expect(verificationShown(model())).toBeUndefined();
    // the fleet read before the commit
    expect(verificationShown(model({ runs: failedRun, states: ["RUNNING", "RUNNING"] }))).toBeUndefined();
  });

  it("committed, however the run ended: the verdict, its words and its capitals", () => {
    const committed = model({ runs: failedRun, cutover: { committed: true } });
    expect(verificationShown(committed)).toEqual({
      verified: false,
      why: NOT,
      text: `not verified (${NOT})`,
      headline: "NOT VERIFIED",
    });
    expect(verificationShown(model({ runs: failedRun, cutover: { committed: true, verified: {} } }))).toEqual({
      verified: true,
      text: "verified",
      headline: "VERIFIED",
    });
    const filtered = verificationShown(
      model({ runs: failedRun, cutover: { committed: true, verified: { filter: '{"a":1}' } } }),
    );
    expect(filtered).toEqual({
      verified: true,
      filter: '{"a":1}',
      text: verificationText({ verified: true, filter: '{"a":1}' }),
      headline: "VERIFIED (FILTERED)",
    });
  });

  it("a commit in doubt: said", () => {
    expect(
      verificationShown(model({ runs: failedRun, cutover: { commitInDoubt: { at: 1, instances: [] } } }))?.headline,
    ).toBe("NOT VERIFIED");
  });

  it("a commit request of the sync that runs now with no answer yet, or none usable: said; refused by all, or before a reverse: not", () => {
    const with_ = (r: CutoverModel["commitRequested"], p: Patch = {}) =>
      verificationShown(model({ runs: [{ outcome: "unfinished" }], commitRequested: r, ...p }))?.headline;
    expect(with_(req({ a: "pending" }))).toBe("NOT VERIFIED");
    expect(with_(req({ a: "error", b: "pending" }))).toBe("NOT VERIFIED");
    expect(with_(req({ a: "unknown" }))).toBe("NOT VERIFIED");
    expect(with_(req({ a: "error", b: "error" }))).toBeUndefined();
    // sent before the last reverse that took effect: the other sync's
    expect(with_(req({ a: "pending" }), { cutover: { reversed: { id: "rollback", at: 20 } } })).toBeUndefined();
    // before a fan-out that ended since (`commits`): settled by it
    const commits = [{ at: 30, index: 1, id: "commit", instances: ["a"], skewMs: 0 }] as CutoverModel["commits"];
    expect(with_(req({ a: "pending" }), { commits })).toBeUndefined();
  });

  it("an instance last seen COMMITTING or COMMITTED once this cutover has a commit on record: said", () => {
    const refusedEverywhere = req({ a: "error", b: "error" });
    for (const state of ["COMMITTING", "COMMITTED"]) {
      // a commit request of its own (answered by refusals, yet the fleet shows one), or a run that
      // continues the cutover from what an earlier journal carried
      expect(
        verificationShown(
          model({ runs: [{ outcome: "unfinished" }], commitRequested: refusedEverywhere, states: ["RUNNING", state] }),
        )?.headline,
        state,
      ).toBe("NOT VERIFIED");
      expect(
        verificationShown(model({ runs: [{ outcome: "unfinished", continues: true }], states: ["RUNNING", state] }))
          ?.headline,
        state,
      ).toBe("NOT VERIFIED");
    }
  });

  // an outside review: a fresh cutover's start refused by fleet-idle on a fleet an earlier sync
  // committed: the fold's `committed` (a fleet read all COMMITTED) and the read made "FAILED · NOT
  // VERIFIED" of a cutover that sent nothing
  it("a fleet read COMMITTED with no commit of this cutover on record: not said", () => {
    const seen = model({
      runs: [{ outcome: "failed" }],
      cutover: { committed: true },
      states: ["COMMITTED", "COMMITTED"],
    });
    expect(verificationShown(seen)).toBeUndefined();
    // its own run that said it committed: said
    expect(
      verificationShown(model({ runs: [{ outcome: "failed", committed: true }], cutover: { committed: true } }))
        ?.headline,
    ).toBe("NOT VERIFIED");
    // an earlier run of it that committed, a later one that did not
    expect(
      verificationShown(
        model({ runs: [{ outcome: "failed", committed: true }, { outcome: "failed" }], cutover: { committed: true } }),
      )?.headline,
    ).toBe("NOT VERIFIED");
    // a fan-out that ended
    const commits = [{ at: 30, index: 1, id: "commit", instances: ["a"], skewMs: 0 }] as CutoverModel["commits"];
    expect(
      verificationShown(model({ runs: [{ outcome: "failed" }], cutover: { committed: true }, commits }))?.headline,
    ).toBe("NOT VERIFIED");
  });

  it("a last run that ended ok at the runbook's end: said (never a bare success); at its --to, or an earlier run's ok: not", () => {
    expect(verificationShown(model({ runs: [{ outcome: "ok" }], kinds: ["verify"] }))?.headline).toBe("NOT VERIFIED");
    expect(verificationShown(model({ runs: [{ outcome: "ok" }], cutover: { verified: {} } }))?.headline).toBe(
      "VERIFIED",
    );
    expect(verificationShown(model({ runs: [{ outcome: "ok", to: "ready" }] }))).toBeUndefined();
    expect(verificationShown(model({ runs: [{ outcome: "ok" }, { outcome: "failed" }] }))).toBeUndefined();
    // stopped at --to after the commit: the destination may take writes
    expect(
      verificationShown(
        model({ runs: [{ outcome: "ok", to: "commit", committed: true }], cutover: { committed: true } }),
      )?.headline,
    ).toBe("NOT VERIFIED");
  });
});
