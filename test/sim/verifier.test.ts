/**
 * The verifier (spec: "Verifier progress response"; facts: "The migration verifier"):
 * check, writesOff, progress with phase, error and seven counters kept consistent.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { Simulator } from "../../src/sim/index.js";
import {
  RS_TO_SHARDED,
  broadcast,
  call,
  frozen,
  post,
  progress,
  toCea,
  verifierInvariants,
  verifierProgress,
} from "../support/sim.js";

let sim: Simulator;
afterEach(async () => {
  await sim?.close();
});

const check = (s: Simulator): Promise<{ json: { success: boolean } }> =>
  call(`${s.verifierUrl}/api/v1/check`, "POST", {});
const writesOff = (s: Simulator): Promise<{ json: { success: boolean } }> =>
  call(`${s.verifierUrl}/api/v1/writesOff`, "POST", {});

/** Steps the clock, checking the invariants at every sample, until the verifier is idle. */
async function runToIdle(s: Simulator, step = 2, max = 400): Promise<Record<string, number>> {
  for (let k = 0; k < max; k++) {
    const p = await verifierProgress(s);
    verifierInvariants(p.verificationStatus);
    if (p.phase === "idle") return p.verificationStatus;
    s.control.advance(step);
  }
  throw new Error("the verifier never became idle");
}

/** A clean cutover: CEA, check, writes off, commit on every instance, writesOff. */
async function cleanCutover(s: Simulator): Promise<void> {
  await toCea(s);
  expect((await check(s)).json).toEqual({ success: true });
  s.control.advance(10);
  s.control.setWrites({ enabled: false });
  await broadcast(s, "commit");
  s.control.advance(5);
  expect((await progress(s)).progress.state).toBe("COMMITTED");
  expect((await writesOff(s)).json).toEqual({ success: true });
}

