/**
 * Hooks and undo: "when the run fails or is interrupted before commit is sent, the undo of every
 * hook that ran is run in reverse order, and reported; after commit is sent nothing is undone";
 * "a hook that hangs is killed at its timeout and its undo is not skipped" (issue #5, point 5).
 */
import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startSimulator, type Simulator } from "../../src/sim/index.js";
import {
  createFleetTracker,
  definePlugin,
  loadPlugins,
  runHook,
  stepInfo,
  undoFor,
  UndoStack,
  type HookCallSpec,
  type HookContext,
  type PluginRegistry,
  type StepInfo,
} from "../../src/plugin/index.js";
import type { RunEventOf } from "../../src/events.js";
import { StepTimeout } from "../../src/steps/kit/context.js";
import { ev, recordingContext, sleep, tempDir } from "../support/plugin.js";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()?.();
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** A registry with the built-ins and a test plugin whose hooks record what they do. */
async function registryWith(journal: string[], seen: HookContext[] = []): Promise<PluginRegistry> {
  const { registry } = await loadPlugins({ runbookFile: "/tmp/rb.yaml", entries: [], builtins: "all" });
  registry.add(
    definePlugin<{ name?: string; fail?: boolean; pidFile?: string }>({
      name: "test-hooks",
      optionsSchema: {
        type: "object",
        properties: { name: { type: "string" }, fail: { type: "boolean" }, pidFile: { type: "string" } },
      },
      hooks: {
        record: (ctx) => {
          seen.push(ctx);
          journal.push(`${ctx.undo ? "undo" : "do"} ${ctx.options.name ?? "?"}`);
          if (ctx.options.fail) throw new Error(`${ctx.options.name} failed`);
        },
        // returns its own undo (a function) instead of relying on the runbook's `undo:`
        "self-undo": (ctx) => {
          journal.push(`do ${ctx.options.name}`);
          return { undo: async () => void journal.push(`self-undo ${ctx.options.name}`) };
        },
        // a real process that never exits: killed when the hook's signal aborts
        "hang-process": async (ctx) => {
          journal.push("do hang-process");
          const child = spawn(process.execPath, ["-e", "setInterval(() => {}, 1e9)"], {
            signal: ctx.signal,
            stdio: "ignore",
          });
          if (ctx.options.pidFile && child.pid) writeFileSync(ctx.options.pidFile, String(child.pid));
          await new Promise((resolve, reject) => {
            child.on("exit", resolve);
            child.on("error", reject);
          });
        },
        // ignores its signal entirely: abandoned at the timeout
        "hang-forever": () => new Promise<void>(() => journal.push("do hang-forever")),
      },
    }),
    { kind: "file", path: "/tmp/test-hooks.ts" },
  );
  return registry;
}

/** Runs hook steps as the runner does: run, push its undo, stop at the first failure. */
async function runSteps(
  registry: PluginRegistry,
  calls: HookCallSpec[],
  stack: UndoStack,
  ctx: ReturnType<typeof recordingContext>,
  opts: { timeoutMs?: number; signal?: AbortSignal } = {},
): Promise<boolean> {
  for (const [i, call] of calls.entries()) {
    const step = stepInfo(i, `s${i}`, "hook", `step ${i}`, { hook: call }, ctx.redact);
    const outcome = await runHook(registry, call, step, ctx, {
      timeoutMs: opts.timeoutMs ?? 5000,
      ...(opts.signal ? { signal: opts.signal } : {}),
    });
    stack.push(undoFor(registry, call, outcome, step, ctx, 5000));
    if (!outcome.ok) return false;
  }
  return true;
}

