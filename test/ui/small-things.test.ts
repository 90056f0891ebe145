/**
 * Issue 14, point 9, what a user reads: "wait lines show the failing field, not truncated raw
 * JSON; no 'interrupted: interrupted', no '✓ retry: progress failing'".
 */
import { describe, expect, it } from "vitest";
import pc from "picocolors";
import { SimpleUi } from "../../src/ui/simple.js";
import { formatValue, formatWaitStatus } from "../../src/ui/format.js";
import { decisionLine } from "../../src/ui/model.js";
import { EventBuilder, STEPS } from "../support/ui-fixtures.js";
import {
  abortWords,
  commitWords,
  windowLength,
  windowLengthWords,
  writesLeftSentence,
} from "../../src/writes-words.js";
import { windowSummary } from "../../src/ui/model.js";
import { EVENT_ALIASES, describeNotification, severityOf } from "../../src/plugin/events.js";

const plain = pc.createColors(false);

describe("what a user reads", () => {
  it("a wait on an object shows its fields, sized, cut between fields, never mid-JSON", () => {
    const [line] = formatWaitStatus({
      met: false,
      failing: [
        {
          instance: "shard-a",
          condition: "copyComplete true",
          value: { estimatedCopiedBytes: 536870912, estimatedTotalBytes: 1073741824 },
          sinceMs: 3000,
        },
      ],
    });
    expect(line).toBe(
      "shard-a  copyComplete true: now estimatedCopiedBytes 512 MiB, estimatedTotalBytes 1 GiB (for 3s)",
    );
    const long = formatValue({ a: "x".repeat(50), b: "y".repeat(50), c: 1, d: 2, e: "z".repeat(50) });
    expect(long).toMatch(/^a x{29}…, b y{29}…, c 1, d 2, … 1 more$/);
    expect(long).not.toContain('{"');
  });

  it("a retry or reconcile decision is not a ✓", () => {
    const d = { kind: "retry", ok: true, reason: "progress failing on sync0 (…); retrying in 250 ms" } as const;
    expect(decisionLine(d, plain)).toBe("↻ progress failing on sync0 (…); retrying in 250 ms");
    expect(decisionLine({ kind: "interlock", ok: true, check: "can-commit", reason: "fine" }, plain)).toBe(
      "✓ interlock can-commit: fine",
    );
  });

  it("an interrupted step says what interrupted it, not 'interrupted: interrupted'", () => {
    const b = new EventBuilder();
    b.emit("step.started", STEPS[1]!);
    b.emit("step.finished", { index: 1, id: STEPS[1]!.id, outcome: "interrupted", durationMs: 13, error: "by SIGINT" });
    const lines: string[] = [];
    const ui = new SimpleUi({ write: (t) => lines.push(...t.split("\n").filter(Boolean)), colors: plain });
    for (const e of b.events) ui.listener(e);
    const end = lines.find((l) => l.includes("interrupted in"));
    expect(end).toMatch(/interrupted in 13ms \(by SIGINT\)$/);
    expect(lines.join("\n")).not.toContain("interrupted: interrupted");
  });
});

describe("the write-stop window at a run's end, in words (src/writes-words.ts)", () => {
  it("counts the cutover's earlier windows too: they were downtime", () => {
    expect(windowLengthWords({ durationMs: 110, open: false })).toBe("writes stopped 110ms");
    expect(windowLengthWords({ durationMs: 110, open: false, earlier: { count: 1, durationMs: 9_700 } })).toBe(
      "writes stopped 110ms (and 9.7s in an earlier window)",
    );
    expect(
      windowLengthWords(
        { durationMs: 4_000, open: true, atLeast: true, earlier: { count: 2, durationMs: 61_000 } },
        " so far (still stopped)",
      ),
    ).toBe("writes stopped at least 4s so far (still stopped) (and 1m 01s in 2 earlier windows)");
    // its end seen only after a time no runner read the fleet: the most it lasted
    expect(windowLengthWords({ durationMs: 270_000, open: false, unseenMs: 206_000 })).toBe(
      "writes stopped at most 4m 30s (no runner read the fleet for 3m 26s of it)",
    );
    // closed by the undo (an --abort, a failed run's unwind): not the destination taking writes
    expect(windowLengthWords({ durationMs: 130_000, open: false, undone: true })).toBe(
      "writes stopped 2m 10s, until the undo turned them back on",
    );
    // handed to a person by --abort (no `undo:`): the least it lasted, and not over
    expect(windowLengthWords({ durationMs: 130_900, open: false, atLeast: true, byHand: true })).toBe(
      "writes stopped at least 2m 10s, then handed to a person to turn back on by hand",
    );
    // the earlier windows' total, the least they lasted where one is a bound (rounded down)
    expect(
      windowLengthWords({ durationMs: 110, open: false, earlier: { count: 1, durationMs: 9_790, atLeast: true } }),
    ).toBe("writes stopped 110ms (and at least 9.7s in an earlier window)");
    expect(windowLengthWords({ durationMs: 110, open: false, earlier: { count: 2, durationMs: 9_710 } })).toBe(
      "writes stopped 110ms (and 9.7s in 2 earlier windows)",
    );
  });

  it("rounds a length to the nearest unit and a bound outwards: never less downtime than there may have been", () => {
    expect(windowLengthWords({ durationMs: 12_990, open: false })).toBe("writes stopped 13s");
    expect(windowLengthWords({ durationMs: 12_400, open: false })).toBe("writes stopped 12s");
    // "at most": up
    expect(windowLengthWords({ durationMs: 12_400, open: false, unseenMs: 9_000 })).toBe(
      "writes stopped at most 13s (no runner read the fleet for 9s of it)",
    );
    expect(windowLengthWords({ durationMs: 270_200, open: false, unseenMs: 206_000 })).toBe(
      "writes stopped at most 4m 31s (no runner read the fleet for 3m 26s of it)",
    );
    // "at least": down
    expect(windowLengthWords({ durationMs: 12_900, open: true, atLeast: true }, " so far")).toBe(
      "writes stopped at least 12s so far",
    );
  });
});

