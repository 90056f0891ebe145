/**
 * `--resume`'s decision from its journal once reconcile said where it goes on
 * (src/run/resume-decide.ts): which write stops run again and the checks after them, whose undos
 * are owed, and the memory the run starts from. Each rule on journals built by hand; the same
 * rules end to end: test/run/resume-rechecks.e2e.test.ts, resume-reversed-write-stop.e2e.test.ts.
 */
import { describe, expect, it } from "vitest";
import type { HookRun, JournalState } from "../../src/journal/index.js";
import { decideResume, type ResumeStep } from "../../src/run/resume-decide.js";
import { stopAbortCut } from "../../src/run/earlier.js";
import { cmd, sent, state } from "../support/reconcile-fixtures.js";

// a cutover with a rollback: the first sync's write stop, checks and commit, a reverse, then the
// reversed sync's write stop, check and commit
const KINDS = [
  ["start", "start"],
  ["ready", "waitFor"],
  ["stop", "stopWrites"],
  ["hold", "hook"],
  ["drained", "waitFor"],
  ["verify", "verify"],
  ["commit", "commit"],
  ["reverse", "reverse"],
  ["stop2", "stopWrites"],
  ["drained2", "waitFor"],
  ["commit2", "commit"],
] as const;
const STEPS = KINDS.map(([id, kind], index) => ({ index, id, kind }));
const RESUME_STEPS: ResumeStep[] = STEPS.map(({ index, id, kind }) => ({
  index,
  id,
  bound: {
    opensWriteStop: kind === "stopWrites",
    afterWritesBack: kind === "waitFor" ? "again" : kind === "verify" ? "told" : "kept",
  },
}));

const hook = (stepIndex: number, more: Partial<HookRun> = {}): HookRun => ({
  stepIndex,
  id: STEPS[stepIndex]?.id ?? `step${stepIndex}`,
  use: "shell",
  ok: true,
  undone: false,
  ...more,
});
/** A journal whose steps before `upTo` ended ok, with these commands and hooks. */
const journal = (
  upTo: number,
  commands: JournalState["commandsSent"],
  hooks: HookRun[],
  more: Partial<JournalState> = {},
) =>
  state(
    STEPS.map((_, i) => (i < upTo ? "ok" : "-")),
    commands,
    { hooksRan: hooks, stopWritesSucceeded: hooks.some((h) => h.ok === true), ...more },
    STEPS,
  );
const at = (
  resumeAt: number,
  adopt: { stepIndex: number; op: "start" | "commit" | "reverse"; reason: string }[] = [],
) => ({
  ok: true as const,
  resumeAt,
  adopt,
  notes: [],
});
const decide = (s: JournalState, resumeAt: number, adopt: Parameters<typeof at>[1] = [], mayHaveActed = false) =>
  decideResume(s, at(resumeAt, adopt), RESUME_STEPS, mayHaveActed);

describe("decideResume: the steps before where it goes on", () => {
  it("are done, and the write stop in force; its hook's undo is owed while no commit was sent", () => {
    const d = decide(journal(6, [cmd("start", 0, "ok")], [hook(2)]), 6);
    expect([...d.done]).toEqual([0, 1, 2, 3, 4, 5].map((i) => [i, "done in an earlier run (journal)"]));
    expect(d.notes).toEqual([]);
    expect(Object.keys(d)).not.toContain("reverted");
    expect(d.undoSteps).toEqual([2]);
    expect(d.memory).toMatchObject({ writesStopped: true, commitSent: false, commitAccepted: false });
    expect(Object.keys(d.memory)).not.toContain("reversed");
  });

  it("a hook that started and never finished owes no undo (what it did is not known); one undone or whose undo started neither", () => {
    const d = decide(journal(6, [], [hook(2, { ok: undefined }), hook(3, { undoStarted: true })]), 6);
    expect(d.undoSteps).toEqual([]);
  });

  it("a command the fleet shows took effect is adopted: done with why; a commit counts sent and accepted, and nothing is undone after it", () => {
    const d = decide(journal(6, [cmd("commit", 6, "unknown")], [hook(2)]), 7, [
      { stepIndex: 6, op: "commit", reason: "every instance is COMMITTED" },
    ]);
    expect(d.done.get(6)).toBe("adopted: every instance is COMMITTED");
    expect([...d.adopted]).toEqual([6]);
    expect(d.memory).toMatchObject({ commitSent: true, commitAccepted: true });
    expect(d.undoSteps).toEqual([]);
  });

  it("an adopted start is no commit and no reverse: a write stop undone runs again, its undo owed counts as before", () => {
    const d = decide(journal(6, [cmd("start", 0, "unknown")], [hook(2, { undone: true }), hook(3)]), 6, [
      { stepIndex: 0, op: "start", reason: "every instance is RUNNING" },
    ]);
    expect(d.reverted).toBe(2);
    expect(d.memory).toMatchObject({ commitSent: false, commitAccepted: false });
    expect(Object.keys(d.memory)).not.toContain("reversed");
    expect(d.undoSteps).toEqual([3]);
  });
});

