/**
 * Issue 38, point 2: the runner's verdict (src/watch/runner.ts), every case enumerated: no run,
 * running, dead (its pid gone on this host; no lock while unfinished), silent (another host's
 * lock, no journal line past the step's limit), finished (with writes left stopped: an alarm);
 * and the state it left, in words.
 */
import { describe, expect, it } from "vitest";
import type { RunEvent } from "../../src/events.js";
import { CutoverFold } from "../../src/model/fold.js";
import { lastAttempted, resumedRun, resumeFirst } from "../../src/model/again.js";
import { traitsOf } from "../../src/steps/index.js";
import { runnerVerdict, stateLeft, type RunnerInput } from "../../src/watch/runner.js";
import { buildState } from "../../src/watch/state.js";
import { runnerLost } from "../../src/watch/dead-man.js";
import { reverseInDoubtWords, runEndWords, writesOnInDoubtWords } from "../../src/writes-words.js";
import { CALLED_OFF_RESUME, MASKED_VAR_WORDS, RUNBOOK_CHANGED_NOTE } from "../../src/next-run.js";

const T0 = 1_800_000_000_000;
let seq = 0;
const ev = (type: string, at: number, body: Record<string, unknown> = {}): RunEvent =>
  ({ type, seq: ++seq, at: T0 + at, ...body }) as unknown as RunEvent;
const instances = [
  { url: "http://a", index: 0, name: "a" },
  { url: "http://b", index: 1, name: "b" },
];
const steps = [
  { index: 0, id: "stop", kind: "stopWrites", title: "stop" },
  { index: 1, id: "hold", kind: "hook", title: "hold" },
  { index: 2, id: "commit", kind: "commit", title: "commit" },
];

/** The run's start at +0, with these steps. */
const runStarted = (list: readonly Record<string, unknown>[]) =>
  ev("run.started", 0, {
    runbook: "rb",
    file: "rb.yaml",
    hash: "sha256:ab",
    mode: "run",
    instances,
    steps: list,
    by: { user: "op", host: "h", pid: 1 },
  });

/** A run that stopped writes at +1 s and is in its hook step since +2 s (limit 60 s). */
function killedModel(extra: RunEvent[] = []) {
  const f = new CutoverFold({ traits: traitsOf });
  const es = [
    runStarted(steps),
    ev("step.started", 500, { index: 0, id: "stop", kind: "stopWrites", title: "stop" }),
    ev("hook.started", 600, { index: 0, id: "stop", use: "sim-writes", undo: false }),
    ev("hook.finished", 1000, { index: 0, id: "stop", use: "sim-writes", undo: false, ok: true, durationMs: 400 }),
    ev("step.finished", 1000, { index: 0, id: "stop", outcome: "ok", durationMs: 500 }),
    ev("step.started", 2000, { index: 1, id: "hold", kind: "hook", title: "hold", timeoutMs: 60_000 }),
    ...extra,
  ];
  for (const e of es) f.apply(e);
  return f.view(T0 + 2000);
}

const lock = { pid: 4242, host: "here", startedAt: "x" };
/** The verdict at +4 s on a run that ended (its lock gone), naming rb.yaml. */
const ended = (model: ReturnType<typeof killedModel>) =>
  runnerVerdict({ model, lock: undefined, now: T0 + 4000, host: "here", isAlive: () => false, runbook: "rb.yaml" });
const at = (ms: number) => T0 + ms;
/** Instance i's request of commit at +`ms`, and the commit step's start at +2.4 s. */
const req = (ms: number, id: number, i: number) =>
  ev("request.sent", ms, {
    id,
    instance: instances[i],
    target: "service",
    method: "POST",
    path: "/api/v1/commit",
    body: {},
  });
const commitStep = () => ev("step.started", 2400, { index: 2, id: "commit", kind: "commit", title: "commit" });

