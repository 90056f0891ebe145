/**
 * Hostile-but-legal service faults for the runner's safety suites: a command applied whose answer
 * is lost, progress that lags behind a command, an instance of another fleet, huge answers, a
 * negative lag. Each is something the contract allows: "Calls … may fail" (the transport), "The
 * endpoint does not refresh itself; each call returns the current status" (progress rule 5),
 * "When several service instances sync between sharded clusters, identical API commands must be
 * sent to every instance" (a runbook can point at the wrong fleet), "Rate limits, payload size
 * limits and other quotas: not shown" (Limits 4), "lagTimeSeconds | integer" (any integer).
 * Each request is counted, so a test can assert how many commands each instance received.
 */
import { afterEach, describe, expect, it } from "vitest";
import { formatFault, parseFault, type Simulator } from "../../src/sim/index.js";
import { RS_TO_SHARDED, broadcast, call, frozen, post, progress, toCea } from "../support/sim.js";

let sim: Simulator;
afterEach(async () => {
  await sim?.close();
});

const commits = (s: Simulator): number[] => s.control.counts().instances.map((c) => c["POST /api/v1/commit"] ?? 0);

describe("parsing", () => {
  it("parses the new kinds, with scope, endpoint and options", () => {
    expect(parseFault("drop-after-effect@1/commit")).toMatchObject({
      kind: "drop-after-effect",
      value: 1,
      instances: [1],
      endpoint: "commit",
    });
    expect(parseFault("late-effect=30s@0/start")).toMatchObject({ kind: "late-effect", value: 30, endpoint: "start" });
    expect(parseFault("identity-change,after=60s@1")).toMatchObject({
      message: "coordinator",
      after: 60,
      instances: [1],
    });
    expect(parseFault("identity-change=direction,on=commit@2")).toMatchObject({ message: "direction", on: "commit" });
    expect(parseFault("huge-progress=5MiB@0")).toMatchObject({ value: 5 * 2 ** 20, instances: [0] });
    expect(parseFault("huge-progress=1kB@verifier")).toMatchObject({
      value: 1000,
      verifier: true,
      instancesToo: false,
    });
    expect(parseFault("negative-lag")).toMatchObject({ value: 5 });
    expect(parseFault("writes-off-slow=3s")).toMatchObject({ value: 3, verifier: true, instancesToo: false });
    expect(parseFault("writes-off-refused=socket closed, EOF")).toMatchObject({ message: "socket closed, EOF" });
    expect(parseFault("verifier-exit,after=10s")).toMatchObject({ after: 10, verifier: true });
    for (const s of [
      "drop-after-effect=0.5@1/commit",
      "late-effect=30s@0/start",
      "identity-change=direction,after=60s,on=commit@1",
      "negative-lag=3@*",
      "writes-off-slow=1500ms",
    ])
      expect(parseFault(formatFault(parseFault(s)))).toEqual(parseFault(s));
  });

  it("explains what is wrong", () => {
    expect(() => parseFault("late-effect@0/commit")).toThrow(/needs a duration/);
    expect(() => parseFault("drop-after-effect@0/progress")).toThrow(/acts on a command/);
    expect(() => parseFault("identity-change=shard")).toThrow(/coordinator or direction/);
    expect(() => parseFault("identity-change,on=progress")).toThrow(/on= takes a command/);
    expect(() => parseFault("lag-floor=3,on=commit")).toThrow(/only applies to identity-change/);
    expect(() => parseFault("huge-progress")).toThrow(/needs a size/);
    expect(() => parseFault("writes-off-slow=1s@0")).toThrow(/verifier only/);
  });
});

describe("drop-after-effect", () => {
  // DESIGN, from the spec's retry rule ("`progress` is safe to retry"; start and commit are not): an answer can be
  // lost after the command took effect, and only progress can tell
  it("the command is applied and the connection destroyed without an answer; counted once", async () => {
    sim = await frozen({ faults: ["drop-after-effect@0/start"] });
    await expect(post(sim, 0, "start", RS_TO_SHARDED)).rejects.toThrow();
    expect((await progress(sim)).progress.state).toBe("RUNNING");
    expect(sim.control.counts().instances[0]).toMatchObject({ "POST /api/v1/start": 1 });
    expect(sim.control.faults()[0]!.hits).toBe(1);
    // a refused command has no effect to drop after: it is answered
    expect((await post(sim, 0, "start", RS_TO_SHARDED)).json).toMatchObject({ success: false });
  });

  // facts: "`commit` and `reverse` block until they have been called on every instance"
  it("commit on a fleet: the dropped instance has joined the commit, so the others' commits complete", async () => {
    sim = await frozen({ instances: 2, faults: ["drop-after-effect@1/commit"] });
    await broadcast(sim, "start", RS_TO_SHARDED);
    sim.control.advance(40);
    sim.control.setWrites({ enabled: false });
    const [a, b] = await Promise.allSettled([post(sim, 0, "commit"), post(sim, 1, "commit")]);
    expect(a.status === "fulfilled" && a.value.json).toEqual({ success: true });
    expect(b.status).toBe("rejected");
    for (const i of [0, 1]) expect((await progress(sim, i)).progress.state).toBe("COMMITTING");
    expect(commits(sim)).toEqual([1, 1]);
  });
});

