/**
 * Multi-instance consistency: "When several service instances sync between sharded clusters,
 * identical API commands must be sent to every instance." / start rule 6: "Multiple instances:
 * send identical commands to each instance."
 */
import { afterEach, describe, expect, it } from "vitest";
import type { Simulator } from "../../src/sim/index.js";
import { RS_TO_SHARDED, broadcast, call, frozen, post, progress, until } from "../support/sim.js";

let sim: Simulator;
afterEach(async () => {
  await sim?.close();
});

const wait = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe("identical commands to every instance", () => {
  it("a command sent to all instances within the grace window is fine", async () => {
    sim = await frozen({ instances: 3 });
    await broadcast(sim, "start", RS_TO_SHARDED);
    const st = sim.control.state();
    expect(st.openRounds).toEqual([]); // complete: every instance accepted it
    expect(st.fleetErrors).toEqual([]);
    expect(st.instances.map((i) => i.state)).toEqual(["RUNNING", "RUNNING", "RUNNING"]);
  });

  it("a command that reaches some instances but not all within the grace window is a fleet error", async () => {
    sim = await frozen({ instances: 3, graceMs: 100 });
    await post(sim, 0, "start", RS_TO_SHARDED);
    await post(sim, 2, "start", RS_TO_SHARDED);
    expect(sim.control.state().openRounds).toEqual([{ command: "start", accepted: [0, 2], ageMs: expect.any(Number) }]);
    await wait(150);
    const { fleetErrors } = (await call(`${sim.instances[1]!.url}/sim/state`)).json.state;
    expect(fleetErrors).toHaveLength(1);
    expect(fleetErrors[0]).toMatchObject({ command: "start", accepted: [0, 2], missing: [1] });
    expect(fleetErrors[0].message).toMatch(/identical commands must be sent to every instance/);
  });

  // facts: "`commit` and `reverse` block until they have been called on every instance; send them to all at once"
  it("commit blocks until every instance has it: a lost one resent later completes it, and nobody commits alone", async () => {
    sim = await frozen({ instances: 2, faults: ["reset=1@1/commit"], graceMs: 30 });
    await broadcast(sim, "start", RS_TO_SHARDED);
    sim.control.advance(40);
    sim.control.setWrites({ enabled: false });
    const zero = post(sim, 0, "commit");
    await expect(post(sim, 1, "commit")).rejects.toThrow();
    await until(() => sim.control.state().openRounds.length === 1);
    sim.control.clearFaults();
    expect(sim.control.state().openRounds).toEqual([
      { command: "commit", accepted: [0], ageMs: expect.any(Number), blocking: true },
    ]);
    await wait(60); // past the grace window: still no fleet error, and instance 0 still RUNNING
    expect((await progress(sim, 0)).progress.state).toBe("RUNNING");
    expect((await post(sim, 1, "commit")).json.success).toBe(true);
    expect((await zero).json.success).toBe(true);
    expect(sim.control.state().openRounds).toEqual([]);
    expect(sim.control.state().fleetErrors).toEqual([]);
    expect((await progress(sim, 0)).progress.state).toBe("COMMITTING");
    expect((await progress(sim, 1)).progress.state).toBe("COMMITTING");
    expect(sim.control.counts().instances.map((c) => c["POST /api/v1/commit"])).toEqual([1, 2]);
  });

  it("an instance that goes down while it waits in commit drops out: its connection is cut, the others wait on", async () => {
    sim = await frozen({ instances: 3 });
    await broadcast(sim, "start", RS_TO_SHARDED);
    sim.control.advance(40);
    sim.control.setWrites({ enabled: false });
    const zero = post(sim, 0, "commit");
    const one = post(sim, 1, "commit");
    await until(() => sim.control.state().openRounds[0]?.accepted.length === 2);
    await sim.control.down(1);
    await expect(one).rejects.toThrow();
    expect(sim.control.state().openRounds[0]).toMatchObject({ command: "commit", accepted: [0] });
    await sim.control.up(1);
    await Promise.all([post(sim, 1, "commit"), post(sim, 2, "commit")]);
    expect((await zero).json.success).toBe(true);
  });

  it("start bodies must be identical on every instance", async () => {
    sim = await frozen({ instances: 2 });
    await post(sim, 0, "start", RS_TO_SHARDED);
    await post(sim, 1, "start", { ...RS_TO_SHARDED, buildIndexes: "never" });
    const errs = sim.control.state().fleetErrors;
    expect(errs).toHaveLength(1);
    expect(errs[0]!.message).toMatch(/start bodies differ/);
  });

  it("key order does not make bodies different", async () => {
    sim = await frozen({ instances: 2 });
    await post(sim, 0, "start", { source: "cluster0", destination: "cluster1", sharding: { shardingEntries: [] } });
    await post(sim, 1, "start", { sharding: { shardingEntries: [] }, destination: "cluster1", source: "cluster0" });
    expect(sim.control.state().fleetErrors).toEqual([]);
  });

  it("a refused command does not count (it changed nothing)", async () => {
    sim = await frozen({ instances: 2, graceMs: 50 });
    await post(sim, 0, "commit"); // refused: IDLE
    await wait(80);
    expect(sim.control.state().fleetErrors).toEqual([]);
  });

  it("the data is split across instances; every instance reaches CEA; instance 0 coordinates", async () => {
    sim = await frozen({ instances: 4, data: 4 * 2 ** 30 + 3 });
    const st = sim.control.state();
    expect(st.instances.reduce((s, i) => s + i.shareBytes, 0)).toBe(4 * 2 ** 30 + 3);
    await broadcast(sim, "start", RS_TO_SHARDED);
    sim.control.advance(40);
    for (let i = 0; i < 4; i++) {
      const p = (await progress(sim, i)).progress;
      expect(p.info).toBe("change event application");
      expect(p.coordinatorID).toBe("instance-0");
    }
  });
});
