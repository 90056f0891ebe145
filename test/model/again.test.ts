/**
 * The step a `--from` run runs again in a cutover that committed (src/model/again.ts): status and
 * the watch page name it, by the rule `--from` itself applies to the journal (src/run/earlier.ts
 * `afterItsCommit`). Every way the last run can end, enumerated.
 */
import { describe, expect, it } from "vitest";
import type { RunEvent } from "../../src/events.js";
import { CutoverFold } from "../../src/model/fold.js";
import {
  afterLastCommitStep,
  commitAhead,
  ownCommandArgs,
  runAgainAfterCommit,
  runAgainFirst,
  stopAgainBefore,
  stoppedInCommitAhead,
} from "../../src/model/again.js";
import { traitsOf } from "../../src/steps/index.js";

const T0 = 1_800_000_000_000;
const STEPS = [
  { index: 0, id: "start", kind: "start", title: "start" },
  { index: 1, id: "commit", kind: "commit", title: "commit" },
  { index: 2, id: "verify", kind: "verify", title: "verify" },
  { index: 3, id: "announce", kind: "notify", title: "announce" },
];

/** One run: each step's outcome in order (absent: not reached), then its end. */
function model(
  outcomes: Record<string, "ok" | "failed" | "skipped">,
  end: { outcome?: string; committed?: boolean; to?: string; aborted?: true } | undefined,
  steps = STEPS,
) {
  let seq = 0;
  const ev = (type: string, at: number, body: Record<string, unknown> = {}): RunEvent =>
    ({ type, seq: ++seq, at: T0 + at, ...body }) as unknown as RunEvent;
  const f = new CutoverFold({ traits: traitsOf });
  const es: RunEvent[] = [
    ev("run.started", 0, { runbook: "rb", file: "rb.yaml", hash: "sha256:ab", mode: "run", instances: [], steps }),
  ];
  let t = 10;
  for (const s of steps) {
    const o = outcomes[s.id];
    if (o === undefined) continue;
    if (o === "skipped") es.push(ev("step.skipped", (t += 10), { index: s.index, id: s.id, reason: "when: false" }));
    else {
      es.push(ev("step.started", (t += 10), { index: s.index, id: s.id, kind: s.kind, title: s.title }));
      es.push(ev("step.finished", (t += 10), { index: s.index, id: s.id, outcome: o, durationMs: 10 }));
    }
  }
  if (end)
    es.push(ev("run.finished", (t += 10), { outcome: "ok", exitCode: 0, committed: true, durationMs: t, ...end }));
  for (const e of es) f.apply(e);
  return f.view(T0 + t);
}

const failedVerify = { start: "ok", commit: "ok", verify: "failed", announce: "ok" } as const;

describe("runAgainAfterCommit", () => {
  it("the run finished ok and committed past a step after the commit that failed: that step", () => {
    expect(runAgainAfterCommit(model(failedVerify, {}), traitsOf)?.id).toBe("verify");
    expect(runAgainAfterCommit(model({ ...failedVerify, verify: "ok", announce: "failed" }, {}), traitsOf)?.id).toBe(
      "announce",
    );
    // the first of two
    expect(runAgainAfterCommit(model({ ...failedVerify, announce: "failed" }, {}), traitsOf)?.id).toBe("verify");
  });
  it("none when every step after the commit passed, or was skipped", () => {
    expect(runAgainAfterCommit(model({ ...failedVerify, verify: "ok" }, {}), traitsOf)).toBeUndefined();
    expect(runAgainAfterCommit(model({ ...failedVerify, verify: "skipped" }, {}), traitsOf)).toBeUndefined();
  });
  it("none when the failed step comes before the commit (a new cutover's to run again)", () => {
    const m = model({ start: "failed", commit: "ok", verify: "ok", announce: "ok" }, {});
    expect(runAgainAfterCommit(m, traitsOf)).toBeUndefined();
  });
  it("none unless the last run finished ok at the runbook's end and committed", () => {
    for (const end of [
      { outcome: "failed" },
      { outcome: "interrupted" },
      { committed: false },
      { to: "verify" },
      { aborted: true as const },
      undefined,
    ])
      expect(runAgainAfterCommit(model(failedVerify, end), traitsOf), JSON.stringify(end)).toBeUndefined();
  });
  it("none in a runbook without a commit step", () => {
    const steps = STEPS.filter((s) => s.kind !== "commit");
    expect(runAgainAfterCommit(model(failedVerify, {}, steps), traitsOf)).toBeUndefined();
  });
});

