/**
 * The process watch of a hook call (src/plugin/process.ts): every process a call starts carries its
 * token, also one its plugin starts after the call gave up at its timeout, without waiting for it,
 * or after the call and its promise settled (a timer, work it did not await): `--resume` finds
 * such a process by its token (src/run/orphans.ts). A watch turned off while no call ran left the
 * last two unmarked (an outside review).
 */
import { describe, expect, it } from "vitest";
import { loadPlugins, definePlugin, runHook, stepInfo } from "../../src/plugin/index.js";
import { withProcessWatch } from "../../src/plugin/process.js";
import { recordingContext, tempDir, tokenOfProcess } from "../support/plugin.js";

async function withPlugin(run: () => Promise<void>) {
  const { registry } = await loadPlugins({ runbookFile: "/tmp/rb.yaml", entries: [], builtins: "none" });
  registry.add(definePlugin({ name: "p", hooks: { late: run } }), { kind: "file", path: "/tmp/p.ts" });
  const ctx = recordingContext(tempDir());
  const info = stepInfo(1, "late", "hook", "Hook late", { hook: { use: "late" } }, ctx.redact);
  return { registry, ctx, info };
}

describe("the process watch of a hook call", () => {
  it("marks a process its plugin starts after the call timed out", async () => {
    let seen: string | undefined;
    let finished!: () => void;
    const done = new Promise<void>((r) => (finished = r));
    const { registry, ctx, info } = await withPlugin(async () => {
      await new Promise((r) => setTimeout(r, 120));
      seen = await tokenOfProcess();
      finished();
    });
    const spawned: number[] = [];
    const watch = { token: "tok-1", spawned: (p: { pid: number }) => void spawned.push(p.pid) };
    const out = await withProcessWatch(watch, () => runHook(registry, { use: "late" }, info, ctx, { timeoutMs: 20 }));
    expect(out).toMatchObject({ ok: false, timedOut: true });
    await done;
    expect(seen).toBe("tok-1");
    expect(spawned).toHaveLength(1);
  });

  it("marks a process the plugin does not wait for, started before its call ends", async () => {
    let started!: Promise<string>;
    const { registry, ctx, info } = await withPlugin(async () => {
      started = tokenOfProcess();
    });
    const watch = { token: "tok-2", spawned: () => undefined };
    const out = await withProcessWatch(watch, () => runHook(registry, { use: "late" }, info, ctx, { timeoutMs: 5000 }));
    expect(out).toMatchObject({ ok: true });
    expect(await started).toBe("tok-2");
  });

  it("marks a process its plugin starts from a timer after the call and its promise settled", async () => {
    let later!: Promise<string>;
    let fired!: () => void;
    const timer = new Promise<void>((r) => (fired = r));
    const { registry, ctx, info } = await withPlugin(async () => {
      setTimeout(() => {
        later = tokenOfProcess();
        fired();
      }, 50);
    });
    const spawned: number[] = [];
    const watch = { token: "tok-3", spawned: (p: { pid: number }) => void spawned.push(p.pid) };
    const out = await withProcessWatch(watch, () => runHook(registry, { use: "late" }, info, ctx, { timeoutMs: 5000 }));
    expect(out).toMatchObject({ ok: true });
    await timer;
    expect(await later).toBe("tok-3");
    expect(spawned).toHaveLength(1);
  });

  it("marks a process its plugin starts from work it did not await, after the call returned", async () => {
    let later!: Promise<string>;
    const { registry, ctx, info } = await withPlugin(async () => {
      later = (async () => {
        await new Promise((r) => setTimeout(r, 50));
        return tokenOfProcess();
      })();
    });
    const watch = { token: "tok-4", spawned: () => undefined };
    const out = await withProcessWatch(watch, () => runHook(registry, { use: "late" }, info, ctx, { timeoutMs: 5000 }));
    expect(out).toMatchObject({ ok: true });
    expect(await later).toBe("tok-4");
  });

  it("outside every watch, a process carries no token", async () => {
    expect(await tokenOfProcess()).toBe("none");
  });
});
