/**
 * `syncbook status`'s ways on as data (src/run/status.ts `nextOffer`): what `--json`'s
 * `journal.next` carries and the human form prints under "next:". Each journal standing a
 * status can meet, enumerated.
 */
import { describe, expect, it } from "vitest";
import { nextOffer, type JournalStatus } from "../../src/run/status.js";
import {
  CALLED_OFF_RESUME,
  nextAfterFailedUndo,
  nextLines,
  RUNBOOK_CHANGED_NOTE,
  STOPPED_IN_COMMIT_AHEAD,
  STOPPED_IN_COMMIT_NOTE,
  STOPPED_IN_COMMIT_RESTART,
  STOPPED_IN_COMMIT_RESUME,
} from "../../src/next-run.js";

const base: JournalStatus = { folder: "/j", passedOver: [], warnings: [], resumeWith: "/j/a.jsonl" };
const step = { number: 5, id: "drained", kind: "waitFor", startedAt: "2026-11-30T00:00:00.000Z" };
const failed = { outcome: "failed", committed: false, verified: false, at: "2026-11-30T00:01:00.000Z" };
const args = (j: Partial<JournalStatus>) => nextOffer({ ...base, ...j })?.runs.map((r) => r.args);

describe("nextOffer", () => {
  it("killed (no end recorded): --resume from its step, or --abort", () => {
    const o = nextOffer({ ...base, lastStep: step, writesStopped: true });
    expect(o?.runs.map((r) => r.args)).toEqual(["--resume", "--abort"]);
    expect(o?.runs[0]!.does).toBe(
      "goes on with the cutover from step 5 drained (it first waits out hook processes the dead run left; writes stay stopped)",
    );
    expect(o?.runs[1]!.does).toBe(
      "calls the cutover off: runs the undos still owed, last first (writes back on); nothing is sent to the sync service",
    );
  });
  it("a run that failed, interrupted, or stopped at --to: --resume where it stopped, or --abort", () => {
    for (const finished of [failed, { ...failed, outcome: "interrupted" }, { ...failed, outcome: "ok", to: "stop" }])
      expect(args({ lastStep: step, finished }), JSON.stringify(finished)).toEqual(["--resume", "--abort"]);
    const o = nextOffer({ ...base, lastStep: step, finished: failed });
    expect(o?.runs[0]!.does).toBe("goes on with the cutover where its last run stopped");
    // a failed step's hint is what that --resume needs first (a trial: a verify that refused a check
    // it did not start was offered a plain --resume, refused again the same way)
    const hint = "Restart the verifier with --clean, then `syncbook run rb.yaml --resume`.";
    const hinted = nextOffer({
      ...base,
      lastStep: { ...step, outcome: "failed", hint, hintBeforeResume: true },
      finished: failed,
    });
    expect(hinted?.runs[0]!.does).toBe(
      `goes on with the cutover where its last run stopped: step 5 drained runs again, once what its failure said is done: ${hint}`,
    );
    // a hint its step did not mark so (a runbook edit, "the lines above", not on this screen): not said
    const other = nextOffer({
      ...base,
      lastStep: { ...step, outcome: "failed", hint: "See the hook's log lines above." },
      finished: failed,
    });
    expect(other?.runs[0]!.does).toBe("goes on with the cutover where its last run stopped");
    // only a failed step's: one interrupted runs again as it is
    const cut = nextOffer({
      ...base,
      lastStep: { ...step, outcome: "interrupted", hint, hintBeforeResume: true },
      finished: failed,
    });
    expect(cut?.runs[0]!.does).toBe("goes on with the cutover where its last run stopped");
    expect(o?.runs[1]!.does).not.toMatch(/writes back on/);
    // a hint whose way on edits the runbook: the --resume with the flags it needs, not a plain one
    // (refused again: a review followed it after verify's forced-commit refusal)
    const edited = nextOffer({
      ...base,
      lastStep: { ...step, outcome: "failed", hint, hintBeforeResume: true, resumeFlags: ["--allow-changed-runbook"] },
      finished: failed,
    });
    expect(edited?.runs[0]!.args).toBe("--resume --allow-changed-runbook");
    expect(cut?.runs[0]!.args).toBe("--resume");
    // flags said only with their failure: an interrupted step runs again as it is
    const cutFlags = nextOffer({
      ...base,
      lastStep: {
        ...step,
        outcome: "interrupted",
        hint,
        hintBeforeResume: true,
        resumeFlags: ["--allow-changed-runbook"],
      },
      finished: failed,
    });
    expect(cutFlags?.runs[0]!.args).toBe("--resume");
  });
  // a review: after a fleet-identity refusal before its run acted, the run's end named that run's
  // command again, status a plain --resume (refused on a corrected list, or passing that run over)
  it("a failure whose way on is its run's own command again (`againArgs`): that command, with --abort as before", () => {
    const hint = "Correct the `instances:` list, then give this run's command again, as the run's end names it.";
    const plain = nextOffer({
      ...base,
      lastStep: { ...step, outcome: "failed", hint, againArgs: [] },
      finished: failed,
    });
    expect(plain?.runs.map((r) => r.args)).toEqual(["", "--abort"]);
    expect(plain?.runs[0]!.does).toBe(
      `gives the failed run's command again, as its end named it (a plain --resume would refuse a corrected \`instances:\` list, or pass that run over): once what step 5 drained's failure said is done: ${hint}`,
    );
    expect(nextLines("rb.yaml", plain!)[1]).toBe("  syncbook run rb.yaml");
    const resumed = nextOffer({
      ...base,
      lastStep: { ...step, outcome: "failed", hint, againArgs: ["--resume", "j 1.jsonl", "--allow-changed-runbook"] },
      finished: failed,
      writesStopped: true,
      commitSent: true,
    });
    expect(resumed?.runs.map((r) => r.args)).toEqual(["--resume 'j 1.jsonl' --allow-changed-runbook"]);
    expect(resumed?.runs[0]!.does).toMatch(
      /^gives the failed run's command again, as its end named it \(.*\); writes stay stopped: once/,
    );
    // the newest run, whose journal --resume passes over (it sent nothing), refused so: its command
    // again, not the --resume of the journal before it
    const newer = nextOffer({
      ...base,
      lastStep: step,
      finished: failed,
      passedOver: ["/j/b.jsonl"],
      passedOverAgain: { file: "/j/b.jsonl", number: 6, id: "commit", hint, args: ["--from", "commit"] },
    });
    expect(newer).toEqual({
      runs: [
        {
          args: "--from commit",
          does: `gives the failed run's command again, as its end named it: once what step 6 commit's failure said is done: ${hint}`,
        },
        // an outside review: writes stopped by the run before it, and no way back offered
        { args: "--abort", does: expect.any(String) as string },
      ],
      notes: [
        "that run sent nothing, so --resume passes its journal (/j/b.jsonl) over and would go on from the run before it",
      ],
    });
    const passedOverAgain = { file: "/j/b.jsonl", number: 6, id: "commit", hint, args: ["--from", "commit"] };
    // no --abort once a commit may be on the fleet
    expect(
      args({ lastStep: step, finished: failed, passedOver: ["/j/b.jsonl"], passedOverAgain, commitSent: true }),
    ).toEqual(["--from commit"]);
    // a failed undo of a write stop comes first
    expect(
      args({
        lastStep: step,
        finished: failed,
        passedOver: ["/j/b.jsonl"],
        passedOverAgain,
        writesUndoFailed: { step: 4, id: "stop-writes" },
      }),
    ).not.toContain("--from commit");
    // only with its failure: a step cut off since runs again with --resume
    expect(args({ lastStep: { ...step, outcome: "interrupted", hint, againArgs: [] }, finished: failed })).toEqual([
      "--resume",
      "--abort",
    ]);
  });
  it("a start, commit or reverse an instance gave no usable answer to: --resume said as what it does then (adopt, or refuse), not as going on", () => {
    for (const op of ["start", "commit", "reverse"]) {
      const lastCommand = { op, step: 6, answers: { a: "ok", b: "unknown" } };
      const o = nextOffer({
        ...base,
        lastStep: step,
        finished: failed,
        ...(op === "commit" ? { commitSent: true } : {}),
        lastCommand,
      });
      expect(o?.runs[0]).toEqual({
        args: "--resume",
        does: `reads the fleet: if it shows the ${op} (step 6) took effect it adopts it and goes on, never sending it twice; if it cannot tell (an instance that never answered still shows the state before it), it refuses and says what it saw`,
      });
    }
    // every answer known, or another command: as ever
    const known: NonNullable<JournalStatus["lastCommand"]>[] = [
      { op: "commit", step: 6, answers: { a: "ok", b: "error" } },
      { op: "pause", step: 6, answers: { a: "unknown" } },
    ];
    for (const lastCommand of known)
      expect(nextOffer({ ...base, lastStep: step, finished: failed, lastCommand })?.runs[0]!.does).toBe(
        "goes on with the cutover where its last run stopped",
      );
  });

  // an outside review: the branch was only reached by a slow end-to-end test
  it("a reverse that may have reached the fleet: --resume only, and why there is no --abort (a commit sent says its own)", () => {
    const o = nextOffer({ ...base, lastStep: step, finished: failed, reverseInDoubt: "rollback" });
    expect(o?.runs.map((r) => r.args)).toEqual(["--resume"]);
    expect(o?.notes).toEqual([
      "no --abort: a reverse (step rollback) may have reached the fleet, which was committed: after a commit nothing is undone",
    ]);
    const both = nextOffer({ ...base, lastStep: step, finished: failed, reverseInDoubt: "rollback", commitSent: true });
    expect(both?.runs.map((r) => r.args)).toEqual(["--resume"]);
    expect(both?.notes).toEqual(["no --abort: a commit was sent, and after commit nothing is undone"]);
  });

  it("once a commit may have been sent: --resume only, and why there is no --abort", () => {
    const o = nextOffer({ ...base, lastStep: step, finished: failed, commitSent: true, writesStopped: true });
    expect(o).toEqual({
      runs: [{ args: "--resume", does: "goes on with the cutover where its last run stopped (writes stay stopped)" }],
      notes: ["no --abort: a commit was sent, and after commit nothing is undone"],
    });
    expect(nextLines("x.yaml", o!)).toEqual([
      "next:",
      "  syncbook run x.yaml --resume",
      "      goes on with the cutover where its last run stopped (writes stay stopped)",
      "  (no --abort: a commit was sent, and after commit nothing is undone)",
    ]);
    // the destination takes writes: the source's write stop is not news
    const taken = nextOffer({
      ...base,
      lastStep: step,
      finished: failed,
      commitSent: true,
      writesStopped: true,
      destinationWrites: { since: "t", by: "canWrite" },
    });
    expect(taken?.runs[0]!.does).toBe("goes on with the cutover where its last run stopped");
  });
  it("commit refused for want of a write stop: --from the stop (--resume would meet the same refusal)", () => {
    // or called off: the commit was refused (an adversarial run: no way back to writes on was offered)
    expect(args({ lastStep: step, finished: failed, restopFrom: "stop-writes" })).toEqual([
      "--from stop-writes",
      "--abort",
    ]);
    // a killed run too (no end recorded)
    expect(args({ lastStep: step, restopFrom: "stop-writes" })).toEqual(["--from stop-writes", "--abort"]);
    expect(
      nextOffer({ ...base, lastStep: step, finished: failed, restopFrom: "stop-writes", writesStopped: true })?.runs[1],
    ).toEqual({
      args: "--abort",
      does: "calls the cutover off: runs the undos still owed, last first (writes back on); nothing is sent to the sync service",
    });
    // an earlier commit of the sync that runs now may be on the fleet: after commit nothing is undone
    expect(args({ lastStep: step, finished: failed, restopFrom: "stop-writes", commitSent: true })).toEqual([
      "--from stop-writes",
    ]);
  });
  it("a committed cutover's step after the commit that failed: --from it", () => {
    const ok = { ...failed, outcome: "ok", committed: true };
    expect(args({ lastStep: step, finished: ok, againFrom: "verify" })).toEqual(["--from verify"]);
  });
  it("a failed undo of a write stop: --abort first (it retries the undo), then --resume", () => {
    const o = nextOffer({
      ...base,
      lastStep: { ...step, outcome: "failed" },
      finished: failed,
      writesUndoFailed: { step: 3, id: "stop-writes" },
      restopFrom: "stop-writes",
    });
    expect(o?.runs.map((r) => r.args)).toEqual(["--abort", "--resume"]);
    expect(o?.runs[1]!.does).toMatch(
      /step 3 stop-writes runs again \(writes stay stopped\), then step 5 drained and on/,
    );
  });
  it("a cutover --abort called off: --resume goes on with it, as the abort's end says (a plain run would start a new one)", () => {
    const calledOff = { ...failed, outcome: "interrupted", aborted: true as const, calledOff: true as const };
    expect(nextOffer({ ...base, lastStep: step, finished: calledOff })).toEqual({
      runs: [{ args: "--resume", does: CALLED_OFF_RESUME }],
    });
    expect(nextOffer({ ...base, lastStep: step, finished: calledOff, runbookChanged: true })?.notes).toEqual([
      RUNBOOK_CHANGED_NOTE,
    ]);
    // no step ran: nothing to go on with
    expect(nextOffer({ ...base, finished: calledOff })).toBeUndefined();
  });
  it("an --abort that could not undo the write stop (no `undo:`): writes by hand, then --resume, which stops them again", () => {
    // an outside review: status offered nothing after it (the abort was no "called off", nor open)
    const aborted = { ...failed, aborted: true as const };
    const undoless = { step: 3, id: "stop-writes" };
    expect(nextOffer({ ...base, lastStep: step, finished: aborted, writesStopUndoless: undoless })).toEqual({
      runs: [{ args: "--resume", does: CALLED_OFF_RESUME }],
      notes: [
        "writes stay stopped until a person turns them back on (the runbook gives step 3 stop-writes no `undo:`): do it by hand; the --resume stops them again before its commit",
      ],
    });
    // not once a commit may have been sent: the abort was refused then, and nothing goes back on
    expect(
      JSON.stringify(
        nextOffer({ ...base, lastStep: step, finished: aborted, writesStopUndoless: undoless, commitSent: true }),
      ) ?? "",
    ).not.toContain("by hand");
  });
  it("nothing while the run's own process holds the lock, when --resume would refuse the journal, or after a cutover that ended", () => {
    const alive = { pid: 1, host: "h", startedAt: "t", alive: true };
    expect(nextOffer({ ...base, lastStep: step, lock: alive })).toBeUndefined();
    expect(nextOffer({ ...base, lastStep: step, refused: "edited" })).toBeUndefined();
    expect(nextOffer({ ...base, lastStep: step, finished: { ...failed, outcome: "ok" } })).toBeUndefined();
    // an --abort that did not call the cutover off (an undo failed: its way on is said apart)
    expect(nextOffer({ ...base, lastStep: step, finished: { ...failed, aborted: true } })).toBeUndefined();
    // no step ran: nothing to go on with
    expect(nextOffer({ ...base })).toBeUndefined();
    // a lock whose process is gone (or on another host) does not hold it back
    expect(args({ lastStep: step, lock: { ...alive, alive: false } })).toEqual(["--resume", "--abort"]);
  });
});

