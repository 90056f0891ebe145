/**
 * The write switch read, not remembered (issue 30, point 4), line by line: which checks a commit
 * relies on, what a check's failure, timeout or interruption means, and commit's interlock on it.
 * End to end (the simulator's switch, a kill -9 and --resume): test/safety/writes-check.e2e.test.ts.
 */
import { describe, expect, it, vi } from "vitest";
import type { HookFn } from "../../src/plugin/api.js";
import type { Step } from "../../src/runbook/types.js";
import { commit } from "../../src/steps/commit.js";
import type { StepContext } from "../../src/steps/kit/context.js";
import { CHECK_POLL_MS, CHECK_TIMEOUT_MS, readWrites, writesChecks } from "../../src/steps/kit/writes-check.js";
import { context, failure, scripted } from "../support/fleet-fake.js";

const STOP = (check?: string, extra: Partial<Step> = {}): Step =>
  ({ stopWrites: { use: "flag", ...(check ? { check: { use: check } } : {}) }, ...extra }) as Step;

/** A run context whose hooks are the given functions (a check's hook is one of them). */
function withHooks(
  steps: Step[],
  hooks: Record<string, HookFn<Record<string, unknown>>>,
  probe?: StepContext["run"]["writesProbe"],
) {
  const f = scripted({ reads: [[{ state: "RUNNING", canCommit: true }]], sends: [{}] });
  const { ctx, events } = context(f.fleet);
  const logs: string[] = [];
  Object.assign(ctx.run, {
    mode: "run",
    loaded: { file: "cutover.yaml" },
    plugins: {
      registry: { hook: (name: string) => (hooks[name] ? { run: hooks[name] } : undefined) },
      ctx: {
        runbook: { name: "t", file: "cutover.yaml" },
        cwd: ".",
        redact: (t: string) => t.replaceAll("s3cret", "***"),
        log: (l: { text: string }) => logs.push(l.text),
      },
      undo: { disarm: vi.fn(), rearm: vi.fn() },
    },
    writesProbe: probe,
  });
  Object.assign(ctx.run.runbook, { steps });
  return { ctx, events, f };
}

describe("writesChecks: the checks a commit relies on", () => {
  it("every stopWrites before it with a check, in order; none from the commit on, none switched off by when: false", () => {
    const steps = [
      STOP("a"),
      { hook: { use: "x" } } as Step,
      STOP(undefined),
      STOP("off", { when: false }),
      STOP("b", { when: true }),
      { commit: {} } as Step,
      STOP("after"),
    ];
    expect(writesChecks(steps, 5)).toEqual([
      { index: 0, step: steps[0], call: { use: "a" } },
      { index: 4, step: steps[4], call: { use: "b" } },
    ]);
    expect(writesChecks(steps, 0)).toEqual([]);
    expect(writesChecks(steps, 1)).toEqual([{ index: 0, step: steps[0], call: { use: "a" } }]);
  });
});

