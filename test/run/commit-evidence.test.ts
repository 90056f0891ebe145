/**
 * What a journal says of commit (src/run/earlier.ts): `commitEvidence`, any commit of the cutover
 * (what `--abort` and the undos go by), and `currentSyncCommit`, the commit of the sync that runs
 * now: a reverse that took effect starts a new sync whose commit is its own, as a run's memory
 * after its reverse step says (src/steps/lifecycle.ts). An adversarial run found a resumed
 * reverse reported "committed" where the same run without a kill said "not committed".
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  afterItsCommit,
  commitEvidence,
  currentSyncCommit,
  commitNoLongerHolds,
  lastReverse,
  liveJournals,
  reverseInDoubt,
  opsToSyncNow,
  readFolderJournals,
  earlierCommitAsked,
  earlierCommitOnFleet,
  earlierCommitReached,
  earlierCommitReason,
  refuseSentByEarlierCutover,
  sentAgainByFrom,
  stepToRunAgain,
} from "../../src/run/earlier.js";
import { parseRunbook } from "../../src/runbook/index.js";
import type { Runbook } from "../../src/runbook/types.js";
import type { LoadedRunbook } from "../../src/runbook/index.js";
import { cmd, sent, state } from "../support/reconcile-fixtures.js";
import { planSteps, startlessFrom } from "../../src/run/plan.js";
import { folderJournals, openJournal, witnessFile } from "../../src/journal/index.js";
import { UserError } from "../../src/errors.js";
import { eventFactory, inst, salesStarted, tempDir } from "../support/journal.js";

const none = { sent: false, accepted: false };
/** The steps of `refuseSentByEarlierCutover`'s runbook, as its journals name them. */
const STEPS4 = [
  { index: 0, id: "start", kind: "start" },
  { index: 1, id: "wait", kind: "waitFor" },
  { index: 2, id: "commit", kind: "commit" },
  { index: 3, id: "done", kind: "waitFor" },
];
const both = { sent: true, accepted: true };

describe("currentSyncCommit", () => {
  it("a commit of the sync that runs now sent past its forced writes-stopped interlock says so (writesForced); one refused everywhere, or before a reverse, does not", () => {
    const forced = (c: ReturnType<typeof cmd>) => ({ ...c, writesForced: true as const });
    const f = { ...both, writesForced: true };
    expect(currentSyncCommit(state(["ok", "ok", "ok"], [forced(cmd("commit", 2, "ok"))]), false)).toEqual(f);
    // sent with no usable answer, its step cut: it may hold
    expect(currentSyncCommit(state(["ok", "ok", "cut"], [forced(cmd("commit", 2, "unknown"))]), false)).toEqual({
      sent: true,
      accepted: false,
      writesForced: true,
    });
    // refused by every instance: sent nowhere
    expect(currentSyncCommit(state(["ok", "ok", "failed"], [forced(cmd("commit", 2, "error"))]), false)).toEqual(none);
    // one forced, then another sent unforced: the writes the first let through stay unknown
    const two = state(["ok", "ok", "ok", "ok"], [forced(cmd("commit", 2, "unknown")), cmd("commit", 3, "ok")]);
    expect(currentSyncCommit(two, false)).toEqual(f);
    const reversed = state(["ok", "ok", "ok", "ok"], [forced(cmd("commit", 2, "ok")), cmd("reverse", 3, "ok")]);
    expect(currentSyncCommit(reversed, false)).toEqual(none);
    expect(commitEvidence(reversed)).toEqual(f);
    // carried by a --from run's journal
    const carried = state(["ok"], [], { carriedCommit: { sent: true, accepted: false, writesForced: true } });
    expect(currentSyncCommit(carried, false)).toEqual({ sent: true, accepted: false, writesForced: true });
    expect(currentSyncCommit(state(["ok", "ok", "ok"], [cmd("commit", 2, "ok")]), false)).toEqual(both);
  });
  it("a commit, then a reverse whose step ended ok: the current sync has none; the cutover had one", () => {
    for (const reverse of [cmd("reverse", 3, "ok"), cmd("reverse", 3, "unknown")]) {
      const s = state(["ok", "ok", "ok", "ok"], [cmd("commit", 2, "ok"), reverse]);
      expect(currentSyncCommit(s, false)).toEqual(none);
      expect(lastReverse(s)).toEqual({ at: 1, stepIndex: 3 });
      expect(commitEvidence(s)).toEqual(both);
    }
  });
  it("a reverse whose step did not end ok starts nothing, even one some instance accepted (as a run's memory: its step failed first)", () => {
    for (const [reverse, step] of [
      [cmd("reverse", 3, "error"), "failed"],
      [cmd("reverse", 3, "unknown"), "cut"],
      [cmd("reverse", 3, "ok", "error"), "failed"],
      [cmd("reverse", 3, "ok"), "cut"],
    ] as const) {
      const s = state(["ok", "ok", "ok", step], [cmd("commit", 2, "ok"), reverse]);
      expect(currentSyncCommit(s, false), `${reverse.answered} ${step}`).toEqual(both);
      expect(lastReverse(s)).toBeUndefined();
    }
  });
  it("a resume that adopts a reverse: the current sync has no commit, whatever the journal", () => {
    const s = state(["ok", "ok", "ok", "cut"], [cmd("commit", 2, "ok"), cmd("reverse", 3, "unknown")]);
    expect(currentSyncCommit(s, true)).toEqual(none);
  });
  it("a commit after the reverse is the current sync's", () => {
    const s = state(
      ["ok", "ok", "ok", "ok"],
      [cmd("commit", 2, "ok"), cmd("reverse", 3, "ok"), cmd("commit", 2, "unknown")],
    );
    expect(currentSyncCommit(s, false)).toEqual(both);
    const refused = state(
      ["ok", "ok", "failed", "ok"],
      [cmd("commit", 2, "ok"), cmd("reverse", 3, "ok"), cmd("commit", 2, "error")],
    );
    expect(currentSyncCommit(refused, false)).toEqual(none);
  });
});

describe("a commit an earlier journal recorded (run.started.carried, a --from run's journal)", () => {
  const carried = (sent: boolean, accepted: boolean) => ({ carriedCommit: { sent, accepted } });
  it("counts for any commit and for the current sync's, as a commit of the journal's own", () => {
    expect(commitEvidence(state([], [], carried(true, true)))).toEqual(both);
    expect(currentSyncCommit(state([], [], carried(true, true)), false)).toEqual(both);
    const sentOnly = { sent: true, accepted: false };
    expect(commitEvidence(state([], [], carried(true, false)))).toEqual(sentOnly);
    expect(currentSyncCommit(state([], [], carried(true, false)), false)).toEqual(sentOnly);
    expect(commitEvidence(state([], [], carried(false, false)))).toEqual(none);
  });
  it("a reverse in this journal leaves it to the sync before: the cutover had it, the current sync has not", () => {
    const s = state(["ok", "ok", "ok", "ok"], [cmd("reverse", 3, "ok")], carried(true, true));
    expect(commitEvidence(s)).toEqual(both);
    expect(currentSyncCommit(s, false)).toEqual(none);
    expect(currentSyncCommit(state([], [], carried(true, true)), true)).toEqual(none);
  });
});

describe("afterItsCommit: a --from run after the commit of a cutover that committed goes on with it", () => {
  // the commit found by its kind's trait, not its place
  const STEPS_RB = {
    runbook: 1,
    name: "sales",
    instances: [{ url: "http://127.0.0.1:1" }],
    steps: [
      { id: "start", start: { source: "a", destination: "b" } },
      { id: "commit", commit: {} },
      { id: "verify", verify: {} },
      { id: "note", notify: "done" },
    ],
  };
  const loaded = (hash: string, runbook: unknown = STEPS_RB) => ({ hash, runbook }) as unknown as LoadedRunbook;
  const ended = (f: Partial<NonNullable<ReturnType<typeof state>["finished"]>>) =>
    state([], [], { finished: { outcome: "ok", committed: true, at: 1, ...f } });
  const h = ended({}).hash;
  it("only after the runbook's last commit step, on a journal of this text whose run finished ok and committed", () => {
    expect(afterItsCommit(ended({}), loaded(h), "verify")).toBe(true);
    expect(afterItsCommit(ended({}), loaded(h), "note")).toBe(true);
    expect(afterItsCommit(ended({}), loaded(h), "commit")).toBe(false);
    expect(afterItsCommit(ended({}), loaded(h), "start")).toBe(false);
    expect(afterItsCommit(ended({}), loaded(h), "nope")).toBe(false);
    expect(afterItsCommit(ended({}), loaded(h), undefined)).toBe(false);
  });
  it("not when the run did not finish ok, stopped at --to, was an --abort, did not commit, or ran another text", () => {
    expect(afterItsCommit(ended({ outcome: "failed" }), loaded(h), "verify")).toBe(false);
    expect(afterItsCommit(ended({ to: "verify" }), loaded(h), "verify")).toBe(false);
    expect(afterItsCommit(ended({ aborted: true }), loaded(h), "verify")).toBe(false);
    expect(afterItsCommit(ended({ committed: false }), loaded(h), "verify")).toBe(false);
    expect(afterItsCommit(state([]), loaded(h), "verify")).toBe(false);
    expect(afterItsCommit(ended({}), loaded("b".repeat(64)), "verify")).toBe(false);
    expect(afterItsCommit(ended({}), { hash: h, runbook: undefined } as unknown as LoadedRunbook, "verify")).toBe(
      false,
    );
  });
  it("a runbook without a commit step has no step after it", () => {
    const noCommit = { ...STEPS_RB, steps: STEPS_RB.steps.filter((st) => st.id !== "commit") };
    expect(afterItsCommit(ended({}), loaded(h, noCommit), "verify")).toBe(false);
  });
});