// an instance stopped during the commit (src/fleet/window.ts `StoppedInCommit`): the writes-on
// hook refuses, and a plain --resume is refused again (the watch page's verdict: test/run/first-process.e2e.test.ts)
describe("nextOffer after an instance stopped during the commit", () => {
  const sic = { instance: "sync0", at: "2026-11-30T00:00:30.000Z", how: "refused" as const };
  const after = { ...base, lastStep: step, finished: failed, commitSent: true as const };
  it("its writes-on hook or verify reached (refused, or forced and cut off), one still ahead: no plain --resume; the new cutover once the migration is restarted, then the forced one for one who accepts it", () => {
    const o = nextOffer({ ...after, stoppedInCommit: { ...sic, refused: true, refusesAhead: true } });
    expect(o).toEqual({
      runs: [STOPPED_IN_COMMIT_RESTART, STOPPED_IN_COMMIT_RESUME],
      notes: [STOPPED_IN_COMMIT_NOTE, "no --abort: a commit was sent, and after commit nothing is undone"],
    });
    expect(STOPPED_IN_COMMIT_RESUME.args).toBe("--resume --force=stopped-in-commit");
    expect(STOPPED_IN_COMMIT_RESTART.args).toBe("--new-cutover");
    expect(
      nextOffer({ ...after, runbookChanged: true, stoppedInCommit: { ...sic, refused: true, refusesAhead: true } })
        ?.notes,
    ).toContain(RUNBOOK_CHANGED_NOTE);
  });
  it("killed before the writes-on hook or verify: --resume, which the step ahead will refuse, said so; none ahead (writes already on, no verify left): as ever", () => {
    expect(nextOffer({ ...after, stoppedInCommit: { ...sic, refusesAhead: true } })?.runs).toEqual([
      { args: "--resume", does: `goes on with the cutover where its last run stopped; ${STOPPED_IN_COMMIT_AHEAD}` },
    ]);
    expect(nextOffer({ ...after, stoppedInCommit: sic })?.runs[0]!.does).toBe(
      "goes on with the cutover where its last run stopped",
    );
    const on = { ...after, writesOnSince: "2026-11-30T00:01:00.000Z" };
    expect(nextOffer({ ...on, stoppedInCommit: { ...sic, refused: true } })?.runs[0]!.args).toBe("--resume");
  });
});

