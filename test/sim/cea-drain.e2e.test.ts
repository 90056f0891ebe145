/**
 * Issue 38, 1.22's `ceaStage`: the simulator at 1.22 says "collection copy drain" while change
 * event application drains the backlog the collection copy left, then "steady state"
 * (service-facts.md's progress table; release notes 1.22, mongodb/docs
 * content/mongosync/current/source/release-notes/1.22.txt, 42e877ed). With the drain slower than
 * the source's writes (`drainApplyFactor`, a knob of the model), the lag rises while it drains and
 * falls after: readiness, folded from the answers as every reader folds them, says the drain's lag
 * is no verdict ("ETA unknown", never "not converging"), then gives an ETA from the fall.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { RunEvent } from "../../src/events.js";
import { CutoverFold } from "../../src/model/fold.js";
import { readiness, readinessLine } from "../../src/model/readiness.js";
import type { Simulator } from "../../src/sim/index.js";
import { traitsOf } from "../../src/steps/index.js";
import { broadcast, frozen, progress } from "../support/sim.js";

let sim: Simulator | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

const RS_TO_RS = { cluster0: { topology: "replicaSet" as const }, cluster1: { topology: "replicaSet" as const } };

/** Reads progress every `step` simulated seconds, `n` times, folding each answer; returns the answers. */
async function sample(s: Simulator, fold: CutoverFold, n: number, step: number): Promise<Record<string, unknown>[]> {
  const out: Record<string, unknown>[] = [];
  for (let k = 0; k < n; k++) {
    s.control.advance(step);
    const p = (await progress(s)).progress as Record<string, unknown>;
    out.push(p);
    fold.apply({
      type: "progress.sampled",
      seq: k + 1,
      at: Math.round(s.control.now() * 1000),
      instance: { url: s.instances[0]!.url, name: "sync0", index: 0 },
      progress: p,
    } as unknown as RunEvent);
  }
  return out;
}

describe("1.22 ceaStage: the drain of the copy's backlog in the simulator, and readiness's words", () => {
  it("a slow drain: the lag rises while ceaStage says 'collection copy drain', and readiness says so without 'not converging'", async () => {
    const s = (sim = await frozen({ serviceVersion: "1.22.0", clusters: RS_TO_RS, model: { drainApplyFactor: 0.2 } }));
    s.control.advance(2); // INITIALIZING (1.20+)
    expect((await broadcast(s, "start", { source: "cluster0", destination: "cluster1" }))[0]!.json).toEqual({
      success: true,
    });
    s.control.advance(20); // pre-copy 3 s + copy 16 s (1 GiB at 64 MiB/s): change event application begins
    const drain = new CutoverFold({ traits: traitsOf });
    const during = await sample(s, drain, 4, 2);
    for (const p of during) {
      expect(p.info).toBe("change event application");
      expect(p.ceaStage).toBe("collection copy drain");
      // facts: estimatedSecondsToCEACatchup is "omitted … when lag has not decreased"
      expect(p).not.toHaveProperty("estimatedSecondsToCEACatchup");
    }
    const lags = during.map((p) => p.lagTimeSeconds as number);
    expect(lags.at(-1)!).toBeGreaterThan(lags[0]!); // the drain's lag rises
    const i = drain.instances()[0]!;
    expect(i.ceaStage).toBe("collection copy drain");
    const r = readiness(i, { lagBelowSeconds: 5 });
    expect(r.ready).toBe(false);
    expect(r.eta).toBe("unknown");
    expect(readinessLine(r)).toMatch(
      /^not ready \(ETA unknown\): lag \d+s, not below the runbook's lagBelow 5s \(rising [\d.]+s per second; still draining the collection copy's backlog \(ceaStage\), where a lag that does not fall is expected\)/,
    );
    // the same answers without the field (a service before 1.22 says nothing of its drain): not converging
    const { ceaStage: _, ...without } = i;
    const before = readiness(without, { lagBelowSeconds: 5 });
    expect(before.eta).toBe("not converging");

    // the drain ends (about 19 000 events at 800 a second): steady state, and the lag falls
    let guard = 0;
    while ((await progress(s)).progress.ceaStage === "collection copy drain" && guard++ < 60) s.control.advance(1);
    expect(guard).toBeGreaterThan(5); // it drained for a while yet
    const steady = new CutoverFold({ traits: traitsOf });
    const after = await sample(s, steady, 3, 1);
    for (const p of after) expect(p.ceaStage).toBe("steady state");
    const a = after.map((p) => p.lagTimeSeconds as number);
    expect(a.at(-1)!).toBeLessThan(a[0]!);
    const j = steady.instances()[0]!;
    const rs = readiness(j, { lagBelowSeconds: 3 });
    if (!rs.ready) expect(rs.eta).toMatch(/^about /);
    expect(readinessLine(rs)).not.toMatch(/draining/);
  });

  it("with the model's default (the drain as fast as steady state) the drain's lag falls, as before", async () => {
    const s = (sim = await frozen({ serviceVersion: "1.22.0", clusters: RS_TO_RS }));
    s.control.advance(2);
    await broadcast(s, "start", { source: "cluster0", destination: "cluster1" });
    s.control.advance(20);
    const fold = new CutoverFold({ traits: traitsOf });
    const during = await sample(s, fold, 3, 1);
    expect(during[0]!.ceaStage).toBe("collection copy drain");
    const lags = during.map((p) => p.lagTimeSeconds as number);
    expect(lags.at(-1)!).toBeLessThan(lags[0]!);
  });
});
