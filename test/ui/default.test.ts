import { stat } from "node:fs";
import { PassThrough } from "node:stream";
import { describe, expect, it, vi } from "vitest";
import { createUi, pickRenderer } from "../../src/ui/index.js";
import { FRAME_MS, afterQueuedImmediates } from "../../src/ui/listr.js";
import { UiModel } from "../../src/ui/model.js";
import { EventBuilder, FakeStream, INSTANCES, STEPS, wholeRun } from "../support/ui-fixtures.js";

const tick = (ms = 5): Promise<void> => new Promise((r) => setTimeout(r, ms));
/** Long enough for the live view's next frame (at most one per FRAME_MS). */
const frame = (): Promise<void> => tick(FRAME_MS + 30);

/** A fake terminal keyboard: inquirer reads keys from it. */
function fakeKeyboard(): PassThrough & { isTTY: boolean; setRawMode: () => unknown } {
  return Object.assign(new PassThrough(), {
    isTTY: true,
    setRawMode() {
      return this;
    },
  });
}

describe("default renderer (listr2) on a fake TTY", () => {
  it("draws a whole run without crashing and ends with every step's final state", async () => {
    const out = new FakeStream(true);
    const ui = createUi({ renderer: "default", out, color: false });
    let n = 0;
    for (const e of wholeRun().events) {
      await ui.listener(e);
      // listr2 redraws on its spinner tick (~80 ms): give it frames, as a real run's polls would
      if (++n % 25 === 0 || e.type.startsWith("step.") || e.type === "verifier.sampled") await tick(90);
    }
    await ui.close();
    const text = out.plain;
    // the live panel showed the copy bar, per-instance lag and who fails which condition
    expect(text).toMatch(/copy \[█+░*\] \d+% [\d.]+ [GM]iB \/ 5 GiB ETA /);
    expect(text).toMatch(/shard-b +RUNNING +lag \d+s/);
    expect(text).toMatch(/○ shard-a +lagBelow 5: now \d+ \(for /);
    expect(text).not.toMatch(/✗ shard-a +lagBelow/);
    expect(text).toContain("verifier check · total 10");
    // the final frame: everything settled, durations, the skip reason, the run summary
    const last = text.slice(text.lastIndexOf("Start the sync") - 2);
    expect(last).toContain("✔ Wait for canCommit and lag below 5s (waitFor) 2m 02s");
    expect(last).toContain("✔ Commit (commit) 300ms");
    expect(last).toContain("↓ Notify chat (notify) — skipped: when: env.CHAT_WEBHOOK is empty");
    expect(last).toContain("run ok in 2m 07s · committed · exit 0");
  });

  // issue 41: the live view redrew the whole list on every run event; inside the write-stop window a
  // 64-instance fleet's reads are hundreds a second, and the runner's share of the window at 64
  // instances was 1.4 to 1.7 s with it against 0.07 to 0.09 s without (bench/downtime.mjs)
  it("draws at most one frame per FRAME_MS, never inside the event that asked for it", async () => {
    const out = new FakeStream(true);
    const ui = createUi({ renderer: "default", out, color: false });
    const b = new EventBuilder();
    await ui.listener(
      b.emit("run.started", { runbook: "r", file: "f", hash: "h", instances: INSTANCES, mode: "run", steps: STEPS }),
    );
    await ui.listener(b.emit("step.started", STEPS[1]!));
    await frame();
    const frames = (): number => out.chunks.filter((c) => c.includes("Start the sync")).length;
    const before = frames();
    const t0 = performance.now();
    // a whole read of a large fleet, then a second: every event is handled without a frame drawn
    for (let round = 0; round < 2; round++)
      for (let k = 0; k < 200; k++) {
        const written = out.chunks.length;
        await ui.listener(b.progress(INSTANCES[k % INSTANCES.length]!, { state: "RUNNING", lagTimeSeconds: k }));
        expect(out.chunks.length, "a frame drawn inside the event").toBe(written);
      }
    await frame();
    await frame();
    const elapsed = performance.now() - t0;
    const drawn = frames() - before;
    expect(drawn).toBeGreaterThan(0);
    expect(drawn).toBeLessThanOrEqual(Math.ceil(elapsed / FRAME_MS) + 1);
    // and the last frame shows the last read
    const last = out.plain.slice(out.plain.lastIndexOf("Start the sync"));
    expect(last, last).toMatch(/RUNNING +lag 3m 19s/);
    await ui.listener(b.emit("run.finished", { outcome: "ok", exitCode: 0, committed: false, durationMs: 5 }));
    await ui.close();
  });

  // issue 41: a frame was drawn straight from its timer, or from an immediate the event that asked
  // for it queued, ahead of the immediate undici writes a request dispatched before it from: 5 to 7
  // ms at 64 instances between the commit's dispatch and its requests leaving (marks in the runner)
  it.each([
    ["an immediate (the fleet's fan-out starts from one), the frame due at once", 0],
    ["an immediate, the frame's timer due before the next immediates", 1],
    ["an I/O callback (an answer arrives), the frame due at once", 0],
    ["a timer, the frame due at once", 0],
  ])("draws a frame after the requests dispatched before it, from %s", async (where, ms) => {
    const turn = where.startsWith("an immediate")
      ? (f: () => void) => void setImmediate(f)
      : where.startsWith("an I/O")
        ? (f: () => void) => void stat(".", () => f())
        : (f: () => void) => void setTimeout(f, 0);
    const order: string[] = [];
    await new Promise<void>((resolve) =>
      turn(() => {
        afterQueuedImmediates(() => {
          order.push("frame");
          resolve();
        }, ms);
        // the frame's timer is due before this turn ends
        const until = performance.now() + ms + 2;
        while (performance.now() < until);
        // undici writes a dispatched request from an immediate
        setImmediate(() => order.push("request written"));
      }),
    );
    expect(order).toEqual(["request written", "frame"]);
  });

  it("a frame cancelled is not drawn, before or after its timer fired", async () => {
    let drawn = 0;
    afterQueuedImmediates(() => drawn++, 0).cancel();
    // the same delay: the frame's timer fires first and queues its immediate, then this one cancels it
    const late = afterQueuedImmediates(() => drawn++, 2);
    setTimeout(() => late.cancel(), 2);
    await tick(20);
    expect(drawn).toBe(0);
  });

  it.each([
    ["run", "the run went on, and the journal has every event (syncbook status, syncbook report)"],
    // a rehearsal journals nothing, and `syncbook status` reads the runbook's real fleet
    ["rehearse", "the rehearsal went on, and its verdict below says what it found"],
  ] as const)(
    "a frame that cannot be drawn (drawn from a timer, outside the run's listener) ends nothing: said once when the list ends (%s)",
    async (mode, rest) => {
      const panel = vi.spyOn(UiModel.prototype, "panel").mockImplementation(() => {
        throw new Error("boom");
      });
      try {
        const out = new FakeStream(true);
        const ui = createUi({ renderer: "default", out, color: false });
        const b = new EventBuilder();
        await ui.listener(
          b.emit("run.started", { runbook: "r", file: "f", hash: "h", instances: INSTANCES, mode, steps: STEPS }),
        );
        await ui.listener(b.emit("step.started", STEPS[1]!));
        await frame();
        await ui.listener(b.progress(INSTANCES[0]!, { state: "RUNNING", lagTimeSeconds: 3 }));
        await frame();
        expect(panel).toHaveBeenCalled();
        await ui.listener(b.emit("run.finished", { outcome: "ok", exitCode: 0, committed: false, durationMs: 5 }));
        await ui.close();
        const said = out.plain.split(`live view: a frame could not be drawn (boom); ${rest}`).length - 1;
        expect(said).toBe(1);
      } finally {
        panel.mockRestore();
      }
    },
  );

  it("shows a failed step with its error and hint, refusals in red, and unreached steps as not run", async () => {
    const out = new FakeStream(true);
    const ui = createUi({ renderer: "default", out, color: true });
    const b = new EventBuilder();
    await ui.listener(
      b.emit("run.started", { runbook: "r", file: "f", hash: "h", instances: INSTANCES, mode: "run", steps: STEPS }),
    );
    await ui.listener(b.emit("step.started", STEPS[5]!));
    await ui.listener(
      b.emit("decision", {
        index: 5,
        id: "commit",
        kind: "interlock",
        ok: false,
        check: "stopWrites",
        reason: "no stopWrites step succeeded",
      }),
    );
    // the frame after the one that may still show the steps before it settling
    await frame();
    await frame();
    expect(out.text).toContain("\u001b[31m✗ interlock stopWrites refused: no stopWrites step succeeded\u001b[39m");
    await ui.listener(
      b.emit("step.finished", {
        index: 5,
        id: "commit",
        outcome: "failed",
        durationMs: 3,
        error: "commit refused by an interlock",
        hint: "--force stopWrites",
      }),
    );
    await ui.listener(b.emit("hook.started", { index: 3, id: "stop-writes", use: "shell", undo: true }));
    await ui.listener(
      b.emit("hook.finished", { index: 3, id: "stop-writes", use: "shell", undo: true, ok: true, durationMs: 10 }),
    );
    await ui.listener(b.emit("run.finished", { outcome: "failed", exitCode: 1, committed: false, durationMs: 50 }));
    await ui.close();
    const last = out.plain.slice(out.plain.lastIndexOf("Start the sync") - 2);
    expect(last).toContain("✖ Commit (commit)");
    expect(last).toContain("commit refused by an interlock");
    expect(last).toContain("hint: --force stopWrites");
    expect(last).toContain("↓ Notify chat (notify) — not run");
    expect(last).toContain("↓ Start the sync (start) — no outcome reported");
    expect(last).toContain("undo hook shell ok 10ms");
    // the same words as the simple renderer's end line (commitWords): "not committed" is news too
    expect(last).toContain("run failed in 50ms · not committed · exit 1");
    // the undo succeeded: no alarm
    expect(out.plain).not.toContain("STILL STOPPED");
  });

  // issue 39, point 8: "a lost commit answer (no answer from shard-c … took effect: not sent again) is
  // hidden by the default renderer": the panel that showed it goes when the step ends
  it("a commit whose answer was lost keeps how it was settled under its title once the step succeeded", async () => {
    const out = new FakeStream(true);
    const ui = createUi({ renderer: "default", out, color: false });
    const b = new EventBuilder();
    await ui.listener(
      b.emit("run.started", { runbook: "r", file: "f", hash: "h", instances: INSTANCES, mode: "run", steps: STEPS }),
    );
    await ui.listener(b.emit("step.started", STEPS[5]!));
    const reconcile = (reason: string): Promise<void> =>
      Promise.resolve(ui.listener(b.emit("decision", { index: 5, id: "commit", kind: "reconcile", ok: true, reason })));
    await reconcile(
      "commit: no answer from shard-c (timeout); reading progress for up to 10s to learn whether it took effect (never resent blindly)",
    );
    await reconcile("commit took effect on shard-c (state COMMITTING): not sent again");
    // an interlock's pass is the panel's, not kept
    await ui.listener(
      b.emit("decision", {
        index: 5,
        id: "commit",
        kind: "interlock",
        ok: true,
        check: "can-commit",
        reason: "every instance is RUNNING",
      }),
    );
    await frame();
    await ui.listener(b.emit("step.finished", { index: 5, id: "commit", outcome: "ok", durationMs: 1200 }));
    await ui.listener(b.emit("run.finished", { outcome: "ok", exitCode: 0, committed: true, durationMs: 50 }));
    await ui.close();
    const last = out.plain.slice(out.plain.lastIndexOf("Start the sync") - 2);
    expect(last).toMatch(/✔ Commit \(commit\) \S+\s*\n\s*↻ commit: no answer from shard-c \(timeout\)/);
    expect(last).toContain("↻ commit took effect on shard-c (state COMMITTING): not sent again");
    expect(last).not.toContain("every instance is RUNNING");

    // a large fleet: the first lines, and how many more, never the whole fleet's
    const big = new FakeStream(true);
    const ui2 = createUi({ renderer: "default", out: big, color: false });
    const b2 = new EventBuilder();
    await ui2.listener(
      b2.emit("run.started", { runbook: "r", file: "f", hash: "h", instances: INSTANCES, mode: "run", steps: STEPS }),
    );
    await ui2.listener(b2.emit("step.started", STEPS[5]!));
    for (let i = 0; i < 20; i++)
      await ui2.listener(
        b2.emit("decision", {
          index: 5,
          id: "commit",
          kind: "reconcile",
          ok: true,
          reason: `commit took effect on shard-${i}`,
        }),
      );
    await ui2.listener(b2.emit("step.finished", { index: 5, id: "commit", outcome: "ok", durationMs: 1200 }));
    await ui2.listener(b2.emit("run.finished", { outcome: "ok", exitCode: 0, committed: true, durationMs: 50 }));
    await ui2.close();
    const end = big.plain.slice(big.plain.lastIndexOf("Start the sync") - 2);
    expect(end).toContain("commit took effect on shard-4\n");
    expect(end).not.toContain("commit took effect on shard-5\n");
    expect(end).toContain("… and 15 more (the journal and `syncbook report` have every one)");
  });

  it("a stopWrites whose undo failed: the summary says writes are still stopped, and what to do", async () => {
    const out = new FakeStream(true);
    const ui = createUi({ renderer: "default", out, color: false });
    const b = new EventBuilder();
    await ui.listener(
      b.emit("run.started", { runbook: "r", file: "f", hash: "h", instances: INSTANCES, mode: "run", steps: STEPS }),
    );
    await ui.listener(b.emit("step.started", STEPS[4]!));
    await ui.listener(b.emit("step.finished", { index: 4, id: "confirm", outcome: "failed", durationMs: 3 }));
    await ui.listener(b.emit("hook.started", { index: 3, id: "stop-writes", use: "shell", undo: true }));
    await ui.listener(
      b.emit("hook.finished", {
        index: 3,
        id: "stop-writes",
        use: "shell",
        undo: true,
        ok: false,
        error: "exited with code 3",
        durationMs: 10,
      }),
    );
    await ui.listener(b.emit("run.finished", { outcome: "failed", exitCode: 1, committed: false, durationMs: 50 }));
    await ui.close();
    const tail = out.plain.slice(out.plain.lastIndexOf("run failed in 50ms"));
    expect(tail).toContain("✖ writes are STILL STOPPED: the undo of step 4 stop-writes (shell) did not succeed");
    expect(tail).toContain("do by hand what it does");
  });

  // issue 41: the live view's work on an event (the terminal's sanitizing, its model's fold) ran
  // inside the runner's turn, 64 events a fleet read, two fleet reads between the drain and the
  // commit's first byte; it now runs once that turn yields, and catches up before it is read
  it("takes each event once the runner's turn yields, in order, and catches up before it is read", async () => {
    const apply = vi.spyOn(UiModel.prototype, "apply");
    try {
      const ui = createUi({ renderer: "default", out: new FakeStream(true), color: false });
      const b = new EventBuilder();
      const events = [
        b.emit("run.started", { runbook: "r", file: "f", hash: "h", instances: INSTANCES, mode: "run", steps: STEPS }),
        b.emit("step.started", STEPS[4]!),
        b.emit("step.finished", { index: 4, id: "confirm", outcome: "failed", durationMs: 3 }),
        b.emit("hook.started", { index: 3, id: "stop-writes", use: "shell", undo: true }),
        b.emit("hook.finished", {
          index: 3,
          id: "stop-writes",
          use: "shell",
          undo: true,
          ok: false,
          error: "exited with code 3",
          durationMs: 10,
        }),
      ];
      for (const e of events) void ui.listener(e);
      // nothing of it inside the runner's turn
      expect(apply).not.toHaveBeenCalled();
      // nor before the immediates queued in it (undici's writes of the requests dispatched)
      let undiciWrote = -1;
      setImmediate(() => (undiciWrote = apply.mock.calls.length));
      // (a timer, then an immediate: under load the tick's timer may fire in the same timers phase)
      await tick();
      await new Promise((r) => setImmediate(r));
      expect(undiciWrote).toBe(0);
      expect(apply.mock.calls.map(([e]) => e.seq)).toEqual(events.map((e) => e.seq));

      // read in the same turn as the events it must know of: it catches up first
      apply.mockClear();
      const ui2 = createUi({ renderer: "default", out: new FakeStream(true), color: false });
      for (const e of events) void ui2.listener(e);
      expect(ui2.writesLeftStopped()).toMatchObject({ number: 4, id: "stop-writes", error: "exited with code 3" });
      expect(apply).toHaveBeenCalledTimes(events.length);
      // the run's end is drawn at once, as before: a run that throws after it never reaches close
      void ui2.listener(b.emit("run.finished", { outcome: "failed", exitCode: 1, committed: false, durationMs: 50 }));
      expect(apply).toHaveBeenCalledTimes(events.length + 1);
      await ui2.close();
      await ui.close();
    } finally {
      apply.mockRestore();
    }
  });

  it("a question asked in the same turn as its step's start is drawn in that step's task", async () => {
    const out = new FakeStream(true);
    const ui = createUi({ renderer: "default", out, color: false, input: fakeKeyboard() });
    const b = new EventBuilder();
    void ui.listener(
      b.emit("run.started", { runbook: "r", file: "f", hash: "h", instances: INSTANCES, mode: "run", steps: STEPS }),
    );
    void ui.listener(b.emit("step.started", STEPS[4]!));
    const ac = new AbortController();
    const answer = ui.prompt.confirm("Point of no return: commit?", ac.signal);
    await frame();
    const shown = out.plain;
    ac.abort();
    await expect(answer).rejects.toMatchObject({ name: "AbortError" });
    void ui.listener(
      b.emit("run.finished", { outcome: "interrupted", exitCode: 130, committed: false, durationMs: 5 }),
    );
    await ui.close();
    // the frame the question is drawn under shows its step running, not waiting to start
    const frameOfQuestion = shown.slice(0, shown.lastIndexOf("? Point of no return: commit?"));
    const task = frameOfQuestion.slice(frameOfQuestion.lastIndexOf("Point of no return (confirm)") - 2);
    expect(task.startsWith("◼")).toBe(false);
    expect(task).toMatch(/^[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] Point of no return \(confirm\)/);
  });

  // issue 39, point 8: --abort runs no step; a step an earlier run ran is not "not run"
  it("an --abort run marks its steps as not run by --abort, never plainly not run", async () => {
    const out = new FakeStream(true);
    const ui = createUi({ renderer: "default", out, color: false });
    const b = new EventBuilder();
    await ui.listener(
      b.emit("run.started", { runbook: "r", file: "f", hash: "h", instances: INSTANCES, mode: "resume", steps: STEPS }),
    );
    await ui.listener(
      b.emit("run.finished", {
        outcome: "failed",
        aborted: true,
        exitCode: 0,
        committed: false,
        durationMs: 50,
        message: "aborted by the operator (--abort): 1 undo(s) ran",
      }),
    );
    await ui.close();
    const last = out.plain.slice(out.plain.lastIndexOf("Start the sync") - 2);
    expect(last).toContain("— not run by --abort");
    expect(last).not.toMatch(/— not run$/m);
    expect(ui.showsEnd).toBe(true);
  });

  it("close() without run.finished still ends the list (a runner that crashed)", async () => {
    const out = new FakeStream(true);
    const ui = createUi({ renderer: "default", out, color: false });
    const b = new EventBuilder();
    await ui.listener(
      b.emit("run.started", { runbook: "r", file: "f", hash: "h", instances: INSTANCES, mode: "run", steps: STEPS }),
    );
    await ui.listener(b.emit("step.started", STEPS[0]!));
    await ui.close();
    expect(out.plain).toContain("↓ Commit (commit) — not run");
  });

  it("asks --step choices inside the step's task and takes the answer from the keyboard", async () => {
    const out = new FakeStream(true);
    const input = fakeKeyboard();
    const ui = createUi({ renderer: "default", out, color: false, input });
    const b = new EventBuilder();
    await ui.listener(
      b.emit("run.started", { runbook: "r", file: "f", hash: "h", instances: INSTANCES, mode: "run", steps: STEPS }),
    );
    const answer = ui.prompt.stepChoice(STEPS[0]!, new AbortController().signal);
    await frame();
    expect(out.plain).toContain('Next: step 1 start "Start the sync" (start)');
    input.write("\u001b[B"); // down: skip
    input.write("\r");
    expect(await answer).toBe("skip");
    await ui.listener(b.emit("step.skipped", { index: 0, id: "start", reason: "operator chose skip" }));
    await ui.listener(
      b.emit("run.finished", { outcome: "interrupted", exitCode: 130, committed: false, durationMs: 5 }),
    );
    await ui.close();
    expect(out.plain).toContain("↓ Start the sync (start) — skipped: operator chose skip");
  });

  it("a confirm prompt rejects promptly when the signal aborts (Ctrl-C), and the run can still end", async () => {
    const out = new FakeStream(true);
    const ui = createUi({ renderer: "default", out, color: false, input: fakeKeyboard() });
    const b = new EventBuilder();
    await ui.listener(
      b.emit("run.started", { runbook: "r", file: "f", hash: "h", instances: INSTANCES, mode: "run", steps: STEPS }),
    );
    await ui.listener(b.emit("step.started", STEPS[4]!));
    const ac = new AbortController();
    const answer = ui.prompt.confirm("Point of no return: commit?", ac.signal);
    await tick(50);
    const t0 = Date.now();
    ac.abort();
    await expect(answer).rejects.toMatchObject({ name: "AbortError" });
    expect(Date.now() - t0).toBeLessThan(100);
    await ui.listener(b.emit("step.finished", { index: 4, id: "confirm", outcome: "interrupted", durationMs: 5 }));
    await ui.listener(
      b.emit("run.finished", { outcome: "interrupted", exitCode: 130, committed: false, durationMs: 5 }),
    );
    await ui.close();
    expect(out.plain).toContain("✖ Point of no return (confirm)");
  });
});

describe("which renderer when --renderer is not given", () => {
  const tty = (columns: number | undefined) => Object.assign(new PassThrough(), { isTTY: true, columns });
  it("the task list on a sized terminal; lines when piped, in CI, or on a terminal without a width", () => {
    expect(pickRenderer({ out: tty(120), env: {} })).toBe("default");
    expect(pickRenderer({ out: new PassThrough(), env: {} })).toBe("simple");
    expect(pickRenderer({ out: tty(120), env: { CI: "true" } })).toBe("simple");
    // a pseudo-terminal nobody sized (`script`, some CI runners): listr2 wraps at width 0 and draws nothing readable
    expect(pickRenderer({ out: tty(0), env: {} })).toBe("simple");
    expect(pickRenderer({ out: tty(undefined), env: {} })).toBe("simple");
    expect(pickRenderer({ flag: "default", out: tty(0), env: {} })).toBe("default");
  });
});