// an outside review: after an earlier cutover's split commit, status offered --resume and --abort,
// each refused by their own checks of the folder's other journals (src/run/earlier.ts
// `earlierCommitOnFleet`, `refuseSentByEarlierCutover`), and did not name that commit
describe("nextOffer while an earlier cutover's commit may still take effect (`earlierCommit`)", () => {
  const why = "the journal /j/old.jsonl of an earlier cutover, c1, shows commit …";
  const finish = { from: "stop-writes", commit: "commit", only: ["sync2"] };
  const held = { why, finish, resumeSendsCommit: true, reached: ["sync0", "sync1"] };
  const open = { lastStep: step, finished: { ...failed, outcome: "ok", to: "stop-writes" } };
  const FINISH = "--from stop-writes --only sync2";
  it("writes stopped, a commit ahead: that commit where it did not arrive, alone; no --resume, no --abort, each said why", () => {
    const o = nextOffer({ ...base, ...open, writesStopped: true, earlierCommit: held });
    expect(o?.runs.map((r) => r.args)).toEqual([FINISH]);
    expect(o?.runs[0]!.does).toBe(
      "stops the application's writes again (step stop-writes: they stay stopped), then sends the commit (step commit) to sync2, where that earlier cutover's did not arrive, and goes on with the steps after it: the round closes with the source's writes stopped",
    );
    expect(o?.notes).toEqual([
      why,
      expect.stringMatching(/^see the fleet first/),
      expect.stringMatching(/^no --resume while it may/),
      expect.stringMatching(/^no --abort while it may/),
    ]);
    // a runbook with no write stop before its commit: the commit itself, said without the stop
    const bare = nextOffer({
      ...base,
      ...open,
      writesStopped: true,
      earlierCommit: { ...held, finish: { ...finish, from: "commit" } },
    });
    expect(bare?.runs[0]).toMatchObject({
      args: "--from commit --only sync2",
      does: expect.stringMatching(/^sends the commit \(step commit\) to sync2/),
    });
    // every write stop whose undo --abort owes or cannot judge (abort.ts refuses on each): no --abort
    const owed: Partial<JournalStatus>[] = [
      { writesStopCut: { step: 3, id: "stop-writes" } },
      { writesStopInDoubt: { step: 3, id: "stop-writes" } },
      { writesStopAbortCut: { step: 3, id: "stop-writes" } },
      { writesUndoFailed: { step: 3, id: "stop-writes" } },
    ];
    for (const o of owed) expect(args({ ...open, ...o, earlierCommit: held }), JSON.stringify(o)).toEqual([FINISH]);
    // killed (no end recorded), before its first step too: the same
    expect(args({ lastStep: step, writesStopped: true, earlierCommit: held })).toEqual([FINISH]);
    expect(args({ earlierCommit: held })).toEqual([FINISH, "--abort"]);
    // called off (a second review: status offered its --resume alone, refused): the finish, no --abort
    const calledOff = { ...failed, outcome: "failed", aborted: true as const, calledOff: true as const };
    expect(args({ lastStep: step, finished: calledOff, earlierCommit: held })).toEqual([FINISH]);
  });
  it("what is not refused is still offered: --abort with no write stop owed, --resume with no commit ahead", () => {
    expect(args({ ...open, earlierCommit: held })).toEqual([FINISH, "--abort"]);
    // a commit refused for want of a write stop: no stop owed, so --abort goes on
    expect(args({ ...open, restopFrom: "stop-writes", earlierCommit: held })).toEqual([FINISH, "--abort"]);
    expect(args({ ...open, writesStopped: true, earlierCommit: { ...held, resumeSendsCommit: false } })).toEqual([
      FINISH,
      "--resume",
    ]);
  });
  it("no instance left to send it to (or its step not named): no command, and why not", () => {
    const { finish: _, ...none } = held;
    const o = nextOffer({ ...base, ...open, writesStopped: true, earlierCommit: none });
    expect(o?.runs).toEqual([]);
    expect(o?.notes?.[1]).toMatch(/^do not turn the source's writes back on: once every instance is COMMITTED/);
    expect(nextLines("rb.yaml", o!)[0]).toBe("next: no command of syncbook's, while this holds:");
  });
  it("a journal that cannot be judged (it may hold such a commit): how to set it aside, no finish", () => {
    const aside = "mv /j/old.jsonl /j/old.jsonl.set-aside";
    const unjudged = {
      why: "/j/old.jsonl: it cannot be read (…): whether …",
      aside,
      resumeSendsCommit: true,
      reached: [],
    };
    const o = nextOffer({ ...base, ...open, writesStopped: true, earlierCommit: unjudged });
    expect(o?.runs).toEqual([]);
    expect(o?.notes?.[0]).toBe(unjudged.why);
    expect(o?.notes?.[1]).toBe(
      `if that file is no journal of this runbook, or you know no instance holds a commit of its, set it aside (it stays its run's record), then ask status again: ${aside}`,
    );
  });
  it("not while this journal's own commit or reverse may be on the fleet, nor once its cutover ended", () => {
    expect(args({ ...open, writesStopped: true, commitSent: true, earlierCommit: held })).toEqual(["--resume"]);
    expect(args({ ...open, reverseInDoubt: "reverse", earlierCommit: held })).toEqual(["--resume"]);
    expect(
      nextOffer({
        ...base,
        lastStep: step,
        finished: { ...failed, outcome: "ok", committed: true },
        earlierCommit: held,
      }),
    ).toBeUndefined();
  });
});

describe("nextAfterFailedUndo", () => {
  it("names the step --resume continues at, once: the write stop itself when it is the step that failed", () => {
    const resume = (at?: { number: number; id: string }) =>
      nextAfterFailedUndo({ number: 5, id: "stop-writes" }, at).runs.find((r) => r.args === "--resume")!.does;
    expect(resume({ number: 7, id: "commit" })).toBe(
      "goes on with the cutover once what failed is fixed: step 5 stop-writes runs again (writes stay stopped), then step 7 commit and on; the failed undo is not retried",
    );
    // an adversarial run read "step 5 stop-writes runs again …, then step 5 stop-writes and on"
    expect(resume({ number: 5, id: "stop-writes" })).toBe(
      "goes on with the cutover once what failed is fixed: step 5 stop-writes runs again (writes stay stopped) and on; the failed undo is not retried",
    );
    expect(resume()).toContain("runs again (writes stay stopped), then the step that failed and on");
  });
});