describe("afterLastCommitStep", () => {
  it("after the last commit step only, the commit itself not", () => {
    const steps = [...STEPS, { index: 4, id: "commit2", kind: "commit", title: "again" }];
    expect([0, 1, 2, 3, 4].map((i) => afterLastCommitStep(STEPS, traitsOf, i))).toEqual([
      false,
      false,
      true,
      true,
      true,
    ]);
    expect([2, 3, 4, 5].map((i) => afterLastCommitStep(steps, traitsOf, i))).toEqual([false, false, false, true]);
    expect(afterLastCommitStep([], traitsOf, 3)).toBe(false);
  });
});

describe("stopAgainBefore: the stopWrites step a write-stop refusal needs run again", () => {
  const steps = [
    { index: 0, kind: "start" },
    { index: 1, kind: "stopWrites" },
    { index: 2, kind: "stopWrites" },
    { index: 3, kind: "commit" },
    { index: 4, kind: "verify" },
  ];
  it("the last before the refused step, else the first; none after the last commit", () => {
    expect(stopAgainBefore(steps, traitsOf, 3)?.index).toBe(2);
    expect(stopAgainBefore(steps, traitsOf, 2)?.index).toBe(1);
    expect(stopAgainBefore(steps, traitsOf, 0)?.index).toBe(1);
    expect(stopAgainBefore(steps, traitsOf, -1)?.index).toBe(2);
    expect(stopAgainBefore(steps, traitsOf, 4)).toBeUndefined();
    expect(stopAgainBefore(steps.slice(0, 1), traitsOf, 0)).toBeUndefined();
  });
});

// a review: the watch page offered the restart and the forced resume to a runbook with neither a
// writes-on hook nor a verify left, and status did so with its verify skipped by `when`
describe("stoppedInCommitAhead: a step that asks the stopped-in-commit interlock is still ahead", () => {
  type S = Parameters<typeof stoppedInCommitAhead>[0][number];
  const hook = (outcome: S["outcome"], more: Partial<S> = {}): S => ({ index: 1, kind: "hook", outcome, ...more });
  const verify = (outcome: S["outcome"], more: Partial<S> = {}): S => ({ index: 2, kind: "verify", outcome, ...more });
  it("neither step: none", () => {
    expect(stoppedInCommitAhead([hook("pending"), { index: 0, kind: "commit", outcome: "ok" }], traitsOf)).toBe(false);
  });
  it("a writes-on hook or a verify not ended ok: ahead; ended ok: not", () => {
    expect(stoppedInCommitAhead([hook("pending", { writesOn: true })], traitsOf)).toBe(true);
    expect(stoppedInCommitAhead([hook("failed", { writesOn: true })], traitsOf)).toBe(true);
    expect(stoppedInCommitAhead([hook("ok", { writesOn: true })], traitsOf)).toBe(false);
    expect(stoppedInCommitAhead([verify("failed")], traitsOf)).toBe(true);
    expect(stoppedInCommitAhead([verify("running")], traitsOf)).toBe(true);
    expect(stoppedInCommitAhead([verify("ok")], traitsOf)).toBe(false);
    expect(stoppedInCommitAhead([hook("ok", { writesOn: true }), verify("pending")], traitsOf)).toBe(true);
  });
  it("skipped by its when: as the cutover's values decide it, else as its run journaled it", () => {
    const skipped = verify("skipped", { reason: "when: false" });
    expect(stoppedInCommitAhead([skipped], traitsOf)).toBe(false);
    expect(stoppedInCommitAhead([verify("skipped", { reason: "--only" })], traitsOf)).toBe(true);
    // a review: `when: "${vars.verifyIt}"`, the runbook's default false, the cutover run with --var verifyIt=true
    expect(stoppedInCommitAhead([verify("failed", { when: "verifyIt" })], traitsOf, { verifyIt: true })).toBe(true);
    expect(stoppedInCommitAhead([verify("pending", { when: "verifyIt" })], traitsOf, { verifyIt: false })).toBe(false);
    expect(stoppedInCommitAhead([verify("pending", { when: "verifyIt" })], traitsOf, { verifyIt: "false" })).toBe(
      false,
    );
    expect(stoppedInCommitAhead([verify("pending", { when: "verifyIt" })], traitsOf, {})).toBe(true);
    expect(stoppedInCommitAhead([{ ...skipped, when: "verifyIt" }], traitsOf, { verifyIt: true })).toBe(true);
  });
});