describe("decideResume: a write stop whose effect may have been reverted runs again, until a commit of its sync may have been sent", () => {
  for (const [more, mayHaveActed, why] of [
    [{ undone: true }, false, "its undo ran: writes went back on"],
    [{ undoStarted: true }, false, "its undo started in an earlier run, so writes may be flowing"],
    [
      {},
      true,
      "a hook process an earlier run left was still running when this run began, and may have turned writes back on",
    ],
  ] as const)
    it(`${why}: with the checks after it (not those before, nor a hook); a verify is named, not run again`, () => {
      const d = decide(journal(6, [], [hook(2, more)]), 6, [], mayHaveActed);
      expect(d.reverted).toBe(2);
      expect([...d.done.keys()]).toEqual([0, 1, 3, 5]);
      // "whose undo has run" only of one that ran: a stop an undo started on, or a hook process
      // may have reverted, is said so
      const since = "undone" in more ? "whose undo has run since" : "which may have been reverted since";
      expect(d.notes).toEqual([
        `step 3 "stop" runs again: ${why}`,
        `step 5 "drained" runs again: it passed while writes were stopped by step 3, ${since}`,
        `step 6 "verify" (verify) passed while writes were stopped by step 3, ${since}; it is not run again (the verifier checks once per process): restart the verifier and verify again if writes reached the source meanwhile`,
      ]);
      expect(d.memory.writesStopped).toBe(false);
      // an undo that ran or started is not owed again; a hook that may have acted is
      expect(d.undoSteps).toEqual(mayHaveActed ? [2] : []);
    });

  it("an --abort's undo says so", () => {
    const d = decide(
      journal(6, [], [hook(2, { undone: true })], { finished: { outcome: "ok", aborted: true } as never }),
      6,
    );
    expect(d.notes[0]).toBe('step 3 "stop" runs again: its undo ran (--abort): writes went back on');
  });

  it("a write stop an --abort could not undo (no `undo:`) runs again: the abort asked for writes back on by hand", () => {
    // an adversarial run: the --abort of a stop without `undo:` ended ABORTED, the operator turned
    // writes on as told, and the --resume it offered counted the stop as in force up to the commit
    const aborted = { finished: { outcome: "failed", aborted: true } as never };
    const d = decide(journal(6, [], [hook(2, { byHand: true })], aborted), 6);
    expect(d.notes[0]).toBe(
      'step 3 "stop" runs again: the --abort could not undo it (no `undo:` in the runbook) and asked for writes back on by hand, so writes may be flowing',
    );
    expect(d.done.has(2)).toBe(false);
    expect(d.memory.writesStopped).toBe(false);
    // after a resume cut off before it ran the stop again: still (the journal's mark, not the last run's end)
    expect(decide(journal(6, [], [hook(2, { byHand: true })]), 6).done.has(2)).toBe(false);
    // an --abort whose undo the fleet ruled out (its step has an `undo:`): the stop holds, and no
    // word of writes back on by hand (an outside review)
    expect(decide(journal(6, [], [hook(2)], aborted), 6).done.has(2)).toBe(true);
  });

  it("a write stop an --abort began after, its undo or hand-off not journaled (cut off, or its journal failed while it still told the operator), runs again, whatever today's runbook says", () => {
    // a review: the by-hand decision lost to a kill or a full disk while the run's end still said
    // "do it by hand"; the resume after it counted the stop, with writes back on by hand; and an
    // `undo:` added to the runbook since (lint's own hint) must not make it count again
    const why =
      'step 3 "stop" runs again: an --abort began after it, and the journal does not show what became of it (undone, or handed to a person to turn writes back on by hand), so writes may be flowing';
    const d = decide(journal(6, [], [hook(2, { abortAfter: true })]), 6);
    expect(d.notes).toEqual([
      why,
      'step 5 "drained" runs again: it passed while writes were stopped by step 3, which may have been reverted since',
      'step 6 "verify" (verify) passed while writes were stopped by step 3, which may have been reverted since; it is not run again (the verifier checks once per process): restart the verifier and verify again if writes reached the source meanwhile',
    ]);
    expect(d.done.has(2)).toBe(false);
    expect(d.reverted).toBe(2);
    expect(d.memory.writesStopped).toBe(false);
    // no --abort began after it: the stop holds, as always
    expect(decide(journal(6, [], [hook(2)]), 6).done.has(2)).toBe(true);
    // a commit may have been sent: no pre-commit step runs again
    expect(decide(journal(6, [cmd("commit", 5, "ok")], [hook(2, { abortAfter: true })]), 6).done.has(2)).toBe(true);
  });

  it("only its latest run counts: run again and not undone, it is in force", () => {
    const d = decide(journal(6, [], [hook(2, { undone: true }), hook(2)]), 6);
    expect(d.reverted).toBeUndefined();
    expect(d.done.has(2)).toBe(true);
    expect(d.memory.writesStopped).toBe(true);
  });

  it("a hook of a step that opens no write stop, one not yet done, or one the runbook does not have, is not run again by this rule", () => {
    const d = decide(journal(6, [], [hook(3, { undone: true }), hook(20, { undone: true })]), 6);
    expect(d.reverted).toBeUndefined();
    expect(d.notes).toEqual([]);
    expect(d.done.has(3)).toBe(true);
    const ahead = decide(journal(2, [], [hook(2, { undone: true })]), 2);
    expect(ahead.reverted).toBeUndefined();
    expect(ahead.notes).toEqual([]);
  });

  it("a commit that may have been sent (accepted, no answer) stops it; one every instance refused does not", () => {
    for (const [answer, sent] of [
      ["ok", true],
      ["unknown", true],
      ["error", false],
    ] as const) {
      const d = decide(journal(6, [cmd("commit", 6, answer)], [hook(2, { undone: true })]), 7);
      expect(d.reverted, answer).toBe(sent ? undefined : 2);
      expect(d.memory.commitSent, answer).toBe(sent);
      expect(d.memory.commitAccepted, answer).toBe(answer === "ok");
    }
    const adopted = decide(journal(6, [], [hook(2, { undone: true })]), 7, [
      { stepIndex: 6, op: "commit", reason: "x" },
    ]);
    expect(adopted.reverted).toBeUndefined();
  });

  it("the earliest of several write stops is where the checks after it are judged from", () => {
    const two = decide(journal(9, [], [hook(2, { undone: true }), hook(8, { undone: true })]), 9);
    expect(two.reverted).toBe(2);
    expect(two.notes.filter((n) => n.includes("runs again:")).map((n) => n.split(":")[0])).toEqual([
      'step 3 "stop" runs again',
      'step 9 "stop2" runs again',
      'step 5 "drained" runs again',
    ]);
  });
});