describe("stepToRunAgain: the journal's step after the commit that failed, for --resume's and --abort's refusals", () => {
  const rb = {
    runbook: 1,
    name: "sales",
    instances: [{ url: "http://127.0.0.1:1" }],
    steps: [
      { id: "start", start: { source: "a", destination: "b" } },
      { id: "commit", commit: {} },
      { id: "verify", verify: {} },
      { id: "note", notify: "done" },
    ],
  } as unknown as Runbook;
  const steps = [
    { index: 0, id: "start", kind: "start" },
    { index: 1, id: "commit", kind: "commit" },
    { index: 2, id: "verify", kind: "verify" },
    { index: 3, id: "note", kind: "notify" },
  ];
  const at = (statuses: string[], f: Partial<NonNullable<ReturnType<typeof state>["finished"]>> | undefined) =>
    state(statuses, [], f ? { finished: { outcome: "ok", committed: true, at: 1, ...f } } : {}, steps);
  it("the failed step after the commit, when the run finished ok at the runbook's end and committed", () => {
    expect(stepToRunAgain(at(["ok", "ok", "failed", "ok"], {}), rb)?.id).toBe("verify");
    expect(stepToRunAgain(at(["ok", "ok", "ok", "failed"], {}), rb)?.id).toBe("note");
  });
  it("none otherwise", () => {
    expect(stepToRunAgain(at(["failed", "ok", "ok", "ok"], {}), rb)).toBeUndefined();
    expect(stepToRunAgain(at(["ok", "ok", "ok", "ok"], {}), rb)).toBeUndefined();
    for (const f of [{ committed: false }, { outcome: "failed" as const }, { to: "verify" }])
      expect(stepToRunAgain(at(["ok", "ok", "failed", "ok"], f), rb), JSON.stringify(f)).toBeUndefined();
    expect(stepToRunAgain(at(["ok", "ok", "failed", "ok"], undefined), rb)).toBeUndefined();
    expect(stepToRunAgain(at(["ok", "ok", "failed", "ok"], {}), undefined)).toBeUndefined();
  });
});