describe("verifier", () => {
  // "Top level object `progress` with: phase, error, verificationStatus"
  it("answers the documented shape; idle with no tasks before a check", async () => {
    sim = await frozen();
    const a = await call(`${sim.verifierUrl}/api/v1/progress`, "GET", undefined, {
      "content-type": "application/json",
    });
    expect(a.json).toEqual({
      progress: {
        phase: "idle",
        error: null,
        verificationStatus: {
          totalTasks: 0,
          addedTasks: 0,
          processingTasks: 0,
          failedTasks: 0,
          completedTasks: 0,
          metadataMismatchTasks: 0,
          recheckTasks: 0,
        },
      },
    });
  });

  // "after the sync service's progress shows `info` equal to `change event application`, verification checks may start"
  it("checks make progress only once the sync is in change event application", async () => {
    sim = await frozen();
    await post(sim, 0, "start", RS_TO_SHARDED);
    expect((await check(sim)).json).toEqual({ success: true });
    const before = await verifierProgress(sim);
    expect(before.phase).toBe("check");
    sim.control.advance(15); // still copying
    expect((await progress(sim)).progress.info).toBe("collection copy");
    const during = await verifierProgress(sim);
    expect(during.verificationStatus.completedTasks).toBe(0);
    expect(during.verificationStatus.processingTasks).toBe(0);
    sim.control.advance(10); // CEA from t = 19
    const after = await verifierProgress(sim);
    expect(after.verificationStatus.completedTasks).toBeGreaterThan(0);
    verifierInvariants(after.verificationStatus);
  });

  // "When phase is `idle` and failedTasks is 0, the sync was verified successfully."
  it("a clean cutover ends idle with failedTasks 0, error null, every task completed", async () => {
    sim = await frozen();
    await cleanCutover(sim);
    const s = await runToIdle(sim);
    expect(s.failedTasks).toBe(0);
    expect(s.completedTasks).toBe(s.totalTasks);
    expect((await verifierProgress(sim)).error).toBeNull();
    expect(sim.control.state().writes.lost).toBe(0);
  });

  it("phases go idle → check → recheck → idle, and counters never go down", async () => {
    sim = await frozen();
    await toCea(sim);
    await check(sim);
    const phases: string[] = [];
    let last = { totalTasks: 0, completedTasks: 0, failedTasks: 0 };
    for (let k = 0; k < 60; k++) {
      const p = await verifierProgress(sim);
      if (phases.at(-1) !== p.phase) phases.push(p.phase);
      const s = p.verificationStatus;
      expect(s.totalTasks).toBeGreaterThanOrEqual(last.totalTasks);
      expect(s.completedTasks).toBeGreaterThanOrEqual(last.completedTasks);
      expect(s.failedTasks).toBeGreaterThanOrEqual(last.failedTasks);
      last = s;
      if (k === 30) {
        sim.control.setWrites({ enabled: false });
        await post(sim, 0, "commit");
        await writesOff(sim);
      }
      sim.control.advance(1);
    }
    expect(phases).toEqual(["check", "recheck", "idle"]);
    // Writes during the check were rechecked.
    expect(last.totalTasks).toBeGreaterThan(4);
  });

  it("without writesOff it never finishes (facts: writesOff tells it writes have stopped, so it can finish)", async () => {
    sim = await frozen();
    await toCea(sim);
    await check(sim);
    sim.control.setWrites({ enabled: false });
    sim.control.advance(3600);
    expect((await verifierProgress(sim)).phase).toBe("recheck");
  });

  // "Writes that reach the source after commit is sent are counted as lost."
  it("writes left on during commit are lost: failedTasks > 0", async () => {
    sim = await frozen();
    await toCea(sim);
    await check(sim);
    await post(sim, 0, "commit"); // the application still writes
    sim.control.advance(5);
    sim.control.setWrites({ enabled: false });
    await writesOff(sim);
    expect(sim.control.state().writes.lost).toBeGreaterThan(1000);
    const s = await runToIdle(sim);
    expect(s.failedTasks).toBeGreaterThan(0);
  });

  it("lost writes are found by a check started after the commit, too", async () => {
    sim = await frozen();
    await toCea(sim);
    await post(sim, 0, "commit");
    sim.control.advance(5);
    sim.control.setWrites({ enabled: false });
    await check(sim);
    await writesOff(sim);
    expect((await runToIdle(sim)).failedTasks).toBeGreaterThan(0);
  });

  // "The verifier does not support DDL operations, so no DDL may run on the source while verification is in progress."
  it("DDL during verification fails it; DDL outside verification does not", async () => {
    sim = await frozen();
    await toCea(sim);
    expect((await call(`${sim.instances[0]!.url}/sim/ddl`, "POST", {})).json).toEqual({
      success: true,
      duringVerification: false,
    });
    await check(sim);
    expect((await call(`${sim.verifierUrl}/sim/ddl`, "POST", {})).json).toEqual({
      success: true,
      duringVerification: true,
    });
    sim.control.setWrites({ enabled: false });
    await post(sim, 0, "commit");
    await writesOff(sim);
    const s = await runToIdle(sim);
    expect(s.failedTasks).toBeGreaterThan(0);
    expect(s.metadataMismatchTasks).toBeGreaterThan(0);
  });

  it("a fleet error fails the verification", async () => {
    sim = await frozen({ instances: 2, graceMs: 30 });
    await broadcast(sim, "start", RS_TO_SHARDED);
    sim.control.advance(40);
    await check(sim);
    sim.control.setWrites({ enabled: false });
    await post(sim, 0, "commit"); // instance 1 never gets it
    await new Promise((r) => setTimeout(r, 60));
    await writesOff(sim);
    expect(sim.control.state().fleetErrors).toHaveLength(1);
    // Instance 1 gets its commit late: the fleet error stands, and fails a task.
    await post(sim, 1, "commit");
    expect((await runToIdle(sim)).failedTasks).toBeGreaterThan(0);
  });

  it("check takes {} and is refused while a check is in progress; a new check after idle starts over", async () => {
    sim = await frozen();
    expect((await call(`${sim.verifierUrl}/api/v1/check`, "POST", '{"x":1}')).json).toMatchObject({
      success: false,
      error: "InvalidRequest",
    });
    expect((await call(`${sim.verifierUrl}/api/v1/check`, "POST", "{")).json).toMatchObject({
      success: false,
      error: "BadJSON",
    });
    await cleanCutover(sim);
    expect((await check(sim)).json).toMatchObject({ success: false, error: "InvalidStateTransition" });
    await runToIdle(sim);
    expect((await check(sim)).json).toEqual({ success: true });
    expect((await verifierProgress(sim)).phase).toBe("check");
  });
});