describe("decideResume: a commit its step let through past a forced writes-stopped interlock", () => {
  // an outside conformance review: after `--resume --force=writes-stopped` committed with writes
  // flowing, the next resume's verify counted that commit as writes stopped and said "verified"
  const forced = (c: JournalState["commandsSent"][number]) => ({ ...c, writesForced: true as const });

  it("is the run's memory (verify does not count it as writes stopped); one sent unforced is not", () => {
    const d = decide(journal(7, [forced(cmd("commit", 6, "ok"))], []), 7);
    expect(d.memory).toMatchObject({ commitSent: true, commitWritesForced: true, writesStopped: false });
    const plain = decide(journal(7, [cmd("commit", 6, "ok")], []), 7);
    expect(plain.memory.commitSent).toBe(true);
    expect(plain.memory).not.toHaveProperty("commitWritesForced");
    // refused by every instance it reached: no commit sent, nothing forced
    const refused = decide(journal(6, [forced(cmd("commit", 6, "error"))], []), 6);
    expect(refused.memory.commitSent).toBe(false);
    expect(refused.memory).not.toHaveProperty("commitWritesForced");
  });

  it("carried by a --from run's journal (run.started.carried)", () => {
    const d = decide(journal(7, [], [], { carriedCommit: { sent: true, accepted: true, writesForced: true } }), 7);
    expect(d.memory).toMatchObject({ commitSent: true, commitWritesForced: true });
  });

  it("a reverse since starts a new sync, whose commit has its own interlock", () => {
    const s = journal(10, [forced(cmd("commit", 6, "ok")), cmd("reverse", 7, "ok")], [hook(8)]);
    expect(decide(s, 10).memory).not.toHaveProperty("commitWritesForced");
    const again = journal(
      11,
      [forced(cmd("commit", 6, "ok")), cmd("reverse", 7, "ok"), cmd("commit", 10, "ok")],
      [hook(8)],
    );
    expect(decide(again, 11).memory).toMatchObject({ commitSent: true });
    expect(decide(again, 11).memory).not.toHaveProperty("commitWritesForced");
    const newForced = journal(
      11,
      [cmd("commit", 6, "ok"), cmd("reverse", 7, "ok"), forced(cmd("commit", 10, "ok"))],
      [],
    );
    expect(decide(newForced, 11).memory).toMatchObject({ commitSent: true, commitWritesForced: true });
    // a reverse adopted from the fleet: the same
    const adopted = journal(7, [forced(cmd("commit", 6, "ok")), cmd("reverse", 7, "unknown")], []);
    expect(decide(adopted, 8, [{ stepIndex: 7, op: "reverse", reason: "x" }]).memory).not.toHaveProperty(
      "commitWritesForced",
    );
  });
});