describe("readWrites", () => {
  it("nothing to read (no probe, no check): undefined, and no hook is called", async () => {
    const hook = vi.fn();
    const { ctx } = withHooks([], { a: hook });
    expect(await readWrites(ctx, [])).toBeUndefined();
    expect(hook).not.toHaveBeenCalled();
  });

  it("every check passes: stopped, each one named", async () => {
    const { ctx } = withHooks([STOP("a"), STOP("b")], { a: () => undefined, b: () => undefined });
    expect(await readWrites(ctx, writesChecks(ctx.run.runbook.steps, 2))).toEqual({
      stopped: true,
      by: "check",
      detail: "the check of step 1 (a) passed; the check of step 2 (b) passed",
    });
  });

  it("the first check that fails decides, redacted; the ones after it are not run", async () => {
    const b = vi.fn();
    const { ctx } = withHooks([STOP("a"), STOP("b")], {
      a: () => {
        throw new Error("writes flow (token s3cret)");
      },
      b,
    });
    expect(await readWrites(ctx, writesChecks(ctx.run.runbook.steps, 2))).toEqual({
      stopped: false,
      by: "check",
      detail: "the check of step 1: hook a failed: writes flow (token ***)",
    });
    expect(b).not.toHaveBeenCalled();
  });

  it("a check whose hook does not exist counts as writes flowing", async () => {
    const { ctx } = withHooks([STOP("gone")], {});
    expect(await readWrites(ctx, writesChecks(ctx.run.runbook.steps, 1))).toEqual({
      stopped: false,
      by: "check",
      detail: "the check of step 1: unknown hook gone",
    });
  });

  it("the check gets its options, the run's signal and its time limit (its own, else 30 s); its undo is ignored", async () => {
    const seen: unknown[] = [];
    const undo = vi.fn();
    const { ctx } = withHooks(
      [{ stopWrites: { use: "flag", check: { use: "a", with: { flag: "w" }, timeout: "50ms" } } }],
      {
        a: (h) => {
          seen.push(h.options, h.signal.aborted);
          return { undo };
        },
      },
    );
    const r = await readWrites(ctx, writesChecks(ctx.run.runbook.steps, 1));
    expect(r?.stopped).toBe(true);
    expect(seen).toEqual([{ flag: "w" }, false]);
    expect(undo).not.toHaveBeenCalled();
    expect(CHECK_TIMEOUT_MS).toBe(30_000);
  });

  it("the check's hook is told which step it belongs to (its id, or the kind's default id) and that it is a check", async () => {
    const steps: Step[] = [STOP("a"), STOP("a", { id: "stop-b" })];
    const seen: unknown[] = [];
    const { ctx } = withHooks(steps, { a: (h) => void seen.push({ ...h.step, raw: undefined }) });
    await readWrites(ctx, writesChecks(steps, 2));
    expect(seen).toEqual([
      { index: 0, id: "stopWrites-1", kind: "stopWrites", title: "check of step 1", raw: undefined },
      { index: 1, id: "stop-b", kind: "stopWrites", title: "check of step 2", raw: undefined },
    ]);
  });

  it("a check that outlives its time limit counts as writes flowing", async () => {
    const { ctx } = withHooks([{ stopWrites: { use: "flag", check: { use: "slow", timeout: "30ms" } } }], {
      slow: (h) => new Promise((r) => h.signal.addEventListener("abort", () => r(undefined))),
    });
    const r = await readWrites(ctx, writesChecks(ctx.run.runbook.steps, 1));
    expect(r?.stopped).toBe(false);
    expect(r?.detail).toMatch(/^the check of step 1: hook slow timed out after 30ms/);
  });

  it("interrupted (Ctrl-C) while a check runs: the interruption is thrown, not read as 'writes flow'", async () => {
    const ac = new AbortController();
    const { ctx } = withHooks([STOP("wait")], {
      wait: (h) =>
        new Promise((_r, reject) => {
          h.signal.addEventListener("abort", () => reject(new Error("aborted")));
          ac.abort(new Error("interrupted by SIGINT"));
        }),
    });
    Object.assign(ctx, { signal: ac.signal });
    await expect(readWrites(ctx, writesChecks(ctx.run.runbook.steps, 1))).rejects.toThrow("interrupted by SIGINT");
    const bare = new AbortController();
    const b = withHooks([STOP("wait")], {
      wait: (h) =>
        new Promise((_r, reject) => {
          h.signal.addEventListener("abort", () => reject(new Error("aborted")));
          bare.abort("no error");
        }),
    });
    Object.assign(b.ctx, { signal: bare.signal });
    await expect(readWrites(b.ctx, writesChecks(b.ctx.run.runbook.steps, 1))).rejects.toThrow("interrupted");
  });

  it("the rehearsal's probe reads first: writes seen flowing decide without running a check", async () => {
    const a = vi.fn();
    const { ctx } = withHooks([STOP("a")], { a }, () => Promise.resolve({ stopped: false, detail: "1000/s" }));
    expect(await readWrites(ctx, writesChecks(ctx.run.runbook.steps, 1))).toEqual({
      stopped: false,
      by: "probe",
      detail: "1000/s",
    });
    expect(a).not.toHaveBeenCalled();
  });

  it("the probe seeing writes stopped, then the checks: both named; the probe alone is 'probe'", async () => {
    const probe = () => Promise.resolve({ stopped: true, detail: "nothing written" });
    const { ctx } = withHooks([STOP("a")], { a: () => undefined }, probe);
    expect(await readWrites(ctx, writesChecks(ctx.run.runbook.steps, 1))).toEqual({
      stopped: true,
      by: "check",
      detail: "nothing written; the check of step 1 (a) passed",
    });
    expect(await readWrites(ctx, [])).toEqual({ stopped: true, by: "probe", detail: "nothing written" });
  });
});

