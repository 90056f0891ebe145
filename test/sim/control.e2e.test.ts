/** The /sim/ control API (issue #3, item 5): on every port, never under /api/v1/. */
import { afterEach, describe, expect, it } from "vitest";
import type { Simulator } from "../../src/sim/index.js";
import { RS_TO_SHARDED, call, frozen, post, progress, toCea } from "../support/sim.js";

let sim: Simulator;
afterEach(async () => {
  await sim?.close();
});

describe("control API", () => {
  it("counts requests per instance and endpoint; DELETE resets them", async () => {
    sim = await frozen({ instances: 2 });
    await progress(sim, 0);
    await progress(sim, 0);
    await progress(sim, 1);
    await post(sim, 1, "start", RS_TO_SHARDED);
    await call(`${sim.instances[0]!.url}/api/v1/nowhere`);
    await call(`${sim.verifierUrl}/api/v1/progress`);
    await call(`${sim.instances[0]!.url}/sim/state`); // control calls are not counted
    const counts = (await call(`${sim.verifierUrl}/sim/counts`)).json.counts;
    expect(counts).toEqual({
      instances: [
        { "GET /api/v1/progress": 2, other: 1 },
        { "GET /api/v1/progress": 1, "POST /api/v1/start": 1 },
      ],
      verifier: { "GET /api/v1/progress": 1 },
    });
    expect(sim.control.counts()).toEqual(counts);
    expect((await call(`${sim.instances[1]!.url}/sim/counts`, "DELETE")).json).toEqual({ success: true });
    expect(sim.control.counts()).toEqual({ instances: [{}, {}], verifier: {} });
  });

  it("serves the same state on every port", async () => {
    sim = await frozen({ instances: 2 });
    await post(sim, 0, "start", RS_TO_SHARDED);
    const a = (await call(`${sim.instances[0]!.url}/sim/state`)).json.state;
    const b = (await call(`${sim.verifierUrl}/sim/state`)).json.state;
    expect({ ...b, openRounds: [] }).toEqual({ ...a, openRounds: [] }); // ageMs moves with the wall clock
    expect(a.openRounds).toEqual([{ command: "start", accepted: [0], ageMs: expect.any(Number) }]);
    expect(a.instances[0]).toMatchObject({
      index: 0,
      id: "instance-0",
      url: sim.instances[0]!.url,
      state: "RUNNING",
      phase: "precopy",
      down: false,
    });
    expect(a.verifier.url).toBe(sim.verifierUrl);
    expect(a.writes).toMatchObject({ enabled: true, ratePerSecond: 1000, lost: 0 });
  });

  it("POST /sim/writes switches the source application's writes (what a stop-writes hook calls); GET reads it", async () => {
    sim = await frozen();
    await toCea(sim);
    const u = `${sim.instances[0]!.url}/sim/writes`;
    expect((await call(u, "POST", { enabled: false })).json).toEqual({
      success: true,
      writes: { enabled: false, ratePerSecond: 1000 },
    });
    const total = sim.control.state().writes.total;
    sim.control.advance(100);
    expect(sim.control.state().writes.total).toBe(total);
    expect((await call(u, "POST", { enabled: "no" })).json).toMatchObject({ success: false, error: "InvalidRequest" });
    expect((await call(u, "POST", {})).json.success).toBe(false);
    expect((await call(u, "POST", { enabled: true, burst: 1 })).json.errorDescription).toMatch(/unknown field/);
    expect((await call(u, "POST", "{")).json).toMatchObject({ success: false, error: "BadJSON" });
    // GET reads the switch (a stopWrites `check`); other methods are refused
    expect((await call(u, "GET")).json).toEqual({ success: true, writes: { enabled: false, ratePerSecond: 1000 } });
    expect((await call(u, "DELETE")).status).toBe(405);
    expect((await call(u, "POST", { rate: 50 })).json.writes).toEqual({ enabled: false, ratePerSecond: 50 });
  });

  it("lists its routes at /sim and answers unknown ones with a JSON 404", async () => {
    sim = await frozen();
    const u = sim.instances[0]!.url;
    expect((await call(`${u}/sim`)).json.routes).toContain("POST /sim/writes");
    expect((await call(`${u}/sim/nope`)).json).toMatchObject({ success: false, error: "NotFound" });
    expect((await call(`${u}/sim/instances/7/down`, "POST", {})).json).toMatchObject({
      success: false,
      error: "NotFound",
    });
    expect((await call(`${u}/sim/faults/99`, "DELETE")).status).toBe(404);
  });

  it("a live upgrade on demand: POST /sim/instances/:i/upgrade", async () => {
    // facts: live upgrades "only where release notes say so — 1.12 → 1.13 [versioning page], to 1.18"
    sim = await frozen({ serviceVersion: "1.13.0" });
    await toCea(sim);
    expect((await call(`${sim.instances[0]!.url}/sim/instances/0/upgrade`, "POST", {})).json).toEqual({
      success: true,
    });
    expect((await progress(sim)).progress.collectionCopy).toEqual({ estimatedTotalBytes: 1, estimatedCopiedBytes: 0 });
  });
});
