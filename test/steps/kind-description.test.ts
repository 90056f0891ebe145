/**
 * What a step kind says of itself (src/steps/kit/define.ts), which the dry run, the runner's
 * undo, a resume, the window readers and the rehearsal ask instead of naming kinds.
 */
import { describe, expect, it } from "vitest";
import type { Step } from "../../src/runbook/types.js";
import { UNDO_TIMEOUT_MS, bindStep, opensWriteStop } from "../../src/steps/index.js";

const stop: Step = {
  id: "stop",
  stopWrites: { use: "http", with: { url: "http://a" }, timeout: "5s", undo: { use: "http", timeout: "7s" } },
};
const hook: Step = { id: "h", hook: { use: "shell", undo: { use: "shell" } } };
const pluginStep = { id: "p", "drain-traffic": { pool: "a" } } as unknown as Step;
const notifyVia: Step = { id: "n", notify: { use: "webhook", with: { url: "http://x" } } };
const to = { simUrl: "http://127.0.0.1:1", keepHooks: false };

describe("a step kind describes itself", () => {
  it("only stopWrites opens the write-stop window", () => {
    expect(opensWriteStop("stopWrites")).toBe(true);
    for (const k of ["hook", "commit", "start", "drain-traffic", "toString", undefined])
      expect(opensWriteStop(k), String(k)).toBe(false);
    expect(bindStep(stop).opensWriteStop).toBe(true);
    expect(bindStep(hook).opensWriteStop).toBe(false);
  });
  it("start, commit, reverse and stopWrites end the run when they fail, whatever continueOnError says", () => {
    const kinds: Step[] = [
      { id: "s", start: { source: "cluster0", destination: "cluster1" } },
      { id: "c", commit: {} },
      { id: "r", reverse: {} },
      stop,
    ];
    for (const s of kinds)
      expect(bindStep(s).failureStopsRun, s.id).toMatch(/^a (start|commit|reverse|write stop) that failed/);
    const others: Step[] = [
      { id: "p", pause: {} },
      { id: "u", resume: {} },
      hook,
      pluginStep,
      notifyVia,
      { id: "w", waitFor: { canCommit: true } },
    ];
    for (const s of others) expect(bindStep(s).failureStopsRun, s.id).toBeUndefined();
  });
  it("stopWrites and hook run a hook call with an undo; its time limit is the call's, else the default", () => {
    expect(bindStep(stop).hookCall()?.use).toBe("http");
    expect(bindStep(stop).undoTimeoutMs()).toBe(7000);
    expect(bindStep(hook).hookCall()?.use).toBe("shell");
    expect(bindStep(hook).undoTimeoutMs()).toBe(UNDO_TIMEOUT_MS);
    expect(bindStep(pluginStep).hookCall()).toBeUndefined();
    expect(bindStep(pluginStep).undoTimeoutMs()).toBe(UNDO_TIMEOUT_MS);
    expect(bindStep({ id: "c", commit: {} }).hookCall()).toBeUndefined();
    expect(bindStep({ id: "c", commit: {} }).undoTimeoutMs()).toBeUndefined();
  });
  it("its rehearsal stand-in: the simulator's switch, a line for a hook or a plugin step, never a notification", () => {
    expect(bindStep(stop).rehearsal(to)).toEqual({
      ...stop,
      stopWrites: { use: "sim-writes", with: { url: to.simUrl }, timeout: "5s" },
    });
    expect(bindStep(hook).rehearsal(to)).toEqual({
      id: "h",
      notify: "rehearsal: hook shell not run (--keep-hooks runs it)",
    });
    expect(bindStep(pluginStep).rehearsal(to)).toEqual({
      id: "p",
      notify: "rehearsal: plugin step drain-traffic not run (--keep-hooks runs it)",
    });
    const kept = { ...to, keepHooks: true };
    expect(bindStep(stop).rehearsal(kept)).toBe(stop);
    expect(bindStep(hook).rehearsal(kept)).toBe(hook);
    expect(bindStep(pluginStep).rehearsal(kept)).toBe(pluginStep);
    for (const t of [to, kept])
      expect(bindStep(notifyVia).rehearsal(t)).toEqual({
        id: "n",
        notify: "rehearsal: notification through webhook not sent",
      });
    const plain: Step = { id: "m", notify: "hello" };
    expect(bindStep(plain).rehearsal(to)).toBe(plain);
  });
});