describe("late-effect", () => {
  // facts: "Progress may fail for two minutes or more after a resume or restart; retrying progress is safe": what
  // progress shows can trail what the service did
  it("applied at once, answer lost, progress shows the old state for the duration; a resend is refused", async () => {
    sim = await frozen({ faults: ["late-effect=30s@0/commit"] });
    await toCea(sim);
    sim.control.setWrites({ enabled: false });
    await expect(post(sim, 0, "commit")).rejects.toThrow();
    expect((await progress(sim)).progress.state).toBe("RUNNING");
    sim.control.advance(20);
    expect((await progress(sim)).progress).toMatchObject({ state: "RUNNING", canCommit: true });
    // the service has it: a resend meets the real state (the client cannot tell from progress yet)
    const again = await post(sim, 0, "commit");
    expect(again.json).toMatchObject({ success: false, error: "InvalidStateTransition" });
    expect(sim.control.state().instances[0]!.state).toBe("COMMITTED");
    sim.control.advance(11);
    expect((await progress(sim)).progress.state).toBe("COMMITTED");
    expect(commits(sim)).toEqual([2]);
  });
});

describe("identity-change", () => {
  // spec: "(coordinator identifier) | string | Identifier of the coordinator instance.": an instance of another fleet
  // reports another coordinator
  it("after a time: another fleet's coordinatorID", async () => {
    sim = await frozen({ instances: 2, faults: ["identity-change,after=30s@1"] });
    await broadcast(sim, "start", RS_TO_SHARDED);
    sim.control.advance(10);
    expect((await progress(sim, 1)).progress.coordinatorID).toBe("instance-0");
    sim.control.advance(21);
    expect((await progress(sim, 1)).progress.coordinatorID).toBe("other-fleet-instance-0");
    expect((await progress(sim, 0)).progress.coordinatorID).toBe("instance-0");
  });

  it("after a command (on=): the opposite direction from the instance's commit on", async () => {
    sim = await frozen({ instances: 2, faults: ["identity-change=direction,on=commit@0"] });
    await broadcast(sim, "start", RS_TO_SHARDED);
    sim.control.advance(40);
    expect((await progress(sim, 0)).progress.directionMapping.Source).toMatch(/^cluster0/);
    sim.control.setWrites({ enabled: false });
    await broadcast(sim, "commit");
    expect((await progress(sim, 0)).progress.directionMapping.Source).toMatch(/^cluster1/);
    expect((await progress(sim, 1)).progress.directionMapping.Source).toMatch(/^cluster0/);
  });
});

describe("huge-progress and negative-lag", () => {
  // spec Limits 4: "Rate limits, payload size limits and other quotas: not shown."
  it("huge-progress: an unknown field of the given size in progress (instances, or the verifier)", async () => {
    sim = await frozen({ faults: ["huge-progress=2MiB@0", "huge-progress=10kB@verifier"] });
    const a = await call(`${sim.instances[0]!.url}/api/v1/progress`);
    expect(a.text.length).toBeGreaterThan(2 * 2 ** 20);
    expect(a.json.progress.simulatorPadding).toHaveLength(2 * 2 ** 20);
    const v = await call(`${sim.verifierUrl}/api/v1/progress`);
    expect(v.json.progress.simulatorPadding).toHaveLength(10_000);
  });

  // spec: "lagTimeSeconds | integer": nothing says it is not negative (clock skew between the clusters)
  it("negative-lag: lagTimeSeconds below zero while RUNNING (lag.overallLagSeconds too)", async () => {
    sim = await frozen({ serviceVersion: "1.21.0", faults: ["negative-lag=3"] });
    sim.control.advance(2);
    await toCea(sim);
    const p = (await progress(sim)).progress;
    expect(p.lagTimeSeconds).toBe(-3);
    expect(p.lag.overallLagSeconds).toBe(-3);
  });
});