describe("a write-stop window's length, a bound said as one (`windowLength`, every reader's)", () => {
  // an outside review: the watch page, the run's lines and the window.closed notification said a
  // window that opened before the events show as a bare length, and one whose end was seen after a
  // time no runner read the fleet as its length ("writes were stopped for 4m 30s")
  it("at least rounds down, at most up, both: at least the length less the unseen time", () => {
    expect(windowLength(12_990, {})).toBe("13s");
    expect(windowLength(12_990, { atLeast: true })).toBe("at least 12s");
    expect(windowLength(12_400, { unseenMs: 9_000 })).toBe("at most 13s");
    expect(windowLength(70_900, { atLeast: true, unseenMs: 60_000 })).toBe("at least 10s");
    expect(windowLength(1_000, { atLeast: true, unseenMs: 60_000 })).toBe("at least 0ms");
  });

  it("the run's lines (windowSummary) and the window.closed notification say it", () => {
    const w = { measuredFrom: 0, measuredMs: 12_900, open: true, shares: {}, parts: [] } as unknown as Parameters<
      typeof windowSummary
    >[0];
    expect(windowSummary(w)).toMatch(/^at least 12s \(/);
    // at writes on, the shares run to the write-on hook: the length said is the one they add up to
    // (it said "28ms (service 11ms · runner 70ms · hooks and other steps 8ms)", the window to canWrite)
    const on = {
      ...w,
      open: false,
      openedAt: 0,
      closedAt: 28,
      durationMs: 28,
      writesOnAt: 89,
      toWritesOnMs: 89,
      measuredMs: 89,
      shares: { service: 11, runner: 70, operator: 0, steps: 8, none: 0 },
    };
    expect(windowSummary(on)).toBe("89ms (service 11ms · runner 70ms · hooks and other steps 8ms)");
    // two timestamps: no "at most" of the window's end seen late
    expect(windowSummary({ ...on, unseenMs: 20 })).toBe(
      "89ms (service 11ms · runner 70ms · hooks and other steps 8ms)",
    );
    expect(
      windowSummary({
        ...on,
        writesOnAt: undefined,
        toWritesOnMs: undefined,
        measuredMs: 28,
        shares: { ...on.shares, runner: 10, steps: 0, service: 18 },
      }),
    ).toBe("28ms (service 18ms · runner 10ms)");
    expect(windowSummary({ ...w, openedAt: 0, durationMs: 12_400, unseenMs: 9_000 })).toMatch(/^at most 13s \(/);
    const closed = { type: "window.closed", reason: "committed", openedAt: 0, seenAt: 270_200 } as const;
    expect(describeNotification({ ...closed, unseenMs: 206_000 } as never, "rb")).toBe(
      "rb: the destination takes writes (COMMITTED on every instance): writes were stopped for at most 4m 31s (its end seen after 3m 26s in which no runner read the fleet)",
    );
    expect(describeNotification(closed as never, "rb")).toBe(
      "rb: the destination takes writes (COMMITTED on every instance): writes were stopped for 4m 30s",
    );
    // handed to a person by --abort: never "the destination takes writes"; the least it lasted
    expect(windowSummary({ ...w, openedAt: 0, durationMs: 12_900, closedBy: "by-hand", open: false })).toMatch(
      /^at least 12s \(/,
    );
    // the application is down until a person acts: a warning, not news
    expect(severityOf({ ...closed, reason: "by-hand" } as never)).toBe("warning");
    expect(severityOf(closed as never)).toBe("info");
    expect(describeNotification({ ...closed, reason: "by-hand" } as never, "rb")).toBe(
      "rb: the write stop was handed to a person by --abort: its step has no `undo:`: writes stay stopped until a person turns them back on (stopped at least 4m 30s so far); no cutover",
    );
  });
});

describe("writes left stopped at a run's end, in words (src/writes-words.ts)", () => {
  // a commit whose answers were lost after it took effect ended "not committed" (src/run/runner.ts)
  it('a commit in doubt is said so, before "since the reverse" or "no commit in this runbook"; its page is critical', () => {
    expect(commitWords({ committed: false, commitInDoubt: true })).toBe(
      "commit in doubt: sent, not known to have taken effect",
    );
    expect(commitWords({ committed: false, commitInDoubt: true, reversed: "back" })).toMatch(/^commit in doubt/);
    expect(commitWords({ committed: true, commitInDoubt: true })).toBe("committed");
    expect(commitWords({ committed: false })).toBe("not committed");
    const n = { type: "run.finished", outcome: "failed", exitCode: 1, durationMs: 1000, committed: false } as const;
    expect(severityOf({ ...n } as Parameters<typeof severityOf>[0])).toBe("error");
    expect(severityOf({ ...n, commitInDoubt: true } as Parameters<typeof severityOf>[0])).toBe("critical");
  });

  // an adversarial run: a dropped SSH session (SIGHUP) that left writes stopped paged as a warning,
  // "interrupted by the operator", with nobody at the terminal
  it("an interrupt: the operator's Ctrl-C is a warning; a SIGHUP, a SIGTERM or a SIGINT with no terminal that left the application down pages", () => {
    type N = Parameters<typeof severityOf>[0];
    const cut = { type: "run.finished", outcome: "interrupted", exitCode: 130, durationMs: 1000, committed: false };
    for (const by of [undefined, "SIGINT"]) {
      const n = { ...cut, ...(by ? { interruptedBy: by } : {}) } as N;
      expect(severityOf(n)).toBe("warning");
      expect(severityOf({ ...n, writes: "stopped" } as N)).toBe("warning");
      expect(describeNotification(n, "rb")).toContain("run interrupted by the operator (");
    }
    // a SIGINT with no terminal (a CI job cancelled: GitHub Actions sends SIGINT) is nobody's Ctrl-C
    for (const [by, more] of [
      ["SIGHUP", {}],
      ["SIGTERM", {}],
      ["SIGINT", { noTerminal: true }],
    ] as const) {
      const n = { ...cut, interruptedBy: by, ...more } as N;
      expect(severityOf(n)).toBe("warning");
      expect(severityOf({ ...n, writes: "stopped" } as N)).toBe("critical");
      expect(severityOf({ ...n, writes: "may-be-stopped" } as N)).toBe("critical");
      expect(severityOf({ ...n, commitInDoubt: true } as N)).toBe("critical");
      expect(severityOf({ ...n, reverseInDoubt: "back" } as N)).toBe("critical");
      // committed, then the session dropped (during a verify): the application must move, nobody is there
      expect(severityOf({ ...n, committed: true } as N)).toBe("critical");
      expect(describeNotification(n, "rb")).not.toContain("by the operator");
      expect(describeNotification(n, "rb")).toContain(`run interrupted by ${by}`);
    }
    expect(describeNotification({ ...cut, interruptedBy: "SIGHUP" } as N, "rb")).toContain(
      "interrupted by SIGHUP (its terminal's session ended: nobody may be at it)",
    );
    expect(describeNotification({ ...cut, interruptedBy: "SIGINT", noTerminal: true } as N, "rb")).toContain(
      "interrupted by SIGINT (no terminal: a CI job cancelled, or a supervisor's stop; nobody may be at it)",
    );
    // a pager on `run.failed` hears a SIGHUP or SIGTERM (a review: it never did), not a Ctrl-C
    const failed = EVENT_ALIASES["run.failed"];
    const ev = (extra: object) => ({ ...cut, seq: 1, at: 0, ...extra }) as unknown as Parameters<typeof failed>[0];
    expect(failed(ev({}))).toBe(false);
    expect(failed(ev({ interruptedBy: "SIGINT" }))).toBe(false);
    expect(failed(ev({ interruptedBy: "SIGINT", noTerminal: true }))).toBe(true);
    expect(failed(ev({ interruptedBy: "SIGHUP" }))).toBe(true);
    expect(failed(ev({ interruptedBy: "SIGTERM" }))).toBe(true);
    expect(failed(ev({ interruptedBy: "SIGTERM", aborted: true }))).toBe(false);
    expect(EVENT_ALIASES["run.interrupted"](ev({ interruptedBy: "SIGHUP" }))).toBe(true);
  });

  // a reverse whose answer was lost ended "· committed ·": the bridge reads the destination as
  // taking writes, which a reverse that reached the fleet has ended (report and status said it)
  it("a reverse in doubt is said after the commit, by the run's end and its page alike", () => {
    const words = commitWords({ committed: true, reverseInDoubt: "rollback" });
    expect(words).toMatch(
      /^committed; a reverse \(step rollback\) may have reached the fleet after it was committed .*the sync may run the other way now/,
    );
    expect(commitWords({ committed: false, reverseInDoubt: "rollback" })).toMatch(/^a reverse \(step rollback\) may/);
    // a runbook with no commit, reversing a fleet another committed: says so, and what "after" means
    expect(commitWords({ committed: false, commitless: true, reverseInDoubt: "rollback" })).toMatch(
      /^no commit in this runbook; a reverse \(step rollback\) may have reached the fleet after it was committed/,
    );
    const n = { type: "run.finished", outcome: "failed", exitCode: 1, durationMs: 1000, committed: false } as const;
    const withDoubt = { ...n, reverseInDoubt: "rollback" } as Parameters<typeof severityOf>[0];
    expect(severityOf(withDoubt)).toBe("critical");
    expect(describeNotification(withDoubt, "rb")).toContain(
      "a reverse (step rollback) may have reached the fleet after it was committed",
    );
  });

  // an adversarial run: a committed run's notification said writes stay stopped "until they are
  // turned back on", the one thing not to do once the destination holds the commit
  it("never 'turned back on' after a commit; before one, only an undo judged safe (--abort)", () => {
    const committed = writesLeftSentence("stopped", true);
    expect(committed).not.toMatch(/turned back on|undone/);
    expect(committed).toContain("never back on the source");
    // an --abort that could not undo a write stop with no `undo:`: by hand, not --abort again
    expect(writesLeftSentence("stopped", false, false, "stop-writes")).toBe(
      "application writes are STILL STOPPED: the runbook gives step stop-writes no `undo:`, so --abort cannot undo it: turn writes back on by hand, then --resume goes on with the cutover (it stops them again before its commit)",
    );
    expect(writesLeftSentence("stopped", true, false, "stop-writes")).toBe(committed);
    // a later run that ended before it stopped writes again: the person may not have turned them on
    expect(writesLeftSentence("may-be-stopped", false, false, "stop-writes")).toBe(
      "application writes may be stopped: an --abort handed the write stop of step stop-writes to a person to turn back on by hand (the runbook gives it no `undo:`), and no event shows they did; check the application's writers: --resume stops them again before its commit",
    );
    expect(writesLeftSentence("may-be-stopped", false)).toContain("the stop hook failed part-way");
    // a rehearsal's job summary names no real run's way on (an outside review: "syncbook status, or
    // --resume"), and says whose writes they are
    for (const w of ["stopped", "may-be-stopped"] as const)
      for (const committed of [false, true])
        for (const doubt of [false, true])
          for (const byHand of [undefined, "stop-writes"]) {
            const real = writesLeftSentence(w, committed, doubt, byHand);
            const rehearsed = writesLeftSentence(w, committed, doubt, byHand, true);
            if (w === "may-be-stopped" && byHand !== undefined && !committed)
              // only after an --abort, which a rehearsal never runs: its hand-off is said as it was
              expect(rehearsed).toBe(real.replace(": --resume stops them again before its commit", ""));
            else expect(rehearsed, rehearsed).not.toMatch(/syncbook (status|run)|--resume|--abort/);
            if (/syncbook status|--resume|--abort judges/.test(real) && !(w === "may-be-stopped"))
              expect(rehearsed).toContain("a rehearsal's writes are the simulator's");
          }
    const notCommitted = writesLeftSentence("stopped", false);
    expect(notCommitted).toContain("the stop is undone while no commit may have been sent (--abort judges that)");
    // the notification says it as the run's end does
    const text = describeNotification(
      {
        type: "run.finished",
        outcome: "ok",
        exitCode: 0,
        durationMs: 1000,
        committed: true,
        writes: "stopped",
      } as Parameters<typeof describeNotification>[0],
      "rb",
    );
    expect(text).toContain(committed);
  });
});

// an outside review: an --abort the fleet kept from undoing said "AN UNDO FAILED"
describe("an --abort's end in one headline (abortWords)", () => {
  it("called off; nothing undone on purpose; an undo that failed or could not run", () => {
    expect(abortWords({ exitCode: 0 })).toBe("ABORTED");
    expect(abortWords({ exitCode: 1, undoKeptOff: true })).toBe("ABORTED, NOTHING UNDONE: WRITES STAY STOPPED");
    expect(abortWords({ exitCode: 1 })).toBe("ABORTED, NOT EVERYTHING UNDONE");
  });
});