describe("undo", () => {
  it("runs the undo of every hook that ran, last first, each even after a failing one, and reports each", async () => {
    const journal: string[] = [];
    const reg = await registryWith(journal);
    const ctx = recordingContext(tempDir());
    const stack = new UndoStack();
    const ok = await runSteps(
      reg,
      [
        { use: "record", with: { name: "a" }, undo: { use: "record", with: { name: "a" } } },
        { use: "self-undo", with: { name: "b" } },
        { use: "record", with: { name: "c" }, undo: { use: "record", with: { name: "c", fail: true } } },
        { use: "record", with: { name: "d", fail: true }, undo: { use: "record", with: { name: "d" } } },
        { use: "record", with: { name: "never" }, undo: { use: "record", with: { name: "never" } } },
      ],
      stack,
      ctx,
    );
    expect(ok).toBe(false);
    const started: string[] = [];
    const reports = await stack.unwind({ started: (e) => started.push(`${e.step.id}:${e.use}`) });
    expect(journal).toEqual(["do a", "do b", "do c", "do d", "undo d", "undo c", "self-undo b", "undo a"]);
    expect(started).toEqual(["s3:record", "s2:record", "s1:self-undo", "s0:record"]);
    expect(reports.map((r) => [r.entry.step.id, r.entry.origin, r.outcome.ok])).toEqual([
      ["s3", "runbook", true],
      ["s2", "runbook", false],
      ["s1", "hook", true],
      ["s0", "runbook", true],
    ]);
    expect(reports[1]?.outcome).toMatchObject({ ok: false, error: "hook record failed: c failed" });
    expect(stack.size).toBe(0);
    expect(await stack.unwind()).toEqual([]);
  });

  it("after commit is sent nothing is undone", async () => {
    const journal: string[] = [];
    const reg = await registryWith(journal);
    const ctx = recordingContext(tempDir());
    const stack = new UndoStack();
    await runSteps(
      reg,
      [{ use: "record", with: { name: "a" }, undo: { use: "record", with: { name: "a" } } }],
      stack,
      ctx,
    );
    stack.disarm(); // the runner calls this when commit was sent
    await runSteps(reg, [{ use: "self-undo", with: { name: "b" } }], stack, ctx);
    expect(await stack.unwind()).toEqual([]);
    expect(journal).toEqual(["do a", "do b"]);
  });

  it("the runbook's undo wins over the one a hook returns", async () => {
    const journal: string[] = [];
    const reg = await registryWith(journal);
    const stack = new UndoStack();
    await runSteps(
      reg,
      [{ use: "self-undo", with: { name: "b" }, undo: { use: "record", with: { name: "b" } } }],
      stack,
      recordingContext(tempDir()),
    );
    await stack.unwind();
    expect(journal).toEqual(["do b", "undo b"]);
  });

  it("a hook that hangs is killed at its timeout, the step fails, and its undo still runs", async () => {
    const journal: string[] = [];
    const reg = await registryWith(journal);
    const dir = tempDir();
    const pidFile = join(dir, "pid");
    const ctx = recordingContext(dir);
    const stack = new UndoStack();
    const t = performance.now();
    const ok = await runSteps(
      reg,
      [
        { use: "record", with: { name: "a" }, undo: { use: "record", with: { name: "a" } } },
        { use: "hang-process", with: { pidFile }, undo: { use: "record", with: { name: "hang" } } },
      ],
      stack,
      ctx,
      { timeoutMs: 400 },
    );
    expect(ok).toBe(false);
    expect(performance.now() - t).toBeLessThan(3000);
    const pid = Number(readFileSync(pidFile, "utf8"));
    for (let i = 0; i < 50 && alive(pid); i++) await sleep(20);
    expect(alive(pid)).toBe(false);
    await stack.unwind();
    expect(journal).toEqual(["do a", "do hang-process", "undo hang", "undo a"]);
  });

  it("a hook that ignores its signal is abandoned at its timeout, and its undo still runs", async () => {
    const journal: string[] = [];
    const reg = await registryWith(journal);
    const stack = new UndoStack();
    const ctx = recordingContext(tempDir());
    const step = stepInfo(0, "s0", "hook", "s0", {}, ctx.redact);
    const call = { use: "hang-forever", undo: { use: "record", with: { name: "forever" } } };
    const out = await runHook(reg, call, step, ctx, { timeoutMs: 100 });
    expect(out).toMatchObject({
      ok: false,
      timedOut: true,
      error: "hook hang-forever timed out after 100ms; abandoned",
    });
    stack.push(undoFor(reg, call, out, step, ctx, 1000));
    await stack.unwind();
    expect(journal).toEqual(["do hang-forever", "undo forever"]);
  });

  it("a step's time limit that ends a hook is the step's (interrupted), never the hook's own timeout (issue 40: one timeout error)", async () => {
    const journal: string[] = [];
    const reg = await registryWith(journal);
    const ctx = recordingContext(tempDir());
    const step = stepInfo(0, "s0", "hook", "s0", {}, ctx.redact);
    const ctl = new AbortController();
    // the step's signal aborts with its StepTimeout, itself a TimeoutError (src/timers.ts)
    setTimeout(() => ctl.abort(new StepTimeout(100)), 100);
    const out = await runHook(reg, { use: "hang-forever" }, step, ctx, { timeoutMs: 10_000, signal: ctl.signal });
    expect(out).toMatchObject({
      ok: false,
      timedOut: false,
      interrupted: true,
      error: "hook hang-forever interrupted",
    });
  });

  it("Ctrl-C interrupts the running hook; the undos still run (they do not share the run's signal)", async () => {
    const journal: string[] = [];
    const reg = await registryWith(journal);
    const ctx = recordingContext(tempDir());
    const stack = new UndoStack();
    const ctl = new AbortController();
    setTimeout(() => ctl.abort(), 100);
    const ok = await runSteps(
      reg,
      [
        { use: "record", with: { name: "a" }, undo: { use: "record", with: { name: "a" } } },
        { use: "hang-forever", undo: { use: "record", with: { name: "b" } } },
      ],
      stack,
      ctx,
      { signal: ctl.signal, timeoutMs: 10_000 },
    );
    expect(ok).toBe(false);
    const reports = await stack.unwind();
    expect(reports.map((r) => r.outcome.ok)).toEqual([true, true]);
    expect(journal).toEqual(["do a", "do hang-forever", "undo b", "undo a"]);
  });
});

