/** Faults: the spec syntax, and each fault's effect (issue #3, item 6). */
import { afterEach, describe, expect, it } from "vitest";
import { formatFault, parseFault, startSimulator, type Simulator } from "../../src/sim/index.js";
import {
  RS_TO_SHARDED,
  broadcast,
  call,
  frozen,
  post,
  progress,
  toCea,
  until,
  verifierProgress,
} from "../support/sim.js";

let sim: Simulator;
afterEach(async () => {
  await sim?.close();
});

describe("parseFault", () => {
  it("parses kinds, values, options and scopes", () => {
    expect(parseFault("progress-down-after-resume")).toMatchObject({ kind: "progress-down-after-resume", value: 120 });
    expect(parseFault("progress-down-after-resume=2m")).toMatchObject({ value: 120 });
    expect(parseFault("latency=50ms")).toMatchObject({
      kind: "latency",
      value: 0.05,
      verifier: true,
      instancesToo: true,
    });
    expect(parseFault("http500=0.2@1,3/progress")).toMatchObject({
      kind: "http500",
      value: 0.2,
      instances: [1, 3],
      endpoint: "progress",
      verifier: false,
    });
    expect(parseFault("reset@0-2")).toMatchObject({ kind: "reset", value: 1, instances: [0, 1, 2] });
    expect(parseFault("non-json=0.1@verifier")).toMatchObject({ verifier: true, instancesToo: false });
    expect(parseFault("http500=1@*")).toMatchObject({ verifier: false, instancesToo: true });
    expect(parseFault("down=1,after=30s,for=1m")).toMatchObject({ kind: "down", instances: [1], after: 30, for: 60 });
    expect(parseFault("lag-floor=30")).toMatchObject({ value: 30 });
    expect(parseFault("commit-refused=1")).toMatchObject({ instances: [1] });
    expect(parseFault("live-upgrade")).toMatchObject({ value: 0.5 });
    expect(parseFault("live-upgrade=0.25@2")).toMatchObject({ value: 0.25, instances: [2] });
    expect(parseFault("verifier-error=disk full, giving up")).toMatchObject({
      message: "disk full, giving up",
      verifier: true,
    });
  });

  it("explains what is wrong", () => {
    expect(() => parseFault("http501")).toThrow(/unknown kind "http501"/);
    expect(() => parseFault("http500=2")).toThrow(/rate must be/);
    expect(() => parseFault("latency")).toThrow(/needs a duration/);
    expect(() => parseFault("latency=fast")).toThrow(/invalid duration/);
    expect(() => parseFault("down=x")).toThrow(/instance index/);
    expect(() => parseFault("down=1@2")).toThrow(/either as the value or as the scope/);
    expect(() => parseFault("http500@0/stop")).toThrow(/unknown endpoint/);
    expect(() => parseFault("lag-floor=3@0/progress")).toThrow(/only applies to/);
    expect(() => parseFault("http500,when=now")).toThrow(/unknown option/);
    expect(() => parseFault("lag-floor=3@verifier")).toThrow(/does not apply to the verifier/);
    expect(() => parseFault("")).toThrow(/empty/);
  });

  it("formats back to an equivalent spec", () => {
    for (const s of [
      "http500=0.2@1,3/progress",
      "down=1,after=30s,for=60s",
      "latency=50ms",
      "lag-floor=30",
      "live-upgrade=0.25@2",
      "non-json=0.1@verifier",
    ]) {
      expect(parseFault(formatFault(parseFault(s)))).toEqual(parseFault(s));
    }
  });
});