describe("decideResume after a reverse: the sync that runs now is the one it started", () => {
  const reversed = (more: JournalState["commandsSent"] = [], hooks: HookRun[] = [hook(2), hook(8, { undone: true })]) =>
    journal(10, [cmd("commit", 6, "ok"), cmd("reverse", 7, "ok"), ...more], hooks, {
      verifier: { check: { answered: "ok", at: 1 } } as never,
    });

  it("its write stop runs again after its undo: the first sync's commit does not count for it; the first sync's write stop stays done", () => {
    const d = decide(reversed(), 10);
    expect(d.reverted).toBe(8);
    expect(d.done.has(9)).toBe(false);
    expect(d.memory).toMatchObject({
      reversed: "reverse",
      commitSent: false,
      commitAccepted: false,
      writesStopped: false,
    });
    // the reverse ended ok in the journal: the verifier's memory is the journal's (its step said what counts)
    expect(d.memory.verifier).toEqual({ check: { answered: "ok", at: 1 } });
    // the first sync's write stop, undone before its commit, is its sync's: after that commit, not run again
    const first = decide(reversed([], [hook(2, { undone: true }), hook(8)]), 10);
    expect(first.reverted).toBeUndefined();
    expect(first.done.has(2)).toBe(true);
  });

  it("once the new sync's commit may have been sent, it does not; nor any undo", () => {
    const d = decide(reversed([cmd("commit", 10, "unknown")], [hook(2), hook(8, { undone: true })]), 11);
    expect(d.reverted).toBeUndefined();
    expect(d.memory).toMatchObject({ commitSent: true, commitAccepted: false });
    expect(decide(reversed([cmd("commit", 10, "unknown")], [hook(2), hook(8)]), 11).undoSteps).toEqual([]);
    // adopted from the fleet: the same
    const adopted = decide(reversed([], [hook(2), hook(8)]), 11, [{ stepIndex: 10, op: "commit", reason: "x" }]);
    expect(adopted.undoSteps).toEqual([]);
    expect(adopted.memory).toMatchObject({ commitSent: true, commitAccepted: true });
  });

  it("the undos owed are the new sync's hooks, after the reverse; none of the first sync's", () => {
    const d = decide(reversed([], [hook(2), hook(3), hook(8)]), 10);
    expect(d.undoSteps).toEqual([8]);
    expect(d.memory.writesStopped).toBe(true);
  });

  it("a reverse adopted from the fleet: a new sync, its commit its own, the verifier's memory of the sync before gone, writes not stopped for it", () => {
    const s = journal(7, [cmd("commit", 6, "ok"), cmd("reverse", 7, "unknown")], [hook(2)], {
      verifier: { check: { answered: "ok", at: 1 }, writesOff: { answered: "ok", at: 2 } } as never,
    });
    const d = decide(s, 8, [{ stepIndex: 7, op: "reverse", reason: "every instance is RUNNING" }]);
    expect(d.memory).toMatchObject({
      reversed: "reverse",
      commitSent: false,
      commitAccepted: false,
      writesStopped: false,
    });
    expect(d.memory.verifier.check).toBeUndefined();
    expect(d.memory.verifier.reversed).toBe("reverse");
    // the first sync's commit was sent: nothing before the reverse is undone
    expect(d.undoSteps).toEqual([]);
    // without the reverse, the verifier's memory is the journal's, a copy
    const kept = decide(s, 7);
    expect(kept.memory.verifier).toEqual(s.verifier);
    expect(kept.memory.verifier).not.toBe(s.verifier);
    // a reverse adopted at a step the runbook does not have: no step to name, nothing thrown
    expect(() => decide(s, 8, [{ stepIndex: 30, op: "reverse", reason: "x" }])).not.toThrow();
  });

  // an outside review: a resume completing a split reverse whose completion was refused ended
  // "committed" alone while the first run's accepted part ran the other way (src/steps/lifecycle.ts)
  it("a reverse that may have reached the fleet and that it does not adopt: the run starts with it in doubt", () => {
    const split = journal(7, [cmd("commit", 6, "ok"), cmd("reverse", 7, "ok", "error")], [hook(2)]);
    expect(decide(split, 7).memory.reverseInDoubt).toBe("reverse");
    const lost = journal(7, [cmd("commit", 6, "ok"), cmd("reverse", 7, "unknown")], [hook(2)]);
    expect(decide(lost, 7).memory.reverseInDoubt).toBe("reverse");
    // adopted: it took effect, a new sync runs
    expect(decide(lost, 8, [{ stepIndex: 7, op: "reverse", reason: "x" }]).memory).not.toHaveProperty("reverseInDoubt");
    // refused everywhere: it took no effect
    const refused = journal(7, [cmd("commit", 6, "ok"), cmd("reverse", 7, "error", "error")], [hook(2)]);
    expect(decide(refused, 7).memory).not.toHaveProperty("reverseInDoubt");
    // ended ok in the journal: a reverse, not a doubt
    expect(
      decide(journal(8, [cmd("commit", 6, "ok"), cmd("reverse", 7, "ok")], [hook(2)]), 8).memory,
    ).not.toHaveProperty("reverseInDoubt");
    // at a step the runbook does not have: no step to name
    const far = journal(7, [cmd("commit", 6, "ok"), cmd("reverse", 30, "unknown")], [hook(2)]);
    expect(decide(far, 7).memory).not.toHaveProperty("reverseInDoubt");
  });
});