describe("commitAhead: a commit step is still ahead of a plain --resume", () => {
  type S = Parameters<typeof commitAhead>[0][number];
  const commit = (outcome: S["outcome"], more: Partial<S> = {}): S => ({ index: 4, kind: "commit", outcome, ...more });
  it("not ended ok: ahead; ended ok, or another kind: not", () => {
    expect(commitAhead([commit("pending")], traitsOf)).toBe(true);
    expect(commitAhead([commit("failed")], traitsOf)).toBe(true);
    expect(commitAhead([commit("skipped", { reason: "after --to" })], traitsOf)).toBe(true);
    expect(commitAhead([commit("ok")], traitsOf)).toBe(false);
    expect(commitAhead([{ index: 2, kind: "verify", outcome: "pending" }], traitsOf)).toBe(false);
  });
  it("skipped before its run's --from: a --resume of that run does not come back to it", () => {
    expect(commitAhead([commit("skipped", { reason: "before --from" })], traitsOf)).toBe(false);
  });
  it("its when as the cutover's values decide it (a review: the runbook's default decided it), else as journaled", () => {
    expect(commitAhead([commit("pending", { when: "go" })], traitsOf, { go: true })).toBe(true);
    expect(commitAhead([commit("pending", { when: "go" })], traitsOf, { go: false })).toBe(false);
    expect(commitAhead([commit("skipped", { reason: "when: false", when: "go" })], traitsOf, { go: true })).toBe(true);
    expect(commitAhead([commit("skipped", { reason: "when: false" })], traitsOf)).toBe(false);
  });
});

describe("ownCommandArgs: a run's own command again, after `syncbook run <runbook>`", () => {
  it("the flags that decide what it may go on with, in the order the run's end names them", () => {
    expect(ownCommandArgs({})).toEqual([]);
    expect(ownCommandArgs({ resume: true })).toEqual(["--resume"]);
    // a --resume of a named journal resumes that one; no range of its own
    expect(ownCommandArgs({ resume: "j.jsonl", from: "x", to: "y", onlyArg: "#2" })).toEqual(["--resume", "j.jsonl"]);
    expect(ownCommandArgs({ resume: true, allowChangedRunbook: true })).toEqual([
      "--resume",
      "--allow-changed-runbook",
    ]);
    expect(
      ownCommandArgs({ newCutover: true, from: "commit", to: "verify", onlyArg: "sync1", allowChangedRunbook: true }),
    ).toEqual(["--new-cutover", "--from", "commit", "--to", "verify", "--only", "sync1", "--allow-changed-runbook"]);
    expect(ownCommandArgs({ to: "ready" })).toEqual(["--to", "ready"]);
    expect(ownCommandArgs({ allowChangedRunbook: false, newCutover: false, resume: false })).toEqual([]);
  });
});

