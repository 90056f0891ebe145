/**
 * Issue 42, invariant 1, at the function boundary (src/steps/kit/writes-on.ts): the read of the
 * fleet before any undo of a write stop, state by state, against a scripted fleet. Writes go back
 * on only when every instance answers in a state no commit has taken effect in, syncing the way
 * the runbook says (spec "States and transitions"; service facts: INITIALIZING returns to the
 * state before a restart, "COMMITTED → REVERSING → RUNNING in the opposite direction").
 * End to end, at every entry point: test/run/writes-on.e2e.test.ts.
 */
import { describe, expect, it } from "vitest";
import type { Progress } from "../../src/api/types.js";
import type { Step } from "../../src/runbook/types.js";
import { BEFORE_COMMIT, writesOnVerdict } from "../../src/steps/index.js";
import { context, scripted, type Read } from "../support/fleet-fake.js";

const FORWARD = { Source: "cluster0: a:1", Destination: "cluster1: b:1" };
const BACK = { Source: "cluster1: b:1", Destination: "cluster0: a:1" };

function verdictOf(reads: Read[][], o: { steps?: Step[]; direction?: boolean; giveUpMs?: number } = {}) {
  const f = scripted({ sends: [], reads });
  const { ctx } = context(f.fleet);
  if (o.steps) Object.assign(ctx.run.runbook, { steps: o.steps });
  if (o.direction)
    ctx.run.memory.identity.direction = { source: "cluster0", destination: "cluster1", from: "its start" };
  return { f, v: writesOnVerdict(ctx.run, new AbortController().signal, o.giveUpMs ?? 0) };
}

const at = (state: Progress["state"], over: Partial<Progress> = {}): Read => ({ state, ...over });