// issue 39, point 2: a check that can wait (a flag takes a while to reach every application instance)
describe("a check with until: read again until it holds, within its bound", () => {
  const WAIT = (check: Record<string, unknown>): Step[] =>
    [{ stopWrites: { use: "flag", check: { use: "read", pollInterval: "10ms", ...check } } }] as Step[];
  const logs = (events: { type: string }[]) =>
    events.filter((e) => e.type === "log").map((e) => (e as unknown as { message: string }).message);

  it("a hook that fails twice then succeeds: holds; what it waits for is said once per reason", async () => {
    let n = 0;
    const { ctx, events } = withHooks(WAIT({ until: "2s" }), {
      read: () => {
        if (++n < 3) throw new Error("3 of 5 app servers still write");
      },
    });
    expect(await readWrites(ctx, writesChecks(ctx.run.runbook.steps, 1))).toEqual({
      stopped: true,
      by: "check",
      detail: "the check of step 1 (read) passed",
    });
    expect(n).toBe(3);
    expect(logs(events)).toEqual([
      "waiting for the check of step 1 (read to succeed), at most 2s: hook read failed: 3 of 5 app servers still write",
    ]);
  });

  it("every read is journaled (writes.checked): the step that ran it, the hook, whether it held, how long it took", async () => {
    let n = 0;
    const { ctx, events } = withHooks(WAIT({ until: "2s" }), {
      read: () => {
        if (++n < 2) throw new Error("still writing");
      },
    });
    ctx.index = 4;
    ctx.id = "commit";
    await readWrites(ctx, writesChecks(ctx.run.runbook.steps, 1));
    const reads = events.filter((e) => e.type === "writes.checked");
    expect(
      reads.map((e) => ({ ...e, seq: 0, at: 0, durationMs: typeof (e as { durationMs?: unknown }).durationMs })),
    ).toEqual([
      { type: "writes.checked", seq: 0, at: 0, index: 4, id: "commit", use: "read", ok: false, durationMs: "number" },
      { type: "writes.checked", seq: 0, at: 0, index: 4, id: "commit", use: "read", ok: true, durationMs: "number" },
    ]);
  });

  it("expect compares what the hook read, with waitFor.expect's comparisons; the wait names each and the value now", async () => {
    const answers = [
      { enabled: true, writers: 3, mode: "rw" },
      { enabled: false, writers: 2, mode: "rw" },
      { enabled: false, writers: 0, mode: "ro" },
    ];
    let n = 0;
    const expectList = [
      { path: "enabled", equals: false },
      { path: "writers", below: 1 },
      { path: "mode", in: ["ro", "off"] },
      { path: "mode", matches: "^r" },
    ];
    const { ctx, events } = withHooks(WAIT({ until: "2s", expect: expectList }), {
      read: () => ({ value: answers[Math.min(n++, 2)] }),
    });
    const r = await readWrites(ctx, writesChecks(ctx.run.runbook.steps, 1));
    expect(r?.stopped).toBe(true);
    expect(n).toBe(3);
    expect(logs(events)).toEqual([
      'waiting for the check of step 1 (read: enabled equals false, writers below 1, mode in ["ro","off"], mode matches ^r), at most 2s: enabled equals false: now true, writers below 1: now 3, mode in ["ro","off"]: now "rw"',
      'waiting for the check of step 1 (read: enabled equals false, writers below 1, mode in ["ro","off"], mode matches ^r), at most 2s: writers below 1: now 2, mode in ["ro","off"]: now "rw"',
    ]);
  });

  it("never holds within until: refused as a failing check, with the last reason and how long it waited", async () => {
    let n = 0;
    const { ctx } = withHooks(WAIT({ until: "100ms", expect: [{ path: "enabled", equals: false }] }), {
      read: () => {
        n++;
        return { value: { enabled: true, token: "s3cret" } };
      },
    });
    const t = Date.now();
    const r = await readWrites(ctx, writesChecks(ctx.run.runbook.steps, 1));
    expect(Date.now() - t).toBeLessThan(1000);
    expect(r?.stopped).toBe(false);
    expect(r?.detail).toMatch(
      /^the check of step 1: enabled equals false: now true \(still, after \d+ms of its 100ms\)$/,
    );
    expect(n).toBeGreaterThan(2);
  });

  it("without until: one read; an unmet expect refuses at once, a missing field read as missing", async () => {
    let n = 0;
    const { ctx, events } = withHooks(WAIT({ expect: [{ path: "writes.enabled", equals: false }] }), {
      read: () => {
        n++;
        return { value: { other: 1 } };
      },
    });
    expect(await readWrites(ctx, writesChecks(ctx.run.runbook.steps, 1))).toEqual({
      stopped: false,
      by: "check",
      detail: "the check of step 1: writes.enabled equals false: now missing",
    });
    expect(n).toBe(1);
    expect(logs(events)).toEqual([]);
  });

  it("a hook that reads nothing: every expect fails (not present); a secret in a value is redacted", async () => {
    const { ctx } = withHooks(WAIT({ expect: [{ path: "a", matches: "x" }] }), {
      read: () => ({ value: { a: "s3cret" } }),
    });
    expect((await readWrites(ctx, writesChecks(ctx.run.runbook.steps, 1)))?.detail).toBe(
      'the check of step 1: a matches x: now "***"',
    );
    const none = withHooks(WAIT({ expect: [{ path: "a", equals: 1 }] }), { read: () => undefined });
    expect((await readWrites(none.ctx, writesChecks(none.ctx.run.runbook.steps, 1)))?.detail).toBe(
      "the check of step 1: a equals 1: now missing",
    );
  });

  it("reads while one more pause still ends within the bound: at 0, 50 and 100 ms of until: 100ms (pause 50ms), then refuses", async () => {
    // performance too: the poll keeps its pauses by the monotonic clock (src/steps/kit/poll.ts)
    vi.useFakeTimers({ toFake: ["Date", "setTimeout", "clearTimeout", "performance"] });
    try {
      const at: number[] = [];
      const t0 = Date.now();
      const { ctx, events } = withHooks(WAIT({ until: "100ms", pollInterval: "50ms" }), {
        read: () => {
          at.push(Date.now() - t0);
          throw new Error("x".repeat(200));
        },
      });
      const p = readWrites(ctx, writesChecks(ctx.run.runbook.steps, 1));
      await vi.advanceTimersByTimeAsync(500);
      const r = await p;
      expect(at).toEqual([0, 50, 100]);
      expect(r?.detail).toBe(
        `the check of step 1: hook read failed: ${"x".repeat(200)} (still, after 100ms of its 100ms)`,
      );
      // said at the info level: what a wait is waiting for is not a warning
      expect(events.filter((e) => e.type === "log").map((e) => (e as unknown as { level: string }).level)).toEqual([
        "info",
      ]);
    } finally {
      vi.useRealTimers();
    }
  });

  it("a long value is cut at 80 characters where the wait shows it", async () => {
    const long = "y".repeat(100);
    const { ctx } = withHooks(WAIT({ expect: [{ path: "a", equals: "z" }] }), { read: () => ({ value: { a: long } }) });
    expect((await readWrites(ctx, writesChecks(ctx.run.runbook.steps, 1)))?.detail).toBe(
      `the check of step 1: a equals z: now "${"y".repeat(78)}…`,
    );
    const fits = withHooks(WAIT({ expect: [{ path: "a", equals: "z" }] }), {
      read: () => ({ value: { a: "y".repeat(78) } }),
    });
    expect((await readWrites(fits.ctx, writesChecks(fits.ctx.run.runbook.steps, 1)))?.detail).toBe(
      `the check of step 1: a equals z: now "${"y".repeat(78)}"`,
    );
  });

  it("the default pause between reads is 2 s; Ctrl-C during the pause ends the wait with the interruption", async () => {
    expect(CHECK_POLL_MS).toBe(2000);
    const ac = new AbortController();
    const { ctx } = withHooks([{ stopWrites: { use: "flag", check: { use: "read", until: "1m" } } }] as Step[], {
      read: () => {
        setTimeout(() => ac.abort(new Error("interrupted by SIGINT")), 20);
        throw new Error("not yet");
      },
    });
    Object.assign(ctx, { signal: ac.signal });
    const t = Date.now();
    await expect(readWrites(ctx, writesChecks(ctx.run.runbook.steps, 1))).rejects.toThrow("interrupted by SIGINT");
    expect(Date.now() - t).toBeLessThan(1500);
  });
});

