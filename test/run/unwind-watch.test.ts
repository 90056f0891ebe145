/**
 * Each undo of the unwind has its own process watch (src/run/unwind.ts): a process an undo starts
 * late (from a timer, after its call settled) carries that undo's token and is journaled as its
 * own. With one watch for every undo, it carried the next undo's token and was journaled as the
 * next undo's: `--resume` found it, but named the wrong call and used that call's deadline (an
 * outside review, helper 87).
 */
import { describe, expect, it } from "vitest";
import { UndoStack, type UndoEntry } from "../../src/plugin/invoke.js";
import { unwind } from "../../src/run/unwind.js";
import type { RunContext } from "../../src/steps/index.js";
import { tokenOfProcess } from "../support/plugin.js";

const ok = { ok: true as const, durationMs: 1 };

describe("the unwind's process watch", () => {
  it("a process an undo starts after its call settled carries its own token and is journaled as its own, not the next undo's", async () => {
    let late!: Promise<string>;
    let fired!: () => void;
    const timer = new Promise<void>((r) => (fired = r));
    const entry = (index: number, run: UndoEntry["run"]): UndoEntry => ({
      step: {
        index,
        id: `hook-${index}`,
        kind: "hook",
        title: `hook ${index}`,
        raw: {},
      },
      use: "p",
      origin: "hook",
      run,
    });
    const undo = new UndoStack();
    // undone second: still running when the first undo's late process starts
    undo.push(entry(0, () => new Promise((r) => setTimeout(() => r(ok), 300))));
    // undone first: returns at once, and starts a process from a timer 50 ms later
    undo.push(
      entry(1, () => {
        setTimeout(() => {
          late = tokenOfProcess();
          fired();
        }, 50);
        return Promise.resolve(ok);
      }),
    );
    const said: { type: string; payload: Record<string, unknown> }[] = [];
    const say = (type: string, payload: Record<string, unknown>) => void said.push({ type, payload });
    const run = { plugins: { undo }, memory: {}, say, emit: say } as unknown as RunContext;
    await unwind(run, new AbortController().signal, new Set());
    await timer;
    const token = await late;
    const started = said.filter((e) => e.type === "hook.started").map((e) => e.payload);
    expect(started.map((p) => p.index)).toEqual([1, 0]);
    // the late process carried the token of the undo that started it (step 1's), not step 0's
    expect(token).toBe(started[0]!.token);
    const processes = said.filter((e) => e.type === "hook.process").map((e) => e.payload);
    expect(processes).toHaveLength(1);
    expect(processes[0]).toMatchObject({ index: 1, id: "hook-1", undo: true, token: started[0]!.token });
  });
});