describe("commitNoLongerHolds: the fleet read before a --from goes on with a committed cutover", () => {
  it("an instance that does not answer stands in the way, named without its URL's password", async () => {
    const text = `runbook: 1\nname: s\ninstances:\n  - { url: "http://op:S3cretPassw0rd@127.0.0.1:9", name: a }\n  - "http://op2:An0therSecret1@127.0.0.1:9/x"\nsteps:\n  - waitFor: { state: COMMITTED }\n`;
    const off = await commitNoLongerHolds(await parseRunbook(text, "/tmp/rb.yaml", { env: {} }));
    expect(off).toMatch(/^a does not answer \(http:\/\/\*\*\*@127\.0\.0\.1:9: progress failed/);
    expect(off).toMatch(/; http:\/\/\*\*\*@127\.0\.0\.1:9\/x does not answer/);
    expect(off).not.toMatch(/S3cret|An0ther|Passw0rd/);
  });
});

// every answer a commit's instances can leave, with its step ended ok, failed (part of the fleet
// refused it) or cut (the runner killed with it on its way): sent unless every instance refused it
// (a refusal is an answer that it took no effect), accepted once one instance accepted it; a step
// that ended ok counts whatever the lines say. Only commands of op commit count.
describe("commitEvidence, every answer of a commit's instances", () => {
  const answers = ["ok", "error", "unknown"] as const;
  for (const step of ["ok", "failed", "cut"] as const)
    for (const a of answers)
      for (const b of answers)
        it(`commit step ${step}, answers ${a} and ${b}`, () => {
          const s = state(["ok", "ok", step], [cmd("commit", 2, a, b)]);
          const sent = step === "ok" || a !== "error" || b !== "error";
          const accepted = step === "ok" || a === "ok" || b === "ok";
          expect(commitEvidence(s)).toEqual({ sent, accepted });
          // another command with the same answers is no commit
          expect(commitEvidence(state(["ok", "ok", step], [cmd("start", 2, a, b)]))).toEqual(none);
        });
});

// a reverse after the last that took effect, its step not ended ok, which may have reached an
// instance: the sync may run either way (--resume reads the fleet)
describe("reverseInDoubt", () => {
  it("a reverse cut or failed with an answer not a refusal is in doubt; refused everywhere, or ended ok, it is not", () => {
    for (const [step, answers, doubt] of [
      ["cut", ["unknown"], 3],
      ["cut", ["ok"], 3],
      ["failed", ["ok", "error"], 3],
      ["failed", ["error", "unknown"], 3],
      ["failed", ["error", "error"], undefined],
      ["ok", ["ok"], undefined],
    ] as const) {
      const s = state(["ok", "ok", "ok", step], [cmd("commit", 2, "ok"), cmd("reverse", 3, ...answers)]);
      expect(reverseInDoubt(s), `${step} ${answers.join(",")}`).toBe(doubt);
    }
  });

  it("only commands after the last reverse that took effect, and only reverses", () => {
    // the first reverse took effect; a second, cut, is in doubt
    const second = state(
      ["ok", "ok", "ok", "cut"],
      [cmd("reverse", 1, "ok"), cmd("commit", 2, "unknown"), cmd("reverse", 3, "unknown")],
    );
    expect(reverseInDoubt(second)).toBe(3);
    // a reverse in doubt before the last that took effect is settled by it
    const settled = state(["ok", "cut", "ok", "ok"], [cmd("reverse", 1, "unknown"), cmd("reverse", 3, "ok")]);
    expect(reverseInDoubt(settled)).toBeUndefined();
    // a commit cut on its way is no reverse
    expect(reverseInDoubt(state(["ok", "ok", "cut"], [cmd("commit", 2, "unknown")]))).toBeUndefined();
    expect(reverseInDoubt(state([], []))).toBeUndefined();
  });

  it("a command whose step the journal does not have is not ended ok (a journal cut short)", () => {
    const s = state(["ok"], [cmd("reverse", 7, "unknown")]);
    expect(reverseInDoubt(s)).toBe(7);
    expect(lastReverse(s)).toBeUndefined();
  });
});

// a --from run never sends a start, commit or reverse again to an instance it may have reached
// (an adversarial run: --from commit after a commit whose answers were lost sent it twice)
describe("sentAgainByFrom", () => {
  // the commands the run sends to the sync that runs now
  const ops = (...o: string[]) => new Set(o);
  const all = ops("start", "commit", "reverse");
  it("a command of the run's range that may have reached an instance it targets: accepted or no usable answer; a refusal is none", () => {
    for (const [a, b, reached] of [
      ["ok", "error", ["i0"]],
      ["unknown", "unknown", ["i0", "i1"]],
      ["error", "unknown", ["i1"]],
      ["error", "error", []],
    ] as const) {
      const s = state(["ok", "ok", "ok", "failed"], [cmd("commit", 3, a, b)]);
      expect(
        sentAgainByFrom(s, all, undefined).flatMap((c) => c.instances),
        `${a} ${b}`,
      ).toEqual(reached);
    }
    const s = state(["ok", "ok", "ok", "failed"], [cmd("commit", 3, "ok", "unknown")]);
    expect(sentAgainByFrom(s, all, undefined)).toEqual([
      { stepIndex: 3, op: "commit", instances: ["i0", "i1"], answers: "i0 accepted it, i1 gave no usable answer" },
    ]);
  });

  it("only the instances --only targets, only the commands the run sends, only start, commit and reverse", () => {
    const s = state(["ok", "ok", "ok", "failed"], [cmd("start", 0, "ok", "error"), cmd("commit", 3, "ok", "error")]);
    expect(sentAgainByFrom(s, all, new Set(["i1"]))).toEqual([]);
    expect(sentAgainByFrom(s, all, new Set(["i0"])).map((c) => c.op)).toEqual(["start", "commit"]);
    expect(sentAgainByFrom(s, ops("commit"), undefined).map((c) => c.op)).toEqual(["commit"]);
    expect(sentAgainByFrom(s, ops("start"), undefined).map((c) => c.op)).toEqual(["start"]);
    expect(sentAgainByFrom(s, ops("commit", "pause"), undefined).map((c) => c.op)).toEqual(["commit"]);
    expect(sentAgainByFrom(s, ops(), undefined)).toEqual([]);
    // a verifier command, or any other, is not this rule's
    const other = state(["ok", "ok", "ok", "failed"], [cmd("pause", 3, "ok")]);
    expect(sentAgainByFrom(other, ops("pause", ...all), undefined)).toEqual([]);
  });

  it("after a reverse that took effect, only the new sync's commands: the first sync's commit is not sent again by its steps", () => {
    const s = state(["ok", "ok", "ok", "ok"], [cmd("commit", 2, "ok"), cmd("reverse", 3, "ok")]);
    expect(sentAgainByFrom(s, all, undefined)).toEqual([]);
    // a reverse in doubt after it is: its step did not end ok
    const doubt = state(["ok", "ok", "ok", "cut"], [cmd("commit", 2, "ok"), cmd("reverse", 3, "unknown")]);
    expect(sentAgainByFrom(doubt, ops("reverse"), undefined).map((c) => c.op)).toEqual(["reverse"]);
  });
});

// a new cutover never forgets what an earlier one of the runbook left on the fleet (a review: a
// newer cutover that acted and sent no commit hid a split commit, and the next --new-cutover
// --from commit sent it again)
describe("liveJournals: the folder's journals whose commands may still be on the sync that runs now", () => {
  const j = (file: string, cutover: string, s: ReturnType<typeof state>) => ({ file, cutover, state: s });
  const split = j(
    "a",
    "A",
    state(["ok", "ok", "ok", "failed"], [cmd("start", 0, "ok"), cmd("commit", 3, "ok", "error")]),
  );
  const acted = j(
    "b",
    "B",
    state(["-", "-", "ok"], [], { finished: { outcome: "ok", committed: false, to: "stop", at: 9 } }),
  );
  const files = (l: ReturnType<typeof liveJournals>) => l.map((x) => x.file);
  it("an unfinished cutover stays live under a newer one that sent no command", () => {
    expect(files(liveJournals([split, acted]))).toEqual(["a", "b"]);
    expect(liveJournals([])).toEqual([]);
  });
  it("a commit or another command that took effect since starts no new sync: only a start or a reverse does", () => {
    for (const op of ["commit", "pause", "resume"] as const) {
      const other = j("c", "C", state(["ok", "ok", "ok"], [cmd(op, 2, "ok")]));
      expect(files(liveJournals([split, other])), op).toEqual(["a", "c"]);
    }
  });
  it("one called off with --abort counts nothing, and hides nothing before it", () => {
    const called = j(
      "b",
      "B",
      state(["-", "-", "ok"], [], { finished: { outcome: "failed", committed: false, aborted: true, at: 9 } }),
    );
    expect(files(liveJournals([split, called]))).toEqual(["a"]);
  });
  it("a cutover that committed (ok at the runbook's end) leaves nothing before it live, itself included", () => {
    const ended = j(
      "c",
      "C",
      state(["-", "-", "ok", "ok"], [cmd("commit", 3, "ok")], {
        finished: { outcome: "ok", committed: true, at: 9 },
      }),
    );
    expect(files(liveJournals([split, ended]))).toEqual([]);
    expect(files(liveJournals([split, ended, acted]))).toEqual(["b"]);
    // one that committed and stopped at its --to has not ended: it and what it left stay live
    const atTo = j(
      "c",
      "C",
      state(["-", "-", "ok", "ok"], [cmd("commit", 3, "ok")], {
        finished: { outcome: "ok", committed: true, to: "commit", at: 9 },
      }),
    );
    expect(files(liveJournals([split, atTo]))).toEqual(["a", "c"]);
  });
  it("one that ended ok without a commit (a --from of the runbook's last steps) hides nothing before it", () => {
    // an outside review: `--new-cutover --from notify` ended ok, sent nothing, and cleared the split commit
    const tail = j(
      "c",
      "C",
      state(["-", "-", "-", "-", "ok"], [], { finished: { outcome: "ok", committed: false, at: 9 } }),
    );
    expect(files(liveJournals([split, tail]))).toEqual(["a", "c"]);
    expect(files(liveJournals([split, acted, tail]))).toEqual(["a", "b", "c"]);
  });
  it("a start or a reverse that took effect (its step ended ok) starts a new sync: the journals before it no longer count, its own do", () => {
    const started = j("c", "C", state(["ok", "ok", "failed"], [cmd("start", 0, "ok")]));
    expect(files(liveJournals([split, started]))).toEqual(["c"]);
    const reversed = j("c", "C", state(["ok", "ok", "ok", "ok"], [cmd("commit", 2, "ok"), cmd("reverse", 3, "ok")]));
    expect(files(liveJournals([split, reversed]))).toEqual(["c"]);
  });
  it("a start that did not take effect (refused, its step failed), or one carried from an earlier journal, starts none", () => {
    const refused = j("c", "C", state(["failed"], [cmd("start", 0, "error")]));
    expect(files(liveJournals([split, refused]))).toEqual(["a", "c"]);
    const carried = j("c", "C", state(["ok"], [{ ...cmd("start", 0, "ok"), carried: {} }]));
    expect(files(liveJournals([split, carried]))).toEqual(["a", "c"]);
    // a reverse whose step did not end ok starts none either
    const doubt = j("c", "C", state(["ok", "ok", "ok", "cut"], [cmd("reverse", 3, "unknown")]));
    expect(files(liveJournals([split, doubt]))).toEqual(["a", "c"]);
  });
});

describe("opsToSyncNow", () => {
  it("the commands a run's steps send to the sync that runs now: up to its first reverse, none from a step its `when` skips", async () => {
    const text = `runbook: 1
name: rb
instances: ["http://127.0.0.1:1"]
vars: { rollback: true }
steps:
  - { id: start, start: { source: cluster0, destination: cluster1, reversible: true } }
  - { id: wait, waitFor: { state: RUNNING } }
  - { id: skipped, when: false, pause: {} }
  - { commit: {} }
  - { id: rollback, when: "\${vars.rollback}", reverse: {} }
  - { id: commit-again, commit: {} }
`;
    const loaded = await parseRunbook(text, "rb.yaml");
    const steps = planSteps(loaded.runbook!);
    expect([...opsToSyncNow(steps)]).toEqual(["start", "commit", "reverse"]);
    expect([...opsToSyncNow(steps.slice(1))]).toEqual(["commit", "reverse"]);
    // after the reverse: the new sync's commit is not the journal's
    expect([...opsToSyncNow(steps.slice(5))]).toEqual(["commit"]);
    expect([...opsToSyncNow(steps.slice(1, 3))]).toEqual([]);
    const noRollback = await parseRunbook(text, "rb.yaml", { vars: { rollback: false } });
    // the reverse skipped: the second commit goes to the sync that runs now
    expect([...opsToSyncNow(planSteps(noRollback.runbook!).slice(4))]).toEqual(["commit"]);
  });
});

// a --resume completing a split command sends it to `only` alone, and the steps after it to the
// whole fleet: an earlier cutover's command is judged by where each would go (it refused the
// completion of a start on the instance that refused it, for the first cutover's start on the others)
describe("refuseSentByEarlierCutover: a resume completing a split command (`completes`)", async () => {
  const text = `runbook: 1
name: rb
instances:
  - { url: "http://127.0.0.1:1", name: i0 }
  - { url: "http://127.0.0.1:2", name: i1 }
  - { url: "http://127.0.0.1:3", name: i2 }
steps:
  - { id: start, start: { source: cluster0, destination: cluster1, reversible: true } }
  - { id: wait, waitFor: { state: RUNNING } }
  - { id: commit, commit: {} }
  - { id: rollback, reverse: {} }
  - { id: commit-again, commit: {} }
  - { id: start-again, start: { source: cluster1, destination: cluster0 } }
`;
  const loaded = await parseRunbook(text, "rb.yaml");
  const earlier = (...c: ReturnType<typeof cmd>[]) => [{ file: "a", cutover: "A", state: state(["failed"], c) }];
  const refused = (
    journals: ReturnType<typeof earlier>,
    from: string,
    range: { only?: number[]; completes?: string },
  ): boolean => {
    try {
      refuseSentByEarlierCutover(
        { journals, unjudged: [] },
        { cutover: "B" },
        loaded,
        "/dir",
        from,
        range,
        "resume",
        () => undefined,
      );
      return false;
    } catch (err) {
      return /this resume would send it again/.test(String(err));
    }
  };
  it("the completed command only where it goes: an earlier start on the others refuses it no more; on one it goes to, still", () => {
    const started = earlier(cmd("start", 0, "ok", "ok", "error"));
    expect(refused(started, "start", {})).toBe(true);
    expect(refused(started, "start", { only: [2], completes: "start" })).toBe(false);
    expect(refused(started, "start", { only: [1, 2], completes: "start" })).toBe(true);
    // one that gave no usable answer may have reached it too
    const lost = earlier(cmd("start", 0, "unknown", "ok", "error"));
    expect(refused(lost, "start", { only: [0, 2], completes: "start" })).toBe(true);
    // a step the range does not hold: `only` is no step's, and every command goes to every instance
    const committed = earlier(cmd("commit", 2, "unknown", "error", "error"));
    expect(refused(committed, "wait", { only: [2], completes: "start" })).toBe(true);
    expect(refused(committed, "wait", { only: [2] })).toBe(false);
  });
  it("the steps after it go to the whole fleet, up to a reverse (a new sync after it)", () => {
    const committed = earlier(cmd("commit", 2, "unknown", "error", "error"));
    expect(refused(committed, "start", { only: [2], completes: "start" })).toBe(true);
    // a reverse completed: the commit after it goes to the new sync
    expect(refused(committed, "rollback", { only: [2], completes: "rollback" })).toBe(false);
    const reversed = earlier(cmd("reverse", 3, "unknown", "error", "error"));
    expect(refused(reversed, "rollback", { only: [2], completes: "rollback" })).toBe(false);
    expect(refused(reversed, "rollback", { only: [0], completes: "rollback" })).toBe(true);
    // the steps before it go to the whole fleet too: a commit there, and the reverse after it to `only`
    expect(refused(committed, "wait", { only: [2], completes: "rollback" })).toBe(true);
    expect(refused(reversed, "commit", { only: [1, 2], completes: "rollback" })).toBe(false);
    expect(refused(reversed, "commit", { only: [0], completes: "rollback" })).toBe(true);
    // a reverse before it: the completed command and those after it go to the new sync
    expect(refused(committed, "rollback", { only: [0], completes: "commit-again" })).toBe(false);
    const startedOn0 = earlier(cmd("start", 0, "ok", "error", "error"));
    expect(refused(startedOn0, "rollback", { only: [2], completes: "commit-again" })).toBe(false);
    // and with none before it, the steps after it to every instance
    expect(refused(startedOn0, "commit-again", { only: [2], completes: "commit-again" })).toBe(true);
    // a step it does not reach (a resume that ends before it): nothing of it counts
    const again = earlier(cmd("commit", 4, "unknown", "error", "error"));
    expect(refused(again, "commit-again", { only: [2], completes: "commit-again" })).toBe(false);
    expect(refused(again, "commit-again", { only: [0], completes: "commit-again" })).toBe(true);
  });
  it("a command sent both by the completion and by a step after it (no reverse between) counts as sent to every instance", async () => {
    const twice = await parseRunbook(
      text.replace("{ id: rollback, reverse: {} }", "{ id: rollback, waitFor: { state: RUNNING } }"),
      "rb.yaml",
    );
    const committed = earlier(cmd("commit", 2, "unknown", "error", "error"));
    expect(() =>
      refuseSentByEarlierCutover(
        { journals: committed, unjudged: [] },
        { cutover: "B" },
        twice,
        "/dir",
        "commit",
        { only: [2], completes: "commit" },
        "resume",
        () => undefined,
      ),
    ).toThrow(/this resume would send it again/);
  });
});

describe("startlessFrom: the step a run without --from is in effect a --from of", () => {
  const runbook = async (steps: string, vars: Record<string, boolean> = {}) =>
    planSteps(
      (
        await parseRunbook(
          `runbook: 1\nname: rb\ninstances: ["http://127.0.0.1:1"]\nvars: { again: true }\nsteps:\n${steps}`,
          "rb.yaml",
          { vars },
        )
      ).runbook!,
    );
  it("none when the first command is a start; the first step when it is another, or the start is skipped", async () => {
    const start = "  - { id: start, start: { source: cluster0, destination: cluster1 } }\n";
    const hook = "  - { id: note, waitFor: { state: RUNNING } }\n";
    const commit = "  - { id: commit, commit: {} }\n";
    expect(startlessFrom(await runbook(hook + start + commit))).toBeUndefined();
    expect(startlessFrom(await runbook(hook + commit))).toBe("note");
    expect(startlessFrom(await runbook(commit + start))).toBe("commit");
    const skipped = '  - { id: start, when: "${vars.again}", start: { source: cluster0, destination: cluster1 } }\n';
    expect(startlessFrom(await runbook(hook + skipped + commit))).toBeUndefined();
    expect(startlessFrom(await runbook(hook + skipped + commit, { again: false }))).toBe("note");
    // no command at all: judged from its first step (it sends none, so nothing is refused)
    expect(startlessFrom(await runbook(hook))).toBe("note");
    expect(startlessFrom([])).toBeUndefined();
  });
});

// an outside review: one journal of the folder that could not be read dropped the whole folder's
// check (folderJournals threw), a folder that could not be listed said nothing, and a --from run or
// a --resume went on with a commit an earlier cutover left on its way
describe("folderJournals: each file read on its own", () => {
  const made: (() => void)[] = [];
  afterAll(() => made.forEach((f) => f()));
  const line = (v: object) => `${JSON.stringify(v)}\n`;
  const journal = (at: number, cutover: string, tail = "") =>
    line({ type: "journal.opened", seq: 0, at }) + line({ type: "run.started", seq: 1, at, cutover }) + tail;
  it("one that cannot be read, or is damaged before its last line with no run read, is named with why; the others are read all the same", async () => {
    const { dir, cleanup } = tempDir();
    made.push(cleanup);
    writeFileSync(join(dir, "a.jsonl"), journal(1000, "A"));
    mkdirSync(join(dir, "b.jsonl"));
    writeFileSync(join(dir, "c.jsonl"), "not a journal\n" + line({ type: "run.finished", seq: 2, at: 5 }));
    // a cut-short last line is a crash's: read
    writeFileSync(join(dir, "d.jsonl"), journal(2000, "D", '{"type":"step.sta'));
    // a line that is none, and no run read: a header alone is no run, and says nothing
    writeFileSync(join(dir, "e.jsonl"), line({ type: "journal.opened", seq: 0, at: 3 }));
    const { journals, unjudged } = await folderJournals(dir);
    expect(journals.map((j) => [j.file, j.cutover])).toEqual([
      [join(dir, "a.jsonl"), "A"],
      [join(dir, "d.jsonl"), "D"],
    ]);
    expect(unjudged.map((u) => u.file)).toEqual([join(dir, "b.jsonl"), join(dir, "c.jsonl")]);
    expect(unjudged[0]!.why).toMatch(/^it cannot be read \(EISDIR/);
    expect(unjudged[1]!.why).toBe("it cannot be read (line 1 is not JSON): whether it holds a run cannot be told");
  });
  it("two that began at the same moment are named (they cannot be ordered), and both read", async () => {
    const { dir, cleanup } = tempDir();
    made.push(cleanup);
    writeFileSync(join(dir, "a.jsonl"), journal(1000, "A"));
    writeFileSync(join(dir, "b.jsonl"), journal(1000, "B"));
    writeFileSync(join(dir, "c.jsonl"), journal(1001, "C"));
    const { journals, unjudged } = await folderJournals(dir);
    expect(journals.map((j) => j.cutover)).toEqual(["A", "B", "C"]);
    expect(unjudged).toEqual([
      {
        file: join(dir, "b.jsonl"),
        why: `it began at the same moment as ${join(dir, "a.jsonl")}: which came first cannot be told`,
      },
    ]);
  });
  it("no folder is no journal; a folder that cannot be listed is named", async () => {
    const { dir, cleanup } = tempDir();
    made.push(cleanup);
    expect(await folderJournals(join(dir, "none"))).toEqual({ journals: [], unjudged: [] });
    writeFileSync(join(dir, "file"), "");
    const { journals, unjudged } = await folderJournals(join(dir, "file"));
    expect(journals).toEqual([]);
    expect(unjudged.map((u) => u.file)).toEqual([join(dir, "file")]);
    expect(unjudged[0]!.why).toMatch(/^the folder cannot be listed \(ENOTDIR/);
  });
  it("readFolderJournals: one the strict reader refuses (a damaged line) is named with why, beside the ones it reads", async () => {
    const { dir, cleanup } = tempDir();
    made.push(cleanup);
    const ev = eventFactory();
    const w = openJournal({ dir, runbookName: "sales", runbookHash: "abc" });
    w.write(ev("run.started", { ...salesStarted(), cutover: "A" }));
    w.write(ev("step.started", { ...STEPS4[0]!, title: "start" }));
    w.close();
    // another cutover's, begun later, with a line damaged in its middle
    const other = tempDir();
    made.push(other.cleanup);
    const ev2 = eventFactory();
    const later: typeof ev2 = (type, payload) => {
      const e = ev2(type, payload);
      return { ...e, at: e.at + 1000 };
    };
    const w2 = openJournal({ dir: other.dir, runbookName: "sales", runbookHash: "abc" });
    w2.write(later("run.started", { ...salesStarted(), cutover: "B" }));
    w2.write(later("step.started", { ...STEPS4[0]!, title: "start" }));
    w2.close();
    const text = readFileSync(w2.file, "utf8").split("\n");
    const damaged = join(dir, "zz.jsonl");
    writeFileSync(damaged, [...text.slice(0, 2), "{ not json", ...text.slice(2)].join("\n"));
    const { journals, unjudged } = await readFolderJournals(dir);
    expect(journals.map((j) => [j.file, j.cutover, j.state.steps.filter((x) => x.started).map((x) => x.id)])).toEqual([
      [w.file, "A", ["start"]],
    ]);
    expect(unjudged.map((u) => u.file)).toEqual([damaged]);
    expect(unjudged[0]!.why).toMatch(/^it cannot be read \(.*zz\.jsonl:3: .*not JSON/);
  });
});

describe("readFolderJournals: each journal checked against its witness in its one read", () => {
  const made: (() => void)[] = [];
  afterAll(() => made.forEach((f) => f()));
  /** A journal of `cutover`, begun `k` seconds after the others' clock, that sent commit (no answer). */
  const sentCommit = (dir: string, cutover: string, k: number, commit = true): string => {
    const ev1 = eventFactory();
    const ev: typeof ev1 = (type, payload) => {
      const e = ev1(type, payload);
      return { ...e, at: e.at + k * 1000 };
    };
    const w = openJournal({ dir, runbookName: "sales", runbookHash: "abc" });
    w.write(ev("run.started", { ...salesStarted(), cutover }));
    w.write(ev("step.started", { index: 3, id: "commit", kind: "commit", title: "commit" }));
    if (commit)
      w.write(
        ev("request.sent", {
          id: 1,
          instance: inst(0),
          target: "service",
          method: "POST",
          path: "/api/v1/commit",
          body: {},
        }),
      );
    w.close();
    return w.file;
  };
  it("one cut short, or whose witness is missing, is named with why; one its own run marked untrusted, or written before witnesses, is read as it is", async () => {
    const { dir, cleanup } = tempDir();
    made.push(cleanup);
    const whole = sentCommit(dir, "W", 1);
    const cut = sentCommit(dir, "C", 2);
    const untrusted = sentCommit(dir, "U", 3);
    const missing = sentCommit(dir, "M", 4);
    // its commit's line lost: shorter than its witness says
    const lines = readFileSync(cut, "utf8").trimEnd().split("\n");
    writeFileSync(cut, `${lines.slice(0, -1).join("\n")}\n`);
    // its own run's mark (journal.ts `distrust`): the witness emptied
    writeFileSync(witnessFile(untrusted), "");
    rmSync(witnessFile(missing));
    // before witnesses (and chains): a header of format 1
    const line = (v: object) => `${JSON.stringify(v)}\n`;
    const older = join(dir, "0-older.jsonl");
    writeFileSync(
      older,
      line({ type: "journal.opened", seq: 0, at: 1, version: 1, runbook: "sales", hash: "abc" }) +
        line({ type: "run.started", seq: 1, at: 1, ...salesStarted(), cutover: "P" }),
    );
    const { journals, unjudged } = await readFolderJournals(dir);
    expect(journals.map((j) => [j.file, j.cutover])).toEqual([
      [older, "P"],
      [whole, "W"],
      [untrusted, "U"],
    ]);
    // what it records is whole: its commit, its answer lost, may have reached
    const u = journals.find((j) => j.cutover === "U")!;
    expect(sentAgainByFrom(u.state, new Set(["commit"]), undefined).map((c) => c.op)).toEqual(["commit"]);
    expect(unjudged.map((x) => x.file)).toEqual([cut, missing]);
    expect(unjudged[0]!.why).toMatch(
      new RegExp(
        `^it cannot be trusted \\(cannot trust ${cut}: the journal is shorter than its last fsynced point: it ends at seq 2 \\(line 3\\), but its witness saw seq 3 `,
      ),
    );
    expect(unjudged[1]!.why).toBe(
      `it cannot be trusted (cannot trust ${missing}: its witness ${witnessFile(missing)} is missing, so its length cannot be checked (lines cut off its end would look like a crash))`,
    );
  });
  it("one its own run marked untrusted refuses a newer run's commit its lines show was sent, and no range that sends none", async () => {
    const { dir, cleanup } = tempDir();
    made.push(cleanup);
    const loaded = await parseRunbook(
      `runbook: 1
name: rb
instances: ["http://127.0.0.1:1"]
steps:
  - { id: start, start: { source: cluster0, destination: cluster1 } }
  - { id: wait, waitFor: { state: RUNNING } }
  - { id: commit, commit: {} }
`,
      "rb.yaml",
    );
    const untrusted = sentCommit(dir, "U", 1);
    writeFileSync(witnessFile(untrusted), "");
    // the newer run of its way on: its own journal, no commit
    const own = sentCommit(dir, "U", 2, false);
    const folder = await readFolderJournals(dir);
    expect(folder.unjudged).toEqual([]);
    const said: string[] = [];
    const judge = (from: string, to?: string) => () =>
      refuseSentByEarlierCutover(
        folder,
        { cutover: "U", file: own },
        loaded,
        dir,
        from,
        to ? { to } : {},
        "from",
        (s) => said.push(s),
      );
    expect(judge("commit")).toThrow(
      // the same cutover's other journal: an earlier run of it, not "an earlier cutover" (a review)
      `cannot go on with the last cutover from commit: the journal ${untrusted} of an earlier run of this cutover, U, shows commit (step 4 "commit") may have reached i0 (i0 gave no usable answer), and this run would send it again: the fleet may still hold it: a commit is never sent twice to an instance; nothing was sent`,
    );
    expect(judge("wait", "wait")).not.toThrow();
    // one that sent no commit refuses none
    const none = sentCommit(dir, "V", 0, false);
    writeFileSync(witnessFile(none), "");
    rmSync(untrusted);
    rmSync(witnessFile(untrusted));
    const after = await readFolderJournals(dir);
    expect(after.journals.map((j) => j.file)).toEqual([none, own]);
    expect(() =>
      refuseSentByEarlierCutover(after, { cutover: "U", file: own }, loaded, dir, "commit", {}, "from", (s) =>
        said.push(s),
      ),
    ).not.toThrow();
    expect(said).toEqual([]);
  });
});

describe("refuseSentByEarlierCutover", () => {
  const text = `runbook: 1
name: rb
instances: ["http://127.0.0.1:1"]
steps:
  - { id: start, start: { source: cluster0, destination: cluster1 } }
  - { id: wait, waitFor: { state: RUNNING } }
  - { id: commit, commit: {} }
  - { id: done, waitFor: { state: COMMITTED } }
  - { id: hold, pause: {} }
`;
  const j = (file: string, cutover: string, s: ReturnType<typeof state>) => ({ file, cutover, state: s });
  const refusal = (f: () => void): UserError | undefined => {
    try {
      f();
    } catch (err) {
      if (err instanceof UserError) return err;
      throw err;
    }
    return undefined;
  };
  const bad = { file: "/j/zz.jsonl", why: "it cannot be read (EISDIR: illegal operation on a directory, read)" };
  it("a journal that cannot be judged refuses a range that sends a start, commit or reverse, in every mode: the file, why, nothing sent, and the way on", async () => {
    const loaded = await parseRunbook(text, "rb.yaml");
    for (const [run, words] of [
      ["new cutover", "cannot start a new cutover from wait"],
      ["from", "cannot go on with the last cutover from wait"],
      ["resume", 'cannot resume the last cutover at step "wait"'],
    ] as const) {
      const said: string[] = [];
      const err = refusal(() =>
        refuseSentByEarlierCutover(
          { journals: [], unjudged: [bad] },
          { cutover: "B" },
          loaded,
          "/j",
          "wait",
          {},
          run,
          (s) => said.push(s),
        ),
      );
      expect(err?.message, run).toBe(
        `${words}: the journal /j/zz.jsonl: it cannot be read (EISDIR: illegal operation on a directory, read): whether it records a start, commit or reverse still on the fleet, which this ${run === "resume" ? "resume" : "run"} would send (commit), cannot be told; nothing was sent`,
      );
      expect(err?.exitCode).toBe(3);
      expect(err?.hint).toContain("See the fleet: syncbook status rb.yaml.");
      expect(err?.hint).toContain("then run this command again: mv /j/zz.jsonl /j/zz.jsonl.set-aside.");
      expect(err?.hint).toContain(
        "a new cutover from its start checks the fleet is IDLE: syncbook run rb.yaml --new-cutover (without --from).",
      );
      expect(said).toEqual([]);
    }
    // the folder itself: made readable, not set aside (its journals would go with it)
    const folder = refusal(() =>
      refuseSentByEarlierCutover(
        { journals: [], unjudged: [{ file: "/j", why: "the folder cannot be listed (EACCES)" }] },
        {},
        loaded,
        "/j",
        "start",
        {},
        "from",
        () => undefined,
      ),
    );
    expect(folder?.message).toMatch(
      /^cannot go on with the last cutover from start: the journal folder \/j: the folder cannot be listed \(EACCES\): .* would send \(start, commit\)/,
    );
    expect(folder?.hint).toMatch(/^Make the folder readable/);
    expect(folder?.hint).not.toContain("mv ");
  });
  it("the journal of the cutover the run goes on with, when it cannot be judged, refuses with the refusal --resume gives it (`own.refused`)", async () => {
    const loaded = await parseRunbook(text, "rb.yaml");
    const own = { file: "/j/own.jsonl", why: "it cannot be trusted (cut short)" };
    const refused = new UserError("cannot trust /j/own.jsonl: cut short", { hint: "as --resume says" });
    const judge = (unjudged: { file: string; why: string }[], from: string, ownRefused?: UserError) =>
      refusal(() =>
        refuseSentByEarlierCutover(
          { journals: [], unjudged },
          { cutover: "A", file: own.file, ...(ownRefused !== undefined ? { refused: ownRefused } : {}) },
          loaded,
          "/j",
          from,
          {},
          "from",
          () => undefined,
        ),
      );
    expect(judge([own], "commit", refused)).toBe(refused);
    // first among others, and after another that cannot be judged: its own refusal
    expect(judge([own, bad], "commit", refused)).toBe(refused);
    expect(judge([bad, own], "commit", refused)).toBe(refused);
    // another file that cannot be judged: the folder's refusal, naming it
    expect(judge([bad], "commit", refused)?.message).toMatch(
      /^cannot go on with the last cutover from commit: the journal \/j\/zz\.jsonl: it cannot be read/,
    );
    // no refusal of its own given: judged as any other file
    expect(judge([own], "commit")?.message).toMatch(
      /^cannot go on with the last cutover from commit: the journal \/j\/own\.jsonl: it cannot be trusted \(cut short\)/,
    );
    // a range that sends none goes on
    expect(judge([own], "hold", refused)).toBeUndefined();
  });
  it("a range that sends none of them goes on, naming the file; so does a --from step the runbook lacks", async () => {
    const loaded = await parseRunbook(text, "rb.yaml");
    for (const [from, to] of [
      ["wait", "wait"],
      ["done", undefined],
      ["hold", undefined],
      ["nowhere", undefined],
    ] as const) {
      const said: string[] = [];
      refuseSentByEarlierCutover(
        { journals: [], unjudged: [bad] },
        { cutover: "B" },
        loaded,
        "/j",
        from,
        to ? { to } : {},
        "from",
        (s) => said.push(s),
      );
      expect(said, from).toEqual([
        "journal: /j/zz.jsonl: it cannot be read (EISDIR: illegal operation on a directory, read); this run sends no start, commit or reverse, so none it may record is sent again",
      ]);
    }
  });
  it("the readable journals are judged beside one that cannot be: a split commit refuses a range with no unreadable one", async () => {
    const loaded = await parseRunbook(text, "rb.yaml");
    const split = j(
      "/j/a.jsonl",
      "A",
      state(["ok", "ok", "failed"], [cmd("start", 0, "ok"), cmd("commit", 2, "ok", "error")], {}, STEPS4),
    );
    const err = refusal(() =>
      refuseSentByEarlierCutover(
        { journals: [split], unjudged: [] },
        { cutover: "B" },
        loaded,
        "/j",
        "wait",
        {},
        "from",
        () => undefined,
      ),
    );
    expect(err?.message).toMatch(
      /the journal \/j\/a\.jsonl of an earlier cutover, A, shows commit \(step 3 "commit"\) may have reached i0/,
    );
    expect(err?.hint).toMatch(/^See the fleet: syncbook status rb\.yaml\. If it shows the commit never reached/);
  });

  it("of the live journals of other cutovers, the newest is named, the run's own passed over; the way on per mode", async () => {
    const loaded = await parseRunbook(text, "rb.yaml");
    const lost = (file: string, cutover: string, stepIndex: number) =>
      j(file, cutover, state(["ok", "ok", "cut"], [cmd("commit", stepIndex, "unknown", "ok")], {}, STEPS4));
    const journals = [lost("/j/a.jsonl", "A", 2), lost("/j/c.jsonl", "C", 8), lost("/j/b.jsonl", "B", 2)];
    const go = (run: "new cutover" | "from" | "resume") =>
      refusal(() =>
        refuseSentByEarlierCutover(
          { journals, unjudged: [] },
          { cutover: "B", file: "/j/b.jsonl" },
          loaded,
          "/j",
          "commit",
          {},
          run,
          () => undefined,
        ),
      );
    const from = go("from");
    expect(from?.message).toBe(
      'cannot go on with the last cutover from commit: the journal /j/c.jsonl of an earlier cutover, C, shows commit (step 9 "#9") may have reached i0, i1 (i0 gave no usable answer, i1 accepted it), and this run would send it again: a newer cutover of this runbook left it unfinished and sent none since, and the fleet may still hold it: a commit is never sent twice to an instance; nothing was sent',
    );
    expect(from?.hint).toContain(
      "send it only to those: syncbook run rb.yaml --from #9 --only <the instances it did not reach>.",
    );
    expect(from?.hint).toContain("then run this command again: mv /j /j.set-aside");
    expect(from?.hint).toContain(
      "If the sync was set back by hand since (the fleet IDLE again), start a new cutover from its start, whose interlock checks the fleet is IDLE: syncbook run rb.yaml --new-cutover (without --from). If it was set back and started again by hand, that cutover's commands went to a sync that no longer runs",
    );
    expect(go("new cutover")?.hint).toContain(
      "send it only to those: syncbook run rb.yaml --new-cutover --from #9 --only <the instances it did not reach>.",
    );
    expect(go("resume")?.message).toMatch(
      /^cannot resume the last cutover at step "commit": .*, and this resume would send it again/,
    );
  });

  // a terminal trial: after a split commit, the way on `--new-cutover --from commit --only …` was
  // refused by writes-stopped (a new cutover has no write stop of its own), and that refusal's
  // `--from stop-writes` (the commit to every instance) came back here. The commit's way on
  // begins at the write stop before it: its run stops writes itself
  it("a commit's way on begins at the write stop before it, when nothing but skipped steps and waits lie between", async () => {
    const head = `runbook: 1
name: rb
instances: ["http://127.0.0.1:1", "http://127.0.0.1:2"]
`;
    const split = j(
      "/j/a.jsonl",
      "A",
      state(["ok", "ok", "ok", "ok", "failed"], [cmd("commit", 4, "ok", "error")], {}, [
        { index: 0, id: "start", kind: "start" },
        { index: 1, id: "ready", kind: "waitFor" },
        { index: 2, id: "stop", kind: "stopWrites" },
        { index: 3, id: "drained", kind: "waitFor" },
        { index: 4, id: "commit", kind: "commit" },
      ]),
    );
    const way = async (steps: string, run: "new cutover" | "from" | "resume" | "first step", from = "commit") => {
      const loaded = await parseRunbook(`${head}steps:\n${steps}`, "rb.yaml");
      const err = refusal(() =>
        refuseSentByEarlierCutover(
          { journals: [split], unjudged: [] },
          { cutover: "B", file: "/j/b.jsonl" },
          loaded,
          "/j",
          from,
          {},
          run,
          () => undefined,
        ),
      );
      return /send it only to those: (.*?)\. If/.exec(err?.hint ?? "")?.[1];
    };
    const stop = "  - { id: stop, stopWrites: { use: shell, with: { command: [node, -e, '0'] } } }\n";
    const commit = "  - { id: commit, commit: {} }\n  - { id: done, waitFor: { state: COMMITTED } }\n";
    const wait = "  - { id: drained, waitFor: { canCommit: true } }\n";
    const only = "--only <the instances it did not reach>";
    const plain = stop + wait + commit;
    expect(await way(plain, "new cutover")).toBe(`syncbook run rb.yaml --new-cutover --from stop ${only}`);
    expect(await way(plain, "first step")).toBe(`syncbook run rb.yaml --new-cutover --from stop ${only}`);
    expect(await way(plain, "from")).toBe(`syncbook run rb.yaml --from stop ${only}`);
    expect(await way(plain, "resume", "drained")).toBe(`syncbook run rb.yaml --from stop ${only}`);
    // the last write stop before the commit; one its `when` skips does not count
    const other = "  - { id: other, stopWrites: { use: shell, with: { command: [node, -e, '1'] } } }\n";
    expect(await way(stop + other + wait + commit, "from")).toBe(`syncbook run rb.yaml --from other ${only}`);
    const skipped = other.replace("{ id: other,", "{ id: other, when: false,");
    expect(await way(stop + wait + skipped + commit, "from")).toBe(`syncbook run rb.yaml --from stop ${only}`);
    // a commit step its `when` skips sends nothing: the first that runs is the one
    const early = "  - { id: early, when: false, commit: {} }\n";
    expect(await way(early + stop + commit, "from", "early")).toBe(`syncbook run rb.yaml --from stop ${only}`);
    // the range's commit, not the runbook's first
    const first = "  - { id: first, commit: {} }\n";
    expect(await way(other + first + stop + commit, "from", "stop")).toBe(`syncbook run rb.yaml --from stop ${only}`);
    // none before it, another command between (--only takes one), or writes stopped outside: the commit step
    expect(await way(wait + commit + stop, "from")).toBe(`syncbook run rb.yaml --from commit ${only}`);
    const pause = "  - { id: hold, pause: {} }\n  - { id: go, resume: {} }\n";
    expect(await way(stop + pause + commit, "from", "go")).toBe(`syncbook run rb.yaml --from commit ${only}`);
    // a start (or reverse) on its way: its own step, whatever write stop a commit after it has
    const started = j(
      "/j/a.jsonl",
      "A",
      state(["failed"], [cmd("start", 0, "ok", "error")], {}, [{ index: 0, id: "start", kind: "start" }]),
    );
    const start = "  - { id: start, start: { source: cluster0, destination: cluster1 } }\n";
    const withStart = await parseRunbook(`${head}steps:\n${start}${plain}`, "rb.yaml");
    expect(
      refusal(() =>
        refuseSentByEarlierCutover(
          { journals: [started], unjudged: [] },
          { cutover: "B" },
          withStart,
          "/j",
          "start",
          {},
          "from",
          () => undefined,
        ),
      )?.hint,
    ).toContain(`send it only to those: syncbook run rb.yaml --from start ${only}.`);
    const outside = await parseRunbook(`${head}writesStoppedExternally: true\nsteps:\n${plain}`, "rb.yaml");
    const err = refusal(() =>
      refuseSentByEarlierCutover(
        { journals: [split], unjudged: [] },
        { cutover: "B" },
        outside,
        "/j",
        "commit",
        {},
        "from",
        () => undefined,
      ),
    );
    expect(err?.hint).toContain(`send it only to those: syncbook run rb.yaml --from commit ${only}.`);
  });

  // an older journal resumed after a newer cutover started a new sync: the folder's journals are
  // ordered by their first run, so its commit was taken as before the newer start and dropped
  // (liveJournals), and the next --from commit sent it again
  it("a --resume of a cutover a newer one acted after (a start, commit or reverse that may have reached the fleet) is refused", async () => {
    const loaded = await parseRunbook(text, "rb.yaml");
    const older = j("/j/a.jsonl", "A", state(["ok", "ok"], [cmd("start", 0, "ok")], {}, STEPS4));
    const started = j("/j/b.jsonl", "B", state(["ok", "cut"], [cmd("start", 0, "ok")], {}, STEPS4));
    // what it guards: the older journal's commit, sent after the newer start, is no longer live
    const resumed = j(
      "/j/a.jsonl",
      "A",
      state(["ok", "ok", "cut"], [cmd("start", 0, "ok"), cmd("commit", 2, "unknown")], {}, STEPS4),
    );
    expect(liveJournals([resumed, started]).map((x) => x.file)).toEqual(["/j/b.jsonl"]);
    const err = refusal(() =>
      refuseSentByEarlierCutover(
        { journals: [older, started], unjudged: [] },
        { cutover: "A", file: "/j/a.jsonl" },
        loaded,
        "/j",
        "commit",
        {},
        "resume",
        () => undefined,
      ),
    );
    expect(err?.message).toBe(
      'cannot resume the last cutover at step "commit": its cutover A is older than cutover B, whose journal /j/b.jsonl shows start (step 1 "start") sent since: the folder\'s journals are ordered by their first run, so what this resume sends would be judged as sent before it, and left out of the check that keeps a start, commit or reverse from being sent twice; nothing was sent',
    );
    expect(err?.exitCode).toBe(3);
    expect(err?.hint).toContain(
      "Go on with the newer cutover, which the fleet follows now: syncbook run rb.yaml --resume (without a journal file).",
    );
    expect(err?.hint).toContain("syncbook run rb.yaml --new-cutover.");
    expect(err?.hint).toMatch(/^See the fleet: syncbook status rb\.yaml\. Go on/);
    // one that may have reached the fleet counts, whatever it is; a refused one, a carried one, or an
    // aborted cutover's does not; nor does the newer cutover's own resume, nor a --from run
    const commitLost = j("/j/b.jsonl", "B", state(["-", "-", "cut"], [cmd("commit", 2, "unknown")], {}, STEPS4));
    const refused = j("/j/b.jsonl", "B", state(["failed"], [cmd("start", 0, "error")], {}, STEPS4));
    const carried = j("/j/b.jsonl", "B", state(["-"], [{ ...cmd("start", 0, "ok"), carried: {} }], {}, STEPS4));
    const aborted = j(
      "/j/b.jsonl",
      "B",
      state(
        ["ok"],
        [cmd("start", 0, "ok")],
        { finished: { outcome: "failed", committed: false, aborted: true, at: 9 } },
        STEPS4,
      ),
    );
    const sameCutover = j("/j/b.jsonl", "A", state(["ok"], [cmd("start", 0, "ok")], {}, STEPS4));
    const go = (journals: ReturnType<typeof j>[], own: string, run: "resume" | "from" = "resume") =>
      refusal(() =>
        refuseSentByEarlierCutover(
          { journals, unjudged: [] },
          { cutover: own, file: own === "A" ? "/j/a.jsonl" : "/j/b.jsonl" },
          loaded,
          "/j",
          "done",
          {},
          run,
          () => undefined,
        ),
      );
    // "done" sends nothing: no refusal at all
    expect(go([older, started], "A")).toBeUndefined();
    const commitStep = (journals: ReturnType<typeof j>[], own: string, run: "resume" | "from" = "resume") =>
      refusal(() =>
        refuseSentByEarlierCutover(
          { journals, unjudged: [] },
          { cutover: own, file: own === "A" ? "/j/a.jsonl" : "/j/b.jsonl" },
          loaded,
          "/j",
          "commit",
          {},
          run,
          () => undefined,
        ),
      );
    expect(commitStep([older, commitLost], "A")?.message).toContain('shows commit (step 3 "commit") sent since');
    expect(commitStep([older, refused], "A")).toBeUndefined();
    expect(commitStep([older, carried], "A")).toBeUndefined();
    expect(commitStep([older, aborted], "A")).toBeUndefined();
    expect(commitStep([older, sameCutover], "A")).toBeUndefined();
    expect(commitStep([older, started], "B")).toBeUndefined();
    expect(commitStep([started, older], "A")).toBeUndefined();
    expect(commitStep([older, started], "A", "from")).toBeUndefined();
    expect(commitStep([older, started], undefined as unknown as string)).toBeUndefined();
    expect(commitStep([older, started], "Z")).toBeUndefined();
    // a pause or resume is no start, commit or reverse; a step the journal does not name is named by its place
    // refused by part of the fleet, accepted by the rest: it may have reached it
    const partly = j("/j/b.jsonl", "B", state(["-", "-", "failed"], [cmd("commit", 2, "error", "ok")], {}, STEPS4));
    expect(commitStep([older, partly], "A")?.message).toContain('shows commit (step 3 "commit") sent since');
    const paused = j("/j/b.jsonl", "B", state(["ok"], [cmd("pause", 0, "ok")], {}, STEPS4));
    expect(commitStep([older, paused], "A")).toBeUndefined();
    const unnamed = j("/j/b.jsonl", "B", state([], [cmd("commit", 8, "unknown")], {}, STEPS4));
    expect(commitStep([older, unnamed], "A")?.message).toContain('shows commit (step 9 "#9") sent since');
  });
});

// what keeps a run's undo of its write stop from turning writes on, whatever the fleet shows: an
// earlier cutover's commit held in commit's round (the instances that have it show RUNNING); asked
// when the undo is due, so that the run's own start that took effect since (a new sync) clears it
describe("earlierCommitAsked: the run's question before an undo of its write stop", () => {
  const made: (() => void)[] = [];
  afterAll(() => made.forEach((f) => f()));
  it("a journal the run was told it must not act on counts as one that cannot be judged, not as what its read shows", async () => {
    const { dir, cleanup } = tempDir();
    made.push(cleanup);
    const ev = eventFactory();
    // A's journal reads as whole and sent no commit: as read, it holds nothing
    const a = openJournal({ dir, runbookName: "sales", runbookHash: "abc" });
    a.write(ev("run.started", { ...salesStarted(), cutover: "A" }));
    a.write(ev("step.started", { ...STEPS4[0]!, title: "start" }));
    a.close();
    const own = join(dir, "own.jsonl");
    expect(await earlierCommitAsked(dir, own)()).toBeUndefined();
    expect(await earlierCommitAsked(dir, own, [])()).toBeUndefined();
    // told it is cut short: whatever its lost lines held cannot be told
    const why = "its cutover A did not finish, and it is cut short of its witness";
    expect(await earlierCommitAsked(dir, own, [{ file: a.file, why }])()).toBe(
      `${a.file}: ${why}: whether an earlier cutover's commit may still take effect on the fleet cannot be told`,
    );
    // named once, with the reason it was given (not also as read)
    const missing = join(dir, "gone.jsonl");
    expect(await earlierCommitAsked(dir, own, [{ file: missing, why: "x" }])()).toBe(
      `${missing}: x: whether an earlier cutover's commit may still take effect on the fleet cannot be told`,
    );
    // one whose lines left show a commit: the reason is still that it cannot be told, not what
    // the lines left show (they are not taken as whole)
    const ev1 = eventFactory();
    // begun later than A's (two begun at the same moment do not order)
    const ev2: typeof ev1 = (type, payload) => {
      const e = ev1(type, payload);
      return { ...e, at: e.at + 1000 };
    };
    const b = openJournal({ dir, runbookName: "sales", runbookHash: "abc" });
    b.write(ev2("run.started", { ...salesStarted(), cutover: "B" }));
    b.write(ev2("step.started", { index: 3, id: "commit", kind: "commit", title: "commit" }));
    b.write(
      ev2("request.sent", {
        id: 1,
        instance: inst(0),
        target: "service",
        method: "POST",
        path: "/api/v1/commit",
        body: {},
      }),
    );
    b.close();
    expect(await earlierCommitAsked(dir, own)()).toMatch(
      new RegExp(`^the journal ${b.file} of an earlier cutover, B, shows commit`),
    );
    expect(await earlierCommitAsked(dir, own, [{ file: b.file, why }])()).toBe(
      `${b.file}: ${why}: whether an earlier cutover's commit may still take effect on the fleet cannot be told`,
    );
    // one the folder's read cannot judge either (a directory named like a journal): named once
    const odd = join(dir, "odd.jsonl");
    mkdirSync(odd);
    // not told of it: still named, with what the folder's read says of it
    const both = await earlierCommitAsked(dir, own, [{ file: b.file, why }])();
    expect(both).toContain(`${odd}: `);
    expect(both).toContain(`${b.file}: ${why}`);
    expect(
      await earlierCommitAsked(dir, own, [
        { file: b.file, why },
        { file: odd, why: "y" },
      ])(),
    ).toBe(
      `${b.file}: ${why}; ${odd}: y: whether an earlier cutover's commit may still take effect on the fleet cannot be told`,
    );
  });
});

describe("earlierCommitOnFleet: an earlier journal's commit that may still take effect", () => {
  const j = (file: string, cutover: string, s: ReturnType<typeof state>) => ({ file, cutover, state: s });
  const split = j(
    "/j/a.jsonl",
    "A",
    state(["ok", "ok", "ok", "failed"], [cmd("start", 0, "ok"), cmd("commit", 3, "unknown", "error")]),
  );
  it("another journal's live commit holds; the run's own journal's does not", () => {
    const held = earlierCommitOnFleet({ journals: [split], unjudged: [] }, "/j/b.jsonl");
    expect(held && "journal" in held ? held.journal.file : undefined).toBe("/j/a.jsonl");
    expect(earlierCommitReason(held)).toMatch(
      /^the journal \/j\/a\.jsonl of an earlier cutover, A, shows commit \(step 4 "\S+"\) may have reached i0 \(i0 gave no usable answer\), and it may still take effect/,
    );
    expect(earlierCommitOnFleet({ journals: [split], unjudged: [] }, "/j/a.jsonl")).toBeUndefined();
    // one that sent no commit, or whose commit every instance refused, holds nothing
    const noCommit = j("/j/a.jsonl", "A", state(["ok", "ok", "failed"], [cmd("start", 0, "ok")]));
    expect(earlierCommitOnFleet({ journals: [noCommit], unjudged: [] }, "/j/b.jsonl")).toBeUndefined();
  });
  // an outside review: skipped by cutover id, a journal of the run's own cutover that its journal did
  // not count (written for another text of the runbook) hid its split commit: --abort, or the
  // unwind of a --from stop-writes run, turned writes on under it
  // an outside review: a resume's completion sent to the rest, its answer lost, may hold there too
  it("every commit of its sync counts for the instances it may have reached, by their URLs as that journal names them", () => {
    const completed = j(
      "/j/a.jsonl",
      "A",
      state(
        ["ok", "ok", "ok", "failed"],
        [
          cmd("start", 0, "ok"),
          cmd("commit", 3, "unknown", "error"),
          sent("commit", 3, [{ instance: "i1", answered: "unknown" }]),
        ],
        {
          instances: [
            { key: "i0", url: "http://h:1" },
            { key: "i1", url: "http://h:2" },
          ],
        },
      ),
    );
    const held = earlierCommitOnFleet({ journals: [completed], unjudged: [] }, "/j/b.jsonl");
    expect(held && "journal" in held ? held.reached : undefined).toEqual(["i0", "i1"]);
    expect(earlierCommitReached(held)).toEqual(["http://h:1", "http://h:2"]);
    // none where they cannot be told: a journal that cannot be judged, or one that names no instance
    expect(earlierCommitReached(earlierCommitOnFleet({ journals: [split], unjudged: [] }, "/j/b.jsonl"))).toEqual([]);
    expect(earlierCommitReached({ unjudged: [{ file: "/j/x.jsonl", why: "…" }] })).toEqual([]);
  });
  it("another journal of the run's own cutover is judged too: only the run's own file is passed over", () => {
    const sameCutover = j("/j/b.jsonl", "A", state(["-", "-", "ok"], []));
    const held = earlierCommitOnFleet({ journals: [split, sameCutover], unjudged: [] }, "/j/b.jsonl");
    expect(held && "journal" in held ? held.journal.file : undefined).toBe("/j/a.jsonl");
  });
  it("a start that took effect since (the run's own, read when the undo is due) clears it: a new sync runs", () => {
    const own = j("/j/b.jsonl", "B", state(["ok", "ok", "failed"], [cmd("start", 0, "ok")]));
    expect(earlierCommitOnFleet({ journals: [split, own], unjudged: [] }, "/j/b.jsonl")).toBeUndefined();
    // a start of its own refused by every instance is no new sync
    const refused = j("/j/b.jsonl", "B", state(["failed"], [cmd("start", 0, "error")]));
    expect(earlierCommitOnFleet({ journals: [split, refused], unjudged: [] }, "/j/b.jsonl")).toBeDefined();
  });
  it("a journal that cannot be judged may hold one: named, the reading that fails safe; the run's own new sync clears it", () => {
    const x = { file: "/j/x.jsonl", why: "it cannot be read (EISDIR)" };
    const held = earlierCommitOnFleet({ journals: [], unjudged: [x] }, "/j/b.jsonl");
    expect(earlierCommitReason(held)).toBe(
      "/j/x.jsonl: it cannot be read (EISDIR): whether an earlier cutover's commit may still take effect on the fleet cannot be told",
    );
    expect(earlierCommitReason(undefined)).toBeUndefined();
    // an outside review: one stray file kept every run's writes stopped on a failure, even after its
    // own start passed fleet-idle (a new sync: nothing of an older journal is on it)
    const started = j("/j/b.jsonl", "B", state(["ok", "ok", "failed"], [cmd("start", 0, "ok")]));
    expect(earlierCommitOnFleet({ journals: [started], unjudged: [x] }, "/j/b.jsonl")).toBeUndefined();
    const notStarted = j("/j/b.jsonl", "B", state(["ok", "failed"], []));
    expect(earlierCommitOnFleet({ journals: [notStarted], unjudged: [x] }, "/j/b.jsonl")).toBeDefined();
    // the run's own file, unjudged, is never held against it
    expect(
      earlierCommitOnFleet({ journals: [], unjudged: [{ ...x, file: "/j/b.jsonl" }] }, "/j/b.jsonl"),
    ).toBeUndefined();
  });
});