describe("runnerVerdict", () => {
  it("no run yet: no alarm", () => {
    const m = new CutoverFold({ traits: traitsOf }).view(0);
    const v = runnerVerdict({ model: m, lock: undefined, now: at(0), host: "here", isAlive: () => true });
    expect(v.state).toBe("no-run");
    expect(v.alarm).toBe(false);
  });

  it("running: its pid runs here", () => {
    const v = runnerVerdict({ model: killedModel(), lock, now: at(3000), host: "here", isAlive: () => true });
    expect(v.state).toBe("running");
    expect(v.alarm).toBe(false);
  });

  it("dead: its pid no longer runs here, said with what it left and the --resume command", () => {
    const v = runnerVerdict({
      model: killedModel(),
      lock,
      now: at(182_000),
      host: "here",
      isAlive: () => false,
      runbook: "rb.yaml",
    });
    expect(v.state).toBe("dead");
    expect(v.alarm).toBe(true);
    expect(v.headline).toBe(
      "THE RUNNER IS GONE: its process (pid 4242 on here) no longer runs; its last journal line was 3m 00s ago, and the cutover is unfinished",
    );
    expect(v.left).toEqual(["writes stopped 3m 01s ago", "commit not sent", "in step 2 hold (hook)"]);
    expect(v.next).toBe("syncbook run rb.yaml --resume");
  });

  // found in a review: the command named the runbook alone, and pasted after a run with
  // --journal-dir it read the default folder, where no journal is (src/next-run.ts `runbookArgs`)
  it("every command it offers carries the --journal-dir watch was given, as typed", () => {
    const dead = runnerVerdict({
      model: killedModel(),
      lock,
      now: at(182_000),
      host: "here",
      isAlive: () => false,
      runbook: "rb.yaml",
      journalDir: "../journals",
    });
    expect(dead.next).toBe("syncbook run rb.yaml --journal-dir ../journals --resume");
    const silent = runnerVerdict({
      model: killedModel(),
      lock: { ...lock, host: "elsewhere" },
      now: at(2000 + 90_001),
      host: "here",
      isAlive: () => false,
      runbook: "my rb.yaml",
      journalDir: "/srv/j",
    });
    expect(silent.next).toBe(
      "syncbook status 'my rb.yaml' --journal-dir /srv/j   (then, if its process is gone: syncbook run 'my rb.yaml' --journal-dir /srv/j --resume)",
    );
  });

  it("given the journal folder, the --journal-dir its last run journaled (run.started.journalDir)", () => {
    const f = new CutoverFold({ traits: traitsOf });
    f.apply(
      ev("run.started", 0, {
        runbook: "rb",
        file: "rb.yaml",
        journalDir: "j",
        hash: "h",
        mode: "run",
        instances,
        steps,
      }),
    );
    f.apply(ev("step.started", 500, { index: 0, id: "stop", kind: "stopWrites", title: "stop" }));
    const model = f.view(T0 + 500);
    expect(model.cutover.journalDir).toBe("j");
    const v = runnerVerdict({ model, lock: undefined, now: at(1000), host: "here", isAlive: () => false });
    expect(v.next).toBe("syncbook run rb.yaml --journal-dir j --resume");
    // given the runbook, watch's own flag: the folder it reads (none: the default one)
    expect(
      runnerVerdict({ model, lock: undefined, now: at(1000), host: "here", isAlive: () => false, runbook: "x.yaml" })
        .next,
    ).toBe("syncbook run x.yaml --resume");
  });

  it("dead: no lock at all while the last run never said its end", () => {
    const v = runnerVerdict({
      model: killedModel(),
      lock: undefined,
      now: at(3000),
      host: "here",
      isAlive: () => true,
    });
    expect(v.state).toBe("dead");
    expect(v.headline).toMatch(/no process holds the journal folder's lock/);
  });

  it("another host's lock: alive while it writes, silent past its step's limit and grace", () => {
    const other = { ...lock, host: "elsewhere" };
    const alive = runnerVerdict({
      model: killedModel(),
      lock: other,
      now: at(2000 + 60_000 + 30_000),
      host: "here",
      isAlive: () => false,
    });
    expect(alive.state).toBe("running");
    const silent = runnerVerdict({
      model: killedModel(),
      lock: other,
      now: at(2000 + 90_001),
      host: "here",
      isAlive: () => false,
    });
    expect(silent.state).toBe("silent");
    expect(silent.alarm).toBe(true);
    expect(silent.headline).toMatch(/no journal line for 1m 30s, longer than step 2 hold's time limit of 1m 00s/);
    expect(silent.headline).toMatch(/held on elsewhere/);
  });

  it("finished: no alarm when it ended ok; an alarm when writes were left stopped", () => {
    const ok = killedModel([
      ev("step.finished", 3000, { index: 1, id: "hold", outcome: "ok", durationMs: 1000 }),
      ev("run.finished", 3100, { outcome: "ok", exitCode: 0, durationMs: 3100, committed: false }),
    ]);
    const v = runnerVerdict({ model: ok, lock: undefined, now: at(4000), host: "here", isAlive: () => false });
    expect(v.state).toBe("finished");
    expect(v.headline).toBe("run 1 ended ok");
    const failed = killedModel([
      ev("step.finished", 3000, { index: 1, id: "hold", outcome: "failed", durationMs: 1000, error: "boom" }),
      ev("run.finished", 3100, { outcome: "failed", exitCode: 1, durationMs: 3100, committed: false }),
    ]);
    const f = ended(failed);
    expect(f.alarm).toBe(true);
    expect(f.left[0]).toMatch(/^writes stopped|STILL STOPPED/);
    expect(f.next).toBe("syncbook run rb.yaml --resume");
  });

  // a review: after a --to run short of a commit in doubt it carried, the page offered the --resume
  // its journal refuses (the feed's resumeRefusedOwn says so)
  it("a --resume its journal refuses: status first, not that --resume", () => {
    const m = killedModel([
      ev("step.finished", 3000, { index: 1, id: "hold", outcome: "ok", durationMs: 1000 }),
      ev("run.finished", 3100, { outcome: "ok", exitCode: 0, durationMs: 3100, committed: false, to: "hold" }),
    ]);
    const input = { model: m, lock: undefined, now: at(4000), host: "here", isAlive: () => false, runbook: "rb.yaml" };
    expect(runnerVerdict(input).next).toBe("syncbook run rb.yaml --resume");
    expect(runnerVerdict({ ...input, resumeRefused: true }).next).toBe(
      "syncbook status rb.yaml   (a --resume is refused on its journal, whatever the fleet shows: a start, commit or reverse sent by an earlier run is in doubt ahead of where it goes on; status says the refusal and the way on)",
    );
  });

  // a trial: a verify refused a check it did not start, and the page offered the plain --resume,
  // refused again the same way; status said what to do first
  it("a failed step whose hint says what to do before the --resume: said with it; another hint not", () => {
    const failedWith = (extra: Record<string, unknown>) =>
      ended(
        killedModel([
          ev("step.finished", 3000, {
            index: 1,
            id: "hold",
            outcome: "failed",
            durationMs: 1000,
            error: "boom",
            hint: "Restart the verifier with --clean, then --resume.",
            ...extra,
          }),
          ev("run.finished", 3100, { outcome: "failed", exitCode: 1, durationMs: 3100, committed: false }),
        ]),
      );
    expect(failedWith({ hintBeforeResume: true }).next).toBe(
      "syncbook run rb.yaml --resume   (first, as step 2 hold's failure said: Restart the verifier with --clean, then --resume.)",
    );
    expect(failedWith({}).next).toBe("syncbook run rb.yaml --resume");
    // its way on edits the runbook: the --resume with the flags it needs (a plain one is refused again)
    expect(failedWith({ hintBeforeResume: true, resumeFlags: ["--allow-changed-runbook"] }).next).toBe(
      "syncbook run rb.yaml --resume --allow-changed-runbook   (first, as step 2 hold's failure said: Restart the verifier with --clean, then --resume.)",
    );
    // flags without the mark are not the failure's: not said
    expect(failedWith({ resumeFlags: ["--allow-changed-runbook"] }).next).toBe("syncbook run rb.yaml --resume");
    // a failure whose way on is its run's own command again (a fleet-identity refusal before that run
    // acted): that command, as the run's end and status name it, not a plain --resume (a review)
    const again =
      "the failed run's command again, as its end named it: a plain --resume would refuse a corrected `instances:` list, or pass that run over; first, as step 2 hold's failure said: Restart the verifier with --clean, then --resume.";
    expect(failedWith({ againArgs: [] }).next).toBe(`syncbook run rb.yaml   (${again})`);
    expect(failedWith({ againArgs: ["--from", "hold", "--only", "a b"] }).next).toBe(
      `syncbook run rb.yaml --from hold --only 'a b'   (${again})`,
    );
    // watching a journal folder (no runbook to read the values from), a secret --var the cutover was
    // given is named to add: --allow-changed-runbook checks no value against the cutover's, and left
    // out it is read at the runbook's default, another fleet (a review)
    const secretModel = (flags: string[]) => {
      const m = killedModel([
        ev("step.finished", 3000, {
          index: 1,
          id: "hold",
          outcome: "failed",
          durationMs: 1000,
          error: "boom",
          hint: "Edit the runbook, then --resume --allow-changed-runbook.",
          hintBeforeResume: true,
          ...(flags.length ? { resumeFlags: flags } : {}),
        }),
        ev("run.finished", 3100, { outcome: "failed", exitCode: 1, durationMs: 3100, committed: false }),
      ]);
      return ended({ ...m, cutoverValues: { vars: { pw: "***", size: 3 }, given: ["pw", "size"] } }).next;
    };
    expect(secretModel(["--allow-changed-runbook"])).toBe(
      "syncbook run rb.yaml --resume --allow-changed-runbook   (first, as step 2 hold's failure said: Edit the runbook, then --resume --allow-changed-runbook.; add --var pw as its runs were given it: it holds a secret, not shown)",
    );
    // a plain --resume checks the values against the cutover's: not said there
    expect(secretModel([])).toBe(
      "syncbook run rb.yaml --resume   (first, as step 2 hold's failure said: Edit the runbook, then --resume --allow-changed-runbook.)",
    );
    // the last run's failure only: a later run (a --to run short of that step) goes on elsewhere
    const failedStep = {
      index: 4,
      id: "commit",
      outcome: "failed" as const,
      attempts: [{ run: 1, startedAt: 0, outcome: "failed" as const }],
      hint: "Check those instances' progress by hand; then --resume.",
      hintBeforeResume: true as const,
    };
    expect(resumeFirst([failedStep], 1)).toEqual({ number: 5, id: "commit", hint: failedStep.hint });
    expect(resumeFirst([failedStep], 2)).toBeUndefined();
    expect(resumeFirst([{ ...failedStep, resumeFlags: ["--allow-changed-runbook"] }], 1)).toEqual({
      number: 5,
      id: "commit",
      hint: failedStep.hint,
      flags: ["--allow-changed-runbook"],
    });
  });

  // a review: a --from run that failed before the step an earlier run reached; the page and status
  // took the furthest step attempted as the last, missed its failure's hint and named the other
  it("a later run failed before the step an earlier one reached: that failure is the last, with its hint", () => {
    const m = killedModel([
      ev("step.finished", 3000, { index: 1, id: "hold", outcome: "ok", durationMs: 1000 }),
      commitStep(),
      ev("step.finished", 2500, { index: 2, id: "commit", outcome: "failed", durationMs: 100, error: "refused" }),
      ev("run.finished", 3100, { outcome: "failed", exitCode: 1, durationMs: 3100, committed: false }),
      runStarted(steps),
      ev("step.started", 3500, { index: 1, id: "hold", kind: "hook", title: "hold" }),
      // its hook ran (the run acted: --resume goes on from it, not from the run before)
      ev("hook.started", 3510, { index: 1, id: "hold", use: "shell", undo: false }),
      ev("step.finished", 3600, {
        index: 1,
        id: "hold",
        outcome: "failed",
        durationMs: 100,
        error: "boom",
        hint: "Restart the verifier with --clean, then --resume.",
        hintBeforeResume: true,
      }),
      ev("run.finished", 3700, { outcome: "failed", exitCode: 1, durationMs: 200, committed: false }),
    ]);
    expect(lastAttempted(m.steps)?.id).toBe("hold");
    expect(resumeFirst(m.steps, m.runs.at(-1)?.n)).toMatchObject({ number: 2, id: "hold" });
    expect(ended(m).next).toBe(
      "syncbook run rb.yaml --resume   (first, as step 2 hold's failure said: Restart the verifier with --clean, then --resume.)",
    );
    expect(stateLeft(m, at(4000))).toContain("last step: 2 hold, failed");
    // ties (one start time): the step further on
    const tie = [
      { index: 0, attempts: [{ run: 1, startedAt: 5, outcome: "ok" as const }] },
      { index: 1, attempts: [{ run: 1, startedAt: 5, outcome: "ok" as const }] },
      { index: 2, attempts: [] },
    ];
    expect(lastAttempted(tie)?.index).toBe(1);
    // a later run whose clock is behind: still the later (runs in journal order, not by clock)
    const skewed = [
      { index: 3, attempts: [{ run: 1, startedAt: 9_000, outcome: "failed" as const }] },
      { index: 1, attempts: [{ run: 2, startedAt: 1_000, outcome: "failed" as const }] },
    ];
    expect(lastAttempted(skewed)?.index).toBe(1);
    expect(lastAttempted([])).toBeUndefined();
  });

  // a review: after a failure whose way on needs flags (verify refusing writesOff past a forced
  // commit: --allow-changed-runbook), a --from x --to x run that sent nothing and ran no hook;
  // --resume passes its journal over and meets that failure again, as status said, but the page
  // judged from that later run: a plain --resume (refused again) and its step as the last
  it("a later run that did not act (--from x --to x): the failure of the run --resume goes on from counts, with its flags", () => {
    const more = [...steps, { index: 3, id: "committed", kind: "waitFor", title: "committed" }];
    const hint = "Declare writesStoppedExternally: true in the runbook, then --resume --allow-changed-runbook.";
    const failed = [
      ev("step.finished", 3000, {
        index: 1,
        id: "hold",
        outcome: "failed",
        durationMs: 1000,
        error: "refused",
        hint,
        hintBeforeResume: true,
        resumeFlags: ["--allow-changed-runbook"],
      }),
      ev("run.finished", 3100, { outcome: "failed", exitCode: 3, durationMs: 3100, committed: false }),
    ];
    // --from committed --to committed: it waits on reads (no request journaled, no hook) and ends ok
    const idle = [
      ev("run.started", 5000, {
        runbook: "rb",
        file: "rb.yaml",
        hash: "sha256:ab",
        mode: "run",
        instances,
        steps: more,
        carried: { from: "/j/one.jsonl", writesStopped: true, commitSent: false },
      }),
      ev("step.skipped", 5001, { index: 0, id: "stop", reason: "before --from" }),
      ev("step.skipped", 5002, { index: 1, id: "hold", reason: "before --from" }),
      ev("step.skipped", 5003, { index: 2, id: "commit", reason: "before --from" }),
      ev("step.started", 5100, { index: 3, id: "committed", kind: "waitFor", title: "committed" }),
      ev("step.finished", 5200, { index: 3, id: "committed", outcome: "ok", durationMs: 100 }),
      ev("run.finished", 5300, { outcome: "ok", exitCode: 0, durationMs: 300, committed: false, to: "committed" }),
    ];
    const m = killedModel([...failed, ...idle]);
    expect(m.runs.map((r) => r.acted === true)).toEqual([true, false]);
    expect(resumedRun(m.runs)).toBe(1);
    expect(lastAttempted(m.steps)?.id).toBe("committed");
    expect(lastAttempted(m.steps, resumedRun(m.runs))?.id).toBe("hold");
    expect(resumeFirst(m.steps, resumedRun(m.runs))).toEqual({
      number: 2,
      id: "hold",
      hint,
      flags: ["--allow-changed-runbook"],
    });
    const v = ended(m);
    expect(v.headline).toMatch(/^run 2 ended ok at --to committed/);
    expect(v.next).toBe(
      `syncbook run rb.yaml --resume --allow-changed-runbook   (first, as step 2 hold's failure said: ${hint})`,
    );
    expect(v.left).toContain("last step: 2 hold, failed");
    expect(v.left.join("\n")).not.toMatch(/last step: 4 committed/);
    // a --resume after it that did not act either (refused again): it continued the journal of
    // run 1, and is the run to judge from: its own failure, as status reads that journal
    const again = killedModel([
      ...failed,
      ...idle,
      ev("run.started", 6000, { runbook: "rb", file: "rb.yaml", hash: "sha256:ab", mode: "resume", instances, steps }),
      ev("step.skipped", 6001, { index: 0, id: "stop", reason: "done in an earlier run" }),
      ev("step.started", 6100, { index: 1, id: "hold", kind: "hook", title: "hold" }),
      ev("step.finished", 6200, {
        index: 1,
        id: "hold",
        outcome: "failed",
        durationMs: 100,
        error: "refused",
        hint,
        hintBeforeResume: true,
        resumeFlags: ["--allow-changed-runbook"],
      }),
      ev("run.finished", 6300, { outcome: "failed", exitCode: 3, durationMs: 300, committed: false }),
    ]);
    expect(resumedRun(again.runs)).toBe(3);
    expect(resumeFirst(again.steps, 3)).toMatchObject({ number: 2, id: "hold", flags: ["--allow-changed-runbook"] });
    // the --to run acted (a request): --resume goes on from it, past its --to step that ended ok:
    // no failure to do first (the last run's failure only, as before)
    const acting = killedModel([
      ...failed,
      ...idle.slice(0, 5),
      ev("request.sent", 5150, { id: 9, target: "verifier", method: "GET", path: "/api/v1/progress" }),
      ...idle.slice(5),
    ]);
    expect(resumedRun(acting.runs)).toBe(2);
    expect(resumeFirst(acting.steps, 2)).toBeUndefined();
    expect(ended(acting).next).toBe("syncbook run rb.yaml --resume");
    expect(resumedRun([])).toBeUndefined();
  });

  // an outside review: after a --new-cutover refused before it acted (another cutover, not folded
  // here), the page offered this cutover's --resume, where status offered the refused run's command
  // (`passedOver`, src/run/earlier.ts `passedOverRefusal`, status's `passedOverAgain`)
  it("a refused run --resume passes over: its own command again and --abort, as status offers them, in status's order", () => {
    const other = new CutoverFold({ traits: traitsOf });
    other.apply(runStarted(steps));
    const passedOver = {
      file: "/j/new.jsonl",
      again: { number: 1, id: "stop", hint: "Correct the list.", args: ["--new-cutover"] },
      model: { ...other.view(0), whenVars: ["env=a"], cutoverValues: { vars: { pw: "***" }, given: ["pw"] } },
    };
    const po =
      "syncbook run rb.yaml --new-cutover --var env=a   (the failed run's command again, as its end named it: that run sent nothing, so --resume passes its journal (/j/new.jsonl) over and would go on from the run before it; add --var pw as its runs were given it: it holds a secret, not shown; first, as step 1 stop's failure said: Correct the list.)";
    const abort = `; or syncbook run rb.yaml --abort   (calls the cutover off: runs the undos still owed, last first (a write stop's undo turns writes back on); nothing is sent to the sync service)`;
    const toHold = killedModel([
      ev("step.finished", 3000, { index: 1, id: "hold", outcome: "ok", durationMs: 1000 }),
      ev("run.finished", 3100, { outcome: "ok", exitCode: 0, durationMs: 3100, committed: false, to: "hold" }),
    ]);
    const input = { lock: undefined, now: at(4000), host: "here", isAlive: () => false, runbook: "rb.yaml" };
    expect(runnerVerdict({ ...input, model: toHold }).next).toBe("syncbook run rb.yaml --resume");
    expect(runnerVerdict({ ...input, model: toHold, passedOver }).next).toBe(po + abort);
    // its runner gone: the same
    expect(runnerVerdict({ ...input, model: killedModel(), passedOver }).next).toBe(po + abort);
    // a refused --resume first, as status says it
    expect(runnerVerdict({ ...input, model: toHold, passedOver, resumeRefused: true }).next).toMatch(
      /^syncbook status rb\.yaml {3}\(a --resume is refused/,
    );
    // called off: its command, no --abort again after the abort
    const calledOff = killedModel([
      ev("run.finished", 3100, {
        outcome: "failed",
        exitCode: 1,
        durationMs: 3100,
        committed: false,
        aborted: true,
        calledOff: true,
      }),
    ]);
    expect(runnerVerdict({ ...input, model: calledOff, passedOver }).next).toMatch(
      /^syncbook run rb\.yaml --new-cutover /,
    );
    // a cutover that ended ok and committed: its command alone (no --abort after a commit)
    const done = killedModel([
      ev("step.finished", 3000, { index: 1, id: "hold", outcome: "ok", durationMs: 1000 }),
      ev("step.started", 3100, { index: 2, id: "commit", kind: "commit", title: "commit" }),
      ev("step.finished", 3200, { index: 2, id: "commit", outcome: "ok", durationMs: 100 }),
      ev("run.finished", 3500, { outcome: "ok", exitCode: 0, durationMs: 3500, committed: true }),
    ]);
    expect(runnerVerdict({ ...input, model: done }).next).toBeUndefined();
    expect(runnerVerdict({ ...input, model: done, passedOver }).next).toBe(po);
    // a commit sent and refused by every instance: no --abort, as status has it (its commitSent; an
    // outside review: the page offered one where status did not)
    const refusedCommit = killedModel([
      ev("step.finished", 3000, { index: 1, id: "hold", outcome: "ok", durationMs: 1000 }),
      ev("step.started", 3100, { index: 2, id: "commit", kind: "commit", title: "commit" }),
      ...instances.flatMap((inst, k) => [
        ev("request.sent", 3110, {
          id: 90 + k,
          instance: inst,
          target: "service",
          method: "POST",
          path: "/api/v1/commit",
          body: {},
        }),
        ev("response.received", 3120, {
          id: 90 + k,
          instance: inst,
          target: "service",
          status: 200,
          ok: false,
          body: { success: false },
          error: `${inst.url}: commit refused: NotReady`,
          durationMs: 10,
        }),
      ]),
      ev("step.finished", 3200, { index: 2, id: "commit", outcome: "failed", durationMs: 100, error: "refused" }),
      ev("run.finished", 3500, { outcome: "failed", exitCode: 1, durationMs: 3500, committed: false }),
    ]);
    expect(refusedCommit.cutover.committed).toBe(false);
    expect(runnerVerdict({ ...input, model: refusedCommit, passedOver }).next).toBe(po);
  });

  it("finished ok and committed past a step after the commit that failed (continueOnError): --from that step", () => {
    const past = killedModel([
      ev("step.finished", 3000, { index: 1, id: "hold", outcome: "ok", durationMs: 1000 }),
      ev("step.started", 3100, { index: 2, id: "commit", kind: "commit", title: "commit" }),
      ev("step.finished", 3200, { index: 2, id: "commit", outcome: "ok", durationMs: 100 }),
      ev("step.started", 3300, { index: 3, id: "verify", kind: "verify", title: "verify" }),
      ev("step.finished", 3400, { index: 3, id: "verify", outcome: "failed", durationMs: 100, error: "timed out" }),
      ev("run.finished", 3500, { outcome: "ok", exitCode: 0, durationMs: 3500, committed: true }),
    ]);
    const v = ended(past);
    expect(v.state).toBe("finished");
    expect(v.alarm).toBe(false);
    expect(v.next).toBe("syncbook run rb.yaml --from verify   (step verify failed, and the run went on past it)");
  });

  it("a --from run that continued the committed cutover and died before it sent anything: the same --from, never --resume (it would pass that journal over for a finished run)", () => {
    const first = [
      ev("step.finished", 3000, { index: 1, id: "hold", outcome: "ok", durationMs: 1000 }),
      ev("step.started", 3100, { index: 2, id: "commit", kind: "commit", title: "commit" }),
      ev("step.finished", 3200, { index: 2, id: "commit", outcome: "ok", durationMs: 100 }),
      ev("step.started", 3300, { index: 3, id: "verify", kind: "verify", title: "verify" }),
      ev("step.finished", 3400, { index: 3, id: "verify", outcome: "failed", durationMs: 100, error: "timed out" }),
      ev("run.finished", 3500, { outcome: "ok", exitCode: 0, durationMs: 3500, committed: true }),
    ];
    const from = (acts: RunEvent[]) =>
      killedModel([
        ...first,
        ev("run.started", 5000, {
          runbook: "rb",
          file: "rb.yaml",
          hash: "sha256:ab",
          mode: "run",
          instances,
          steps,
          carried: { from: "/j/one.jsonl", writesStopped: true, commitSent: true, commitAccepted: true },
        }),
        ev("step.skipped", 5001, { index: 0, id: "stop", reason: "before --from" }),
        ev("step.started", 5100, { index: 3, id: "verify", kind: "verify", title: "verify" }),
        ...acts,
      ]);
    const dead = (model: ReturnType<typeof killedModel>) =>
      runnerVerdict({ model, lock, now: at(9000), host: "here", isAlive: () => false, runbook: "rb.yaml" });
    const idle = dead(from([]));
    expect(idle.state).toBe("dead");
    expect(idle.next).toBe(
      "syncbook run rb.yaml --from verify   (the run that died sent nothing and ran no hook: --resume would pass it over)",
    );
    // once it sent writesOff its journal is the one --resume continues
    const sent = from([
      ev("request.sent", 5200, { id: 9, target: "verifier", method: "POST", path: "/api/v1/writesOff" }),
    ]);
    expect(dead(sent).next).toBe("syncbook run rb.yaml --resume");
    const hooked = from([ev("hook.started", 5200, { index: 3, id: "verify", use: "shell", undo: false })]);
    expect(dead(hooked).next).toBe("syncbook run rb.yaml --resume");
    // a --from continuation of a run that did not finish (a split commit's --from commit --only):
    // --resume continues that run, and keeps what its command line said
    const unfinished = killedModel([
      ev("run.started", 5000, {
        runbook: "rb",
        file: "rb.yaml",
        hash: "sha256:ab",
        mode: "run",
        instances,
        steps,
        carried: { from: "/j/one.jsonl", writesStopped: true, commitSent: true, commitAccepted: false },
      }),
      ev("step.started", 5100, { index: 2, id: "commit", kind: "commit", title: "commit" }),
    ]);
    expect(dead(unfinished).next).toBe("syncbook run rb.yaml --resume");
    // a --resume that died before it sent anything: --resume (nothing carried)
    const resumed = killedModel([
      ev("run.started", 5000, { runbook: "rb", file: "rb.yaml", hash: "sha256:ab", mode: "resume", instances, steps }),
      ev("step.started", 5100, { index: 1, id: "hold", kind: "hook", title: "hold" }),
    ]);
    expect(dead(resumed).next).toBe("syncbook run rb.yaml --resume");
  });
});

describe("stateLeft", () => {
  // an adversarial run: a runner killed with a reverse on its way after the commit; status said it may
  // have reached the fleet, the page said "committed" alone
  it("a reverse whose step did not end and that may have reached an instance is said, as status says it", () => {
    const m = killedModel([
      // this cutover's commit (a fleet read COMMITTED without one is said off record)
      ev("commit.sent", 2000, { index: 2, id: "commit", instances: ["a", "b"], skewMs: 1 }),
      ev("progress.sampled", 2100, { instance: instances[0], progress: { state: "COMMITTED" } }),
      ev("progress.sampled", 2100, { instance: instances[1], progress: { state: "COMMITTED" } }),
      ev("request.sent", 2500, {
        id: 7,
        instance: instances[0],
        target: "service",
        method: "POST",
        path: "/api/v1/reverse",
      }),
    ]);
    expect(m.cutover).toMatchObject({ committed: true, reverseInDoubt: { id: "hold", instances: ["a"] } });
    expect(stateLeft(m, at(62_500))).toEqual(
      expect.arrayContaining(["committed", `${reverseInDoubtWords("hold")} (sent to a)`]),
    );
  });

  it("a commit sent to part of the fleet is said with its count", () => {
    const m = killedModel([ev("commit.sent", 2500, { index: 2, id: "commit", instances: ["a"], skewMs: 1 })]);
    expect(stateLeft(m, at(62_500))).toContain(
      "commit sent to 1 of 2 instances (1m 00s ago); not by this cutover to b",
    );
  });

  // a trial: a split commit finished with --from commit --only <the rest> said "commit sent to 1 of
  // 3 instances", the last fan-out's count, while this cutover's commits had reached every instance
  it("a commit finished by a second fan-out to the rest is said as reaching every instance", () => {
    const m = killedModel([
      ev("commit.sent", 2500, { index: 2, id: "commit", instances: ["a"], skewMs: 1 }),
      ev("commit.sent", 9000, { index: 2, id: "commit", instances: ["b"], skewMs: 1 }),
    ]);
    expect(m.cutover.committed).toBe(true);
    expect(stateLeft(m, at(62_500)).some((l) => l.startsWith("commit sent to"))).toBe(false);
  });

  // an adversarial run: the runner killed with the commit on its way, the page said "commit not sent"
  // while status said "no --abort: a commit was sent", and the fleet went COMMITTED
  it("a commit whose requests left but whose fan-out never ended (the runner died): sent, it may have taken effect", () => {
    const both = killedModel([commitStep(), req(2500, 1, 0), req(2501, 2, 1)]);
    expect(both.commitRequested).toEqual({
      at: at(2500),
      run: 1,
      instances: ["a", "b"],
      answers: { a: "pending", b: "pending" },
    });
    // its run has not ended: on its way as far as the journal tells; whether its runner lives is
    // the watch's to say (an outside review: every healthy commit read "in doubt", its runner "died")
    expect(both.cutover.committed).toBe(false);
    expect(both.cutover.commitInDoubt).toBeUndefined();
    expect(stateLeft(both, at(62_500), false)).toContain(
      "commit sent 1m 00s ago, on its way: a, b not answered yet (commit blocks until every instance has it)",
    );
    const alive = runnerVerdict({ model: both, lock, now: at(3000), host: "here", isAlive: () => true });
    expect(alive.state).toBe("running");
    expect(alive.commitInDoubt).toBeUndefined();
    expect(alive.left.join("\n")).not.toMatch(/died|in doubt/);
    const gone = runnerVerdict({ model: both, lock, now: at(3000), host: "here", isAlive: () => false });
    expect(gone.state).toBe("dead");
    expect(gone.commitInDoubt).toBe(true);
    const left = stateLeft(both, at(62_500));
    expect(left).toContain(
      "commit sent 1m 00s ago, its fan-out never ended (its runner died with it on its way): it may have taken effect",
    );
    expect(left).not.toContain("commit not sent");
    const one = killedModel([commitStep(), req(2500, 1, 0)]);
    expect(stateLeft(one, at(62_500))).toContain(
      "commit sent to 1 of 2 instances 1m 00s ago, its fan-out never ended (its runner died with it on its way): it may have taken effect",
    );
    // and "ready to commit?" is past the question for the instances it went to
    const live = {
      at: at(62_500),
      instances: [
        { index: 0, label: "a", url: "http://a", state: "RUNNING", canCommit: true, answeredAt: at(62_500) },
        { index: 1, label: "b", url: "http://b", state: "RUNNING", canCommit: true, answeredAt: at(62_500) },
      ],
      copy: both.fleet.copy,
    } as unknown as Parameters<typeof buildState>[0]["live"];
    const pageInput = {
      now: at(62_500),
      folder: "f",
      journals: [],
      skippedLines: 0,
      model: one,
      live,
      runner: runnerVerdict({ model: one, lock: undefined, now: at(62_500), host: "here", isAlive: () => false }),
      redact: (x: string) => x,
    };
    const page = buildState(pageInput);
    expect(page.readiness.map((r) => [r.instance, r.past])).toEqual([
      ["a", "commit sent"],
      ["b", undefined],
    ]);
    // the verdict, as the report asks it (earned.ts `verification`): no verify step here; said in
    // capitals too, since the commit may have taken effect (`verificationShown`)
    expect(page.verification).toEqual({
      verified: false,
      why: "the runbook has no `verify` step",
      text: "not verified (the runbook has no `verify` step)",
      headline: "NOT VERIFIED",
    });
    // a verify that passed on this cutover's result (the model's `cutover.verified`), a filter's too
    const verified = { ...one, cutover: { ...one.cutover, verified: { at: at(3000), step: "v", filter: '{"a":1}' } } };
    expect(buildState({ ...pageInput, model: verified }).verification).toMatchObject({
      verified: true,
      filter: '{"a":1}',
      text: expect.stringMatching(/^verified \(only the documents the check's filter \{"a":1\} matches\)$/),
    });
    // a verify step that failed (the model's `cutover.verifyFailed`): the why names it, as the
    // report's does; the page said only "no `verify` step passed" where the run named the refusal
    const refused = {
      ...one,
      cutover: {
        ...one.cutover,
        verifyFailed: { step: 9, id: "verify", error: "not verified: the verifier skipped DDL" },
      },
    };
    const why =
      'no `verify` step passed on this cutover\'s verification result: step 9 "verify" failed: not verified: the verifier skipped DDL';
    expect(buildState({ ...pageInput, model: refused }).verification).toEqual({
      verified: false,
      why,
      text: `not verified (${why})`,
      headline: "NOT VERIFIED",
    });
    // another endpoint, the verifier, or a GET: no commit
    const other = killedModel([
      ev("request.sent", 2500, {
        id: 1,
        instance: instances[0],
        target: "service",
        method: "POST",
        path: "/api/v1/start",
        body: {},
      }),
      ev("request.sent", 2500, { id: 2, target: "verifier", method: "POST", path: "/api/v1/commit", body: {} }),
    ]);
    expect(other.commitRequested).toBeUndefined();
    expect(stateLeft(other, at(62_500))).toContain("commit not sent");
    // the fan-out ended: its own words
    const ended = killedModel([
      commitStep(),
      req(2500, 1, 0),
      req(2501, 2, 1),
      ev("commit.sent", 2600, { index: 2, id: "commit", instances: ["a", "b"], skewMs: 1 }),
    ]);
    // every instance took it (commit.sent): committed, whatever COMMITTED is seen yet (an outside
    // review: a runner killed after its fan-out ended left the page "not committed")
    expect(ended.cutover).toMatchObject({ committed: true, commitAccepted: true });
    expect(stateLeft(ended, at(62_600))).toContain("committed");

    // after a reverse that took effect, the commits before it were the other sync's: the new sync's
    // commit is not sent, and no instance is past the question (the page said "past it: commit sent")
    const reversed = killedModel([
      commitStep(),
      req(2500, 1, 0),
      req(2501, 2, 1),
      ev("commit.sent", 2600, { index: 2, id: "commit", instances: ["a", "b"], skewMs: 1 }),
      ev("step.finished", 2700, { index: 2, id: "commit", outcome: "ok", durationMs: 300 }),
      ev("step.started", 2800, { index: 3, id: "back", kind: "reverse", title: "back" }),
      ev("step.finished", 2900, { index: 3, id: "back", outcome: "ok", durationMs: 100 }),
    ]);
    expect(stateLeft(reversed, at(62_900))).toEqual(
      expect.arrayContaining(["reversed (step back)", "commit not sent"]),
    );
    const afterReverse = buildState({
      now: at(62_900),
      folder: "f",
      journals: [],
      skippedLines: 0,
      model: reversed,
      live,
      runner: runnerVerdict({ model: reversed, lock: undefined, now: at(62_900), host: "here", isAlive: () => false }),
      redact: (x) => x,
    });
    expect(afterReverse.readiness.map((r) => [r.instance, r.past])).toEqual([
      ["a", undefined],
      ["b", undefined],
    ]);
    // the new sync's commit on its way: its own
    const again = killedModel([
      commitStep(),
      req(2500, 1, 0),
      ev("commit.sent", 2600, { index: 2, id: "commit", instances: ["a", "b"], skewMs: 1 }),
      ev("step.finished", 2700, { index: 2, id: "commit", outcome: "ok", durationMs: 300 }),
      ev("step.started", 2800, { index: 3, id: "back", kind: "reverse", title: "back" }),
      ev("step.finished", 2900, { index: 3, id: "back", outcome: "ok", durationMs: 100 }),
      ev("step.started", 3000, { index: 4, id: "commit2", kind: "commit", title: "commit2" }),
      req(3100, 3, 1),
    ]);
    expect(stateLeft(again, at(63_100))).toContain(
      "commit sent to 1 of 2 instances 1m 00s ago, its fan-out never ended (its runner died with it on its way): it may have taken effect",
    );
  });
});

describe("a commit whose fan-out ended without a commit.sent (the step failed)", () => {
  const lost = (at: number, id: number, i: number) =>
    ev("response.received", at, {
      id,
      instance: instances[i],
      target: "service",
      ok: false,
      error: `http://${instances[i]!.name}: commit failed: connection failed: other side closed (UND_ERR_SOCKET)`,
      errorKind: "transport",
      durationMs: 5,
    });
  const refused = (at: number, id: number, i: number) =>
    ev("response.received", at, {
      id,
      instance: instances[i],
      target: "service",
      status: 200,
      ok: false,
      body: { success: false, error: "InvalidStateTransition", errorDescription: "no" },
      error: `http://${instances[i]!.name}: commit refused: InvalidStateTransition`,
      errorKind: "service",
      durationMs: 5,
    });
  const failedAt = (ms: number) => [
    ev("step.finished", ms, { index: 2, id: "commit", outcome: "failed", durationMs: 100 }),
    ev("run.finished", ms + 1, { outcome: "failed", exitCode: 1, committed: false, durationMs: ms }),
  ];

  // a run against the simulator (late-effect on commit): answers lost, the run ended failed, and the
  // page said "its runner died with it on its way" and its cutover "not committed"
  it("answers lost, the run ended: in doubt, the instances named, no runner said dead", () => {
    const m = killedModel([
      commitStep(),
      req(2500, 1, 0),
      req(2501, 2, 1),
      lost(2510, 1, 0),
      lost(2511, 2, 1),
      ...failedAt(12_000),
    ]);
    expect(m.cutover).toMatchObject({ committed: false, commitInDoubt: { instances: ["a", "b"] } });
    const left = stateLeft(m, at(62_500));
    expect(left).toContain(
      "commit sent 1m 00s ago, in doubt: a, b gave no usable answer and no read has shown it taking effect",
    );
    expect(left.join("\n")).not.toMatch(/runner died|commit not sent/);
  });

  // a review: a split's first fan-out journals no commit.sent, and a later run's completion reached
  // only the rest; the page said "commit sent to 1 of 2 instances; not by this cutover to a"
  it("a split accepted by a, completed on b by a later run: the commit reached every instance", () => {
    const ok = (ms: number, id: number, i: number) =>
      ev("response.received", ms, {
        id,
        instance: instances[i],
        target: "service",
        status: 200,
        ok: true,
        body: { success: true },
        durationMs: 5,
      });
    const m = killedModel([
      commitStep(),
      req(2500, 1, 0),
      req(2501, 2, 1),
      ok(2510, 1, 0),
      refused(2511, 2, 1),
      ...failedAt(3000),
      ev("run.started", 5000, {
        runbook: "rb",
        file: "rb.yaml",
        hash: "sha256:ab",
        mode: "resume",
        instances,
        steps,
        by: { user: "op", host: "h", pid: 2 },
      }),
      ev("step.started", 5100, { index: 2, id: "commit", kind: "commit", title: "commit" }),
      req(5200, 3, 1),
      ok(5210, 3, 1),
      ev("commit.sent", 5220, { index: 2, id: "commit", instances: ["b"], skewMs: 1 }),
    ]);
    expect(m.cutover.commitAcceptedBy).toEqual(["a", "b"]);
    expect(stateLeft(m, at(62_500)).some((l) => l.startsWith("commit sent to"))).toBe(false);
  });

  it("refused by every instance it reached: it took no effect, no doubt", () => {
    const m = killedModel([
      commitStep(),
      req(2500, 1, 0),
      req(2501, 2, 1),
      refused(2510, 1, 0),
      refused(2511, 2, 1),
      ...failedAt(3000),
    ]);
    expect(m.cutover.committed).toBe(false);
    expect(m.cutover.commitInDoubt).toBeUndefined();
    expect(m.commitRequested?.answers).toEqual({ a: "error", b: "error" });
    expect(stateLeft(m, at(62_500))).toContain(
      "commit sent 1m 00s ago, refused by every instance it reached: it took no effect",
    );
    // one refused, one lost: the lost one may hold it
    const one = killedModel([
      commitStep(),
      req(2500, 1, 0),
      req(2501, 2, 1),
      refused(2510, 1, 0),
      lost(2511, 2, 1),
      ...failedAt(3000),
    ]);
    expect(one.cutover.commitInDoubt).toEqual({ at: at(2500), instances: ["b"] });
  });

  // the journal's rule (src/run/earlier.ts evidenceOf): an instance that accepted it committed it
  it("accepted by an instance, the runner killed before the fan-out ended: committed", () => {
    const ok = ev("response.received", 2510, {
      id: 1,
      instance: instances[0],
      target: "service",
      status: 200,
      ok: true,
      body: { success: true },
      durationMs: 5,
    });
    const m = killedModel([commitStep(), req(2500, 1, 0), req(2501, 2, 1), ok]);
    expect(m.cutover.committed).toBe(true);
    expect(m.cutover.commitInDoubt).toBeUndefined();
    expect(stateLeft(m, at(62_500))).toContain("committed");
  });

  it("a run that said so at its end (a --from run that carried the commit): in doubt, by its word", () => {
    const m = killedModel([
      ev("run.finished", 3000, { outcome: "ok", exitCode: 0, committed: false, commitInDoubt: true, durationMs: 3000 }),
    ]);
    expect(m.runs[0]!.commitInDoubt).toBe(true);
    expect(m.cutover.commitInDoubt).toEqual({ at: at(3000), instances: [] });
    expect(stateLeft(m, at(62_500))).toContain(
      "commit in doubt: sent, not known to have taken effect (a run of this cutover said so at its end)",
    );
    // a reverse that took effect after it: the new sync's commit is not sent
    const reversed = killedModel([
      ev("run.finished", 3000, { outcome: "ok", exitCode: 0, committed: false, commitInDoubt: true, durationMs: 3000 }),
      ev("run.started", 4000, { runbook: "rb", file: "rb.yaml", hash: "sha256:ab", mode: "resume", instances, steps }),
      ev("step.started", 4100, { index: 3, id: "back", kind: "reverse", title: "back" }),
      ev("step.finished", 4200, { index: 3, id: "back", outcome: "ok", durationMs: 100 }),
    ]);
    expect(reversed.cutover.commitInDoubt).toBeUndefined();
  });
});

describe("a run that was an --abort", () => {
  // the page said "run 2 ended failed: aborted by the operator (--abort), but …" of an abort that
  // could not undo a write stop with no `undo:`, where the report's title says ABORTED, NOT
  // EVERYTHING UNDONE: one wording (`runEndWords`) for the page's runner and the report's runs
  /** An --abort run of the killed run above that hands the write stop to a person, ended with `finished`. */
  const abortEvents = (finished: Record<string, unknown>): RunEvent[] => [
    ev("run.started", 5000, {
      runbook: "rb",
      file: "rb.yaml",
      hash: "sha256:ab",
      mode: "resume",
      abort: true,
      instances,
      steps,
    }),
    ev("decision", 5100, { index: 0, id: "stop", kind: "undo", ok: false, check: "by-hand", reason: "no undo:" }),
    ev("run.finished", 5300, {
      outcome: "failed",
      exitCode: 1,
      durationMs: 300,
      committed: false,
      aborted: true,
      message: "m",
      ...finished,
    }),
  ];
  const abortRun = (finished: Record<string, unknown>) => killedModel(abortEvents(finished));
  // a review's "found and left": after the hand-off a resume that died before it stopped writes
  // again left no writes state at all: no alarm words of writes, and a dead-man page not critical
  it("a resume after a hand-off, killed before it stopped writes again: writes may be stopped, an alarm, a critical page", () => {
    const handed = abortRun({ undoByHand: "stop", writes: "stopped" });
    expect(handed.writesLeft).toBe("stopped");
    const resumed = killedModel([
      // the stop seen to hold (killedModel's stop hook alone leaves writes "may be stopped")
      ev("window.opened", 2100, { index: 0, id: "stop", openedAt: T0 + 1000 }),
      ...abortEvents({ undoByHand: "stop", writes: "stopped" }),
      ev("run.started", 9000, { runbook: "rb", file: "rb.yaml", hash: "sha256:ab", mode: "resume", instances, steps }),
    ]);
    expect(resumed.writesLeft).toBe("may-be-stopped");
    const v = runnerVerdict({
      model: resumed,
      lock,
      now: at(200_000),
      host: "here",
      isAlive: () => false,
      runbook: "rb.yaml",
    });
    expect(v.state).toBe("dead");
    expect(v.alarm).toBe(true);
    expect(v.left).toContain("writes may be stopped");
    expect(runnerLost(v, resumed, at(200_000)).critical).toBe(true);
  });

  it('is said in the abort\'s own headline, not "ended failed"; one called off is said so', () => {
    const v = ended(abortRun({ undoByHand: "stop", writes: "stopped" }));
    expect(v.headline).toBe("run 2 ended ABORTED, NOT EVERYTHING UNDONE: m");
    expect(v.alarm).toBe(true);
    expect(ended(abortRun({ undoKeptOff: true, writes: "stopped" })).headline).toBe(
      "run 2 ended ABORTED, NOTHING UNDONE: WRITES STAY STOPPED: m",
    );
    expect(runEndWords({ ended: "called-off", outcome: "failed", abort: true, exitCode: 0 })).toBe(
      "called off (--abort)",
    );
    // a run that is no --abort keeps its outcome
    expect(runEndWords({ outcome: "failed", exitCode: 1 })).toBe("failed");
    expect(runEndWords({ outcome: "interrupted", abort: true, exitCode: 130 })).toBe("interrupted");
  });
});

describe("the last step of a run that ended without its end", () => {
  // an adversarial read: after `--abort` the page said "last step: 2 hold, running" while status
  // said "started, never ended (cut off)": a run that is over has no running step
  it("is cut off, not running, once a later run (an --abort) started over it; the dead run's own page says where it was", () => {
    const aborted = killedModel([
      ev("run.started", 5000, {
        runbook: "rb",
        file: "rb.yaml",
        hash: "sha256:ab",
        mode: "resume",
        abort: true,
        instances,
        steps,
        by: { user: "op", host: "h", pid: 2 },
      }),
      ev("hook.started", 5100, { index: 0, id: "stop", use: "sim-writes", undo: true }),
      ev("hook.finished", 5200, { index: 0, id: "stop", use: "sim-writes", undo: true, ok: true, durationMs: 100 }),
      ev("run.finished", 5300, {
        outcome: "failed",
        exitCode: 0,
        durationMs: 300,
        committed: false,
        aborted: true,
        message: "aborted by the operator (--abort)",
      }),
    ]);
    // the model keeps "running" (started, no end event) and says nothing runs now
    expect(aborted.steps[1]?.outcome).toBe("running");
    expect(aborted.current).toBeUndefined();
    const v = ended(aborted);
    expect(v.state).toBe("finished");
    expect(v.left).toContain("last step: 2 hold, started, never ended (cut off)");
    expect(v.left.join(" · ")).not.toMatch(/running/);
    // called off: the way on the abort's own end and status name (the page named none)
    expect(v.next).toBe(`syncbook run rb.yaml --resume   (${CALLED_OFF_RESUME})`);
    // the runbook edited since: both said, in one parenthesis
    const edited = runnerVerdict({
      model: aborted,
      lock: undefined,
      now: T0 + 4000,
      host: "here",
      isAlive: () => false,
      runbook: "rb.yaml",
      runbookHash: "sha256:other",
    });
    expect(edited.next).toBe(`syncbook run rb.yaml --resume   (${RUNBOOK_CHANGED_NOTE}; ${CALLED_OFF_RESUME})`);
    // a later run alive, not at that step yet (a --resume still reading the fleet): not running either
    const starting = killedModel([
      ev("run.started", 5000, { runbook: "rb", file: "rb.yaml", hash: "sha256:ab", mode: "resume", instances, steps }),
    ]);
    expect(stateLeft(starting, at(5000))).toContain("last step: 2 hold, started, never ended (cut off)");
    // its own run, dead and not resumed: the state it left is in that step
    expect(stateLeft(killedModel(), at(5000))).toContain("in step 2 hold (hook)");
  });
});

describe("the way on carries the --var values its runs decided their `when`s with (a run with others is refused)", () => {
  // a rollback under `when: "${vars.rollback}"` (two steps), and a gate after; a model of the runs
  const whenSteps = [
    { index: 0, id: "stop", kind: "stopWrites", title: "stop" },
    { index: 1, id: "reverse-it", kind: "reverse", title: "reverse-it", when: "rollback" },
    { index: 2, id: "restop", kind: "stopWrites", title: "restop", when: "rollback" },
    { index: 3, id: "commit", kind: "commit", title: "commit" },
    { index: 4, id: "gate", kind: "hook", title: "gate" },
  ];
  const started = (at0: number, extra: Record<string, unknown> = {}) =>
    ev("run.started", at0, {
      runbook: "rb",
      file: "rb.yaml",
      hash: "sha256:ab",
      mode: "run",
      instances,
      steps: whenSteps,
      by: { user: "op", host: "h", pid: 1 },
      ...extra,
    });
  const ran = (at0: number, index: number, outcome = "ok") => {
    const st = whenSteps[index]!;
    return [
      ev("step.started", at0, { index, id: st.id, kind: st.kind, title: st.title }),
      ev("step.finished", at0 + 10, {
        index,
        id: st.id,
        outcome,
        durationMs: 10,
        ...(outcome === "ok" ? {} : { error: "boom" }),
      }),
    ];
  };
  const skipped = (at0: number, index: number, reason = "when: false") =>
    ev("step.skipped", at0, { index, id: whenSteps[index]!.id, reason });
  const modelOf = (es: RunEvent[]) => {
    const f = new CutoverFold({ traits: traitsOf });
    for (const e of es) f.apply(e);
    return f.view(es.at(-1)!.at);
  };
  const finished = (at0: number) =>
    ev("run.finished", at0, { outcome: "failed", exitCode: 1, durationMs: at0, committed: false });
  const verdictInput = (model: ReturnType<typeof modelOf>, runbookHash?: string): RunnerInput => ({
    model,
    lock: undefined,
    now: at(10_000),
    host: "here",
    isAlive: () => false,
    runbook: "rb.yaml",
    ...(runbookHash !== undefined ? { runbookHash } : {}),
  });
  const verdict = (model: ReturnType<typeof modelOf>, runbookHash?: string) =>
    runnerVerdict(verdictInput(model, runbookHash));

  it("skipped by its `when`: false; ran: true; each variable once", () => {
    const without = modelOf([
      started(0),
      ...ran(100, 0),
      skipped(200, 1),
      skipped(210, 2),
      ...ran(300, 4, "failed"),
      finished(400),
    ]);
    expect(without.whenVars).toEqual(["rollback=false"]);
    expect(without.steps.map((s) => s.when)).toEqual([undefined, "rollback", "rollback", undefined, undefined]);
    expect(verdict(without).next).toBe("syncbook run rb.yaml --resume --var rollback=false");
    const withIt = modelOf([
      started(0),
      ...ran(100, 0),
      ...ran(200, 1),
      ...ran(300, 2),
      ...ran(400, 4, "failed"),
      finished(500),
    ]);
    expect(withIt.whenVars).toEqual(["rollback=true"]);
    expect(verdict(withIt).next).toBe("syncbook run rb.yaml --resume --var rollback=true");
    // a step that failed or was interrupted ran too; so did one still running, or cut off by a kill
    // (its runner killed with a reverse on its way: the resume must carry the value it ran on)
    expect(modelOf([started(0), ...ran(100, 1, "interrupted")]).whenVars).toEqual(["rollback=true"]);
    expect(
      modelOf([started(0), ev("step.started", 100, { index: 1, id: "reverse-it", kind: "reverse", title: "x" })])
        .whenVars,
    ).toEqual(["rollback=true"]);
    // skipped for another reason (`--only`, a resume's journal): no decision
    expect(modelOf([started(0), skipped(100, 1, "not in --only"), skipped(110, 2, "not in --only")]).whenVars).toEqual(
      [],
    );
  });

  it("the last run's other --var values follow: its hooks' calls, and their undos, were made of them (a secret one left out)", () => {
    const given = { vars: { rollback: false, switch: "http://live", pw: "***" }, given: ["switch", "rollback", "pw"] };
    const m = modelOf([started(0, given), ...ran(100, 0), skipped(200, 1), skipped(210, 2), finished(300)]);
    expect(m.whenVars).toEqual(["rollback=false"]);
    expect(m.givenVars).toEqual(["switch=http://live"]);
    expect(verdict(m).next).toBe("syncbook run rb.yaml --resume --var rollback=false --var switch=http://live");
    // the last run's: a resume given none repeats none
    const later = modelOf([started(0, given), ...ran(100, 0), finished(200), started(300), finished(400)]);
    expect(later.givenVars).toEqual([]);
    // unless it said the cutover's (src/run/earlier.ts `cutoverValuesFrom`): a --from whose steps
    // read no switch keeps the cutover's, and its way on repeats it
    const kept = modelOf([
      started(0, given),
      finished(200),
      started(300, { vars: { switch: "http://default" }, cutoverVars: given.vars, cutoverGiven: ["switch"] }),
      finished(400),
    ]);
    expect(kept.givenVars).toEqual(["switch=http://live"]);
    // an --abort's values are not the cutover's (src/journal/state.ts reads them so): the page
    // offered the --resume without the cutover's switch after an --abort typed without it, and
    // that --resume was refused (an outside review)
    const aborted = modelOf([
      started(0, given),
      ...ran(100, 0),
      finished(200),
      started(300, { abort: true }),
      finished(400),
    ]);
    expect(aborted.givenVars).toEqual(["switch=http://live", "rollback=false"]);
    expect(aborted.cutoverValues).toEqual(given);
    // unless it says the cutover's: its fleet moved under --allow-changed-runbook (src/run/abort.ts),
    // and a way on with the old values read the old fleet before turning writes on (an outside review)
    const moved = modelOf([
      started(0, given),
      ...ran(100, 0),
      finished(200),
      started(300, { abort: true, cutoverVars: { ...given.vars, switch: "http://new" }, cutoverGiven: ["switch"] }),
      finished(400),
    ]);
    expect(moved.givenVars).toEqual(["switch=http://new"]);
    expect(moved.cutoverValues).toEqual({ vars: { ...given.vars, switch: "http://new" }, given: ["switch"] });
  });

  it("a variable the steps tell both ways of is left out: no value is right for both; steps without a `when` variable tell nothing", () => {
    const both = modelOf([started(0), ...ran(100, 1), skipped(200, 2), finished(300)]);
    expect(both.whenVars).toEqual([]);
    expect(verdict(both).next).toBe("syncbook run rb.yaml --resume");
    const none = modelOf([
      started(0, { steps: whenSteps.map(({ when: _w, ...st }) => st) }),
      skipped(100, 1),
      finished(200),
    ]);
    expect(none.whenVars).toEqual([]);
  });

  it("a dead runner's --resume, a silent one's, and a --from carry them; a runbook changed since its journal is said, and --from gets --allow-changed-runbook", () => {
    const es = [started(0), ...ran(100, 0), skipped(200, 1), skipped(210, 2)];
    const dead = runnerVerdict({
      model: modelOf(es),
      lock,
      now: at(5000),
      host: "here",
      isAlive: () => false,
      runbook: "rb.yaml",
    });
    expect(dead.state).toBe("dead");
    expect(dead.next).toBe("syncbook run rb.yaml --resume --var rollback=false");
    const silent = runnerVerdict({
      model: modelOf([
        ...es,
        ev("step.started", 300, { index: 4, id: "gate", kind: "hook", title: "gate", timeoutMs: 1000 }),
      ]),
      lock: { ...lock, host: "elsewhere" },
      now: at(300 + 1000 + 30_001),
      host: "here",
      isAlive: () => true,
      runbook: "rb.yaml",
    });
    expect(silent.state).toBe("silent");
    expect(silent.next).toBe(
      "syncbook status rb.yaml   (then, if its process is gone: syncbook run rb.yaml --resume --var rollback=false)",
    );
    const failed = modelOf([...es, ...ran(300, 4, "failed"), finished(400)]);
    expect(verdict(failed, "sha256:ab").next).toBe("syncbook run rb.yaml --resume --var rollback=false");
    expect(verdict(failed, "sha256:cd").next).toBe(
      "syncbook run rb.yaml --resume --var rollback=false   (the runbook changed since this journal was written: --resume refuses it unless --allow-changed-runbook, only if the change cannot affect the steps already run)",
    );
    // committed, past a failed step after the commit (continueOnError): --from it, with the flag and the vars
    const past = modelOf([
      ...es,
      ...ran(250, 3),
      ...ran(300, 4, "failed"),
      ev("run.finished", 400, { outcome: "ok", exitCode: 0, durationMs: 400, committed: true }),
    ]);
    expect(verdict(past, "sha256:cd").next).toBe(
      "syncbook run rb.yaml --from gate --allow-changed-runbook --var rollback=false   (step gate failed, and the run went on past it)",
    );
    // given the runbook (`syncbook watch rb.yaml`), that --from names the values its steps read as
    // the cutover had them, a secret one masked and said so (src/run/earlier.ts `cutoverVarsFrom`):
    // the given ones alone left out a secret and an old default, which the flag read at the
    // runbook's value now, another fleet (the 17:01 session's note)
    const values = { vars: { rollback: false, switch: "http://old", pw: "***-west" }, given: ["pw"] };
    const withValues = modelOf([
      started(0, values),
      ...ran(100, 0),
      skipped(200, 1),
      skipped(210, 2),
      ...ran(250, 3),
      ...ran(300, 4, "failed"),
      ev("run.finished", 400, { outcome: "ok", exitCode: 0, durationMs: 400, committed: true }),
    ]);
    expect(withValues.cutoverValues).toEqual(values);
    const asked: unknown[] = [];
    const goOnVars: RunnerInput["goOnVars"] = (known, from) => {
      asked.push([known, from]);
      return { vars: [...(known.decidedVars ?? []), "pw=***-west", "switch=http://old"], note: MASKED_VAR_WORDS };
    };
    const kept = runnerVerdict({ ...verdictInput(withValues, "sha256:cd"), goOnVars });
    // the step by its id: the runbook as edited may have it elsewhere
    expect(asked).toEqual([[{ decidedVars: ["rollback=false"], cutoverValues: values }, "gate"]]);
    expect(kept.next).toBe(
      "syncbook run rb.yaml --from gate --allow-changed-runbook --var rollback=false --var 'pw=***-west' --var switch=http://old   (step gate failed, and the run went on past it; a --var shown with *** holds a secret: set each as that run did)",
    );
    // the runbook as its journal ran it: no flag, the values a run of the cutover is checked against
    asked.length = 0;
    expect(runnerVerdict({ ...verdictInput(withValues, "sha256:ab"), goOnVars }).next).toBe(
      "syncbook run rb.yaml --from gate --var rollback=false   (step gate failed, and the run went on past it)",
    );
    expect(asked).toEqual([]);
  });
});

// an adversarial run: the stop's undo failed (and, apart, a forced exit cut it off); status and the
// run's end offered --abort first, to retry it, and the page --resume alone, which stops writes again
// and goes on to commit
describe("the page's way on after an undo of the write stop that failed or was cut off", () => {
  const failing = (undoEnd: RunEvent[]) =>
    killedModel([
      ev("step.finished", 2500, { index: 1, id: "hold", outcome: "failed", durationMs: 500, error: "x" }),
      ev("hook.started", 2600, { index: 0, id: "stop", use: "sim-writes", undo: true }),
      ...undoEnd,
    ]);
  const abort =
    "syncbook run rb.yaml --abort   (retries the undos still owed, last first (step 1 stop: turns writes back on) and calls the cutover off; nothing is sent to the sync service; or --resume: goes on with the cutover once what failed is fixed: step 1 stop runs again (writes stay stopped), then the step that failed and on; the failed undo is not retried)";
  it("the undo failed and the run ended: --abort first", () => {
    const m = failing([
      ev("hook.finished", 2700, {
        index: 0,
        id: "stop",
        use: "sim-writes",
        undo: true,
        ok: false,
        durationMs: 100,
        error: "refused",
      }),
      ev("run.finished", 2800, { outcome: "failed", committed: false, durationMs: 2800 }),
    ]);
    expect(ended(m).next).toBe(abort);
  });
  it("the runner died in the undo: --abort first", () => {
    const v = runnerVerdict({
      model: failing([]),
      lock,
      now: at(3000),
      host: "here",
      isAlive: () => false,
      runbook: "rb.yaml",
    });
    expect(v.state).toBe("dead");
    expect(v.next).toBe(abort);
  });
  it("the undo succeeded, or a stop ran again after it: --resume, as before", () => {
    const undone = failing([
      ev("hook.finished", 2700, { index: 0, id: "stop", use: "sim-writes", undo: true, ok: true, durationMs: 100 }),
      ev("run.finished", 2800, { outcome: "failed", committed: false, durationMs: 2800 }),
    ]);
    expect(ended(undone).next).toBe("syncbook run rb.yaml --resume");
    const stoppedAgain = failing([
      ev("hook.finished", 2700, {
        index: 0,
        id: "stop",
        use: "sim-writes",
        undo: true,
        ok: false,
        durationMs: 100,
        error: "refused",
      }),
      ev("hook.started", 2750, { index: 0, id: "stop", use: "sim-writes", undo: false }),
      ev("hook.finished", 2760, { index: 0, id: "stop", use: "sim-writes", undo: false, ok: true, durationMs: 10 }),
      ev("run.finished", 2800, { outcome: "failed", committed: false, durationMs: 2800 }),
    ]);
    expect(ended(stoppedAgain).next).toBe("syncbook run rb.yaml --resume");
  });
});

// the commit refused for want of a write stop (its `writes-stopped` interlock: the stopWrites step's
// check said writes flow): a plain --resume meets the same refusal; the page offers the stop again,
// or the cutover called off, as the run's end and status do (it offered a plain --resume)
describe("after commit's writes-stopped interlock refused it", () => {
  const refused = (more: RunEvent[] = []) =>
    killedModel([
      ev("step.finished", 2300, { index: 1, id: "hold", outcome: "ok", durationMs: 300 }),
      commitStep(),
      ev("decision", 2500, {
        index: 2,
        id: "commit",
        kind: "interlock",
        ok: false,
        check: "writes-stopped",
        reason: "the stopWrites check says writes are not stopped",
      }),
      ev("step.finished", 2600, { index: 2, id: "commit", outcome: "failed", durationMs: 200, error: "refused" }),
      ...more,
    ]);
  it("ended: --from the stop, or --abort", () => {
    const v = ended(
      refused([ev("run.finished", 2700, { outcome: "failed", exitCode: 3, committed: false, durationMs: 2700 })]),
    );
    expect(v.state).toBe("finished");
    expect(v.next).toBe(
      "syncbook run rb.yaml --from stop   (stops writes again, then goes on to the commit (its writes-stopped interlock refused it; --resume would meet the same refusal)); or syncbook run rb.yaml --abort   (calls the cutover off: runs the undos still owed, last first (a write stop's undo turns writes back on); nothing is sent to the sync service)",
    );
  });
  it("killed after it: the same; neither where a commit was accepted", () => {
    const v = ended(refused());
    expect(v.state).toBe("dead");
    expect(v.next).toMatch(/^syncbook run rb\.yaml --from stop {3}\(.*\); or syncbook run rb\.yaml --abort {3}/);
    const accepted = ended(
      refused([
        req(2650, 9, 0),
        ev("response.received", 2660, { id: 9, instance: instances[0], status: 200, body: { success: true } }),
      ]),
    );
    // a commit may be on the fleet (a split): its own way on, not the stop again nor --abort (a review)
    expect(accepted.next).toBe("syncbook run rb.yaml --resume");
  });
  it("a refusal of another check, or an earlier run's: as before", () => {
    const other = ended(
      killedModel([
        ev("decision", 2500, {
          index: 1,
          id: "hold",
          kind: "interlock",
          ok: false,
          check: "hook-processes",
          reason: "x",
        }),
      ]),
    );
    expect(other.next).not.toContain("--from stop");
  });
});

// a writes-on hook cut off with its run, or failed part-way: what it did is not known, so the page
// says writes may be back on, as status does (it could not tell the writes-on hook from another)
describe("a writes-on hook that started and did not succeed", () => {
  const model = (writesOn: boolean, more: RunEvent[] = []) => {
    const f = new CutoverFold({ traits: traitsOf });
    const es = [
      runStarted([
        ...steps,
        { index: 3, id: "app-on", kind: "hook", title: "app on", ...(writesOn ? { writesOn: true } : {}) },
      ]),
      ev("step.started", 500, { index: 3, id: "app-on", kind: "hook", title: "app on" }),
      ev("hook.started", 600, { index: 3, id: "app-on", use: "shell", undo: false }),
      ...more,
    ];
    for (const e of es) f.apply(e);
    return f.view(T0 + 1000);
  };
  const line = (l: string[]) => l.find((x) => x.startsWith("writes may be back on"));
  it("its runner gone: writes may be back on, in status's words", () => {
    expect(line(stateLeft(model(true), at(2000), true))).toBe(
      `writes ${writesOnInDoubtWords({ step: 4, id: "app-on" })}`,
    );
    expect(line(stateLeft(model(true), at(2000), true))).toBe(
      "writes may be back on: the writesOn hook of step 4 app-on started and its run ended before it did (what it did is not known: see the application)",
    );
    const failed = model(true, [
      ev("hook.finished", 900, {
        index: 3,
        id: "app-on",
        use: "shell",
        undo: false,
        ok: false,
        durationMs: 300,
        error: "x",
      }),
    ]);
    expect(line(stateLeft(failed, at(2000), true))).toMatch(/step 4 app-on failed part-way/);
  });
  it("not while its runner lives, not for another hook, not once it succeeded", () => {
    expect(line(stateLeft(model(true), at(2000), false))).toBeUndefined();
    expect(line(stateLeft(model(false), at(2000), true))).toBeUndefined();
    const ok = model(true, [
      ev("hook.finished", 900, { index: 3, id: "app-on", use: "shell", undo: false, ok: true, durationMs: 300 }),
    ]);
    expect(line(stateLeft(ok, at(2000), true))).toBeUndefined();
  });
});

// a review: after an earlier cutover's split commit the page offered this cutover's --resume,
// refused (it would send a commit while that one may hold); status names the way on that finishes it
describe("runnerVerdict while an earlier cutover's commit may still take effect", () => {
  const why = 'the journal /j/old.jsonl of an earlier cutover, c1, shows commit (step 5 "commit") may have reached a';
  const input = (model: ReturnType<typeof killedModel>, running = false) => ({
    model,
    lock: running ? lock : undefined,
    // (running: a line 1 s ago, not silent)
    now: at(running ? 3000 : 182_000),
    host: "here",
    isAlive: () => running,
    runbook: "rb.yaml",
    earlierCommit: why,
  });
  it("the runner dead or its run ended short of the commit: status first, and the commit said in what it left", () => {
    for (const model of [
      killedModel(),
      killedModel([ev("run.finished", 3000, { outcome: "failed", exitCode: 1, committed: false, durationMs: 3000 })]),
    ]) {
      const v = runnerVerdict(input(model));
      expect(v.next).toMatch(
        /^syncbook status rb\.yaml {3}\(it names the way on while an earlier cutover's commit may hold, as said above: a --resume/,
      );
      expect(v.left).toContain(why);
    }
  });
  it("silent (its lock on another host): status first too, not the --resume refused", () => {
    const v = runnerVerdict({ ...input(killedModel()), lock: { ...lock, host: "elsewhere" }, isAlive: () => true });
    expect(v.state).toBe("silent");
    expect(v.next).toMatch(
      /^syncbook status rb\.yaml {3}\(it names the way on while an earlier cutover's commit may hold, as said above: a --resume/,
    );
    expect(v.next).not.toContain("--resume  ");
  });
  it("not while its runner runs, nor once this cutover's own commit was sent", () => {
    const live = runnerVerdict(input(killedModel(), true));
    expect(live.next).toBeUndefined();
    expect(live.left.join("\n")).not.toContain("earlier cutover");
    const sent = runnerVerdict(input(killedModel([commitStep(), req(2500, 1, 0), req(2500, 2, 1)])));
    expect(sent.next).not.toMatch(/^syncbook status/);
    expect(sent.left.join("\n")).not.toContain("earlier cutover");
  });
  // readiness (src/watch/state.ts): an instance that earlier commit may have reached holds it in
  // commit's round (RUNNING, canCommit) and is past the question, not "ready to commit"; once this
  // cutover's own commit was sent, an earlier one is not what holds its instances, as status asks
  // about an earlier commit only where its journal's sync has none sent
  it("readiness: past it where that commit may have reached, not once this cutover's own commit was sent (to another instance)", () => {
    const live = {
      at: at(62_500),
      instances: [
        { index: 0, label: "a", url: "http://a", state: "RUNNING", canCommit: true, answeredAt: at(62_500) },
        { index: 1, label: "b", url: "http://b", state: "RUNNING", canCommit: true, answeredAt: at(62_500) },
      ],
      copy: killedModel().fleet.copy,
    } as unknown as Parameters<typeof buildState>[0]["live"];
    const page = (model: ReturnType<typeof killedModel>) =>
      buildState({
        now: at(62_500),
        folder: "f",
        journals: [],
        skippedLines: 0,
        model,
        live,
        runner: runnerVerdict(input(model)),
        // the earlier journal's URL of a, as it wrote it: found by service, not by spelling
        earlierSentTo: ["http://a/"],
        redact: (x) => x,
      }).readiness.map((r) => [r.instance, r.past, r.ready]);
    expect(page(killedModel())).toEqual([
      ["a", "an earlier cutover's commit sent", true],
      ["b", undefined, true],
    ]);
    // this cutover's commit on its way to b alone: a is not said to hold the earlier one
    const own = page(killedModel([commitStep(), req(2500, 1, 1)]));
    expect(own).toEqual([
      ["a", undefined, true],
      ["b", "commit sent", true],
    ]);
    expect(JSON.stringify(own)).not.toContain("earlier cutover");
  });
});