describe("hook context", () => {
  it("gets the redacted step, the fleet's last progress, a redacting logger, the runbook folder and its options with defaults", async () => {
    const seen: HookContext[] = [];
    const reg = await registryWith([], seen);
    const dir = tempDir();
    const secret = "pw-PLANTED-77";
    const ctx = recordingContext(dir, [secret]);
    const fleet = createFleetTracker();
    const inst = { url: "http://127.0.0.1:27182", index: 0, name: "rs" };
    void fleet.listener(
      ev<RunEventOf<"run.started">>({
        type: "run.started",
        runbook: "r",
        file: "f",
        hash: "h",
        instances: [inst, { url: "http://127.0.0.1:27183", index: 1 }],
        mode: "rehearse",
        steps: [],
      }),
    );
    void fleet.listener(
      ev<RunEventOf<"progress.sampled">>({
        type: "progress.sampled",
        instance: inst,
        progress: { state: "RUNNING", lagTimeSeconds: 3 },
      }),
    );
    const call = { use: "record", with: { name: `n-${secret}` } };
    const step: StepInfo = stepInfo(
      4,
      "stop",
      "stopWrites",
      "Stop writes",
      {
        id: "stop",
        stopWrites: { use: "record", with: { headers: { Authorization: "Basic abc" }, name: `n-${secret}` } },
      },
      ctx.redact,
    );
    await runHook(reg, call, step, { ...ctx, fleet: fleet.snapshot }, { timeoutMs: 1000 });
    const h = seen[0]!;
    expect(h.step.raw).toEqual({
      id: "stop",
      stopWrites: { use: "record", with: { headers: { Authorization: "[redacted]" }, name: "n-***" } },
    });
    expect(h.fleet).toEqual([
      { instance: inst, progress: { state: "RUNNING", lagTimeSeconds: 3 }, sampledAt: expect.any(Number) },
      { instance: { url: "http://127.0.0.1:27183", index: 1 }, progress: undefined, sampledAt: undefined },
    ]);
    expect(Object.isFrozen(h.fleet[0]!.progress)).toBe(true);
    expect(h.cwd).toBe(dir);
    expect(h.undo).toBe(false);
    expect(h.signal.aborted).toBe(false);
    h.log.warn(`password is ${secret} at https://user:hunter2@db.example.com/x`);
    expect(ctx.logs.at(-1)).toBe("warn record: password is *** at https://***@db.example.com/x");
  });
});

describe("sim-writes (rehearsals)", () => {
  let sim: Simulator;
  it("stops the simulated application's writes, and its undo switches them back on", async () => {
    sim = await startSimulator({ instances: 2 });
    cleanups.push(() => sim.close());
    const reg = await registryWith([]);
    const ctx = recordingContext(tempDir());
    const fleet = createFleetTracker();
    void fleet.listener(
      ev<RunEventOf<"run.started">>({
        type: "run.started",
        runbook: "r",
        file: "f",
        hash: "h",
        instances: sim.instances.map((s, index) => ({ url: s.url, index })),
        mode: "rehearse",
        steps: [],
      }),
    );
    expect(sim.control.state().writes.enabled).toBe(true);
    const step = stepInfo(0, "stop", "stopWrites", "stop", {}, ctx.redact);
    // no url: the first instance's control API (the simulator serves /sim on every port)
    const out = await runHook(reg, { use: "sim-writes" }, step, { ...ctx, fleet: fleet.snapshot }, { timeoutMs: 5000 });
    expect(out).toMatchObject({ ok: true, summary: "simulated application writes off" });
    expect(sim.control.state().writes.enabled).toBe(false);
    const stack = new UndoStack();
    stack.push(undoFor(reg, { use: "sim-writes" }, out, step, ctx, 5000));
    const [report] = await stack.unwind();
    expect(report?.outcome.ok).toBe(true);
    expect(sim.control.state().writes.enabled).toBe(true);
    // an explicit URL to another port's /sim works the same
    const again = await runHook(reg, { use: "sim-writes", with: { url: `${sim.instances[1]!.url}/sim` } }, step, ctx, {
      timeoutMs: 5000,
    });
    expect(again.ok).toBe(true);
    expect(sim.control.state().writes.enabled).toBe(false);
  });

  it("fails against something that is not the simulator", async () => {
    const reg = await registryWith([]);
    const ctx = recordingContext(tempDir());
    const out = await runHook(
      reg,
      { use: "sim-writes", with: { url: "http://127.0.0.1:1" } },
      stepInfo(0, "s", "stopWrites", "s", {}, ctx.redact),
      ctx,
      { timeoutMs: 5000 },
    );
    expect(out.ok).toBe(false);
    if (!out.ok) expect(out.error).toContain("POST http://127.0.0.1:1/sim/writes");
  });
});