describe("fault effects", () => {
  // Errors 6: "Progress calls can fail for at least two minutes after a sync is resumed or restarted (from version 1.7.3); retrying is safe."
  it("progress-down-after-resume: progress fails for two simulated minutes after a resume", async () => {
    sim = await frozen({ faults: ["progress-down-after-resume"] });
    await post(sim, 0, "start", RS_TO_SHARDED);
    await post(sim, 0, "pause");
    await post(sim, 0, "resume");
    const a = await call(`${sim.instances[0]!.url}/api/v1/progress`);
    expect(a.json).toMatchObject({ success: false, error: "ProgressUnavailable" });
    expect(a.json.errorDescription).toEqual(expect.any(String));
    sim.control.advance(119);
    expect((await progress(sim)).success).toBe(false);
    sim.control.advance(1.5);
    expect((await progress(sim)).success).toBe(true);
  });

  it("progress-down-after-resume also follows a restart (down, then up); the events counter is not persisted", async () => {
    sim = await frozen({ faults: ["progress-down-after-resume=30s"] });
    await toCea(sim);
    expect((await progress(sim)).progress.totalEventsApplied).toBeGreaterThan(0);
    await sim.control.down(0);
    await expect(fetch(`${sim.instances[0]!.url}/api/v1/progress`)).rejects.toThrow();
    await sim.control.up(0);
    expect((await progress(sim)).error).toBe("ProgressUnavailable");
    sim.control.advance(31);
    const p = (await progress(sim)).progress;
    expect(p.state).toBe("RUNNING");
    // "Approximate number of change events this instance applied. It is not persisted"
    expect(p.totalEventsApplied).toBeLessThan(31 * 1000 + 1);
  });

  it("latency delays answers (wall time)", async () => {
    sim = await frozen({ faults: ["latency=150ms@0"] });
    const t0 = performance.now();
    await progress(sim);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(140);
    const t1 = performance.now();
    await call(`${sim.verifierUrl}/api/v1/progress`);
    expect(performance.now() - t1).toBeLessThan(140);
  });

  it("http500 answers 500 in JSON and does not apply the command", async () => {
    sim = await frozen({ faults: ["http500=1@0/start"] });
    const a = await post(sim, 0, "start", RS_TO_SHARDED);
    expect(a.status).toBe(500);
    expect(a.json).toMatchObject({ success: false, error: "InternalError" });
    expect((await progress(sim)).progress.state).toBe("IDLE"); // progress is not in the fault's scope
  });

  it("non-json answers bodies that do not parse, and does not apply the command", async () => {
    sim = await frozen({ faults: ["non-json=1@0/start"] });
    for (let k = 0; k < 4; k++) {
      const a = await post(sim, 0, "start", RS_TO_SHARDED);
      expect(() => JSON.parse(a.text)).toThrow();
    }
    expect((await progress(sim)).progress.state).toBe("IDLE");
  });

  it("reset drops the connection before the request is handled", async () => {
    sim = await frozen({ faults: ["reset=1@0/start"] });
    await expect(post(sim, 0, "start", RS_TO_SHARDED)).rejects.toThrow();
    expect((await progress(sim)).progress.state).toBe("IDLE");
  });

  it("reset-after handles the request, then drops the connection: the command took effect", async () => {
    sim = await frozen({ faults: ["reset-after=1@0/start"] });
    await expect(post(sim, 0, "start", RS_TO_SHARDED)).rejects.toThrow();
    expect((await progress(sim)).progress.state).toBe("RUNNING");
  });

  it("rates come from a seeded PRNG: the same seed gives the same schedule", async () => {
    const run = async (seed: number): Promise<number[]> => {
      const s = await startSimulator({ timeScale: 0, seed, faults: ["http500=0.5@0/progress"] });
      const statuses: number[] = [];
      for (let k = 0; k < 30; k++) statuses.push((await call(`${s.instances[0]!.url}/api/v1/progress`)).status);
      await s.close();
      return statuses;
    };
    const a = await run(7);
    expect(await run(7)).toEqual(a);
    expect(await run(8)).not.toEqual(a);
    expect(a.filter((s) => s === 500).length).toBeGreaterThan(5);
    expect(a.filter((s) => s === 200).length).toBeGreaterThan(5);
  });

  it("down: the instance refuses connections, then comes back (from the control API too)", async () => {
    sim = await frozen({ instances: 2 });
    const down = await call(`${sim.instances[0]!.url}/sim/instances/1/down`, "POST", {});
    expect(down.json).toEqual({ success: true });
    await expect(fetch(`${sim.instances[1]!.url}/api/v1/progress`)).rejects.toThrow();
    expect(sim.control.state().instances[1]!.down).toBe(true);
    expect((await progress(sim, 0)).success).toBe(true);
    expect((await call(`${sim.instances[0]!.url}/sim/instances/1/up`, "POST", {})).json).toEqual({ success: true });
    expect((await progress(sim, 1)).success).toBe(true);
  });

  it("down with after/for follows the simulated clock from the first start", async () => {
    sim = await frozen({ instances: 2, faults: ["down=1,after=10s,for=20s"] });
    sim.control.advance(100); // no start yet: nothing happens
    expect(sim.control.state().instances[1]!.down).toBe(false);
    await broadcast(sim, "start", RS_TO_SHARDED);
    sim.control.advance(9);
    expect(sim.control.state().instances[1]!.down).toBe(false);
    sim.control.advance(2);
    expect(sim.control.state().instances[1]!.down).toBe(true);
    await expect(fetch(`${sim.instances[1]!.url}/api/v1/progress`)).rejects.toThrow();
    sim.control.advance(20);
    await until(() => !sim.control.state().instances[1]!.down);
    expect((await progress(sim, 1)).success).toBe(true);
  });

  it("lag-floor: lag never drops below N while RUNNING", async () => {
    sim = await frozen({ faults: ["lag-floor=30"] });
    await toCea(sim);
    sim.control.setWrites({ enabled: false });
    sim.control.advance(1000);
    expect((await progress(sim)).progress.lagTimeSeconds).toBe(30);
  });

  // facts: "`commit` and `reverse` block until they have been called on every instance"
  it("commit-refused: commit answers success:false on that instance; the other one waits, never committing alone", async () => {
    sim = await frozen({ instances: 2, faults: ["commit-refused=1"] });
    await broadcast(sim, "start", RS_TO_SHARDED);
    sim.control.advance(40);
    sim.control.setWrites({ enabled: false });
    const a = post(sim, 0, "commit");
    const b = await post(sim, 1, "commit");
    expect(b.json).toMatchObject({ success: false, error: "CommitRefused" });
    const first = await Promise.race([
      a.then(() => "answered"),
      new Promise((r) => setTimeout(() => r("waiting"), 100)),
    ]);
    expect(first).toBe("waiting");
    expect((await progress(sim, 0)).progress.state).toBe("RUNNING");
    expect(sim.control.state().instances[0]!.waitingFor).toEqual(["commit"]);
    sim.control.clearFaults();
    expect((await post(sim, 1, "commit")).json).toEqual({ success: true });
    expect((await a).json).toEqual({ success: true });
    expect((await progress(sim, 0)).progress.state).toBe("COMMITTING");
  });

  // Progress rule 4: "After a live upgrade from an earlier version to 1.8.0 or higher, collection copy progress restarts
  // from 0 copied of 1 total and only reports data copied after the upgrade finished."
  it("live-upgrade during the copy: progress restarts from 0 of 1, then counts only what is copied afterwards", async () => {
    // facts: live upgrades "only where release notes say so — 1.12 → 1.13 [versioning page], to 1.18"
    sim = await frozen({
      serviceVersion: "1.13.0",
      faults: ["live-upgrade=0.5"],
      model: { copyBytesPerSecond: 2 ** 30 / 10 },
    });
    await post(sim, 0, "start", RS_TO_SHARDED);
    sim.control.advance(3 + 4);
    expect((await progress(sim)).progress.collectionCopy.estimatedCopiedBytes).toBe(Math.floor(0.4 * 2 ** 30));
    sim.control.advance(2); // upgrade at 50%, then the restarted process reports 0 of 1
    expect((await progress(sim)).progress.collectionCopy).toEqual({ estimatedTotalBytes: 1, estimatedCopiedBytes: 0 });
    sim.control.advance(4); // t = 13: upgrade at t = 8, 3 s of restart, 2 s of copying since
    const c = (await progress(sim)).progress.collectionCopy;
    expect(c.estimatedTotalBytes).toBe(2 ** 29); // what was left to copy
    expect(c.estimatedCopiedBytes).toBe(Math.floor((2 * 2 ** 30) / 10));
    sim.control.advance(10);
    const end = (await progress(sim)).progress;
    expect(end.collectionCopy.estimatedCopiedBytes).toBe(end.collectionCopy.estimatedTotalBytes);
    expect(end.info).toBe("change event application");
  });

  it("live-upgrade in change event application: copy shows 0 of 1 from then on", async () => {
    sim = await frozen({ serviceVersion: "1.13.0" });
    await toCea(sim);
    sim.control.liveUpgrade(0);
    const p = (await progress(sim)).progress;
    expect(p.collectionCopy).toEqual({ estimatedTotalBytes: 1, estimatedCopiedBytes: 0 });
    expect(p.canCommit).toBe(true);
  });

  it("verifier-error: the verifier reports a non-null error", async () => {
    sim = await frozen({ faults: ["verifier-error=lost its connection"] });
    expect((await verifierProgress(sim)).error).toBe("lost its connection");
  });

  it("faults are added, listed and removed at run time through /sim/faults", async () => {
    sim = await frozen();
    const u = sim.instances[0]!.url;
    const added = await call(`${u}/sim/faults`, "POST", { spec: "http500=1@0/progress" });
    expect(added.json.faults[0]).toMatchObject({ id: 1, kind: "http500", text: "http500=1@0/progress" });
    expect((await call(`${u}/api/v1/progress`)).status).toBe(500);
    expect((await call(`${u}/sim/faults`)).json.faults).toHaveLength(1);
    expect((await call(`${u}/sim/faults`, "POST", { spec: "http501" })).json).toMatchObject({
      success: false,
      error: "InvalidRequest",
    });
    expect((await call(`${u}/sim/faults`, "POST", { specs: ["lag-floor=5", "nope"] })).json.success).toBe(false);
    expect(sim.control.faults()).toHaveLength(1); // a bad list adds nothing
    expect((await call(`${u}/sim/faults/1`, "DELETE")).json).toEqual({ success: true });
    expect((await call(`${u}/api/v1/progress`)).status).toBe(200);
    await call(`${u}/sim/faults`, "POST", { kind: "latency", value: 0.01 });
    expect((await call(`${u}/sim/faults`, "DELETE")).json).toEqual({ success: true });
    expect(sim.control.faults()).toEqual([]);
  });

  it("the control API is never faulted", async () => {
    sim = await frozen({ faults: ["reset=1", "http500=1"] });
    expect((await call(`${sim.instances[0]!.url}/sim/state`)).status).toBe(200);
  });
});

describe("faults given at start-up", () => {
  it("a `down` fault from the options refuses connections like one added at run time", async () => {
    const sim = await startSimulator({ instances: 2, faults: ["down=1"] });
    try {
      const up = await fetch(`${sim.instances[0]!.url}/api/v1/progress`);
      expect(up.status).toBe(200);
      await expect(fetch(`${sim.instances[1]!.url}/api/v1/progress`)).rejects.toThrow();
    } finally {
      await sim.close();
    }
  });
});