describe("decideResume: the service's refusals the no-errors interlock counts", () => {
  // which send of an instance was a refusal its run counted is the journal's fold's to say
  // (src/journal/state.ts `refusalOf`, test/journal/state.test.ts); here: each is counted, with its op
  it("every refusal the fold kept, with its op; other errors, and answers without one, are not", () => {
    const refused = { ...cmd("commit", 6, "error", "error", "unknown") };
    refused.perInstance = [
      { instance: "i0", answered: "error", error: "commit refused: not ready", refused: "commit refused: not ready" },
      { instance: "i1", answered: "error", error: "connection reset" },
      { instance: "i2", answered: "unknown", error: "commit refused: a proxy's words" },
    ];
    const d = decide(journal(6, [refused], [hook(2)]), 6);
    expect(d.memory.serviceErrors).toEqual([{ instance: "i0", op: "commit", error: "commit refused: not ready" }]);
  });

  // a trial: a split start completed by --resume, its commit refused by no-errors in that run, and
  // a plain --resume after it committed: the step's sends are one entry, its best answer ok
  it("a refusal the instance took back by accepting that command later still counts, as the run's own memory counts it", () => {
    const completed = sent("start", 0, [
      { instance: "i0", answered: "ok" },
      {
        instance: "i1",
        answered: "ok",
        error: "start refused: InternalError",
        refused: "start refused: InternalError",
      },
      { instance: "i2", answered: "ok", error: "connection reset" },
    ]);
    expect(decide(journal(6, [completed], [hook(2)]), 6).memory.serviceErrors).toEqual([
      { instance: "i1", op: "start", error: "start refused: InternalError" },
    ]);
  });

  it("and those a --from run carried from the journal before it (run.started.carried.refusals), first", () => {
    const j = journal(6, [cmd("commit", 6, "error", "ok")], [hook(2)]);
    j.commandsSent[0]!.perInstance[0] = { instance: "i0", answered: "error", refused: "commit refused: R" };
    j.carriedRefusals = [{ instance: "i1", op: "start", error: "start refused: earlier" }];
    expect(decide(j, 6).memory.serviceErrors).toEqual([
      { instance: "i1", op: "start", error: "start refused: earlier" },
      { instance: "i0", op: "commit", error: "commit refused: R" },
    ]);
  });
});