describe("writesOnVerdict: may writes go back on at the source?", () => {
  it("the states no commit has taken effect in: IDLE, RUNNING, PAUSED", () => {
    expect([...BEFORE_COMMIT].sort()).toEqual(["IDLE", "PAUSED", "RUNNING"]);
  });

  it("every instance before commit: yes, with what each showed", async () => {
    const { v } = verdictOf([[at("RUNNING")], [at("PAUSED")], [at("IDLE")]]);
    expect(await v).toEqual({ ok: true, detail: "sync0 is RUNNING, sync1 is PAUSED, sync2 is IDLE" });
  });

  for (const state of ["COMMITTING", "COMMITTED", "REVERSING"] as const)
    it(`one instance ${state}: no, a commit took effect (no read again)`, async () => {
      const { f, v } = verdictOf([[at("RUNNING")], [at(state)]], { giveUpMs: 10_000 });
      expect(await v).toEqual({ ok: false, reason: `sync1 is ${state}`, committed: true });
      expect(f.reads).toBe(1);
    });

  it("an instance that cannot be read: read again until the time is up, then no (not known to be committed)", async () => {
    const { f, v } = verdictOf([[at("RUNNING")], ["error"]], { giveUpMs: 50 });
    const r = await v;
    expect(r).toEqual({
      ok: false,
      reason: "sync1 is unreachable (http://127.0.0.1:27183: progress failed: refused)",
      committed: false,
    });
    expect(f.reads).toBeGreaterThan(1);
  });

  it("INITIALIZING (after a restart it returns to the state before it): read again until it settles", async () => {
    const settles = verdictOf([[at("RUNNING")], [at("INITIALIZING"), at("RUNNING")]], { giveUpMs: 10_000 });
    expect(await settles.v).toMatchObject({ ok: true });
    expect(settles.f.reads).toBe(2);
    const never = verdictOf([[at("INITIALIZING")]], { giveUpMs: 0 });
    expect(await never.v).toEqual({ ok: false, reason: "sync0 is INITIALIZING", committed: false });
    const committed = verdictOf([[at("INITIALIZING"), at("COMMITTED")]], { giveUpMs: 10_000 });
    expect(await committed.v).toEqual({ ok: false, reason: "sync0 is COMMITTED", committed: true });
  });

  it("RUNNING the other way round (committed, then reversed): no, against the run's direction or the runbook's start", async () => {
    const run = verdictOf([[at("RUNNING", { directionMapping: BACK })]], { direction: true });
    const r = await run.v;
    expect(r).toMatchObject({ ok: false, committed: true });
    expect(r.ok === false && r.reason).toMatch(/expected .*cluster0.* \(the direction of its start\)/);
    const start = { start: { source: "cluster0", destination: "cluster1" } } as Step;
    const rb = await verdictOf([[at("RUNNING", { directionMapping: BACK })]], { steps: [start] }).v;
    expect(rb).toMatchObject({ ok: false, committed: true });
    expect(rb.ok === false && rb.reason).toMatch(/\(the direction of the runbook's start\)$/);
    // the way the runbook says: yes
    expect(await verdictOf([[at("RUNNING", { directionMapping: FORWARD })]], { steps: [start] }).v).toMatchObject({
      ok: true,
    });
    // a start switched off says nothing of the direction
    expect(
      await verdictOf([[at("RUNNING", { directionMapping: BACK })]], { steps: [{ ...start, when: false }] }).v,
    ).toMatchObject({ ok: true });
  });

  it("a read that throws: no, the fleet could not be read", async () => {
    const f = scripted({ sends: [], reads: [[at("RUNNING")]] });
    const { ctx } = context({ ...f.fleet, progress: () => Promise.reject(new Error("boom")) });
    expect(await writesOnVerdict(ctx.run, new AbortController().signal, 0)).toEqual({
      ok: false,
      reason: "the fleet could not be read (boom)",
      committed: false,
    });
  });

  it("an identity problem that is no direction (one instance listed twice): no, not committed, and said once; no read again", async () => {
    const twice = [at("RUNNING", { mongosyncID: "same" })];
    const { f, v } = verdictOf([twice, twice], { steps: [], giveUpMs: 10_000 });
    const r = await v;
    expect(r).toMatchObject({ ok: false, committed: false });
    expect(r.ok === false && r.reason.match(/reports mongosyncID "same"/g)).toHaveLength(1);
    expect(f.reads).toBe(1);
    // with a direction against the run's among the problems: committed
    const back = [at("RUNNING", { mongosyncID: "same", directionMapping: BACK })];
    expect(await verdictOf([back, back], { direction: true }).v).toMatchObject({ ok: false, committed: true });
  });

  it("a commit took effect on one instance while another cannot be read: no at once, both said", async () => {
    const { f, v } = verdictOf([[at("COMMITTED")], ["error"]], { giveUpMs: 10_000 });
    expect(await v).toEqual({
      ok: false,
      reason: "sync0 is COMMITTED; sync1 is unreachable (http://127.0.0.1:27183: progress failed: refused)",
      committed: true,
    });
    expect(f.reads).toBe(1);
  });

  it("reads again after the rest of its time, not sooner and not later", async () => {
    const t0 = performance.now();
    const { f, v } = verdictOf([[at("INITIALIZING")]], { giveUpMs: 300 });
    expect(await v).toEqual({ ok: false, reason: "sync0 is INITIALIZING", committed: false });
    expect(f.reads).toBeGreaterThanOrEqual(2);
    expect(f.reads).toBeLessThanOrEqual(3);
    expect(performance.now() - t0).toBeLessThan(900);
  });

  it("aborted while it waits to read again: no, with what it last read", async () => {
    const f = scripted({ sends: [], reads: [[at("INITIALIZING")], ["error"]] });
    const { ctx } = context(f.fleet);
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 30);
    const t0 = performance.now();
    expect(await writesOnVerdict(ctx.run, ac.signal, 10_000)).toEqual({
      ok: false,
      reason: "sync0 is INITIALIZING; sync1 is unreachable (http://127.0.0.1:27183: progress failed: refused)",
      committed: false,
    });
    expect(performance.now() - t0).toBeLessThan(900);
  });
});