describe("runAgainFirst: the failed run's own command again, as its failure journaled it", () => {
  let seq = 0;
  const ev = (type: string, at: number, body: Record<string, unknown> = {}): RunEvent =>
    ({ type, seq: ++seq, at: T0 + at, ...body }) as unknown as RunEvent;
  const started = (at: number, mode = "run"): RunEvent =>
    ev("run.started", at, { runbook: "rb", file: "rb.yaml", hash: "sha256:ab", mode, instances: [], steps: STEPS });
  const step = (at: number, i: number, finished: Record<string, unknown>): RunEvent[] => [
    ev("step.started", at, { index: i, id: STEPS[i]!.id, kind: STEPS[i]!.kind, title: STEPS[i]!.title }),
    ev("step.finished", at + 1, { index: i, id: STEPS[i]!.id, durationMs: 1, ...finished }),
  ];
  const ended = (at: number, outcome = "failed"): RunEvent =>
    ev("run.finished", at, { outcome, exitCode: 3, committed: false, durationMs: 1 });
  const refused = { outcome: "failed", error: "refused (fleet-identity)", hint: "correct the list" };
  const fold = (...es: RunEvent[][]) => {
    const f = new CutoverFold({ traits: traitsOf });
    for (const e of es.flat()) f.apply(e);
    return f.view(T0 + 1000);
  };

  it("the refused step of the last run, with its hint and arguments (none: the plain run)", () => {
    const m = fold([started(0)], step(10, 0, { ...refused, againArgs: [] }), [ended(20)]);
    expect(runAgainFirst(m.steps, m.runs)).toEqual({ number: 1, id: "start", hint: "correct the list", args: [] });
    const r = fold(
      [started(0)],
      step(10, 0, { outcome: "ok" }),
      [ended(20)],
      [started(30, "resume")],
      step(40, 1, { ...refused, againArgs: ["--resume", "--allow-changed-runbook"] }),
      [ended(50)],
    );
    expect(runAgainFirst(r.steps, r.runs)).toEqual({
      number: 2,
      id: "commit",
      hint: "correct the list",
      args: ["--resume", "--allow-changed-runbook"],
    });
  });

  it("none for a failure that journaled none, or no hint: the --resume rules say the way on", () => {
    const m = fold([started(0)], step(10, 0, refused), [ended(20)]);
    expect(runAgainFirst(m.steps, m.runs)).toBeUndefined();
    const n = fold([started(0)], step(10, 0, { outcome: "failed", againArgs: [] }), [ended(20)]);
    expect(runAgainFirst(n.steps, n.runs)).toBeUndefined();
  });

  it("none once a later run came: its own end decides (an --abort, the step run again)", () => {
    const first = [[started(0)], step(10, 0, { ...refused, againArgs: [] }), [ended(20)]];
    const aborted = fold(...first, [started(30, "resume"), ended(40, "ok")]);
    expect(runAgainFirst(aborted.steps, aborted.runs)).toBeUndefined();
    // run again and ended ok, or failed otherwise: the new attempt clears what the refused one said
    const ok = fold(...first, [started(30)], step(40, 0, { outcome: "ok" }), [ended(50, "ok")]);
    expect(runAgainFirst(ok.steps, ok.runs)).toBeUndefined();
    const other = fold(...first, [started(30)], step(40, 0, { outcome: "failed", hint: "other" }), [ended(50)]);
    expect(runAgainFirst(other.steps, other.runs)).toBeUndefined();
    expect(other.steps[0]!.againArgs).toBeUndefined();
  });

  it("the model keeps it on the step as journaled (docs/model.md `againArgs`)", () => {
    const m = fold([started(0)], step(10, 0, { ...refused, againArgs: ["--from", "start", 7] }), [ended(20)]);
    expect(m.steps[0]!.againArgs).toEqual(["--from", "start"]);
  });
});
