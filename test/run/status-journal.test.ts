/**
 * `syncbook status` reads the runbook's journal once and folds it once (issue 40): what the journal
 * shows happened (its last step, since when writes are stopped, the undo's call) comes from the
 * cutover's read model (src/model/), fed by `--resume`'s own strict read of the journal
 * (src/journal/runbook-journal.ts), never from a reader of status's own. Counted at the file
 * system: status opens the journal no more often than `--resume`'s answer does, which reads it once
 * to choose it among the folder's journals and once to judge it (its witness checked in that pass).
 */
import type * as Fs from "node:fs";
import { writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { RunEvent } from "../../src/events.js";
import type { WritesLeft } from "../../src/writes-words.js";
import { cutoverOfRun, LOCK_FILE_NAME, openJournal, runbookJournal } from "../../src/journal/index.js";
import { parseRunbook } from "../../src/runbook/index.js";
import { cutoverFleetVars, readStatus } from "../../src/run/status.js";
import { formatStatus } from "../../src/cli/status.js";
import { traitsOf, verificationText } from "../../src/steps/index.js";
import { buildReport } from "../../src/report/index.js";
import { commandAccepted, commandSent, eventFactory, inst, STEPS, tempDir, salesStarted } from "../support/journal.js";

const opened = vi.hoisted(() => [] as string[]);
vi.mock("node:fs", async (importOriginal) => {
  const fs = await importOriginal<typeof Fs>();
  return {
    ...fs,
    createReadStream: (...args: Parameters<typeof fs.createReadStream>) => {
      opened.push(String(args[0]));
      return fs.createReadStream(...args);
    },
  };
});

let dir: string;
let cleanup: () => void;
beforeEach(() => {
  ({ dir, cleanup } = tempDir());
  opened.length = 0;
});
afterEach(() => cleanup());

/** The events as the folder's one journal: its file. */
function journalOf(events: readonly RunEvent[]): string {
  const j = openJournal({ dir, runbookName: "sales", runbookHash: "abc" });
  for (const e of events) j.write(e);
  j.close();
  return j.file;
}

/**
 * A run killed inside the write-stop window: writes stopped at step 3, then `after` (by default
 * commit's step begun), no end. `after` gets the factory, so its events follow in seq and time.
 */
function killedInWindow(
  after: (ev: ReturnType<typeof eventFactory>, stopped: RunEvent) => RunEvent[] = (ev) => [
    ev("step.started", STEPS[3]!),
  ],
): { file: string; stoppedAt: number; events: RunEvent[] } {
  const ev = eventFactory();
  const events: RunEvent[] = [
    ev("run.started", salesStarted()),
    ev("step.started", STEPS[2]!),
    ev("hook.started", { index: 2, id: "stop", use: "shell", undo: false }),
    ev("hook.finished", { index: 2, id: "stop", use: "shell", undo: false, ok: true, durationMs: 5 }),
    ev("window.opened", { index: 2, id: "stop" }),
    ev("step.finished", { index: 2, id: "stop", outcome: "ok", durationMs: 6 }),
  ];
  events.push(...after(ev, events[4]!));
  return { file: journalOf(events), stoppedAt: events[4]!.at, events };
}

describe("status and the journal", () => {
  it("reads the journal once and folds it once: no read of its own beyond --resume's answer", async () => {
    const { file, stoppedAt, events } = killedInWindow();
    // what --resume's answer alone opens: the choice among the folder's journals reads each once,
    // then one strict read judges the chosen one and checks it against its witness as it goes
    await runbookJournal(dir, traitsOf);
    const resumeReads = opened.filter((f) => f === file).length;
    expect(resumeReads).toBe(2);
    opened.length = 0;

    const text = `runbook: 1\nname: sales\ninstances:\n  - "http://127.0.0.1:9"\nsteps:\n  - waitFor: { state: COMMITTED }\n`;
    const loaded = await parseRunbook(text, join(dir, "rb.yaml"), { env: {} });
    const st = await readStatus(loaded, { journalDir: dir, requestTimeoutMs: 2_000 });
    expect(opened.filter((f) => f === file).length).toBe(resumeReads);

    // and what it says is the read model's
    expect(st.journal.resumeWith).toBe(file);
    expect(st.journal.lastStep).toEqual({
      number: 4,
      id: "commit",
      kind: "commit",
      startedAt: new Date(events.at(-1)!.at).toISOString(),
    });
    expect(st.journal.writesStopped).toBe(true);
    expect(st.journal.writesStoppedSince).toBe(new Date(stoppedAt).toISOString());
  });

  it('after the cutover: the destination takes writes, then the application writes again, not "writes stopped"', async () => {
    const text = `runbook: 1\nname: sales\ninstances:\n  - "http://127.0.0.1:9"\nsteps:\n  - waitFor: { state: COMMITTED }\n`;
    // each stage in a folder of its own: status reads the folder's one journal
    const status = async (after: Parameters<typeof killedInWindow>[0]) => {
      cleanup();
      ({ dir, cleanup } = tempDir());
      const { events } = killedInWindow(after);
      const loaded = await parseRunbook(text, join(dir, "rb.yaml"), { env: {} });
      const st = await readStatus(loaded, { journalDir: dir, requestTimeoutMs: 2_000 });
      return { st, events, writes: formatStatus(st).find((l) => l.startsWith("  writes:")) };
    };
    // the window closes at the read that showed canWrite (its `seenAt`), not at the line's time
    const closed = (ev: ReturnType<typeof eventFactory>, stopped: RunEvent) =>
      ev("window.closed", { reason: "canWrite", seenAt: stopped.at + 1_000 });
    const seenAt = (events: RunEvent[]) => new Date(events[4]!.at + 1_000).toISOString();

    const stopped = await status(() => []);
    expect(stopped.writes).toMatch(/^ {2}writes: stopped by the run \(a stopWrites held, not undone\) since /);

    const destination = await status((ev, s) => [closed(ev, s)]);
    expect(destination.st.journal?.destinationWrites).toEqual({ since: seenAt(destination.events), by: "canWrite" });
    expect(destination.writes).toBe(
      `  writes: the destination takes writes since ${seenAt(destination.events)} (canWrite on the first process); no writesOn hook has said the application writes again`,
    );

    // a reverse step begun after the read that showed canWrite, its request sent (no answer yet)
    const reverseSent = (ev: ReturnType<typeof eventFactory>, s: RunEvent): RunEvent[] => [
      { ...ev("step.started", STEPS[4]!), at: s.at + 2_000 },
      { ...ev("request.sent", commandSent(7, "reverse", inst(0))), at: s.at + 2_001 },
    ];

    // a reverse on its way when its runner was killed (an adversarial run: status said "takes writes
    // since" while the fleet showed the reverse had taken effect)
    const reversing = await status((ev, s) => [closed(ev, s), ...reverseSent(ev, s)]);
    expect(reversing.st.journal?.destinationWrites).toEqual({
      since: seenAt(reversing.events),
      by: "canWrite",
      reversedBy: STEPS[4]!.id,
      reverseInDoubt: true,
    });
    expect(reversing.writes).toBe(
      `  writes: the destination took writes from ${seenAt(reversing.events)} (canWrite on the first process); a reverse (step ${STEPS[4]!.id}) may have reached the fleet after it was committed (its step did not end ok): the sync may run the other way now, its destination taking writes only after its own commit (the fleet above shows which; --resume reads it and adopts the reverse it shows)`,
    );

    // a reverse whose answer was lost and whose step then ended failed (an adversarial run: the
    // writes line said "its step did not end" under "last step: rollback (reverse): failed")
    const failed = await status((ev, s) => [
      closed(ev, s),
      ...reverseSent(ev, s),
      {
        ...ev("step.finished", { ...STEPS[4]!, outcome: "failed", durationMs: 10_000, error: "no answer" }),
        at: s.at + 12_001,
      },
    ]);
    expect(failed.st.journal?.destinationWrites?.reverseInDoubt).toBe(true);
    expect(failed.writes).toContain(
      `a reverse (step ${STEPS[4]!.id}) may have reached the fleet after it was committed (its step did not end ok): the sync may run the other way now`,
    );

    // killed right after its commit's answers, and a --resume a minute later the first to read
    // canWrite (an adversarial run: status said "takes writes since" that read, minutes after the
    // fleet did): the read is the latest it may have begun, said so with the time no runner read it
    const late = await status((ev, s) => [
      { ...ev("step.started", STEPS[3]!), at: s.at + 500 },
      { ...ev("commit.sent", { index: 3, id: "commit", instances: ["a"], skewMs: 0 }), at: s.at + 1_000 },
      { ...ev("run.started", { ...salesStarted(), mode: "resume" }), at: s.at + 60_000 },
      { ...ev("window.closed", { reason: "canWrite", seenAt: s.at + 61_000 }), at: s.at + 61_000 },
    ]);
    const lateAt = (ms: number) => new Date(late.events[4]!.at + ms).toISOString();
    expect(late.writes).toBe(
      `  writes: the destination takes writes since ${lateAt(61_000)} at the latest (canWrite on the first process, first seen then: no runner read the fleet from ${lateAt(1_000)}, after the commit, to ${lateAt(60_000)}); no writesOn hook has said the application writes again`,
    );

    const back = await status((ev, s) => [closed(ev, s), ev("window.writes-on", { index: 3, id: "commit" })]);
    expect(back.st.journal?.writesOnSince).toBe(new Date(back.events.at(-1)!.at).toISOString());
    expect(back.writes).toBe(
      `  writes: the application writes again since ${new Date(back.events.at(-1)!.at).toISOString()} (its writesOn hook); the destination took writes at ${seenAt(back.events)} (canWrite on the first process)`,
    );
  });

  // a `--from` run of the cutover that sent nothing and ran no hook (it only waited) is passed over
  // by the journal choice, so status reads the older journal: its window was that journal's alone
  // (it joined the others only when its own first run was a --from run), and status said writes
  // stopped and the destination not taking them after the other journal's run saw canWrite
  it("the window is the cutover's across its journals, whichever journal status reads: a later run's canWrite closes it", async () => {
    const text = `runbook: 1\nname: sales\ninstances:\n  - "http://127.0.0.1:9"\nsteps:\n  - waitFor: { state: COMMITTED }\n`;
    const { file: first, events } = killedInWindow((ev) => [
      ev("step.started", STEPS[3]!),
      ev("request.sent", commandSent(1, "commit", inst(0))),
      ev("response.received", commandAccepted(1, inst(0))),
    ]);
    const run1 = events[0]!;
    if (run1.type !== "run.started") throw new Error("unreachable");
    const ev = eventFactory(100);
    const seen = ev("progress.sampled", {
      instance: inst(0),
      progress: { state: "COMMITTING", canWrite: true } as never,
    });
    journalOf([
      ev("run.started", {
        ...salesStarted(),
        cutover: cutoverOfRun(run1),
        carried: { from: first, writesStopped: true, commitSent: true, commitAccepted: true, commands: [] },
      }),
      ev("step.started", STEPS[4]!),
      seen,
      ev("window.closed", { reason: "canWrite", seenAt: seen.at }),
      ev("step.finished", { index: 4, id: "done", outcome: "ok", durationMs: 1 }),
      // stopped at --to: a run that continued the cutover and finished ok would be the journal chosen
      ev("run.finished", { outcome: "ok", exitCode: 0, committed: true, durationMs: 1, to: "done" }),
    ]);
    const loaded = await parseRunbook(text, join(dir, "rb.yaml"), { env: {} });
    const st = await readStatus(loaded, { journalDir: dir, requestTimeoutMs: 2_000 });
    // the journal status reads is the one that acted, the first
    expect(st.journal?.resumeWith).toBe(first);
    expect(st.journal?.destinationWrites).toEqual({ since: new Date(seen.at).toISOString(), by: "canWrite" });
    expect(formatStatus(st).find((l) => l.startsWith("  writes:"))).toBe(
      `  writes: the destination takes writes since ${new Date(seen.at).toISOString()} (canWrite on the first process); no writesOn hook has said the application writes again`,
    );
  });

  it("a step that waits for an operator's answer, while its run lives: said so, with where to answer; cut off once its run is gone", async () => {
    const CONFIRM = { index: 3, id: "go", kind: "confirm", title: "Point of no return?" };
    const ev = eventFactory();
    const events: RunEvent[] = [
      ev("run.started", {
        runbook: "sales",
        file: "rb.yaml",
        hash: "abc",
        instances: [inst(0)],
        mode: "run",
        steps: [...STEPS.slice(0, 3), CONFIRM],
      }),
      ev("step.started", CONFIRM),
    ];
    journalOf(events);
    const text = `runbook: 1\nname: sales\ninstances:\n  - "http://127.0.0.1:9"\nsteps:\n  - waitFor: { state: COMMITTED }\n`;
    const loaded = await parseRunbook(text, join(dir, "rb.yaml"), { env: {} });
    const st = await readStatus(loaded, { journalDir: dir, requestTimeoutMs: 2_000 });
    const startedAt = new Date(events.at(-1)!.at).toISOString();
    expect(st.journal.lastStep).toEqual({ number: 4, id: "go", kind: "confirm", startedAt, asksPerson: true });
    const lock = { pid: 4242, host: "vm", startedAt };
    const say = (alive: boolean | null) =>
      formatStatus({ ...st, journal: { ...st.journal, lock: { ...lock, alive } } }).filter((l) =>
        /^journal:|^ {2}last step|^ {2}the run /.test(l),
      );
    const live = say(true);
    expect(live[0]).toMatch(/^journal: \S+ \(being written by the run now running, pid 4242\)$/);
    expect(live[1]).toMatch(
      new RegExp(
        `^  last step: 4\\. go \\(confirm\\): waiting for an operator's answer since ${startedAt.replace(/\./g, "\\.")} \\(.+\\): answer it in the run's terminal \\(pid 4242\\)$`,
      ),
    );
    expect(live[2]).toBe("  the run is still running (pid 4242): this is its journal so far");
    expect(say(false).slice(1)).toEqual([
      "  last step: 4. go (confirm): started, never ended (cut off)",
      "  the run did not record its end: it was interrupted or crashed",
    ]);
    expect(say(null).slice(1)).toEqual([
      "  last step: 4. go (confirm): started, never ended (cut off, or still running on the lock's other host)",
      "  the run did not record its end (interrupted, crashed, or still running on the lock's other host)",
    ]);
  });

  it("writes a --from run inherited: said stopped only when its end said so (stopped, not may-be-stopped)", async () => {
    const text = `runbook: 1\nname: sales\ninstances:\n  - "http://127.0.0.1:9"\nsteps:\n  - waitFor: { state: COMMITTED }\n`;
    const loaded = await parseRunbook(text, join(dir, "rb.yaml"), { env: {} });
    const of = async (writes: WritesLeft | undefined) => {
      cleanup();
      ({ dir, cleanup } = tempDir());
      const ev = eventFactory();
      journalOf([
        ev("run.started", salesStarted()),
        ev("step.started", STEPS[3]!),
        ev("step.finished", { index: 3, id: "commit", outcome: "ok", durationMs: 1 }),
        ev("run.finished", {
          outcome: "ok",
          exitCode: 0,
          committed: true,
          durationMs: 1,
          to: "commit",
          ...(writes ? { writes } : {}),
        }),
      ]);
      return (await readStatus(loaded, { journalDir: dir, requestTimeoutMs: 2_000 })).journal;
    };
    expect(await of("stopped")).toMatchObject({ writesStopped: true, writesStoppedBefore: true });
    for (const w of ["may-be-stopped", undefined] as const) {
      const j = await of(w);
      expect(j.writesStopped, String(w)).toBe(false);
      expect(j, String(w)).not.toHaveProperty("writesStoppedBefore");
    }
  });

  // the journal of a `--from stop-writes --to stop-writes` run after a commit whose answer was lost:
  // its last command was the earlier run's, carried (`run.started.carried.commands`), and status
  // printed it as this run's: one read a commit sent by the run that only stopped writes
  it("a last command carried from an earlier journal is said to be that run's, naming its journal; one of this run's is not", async () => {
    const text = `runbook: 1\nname: sales\ninstances:\n  - "http://127.0.0.1:9"\nsteps:\n  - waitFor: { state: COMMITTED }\n`;
    const loaded = await parseRunbook(text, join(dir, "rb.yaml"), { env: {} });
    const earlier = join(dir, "2026-12-01T07-00-00.000Z-1.jsonl");
    const commit = {
      op: "commit",
      stepIndex: 3,
      id: "commit",
      answers: [{ instance: "i0", answered: "unknown" as const }],
    };
    const of = async (own: (ev: ReturnType<typeof eventFactory>) => RunEvent[]) => {
      cleanup();
      ({ dir, cleanup } = tempDir());
      const ev = eventFactory();
      journalOf([
        ev("run.started", {
          ...salesStarted(),
          carried: { from: earlier, writesStopped: true, commitSent: true, commitAccepted: false, commands: [commit] },
        }),
        ev("step.started", STEPS[2]!),
        ...own(ev),
        ev("step.finished", { index: 2, id: "stop", outcome: "ok", durationMs: 1 }),
        ev("run.finished", { outcome: "ok", exitCode: 0, committed: false, durationMs: 1, to: "stop" }),
      ]);
      return readStatus(loaded, { journalDir: dir, requestTimeoutMs: 2_000 });
    };
    const carried = await of(() => []);
    expect(carried.journal.lastCommand).toMatchObject({ op: "commit", step: 4, carried: { from: earlier } });
    expect(formatStatus(carried).join("\n")).toContain(
      `  last command: commit (step 4), sent by an earlier run of this cutover, in ${earlier} (carried by the --from run that wrote this journal; no run of this journal sent one):`,
    );
    // a command of this run's own, after the carried ones: its own, said as before
    const own = await of((ev) => [
      ev("request.sent", commandSent(1, "pause", inst(0))),
      ev("response.received", commandAccepted(1, inst(0))),
    ]);
    expect(own.journal.lastCommand).toMatchObject({ op: "pause", step: 3 });
    expect(own.journal.lastCommand).not.toHaveProperty("carried");
    expect(formatStatus(own).join("\n")).toContain("  last command: pause (step 3):");
  });

  // an adversarial run: a kill in the middle of the stopWrites hook; the simulator's writes were
  // off, and status said "writes: not stopped by the run (or undone)"
  it("a stopWrites hook cut off in its run: writes may be stopped, said so with the ways on; one that ended, or undone, not", async () => {
    const text = `runbook: 1\nname: sales\ninstances:\n  - "http://127.0.0.1:9"\nsteps:\n  - waitFor: { state: COMMITTED }\n`;
    const loaded = await parseRunbook(text, join(dir, "rb.yaml"), { env: {} });
    const of = async (hook: (ev: ReturnType<typeof eventFactory>) => RunEvent[]) => {
      cleanup();
      ({ dir, cleanup } = tempDir());
      const ev = eventFactory();
      journalOf([
        ev("run.started", salesStarted()),
        ev("step.started", STEPS[2]!),
        ev("hook.started", { index: 2, id: "stop", use: "shell", undo: false }),
        ...hook(ev),
      ]);
      return readStatus(loaded, { journalDir: dir, requestTimeoutMs: 2_000 });
    };
    const cut = await of(() => []);
    expect(cut.journal.writesStopInDoubt).toEqual({ step: 3, id: "stop" });
    expect(formatStatus(cut).join("\n")).toContain(
      "writes: may be stopped: the stopWrites hook of step 3 stop started and its run ended before it did (what it did is not known: --resume runs it again; --abort runs its undo)",
    );
    expect(formatStatus(cut).join("\n")).not.toContain("not stopped by the run");
    const failed = await of((ev) => [
      ev("hook.finished", { index: 2, id: "stop", use: "shell", undo: false, ok: false, durationMs: 5, error: "x" }),
    ]);
    expect(failed.journal).not.toHaveProperty("writesStopInDoubt");
    const held = await of((ev) => [
      ev("hook.finished", { index: 2, id: "stop", use: "shell", undo: false, ok: true, durationMs: 5 }),
    ]);
    expect(held.journal).not.toHaveProperty("writesStopInDoubt");
    // an adversarial run: killed after the hook succeeded, before its step ended (in its `check:`):
    // status said "not stopped by the run (or undone)" while the switch was off
    expect(held.journal.writesStopCut).toEqual({ step: 3, id: "stop" });
    const said = formatStatus(held).join("\n");
    expect(said).toContain(
      "writes: stopped: the stopWrites hook of step 3 stop succeeded, and its run ended before the step did (its end, and any `check:` of it, not journaled): --resume runs the step again; --abort runs its undo",
    );
    expect(said).not.toContain("not stopped by the run");
    expect(held.journal.next?.runs.find((r) => r.args === "--abort")?.does).toContain("(writes back on)");
    // its step failed after the hook (its check), and the run was killed before its unwind began
    // the undo: stopped all the same (an outside review: status said "not stopped by the run")
    const failedAfter = await of((ev) => [
      ev("hook.finished", { index: 2, id: "stop", use: "shell", undo: false, ok: true, durationMs: 5 }),
      ev("step.finished", { index: 2, id: "stop", outcome: "failed", durationMs: 6 }),
    ]);
    expect(failedAfter.journal.writesStopCut).toEqual({ step: 3, id: "stop", failed: true });
    const saidFailed = formatStatus(failedAfter).join("\n");
    expect(saidFailed).toContain(
      "writes: stopped: the stopWrites hook of step 3 stop succeeded, its step failed after it (its `check:`, or what followed the hook), and its run ended before the undo ran: --resume runs the step again; --abort runs its undo",
    );
    expect(saidFailed).not.toContain("not stopped by the run");
    expect(failedAfter.journal.next?.runs.find((r) => r.args === "--abort")?.does).toContain("(writes back on)");
    // its undo began (the unwind ran it): said by the undo's own fields, not as cut
    const undoing = await of((ev) => [
      ev("hook.finished", { index: 2, id: "stop", use: "shell", undo: false, ok: true, durationMs: 5 }),
      ev("step.finished", { index: 2, id: "stop", outcome: "failed", durationMs: 6 }),
      ev("hook.started", { index: 2, id: "stop", use: "shell", undo: true }),
    ]);
    expect(undoing.journal).not.toHaveProperty("writesStopCut");
    // its step ended ok: the write stop is the run's own (writesStopped)
    const ended = await of((ev) => [
      ev("hook.finished", { index: 2, id: "stop", use: "shell", undo: false, ok: true, durationMs: 5 }),
      ev("step.finished", { index: 2, id: "stop", outcome: "ok", durationMs: 6 }),
    ]);
    expect(ended.journal).not.toHaveProperty("writesStopCut");
    expect(ended.journal.writesStopped).toBe(true);
  });
});

// an adversarial run: a forced resume killed inside its writes-on hook after the hook had turned the
// application's writes on; status said "writes: ... no writesOn hook has said the application writes again"
describe("a writesOn hook cut off with its run, or failed", () => {
  it("writes may be back on, said so; one that succeeded, or none, not", async () => {
    const text = `runbook: 1\nname: sales\ninstances:\n  - "http://127.0.0.1:9"\nsteps:\n  - { id: app-on, hook: { use: shell, with: { run: "true" }, writesOn: true } }\n`;
    const loaded = await parseRunbook(text, join(dir, "rb.yaml"), { env: {} });
    const step = { index: 0, id: "app-on", kind: "hook", title: "app on" };
    const of = async (after: (ev: ReturnType<typeof eventFactory>) => RunEvent[]) => {
      cleanup();
      ({ dir, cleanup } = tempDir());
      const ev = eventFactory();
      journalOf([
        ev("run.started", { ...salesStarted(), steps: [step] }),
        ev("step.started", step),
        ev("hook.started", { index: 0, id: "app-on", use: "shell", undo: false }),
        ...after(ev),
      ]);
      return readStatus(loaded, { journalDir: dir, requestTimeoutMs: 2_000 });
    };
    const cut = await of(() => []);
    expect(cut.journal.writesOnInDoubt).toEqual({ step: 1, id: "app-on" });
    expect(formatStatus(cut).join("\n")).toContain(
      "writes: may be back on: the writesOn hook of step 1 app-on started and its run ended before it did (what it did is not known: see the application)",
    );
    const failed = await of((ev) => [
      ev("hook.finished", { index: 0, id: "app-on", use: "shell", undo: false, ok: false, durationMs: 5, error: "x" }),
    ]);
    expect(failed.journal.writesOnInDoubt).toEqual({ step: 1, id: "app-on", failed: true });
    expect(formatStatus(failed).join("\n")).toContain("the writesOn hook of step 1 app-on failed part-way");
    const ok = await of((ev) => [
      ev("hook.finished", { index: 0, id: "app-on", use: "shell", undo: false, ok: true, durationMs: 5 }),
    ]);
    expect(ok.journal).not.toHaveProperty("writesOnInDoubt");
    // its runner alive (this process holds the lock): the hook may be running now, not cut off
    cleanup();
    ({ dir, cleanup } = tempDir());
    const ev = eventFactory();
    journalOf([
      ev("run.started", { ...salesStarted(), steps: [step] }),
      ev("step.started", step),
      ev("hook.started", { index: 0, id: "app-on", use: "shell", undo: false }),
    ]);
    writeFileSync(
      join(dir, LOCK_FILE_NAME),
      JSON.stringify({ pid: process.pid, host: hostname(), startedAt: new Date().toISOString() }),
    );
    const live = await readStatus(loaded, { journalDir: dir, requestTimeoutMs: 2_000 });
    expect(live.journal.lock?.alive).toBe(true);
    expect(live.journal).not.toHaveProperty("writesOnInDoubt");
  });
});

// an outside review: status takes no --var, and a runbook whose instances' URL is `${vars.fleet}`
// was read at the runbook's default, another fleet, under this cutover's journal
describe("cutoverFleetVars: the fleet status reads is the cutover's", () => {
  const text = `runbook: 1
name: sales
vars: { fleet: "http://127.0.0.1:1", checker: "http://127.0.0.1:9", other: x }
instances: ["\${vars.fleet}"]
verifier: "\${vars.checker}"
steps:
  - { id: start, start: { source: a, destination: b } }
`;
  const written = (vars: Record<string, string>): void => {
    const ev = eventFactory();
    journalOf([ev("run.started", { ...salesStarted(), vars, given: Object.keys(vars) })]);
  };

  it("the journal's values of the fleet's variables where they differ; a secret one named, not read", async () => {
    const loaded = await parseRunbook(text, "rb.yaml", {});
    expect(await cutoverFleetVars(loaded, dir)).toBeUndefined(); // no journal yet
    written({ fleet: "http://127.0.0.1:2", checker: "***", other: "y" });
    expect(await cutoverFleetVars(loaded, dir)).toEqual({ vars: { fleet: "http://127.0.0.1:2" }, secret: ["checker"] });
    // the same values as the runbook's: nothing to say
    // (a value the runbook holds masked, as one of a secret is loaded: an override holding *** is refused)
    const same = { ...loaded, vars: { ...loaded.vars, fleet: "http://127.0.0.1:2", checker: "***" } };
    expect(await cutoverFleetVars(same, dir)).toBeUndefined();
    // a runbook whose fleet is made of no variable: the journal is not even read
    const fixed = await parseRunbook(
      text.replace('["${vars.fleet}"]', '["http://127.0.0.1:3"]').replace('"${vars.checker}"', '"http://127.0.0.1:4"'),
      "rb.yaml",
      {},
    );
    opened.length = 0;
    expect(await cutoverFleetVars(fixed, dir)).toBeUndefined();
    expect(opened).toEqual([]);
  });

  it("said on status's first line", () => {
    const lines = formatStatus({
      ...({} as Parameters<typeof formatStatus>[0]),
      runbook: "sales",
      file: "rb.yaml",
      at: "now",
      instances: [],
      identityProblems: [],
      readiness: [],
      journal: { folder: dir, passedOver: [], warnings: [] },
      fleetVars: { read: ["fleet=http://127.0.0.1:2"], secret: ["checker"] },
    });
    expect(lines.slice(1, 3)).toEqual([
      "fleet: read with the cutover's fleet=http://127.0.0.1:2, as its journal has them (not the runbook's own)",
      "fleet: read with the runbook's checker: the cutover ran with other values, secrets its journal does not hold, so this may be another fleet than the cutover's",
    ]);
  });
});

// an outside review (helper 89): with a --var given a secret, status said "the commands offered
// leave out --var token" where it offered no command (the run still running, or the cutover done)
describe("the secret --var warning", () => {
  const text = `runbook: 1\nname: sales\nvars: { token: x }\ninstances:\n  - "http://127.0.0.1:9"\nsteps:\n  - waitFor: { state: COMMITTED }\n`;
  const warned = async (events: (ev: ReturnType<typeof eventFactory>) => RunEvent[]) => {
    journalOf(events(eventFactory()));
    const loaded = await parseRunbook(text, join(dir, "rb.yaml"), { env: {} });
    const st = await readStatus(loaded, { journalDir: dir, requestTimeoutMs: 2_000 });
    return { next: st.journal?.next, secret: st.journal?.warnings.filter((w) => w.includes("--var token")) };
  };
  const started = (ev: ReturnType<typeof eventFactory>) =>
    ev("run.started", { ...salesStarted(), vars: { token: "***" }, given: ["token"] });

  it("said where a command is offered; not where none is", async () => {
    const cut = await warned((ev) => [started(ev), ev("step.started", STEPS[0]!)]);
    expect(cut.next?.runs.length).toBeGreaterThan(0);
    expect(cut.secret).toEqual([
      "the commands offered leave out --var token, given to the cutover with a secret (shown as ***): add it as its runs were given it",
    ]);
    const done = await warned((ev) => [
      started(ev),
      ev("run.finished", { outcome: "ok", exitCode: 0, committed: true, durationMs: 1 }),
    ]);
    expect(done.next).toBeUndefined();
    expect(done.secret).toEqual([]);
  });
});

// a review: status asked the one rule twice (`finished.verified`, `verifier.verified`) and said
// its own "verified (a verify step passed on this cutover's result)"; and where the journal held
// no verifier's word (a verify step that failed before it read one) a run that committed said no
// "verification:" line at all. Asked once now, said in `verificationText`'s words: the report's
describe("status's verdict: the one rule's, once, in the report's words", () => {
  const text = `runbook: 1\nname: sales\ninstances:\n  - "http://127.0.0.1:9"\nsteps:\n  - waitFor: { state: COMMITTED }\n`;
  const steps = [
    { index: 0, id: "commit", kind: "commit", title: "commit" },
    { index: 1, id: "verify", kind: "verify", title: "verify" },
  ];
  /** Committed at step 1, then `after` (the verify step, the run's end). */
  const committedThen = (after: (ev: ReturnType<typeof eventFactory>) => RunEvent[]): RunEvent[] => {
    const ev = eventFactory();
    return [
      ev("run.started", { ...salesStarted(), steps }),
      ev("step.started", steps[0]!),
      ev("request.sent", commandSent(1, "commit", inst(0))),
      ev("response.received", commandAccepted(1, inst(0))),
      ev("commit.sent", { index: 0, id: "commit", instances: ["i0"], skewMs: 0 }),
      ev("step.finished", { index: 0, id: "commit", outcome: "ok", durationMs: 1 }),
      ev("step.started", steps[1]!),
      ...after(ev),
    ];
  };
  const ERROR = "not verified: the verifier skipped DDL on the source (createIndexes 1; --ddlHandling warnMost)";
  const refused = (ev: ReturnType<typeof eventFactory>): RunEvent[] => [
    ev("step.finished", { index: 1, id: "verify", outcome: "failed", durationMs: 1, error: ERROR }),
  ];
  const status = async (events: RunEvent[]) => {
    journalOf(events);
    const loaded = await parseRunbook(text, join(dir, "rb.yaml"), { env: {} });
    const st = await readStatus(loaded, { journalDir: dir, requestTimeoutMs: 2_000 });
    return { j: st.journal, lines: formatStatus(st), report: buildReport(events).verification };
  };

  it("committed, then the verify step refused the result: not verified, the report's why, on the end line and the verification line", async () => {
    const { j, lines, report } = await status(
      committedThen((ev) => [
        ...refused(ev),
        ev("run.finished", { outcome: "failed", exitCode: 1, committed: true, durationMs: 9, message: ERROR }),
      ]),
    );
    const why = `no \`verify\` step passed on this cutover's verification result: step 2 "verify" failed: ${ERROR}`;
    expect(report).toEqual({ verified: false, why, headline: "NOT VERIFIED" });
    expect(j.verification).toEqual({ verified: false, why, text: verificationText(report) });
    expect(j.finished?.verified).toBe(false);
    expect(lines.filter((l) => l.startsWith("  run ended "))).toEqual([
      expect.stringMatching(/^ {2}run ended failed.* \(committed\) · not verified at /),
    ]);
    expect(lines).toContain(`  verification: not verified (${why})`);
  });

  it("committed, its run cut off in the verify step: the verification line still says it", async () => {
    const { j, lines, report } = await status(committedThen(refused));
    expect(j.finished).toBeUndefined();
    expect(j.verification?.text).toBe(verificationText(report));
    expect(lines).toContain(`  verification: ${verificationText(report)}`);
  });

  it("a verify that passed: verified, in the one wording, not status's own", async () => {
    const { j, lines, report } = await status(
      committedThen((ev) => [
        ev("verifier.verified", {
          index: 1,
          id: "verify",
          progress: { phase: "idle", generation: 2, error: null },
          writesOffGeneration: 1,
        }),
        ev("step.finished", { index: 1, id: "verify", outcome: "ok", durationMs: 1 }),
        ev("run.finished", { outcome: "ok", exitCode: 0, committed: true, durationMs: 9, verified: true }),
      ]),
    );
    expect(report).toMatchObject({ verified: true });
    expect(j.verification).toEqual({ verified: true, text: "verified" });
    expect(j.verifier).toMatchObject({ passed: true, verified: true });
    expect(lines.filter((l) => l.startsWith("  run ended "))).toEqual([
      expect.stringMatching(/^ {2}run ended ok.* \(committed\) · verified at /),
    ]);
    expect(lines).toContain("  verification: verified");
  });
});