describe("commit reads the switch right before it is sent", () => {
  const steps = [STOP("a"), { commit: {} } as Step];
  const at1 = (ctx: StepContext) => Object.assign(ctx, { index: 1, id: "commit" });

  it("the check fails: refused (writes-stopped) with what it read, before the fleet is read; nothing sent, nothing disarmed", async () => {
    const { ctx, events, f } = withHooks(steps, {
      a: () => {
        throw new Error("writes flow");
      },
    });
    at1(ctx);
    const err = await failure(commit.run(ctx, {}));
    expect(err.message).toBe(
      "refused (writes-stopped): application writes are not seen stopped now: the check of step 1: hook a failed: writes flow",
    );
    expect(err.reason).toBe("interlock");
    expect(err.hint).toMatch(/^Stop the application's writes .*nothing was sent\.$/);
    expect(f.reads).toBe(0);
    expect(f.sent).toEqual([[]]);
    expect(ctx.run.plugins.undo.disarm).not.toHaveBeenCalled();
    const d = events.filter((e) => e.type === "decision" && e.check === "writes-stopped");
    expect(d.map((e) => (e as { ok: boolean }).ok)).toEqual([true, false]);
  });

  it("--force=writes-stopped overrides it, recorded as forced", async () => {
    const { ctx, events, f } = withHooks(steps, {
      a: () => {
        throw new Error("writes flow");
      },
    });
    at1(ctx);
    Object.assign(ctx.run, { force: new Set(["writes-stopped"]) });
    await commit.run(ctx, {});
    expect(f.sent[0]).toHaveLength(1);
    expect(
      events.some((e) => e.type === "decision" && e.kind === "force" && /not seen stopped now/.test(e.reason)),
    ).toBe(true);
    // sent with writes seen flowing: not a commit verify may count as writes stopped
    expect(ctx.run.memory.commitWritesForced).toBe(true);
  });

  it("the check passes: said so, then the fleet is read and commit sent", async () => {
    const { ctx, events, f } = withHooks(steps, { a: () => undefined });
    at1(ctx);
    await commit.run(ctx, {});
    expect(f.sent[0]).toHaveLength(1);
    expect(events.flatMap((e) => (e.type === "decision" && e.check === "writes-stopped" ? [e.reason] : []))).toEqual([
      "a stopWrites step of this cutover held, and no undo of it ran since",
      "application writes are seen stopped now: the check of step 1 (a) passed",
    ]);
    expect(ctx.run.memory.commitWritesForced).toBeUndefined();
  });

  it("no check and no probe: no second decision, commit goes on the journal's word", async () => {
    const { ctx, events, f } = withHooks([STOP(undefined), { commit: {} }], {});
    at1(ctx);
    await commit.run(ctx, {});
    expect(f.sent[0]).toHaveLength(1);
    expect(events.filter((e) => e.type === "decision" && e.check === "writes-stopped")).toHaveLength(1);
  });
});