// the reader every other run shares with the resume's own mark: `--from`'s interlock and `status`
describe("stopAbortCut: the write stop an --abort may have undone or handed over with nothing of it journaled", () => {
  it("is the latest stop of the sync that runs now, marked, held, not undone nor handed over, while its sync's commit is not sent", () => {
    const cut = (hooks: HookRun[], commands: JournalState["commandsSent"] = []) =>
      stopAbortCut(journal(6, commands, hooks))?.stepIndex;
    expect(cut([hook(2, { abortAfter: true })])).toBe(2);
    // not marked, undone, its undo begun, handed over on record (byHand says it), never held
    expect(cut([hook(2)])).toBeUndefined();
    expect(cut([hook(2, { abortAfter: true, undone: true })])).toBeUndefined();
    expect(cut([hook(2, { abortAfter: true, undoStarted: true })])).toBeUndefined();
    expect(cut([hook(2, { abortAfter: true, byHand: true })])).toBeUndefined();
    expect(cut([hook(2, { abortAfter: true, ok: false })])).toBeUndefined();
    expect(cut([hook(2, { abortAfter: true, ok: undefined })])).toBeUndefined();
    // run again since (a resume): the latest holds
    expect(cut([hook(2, { abortAfter: true }), hook(2)])).toBeUndefined();
    // another hook marked is no write stop
    expect(cut([hook(2), hook(4, { abortAfter: true })])).toBeUndefined();
    // its sync's commit sent: the abort refused, nothing was undone
    expect(cut([hook(2, { abortAfter: true })], [cmd("commit", 5, "ok")])).toBeUndefined();
    // after a rollback: the new sync's stop, whatever the first sync's commit (a review: a rule on
    // any commit in the journal let the resume count the new sync's stop)
    const rolled: JournalState["commandsSent"] = [cmd("commit", 6, "ok"), cmd("reverse", 7, "ok")];
    expect(stopAbortCut(journal(10, rolled, [hook(2), hook(8, { abortAfter: true })]))?.stepIndex).toBe(8);
    // the first sync's stop, before the reverse, is not the sync that runs now
    expect(stopAbortCut(journal(10, rolled, [hook(2, { abortAfter: true })]))).toBeUndefined();
  });
});
