/**
 * Fleet identity on every progress read (src/steps/kit/fleet-ops.ts `observeIdentity`,
 * `checkIdentity`), pinned against snapshots. Issue 12, item 2: "Fleet identity is checked once,
 * before start. Two instances that report different coordinators after start (two fleets)
 * received `commit`. Check identity (distinct ids, one coordinator, one direction) on every
 * progress read that carries ids, and refuse `commit`, `reverse`, `pause`, `resume` on a fleet
 * that is not one." Service facts: "`mongosyncID`, `coordinatorID` (1.3): `coordinatorID` may be
 * null at start-up"; "`reverse` …: COMMITTED → REVERSING → RUNNING in the opposite direction
 * (`directionMapping` swaps Source and Destination)".
 */
import { describe, expect, it } from "vitest";
import type { Progress } from "../../src/api/types.js";
import type { FleetSnapshot } from "../../src/fleet/index.js";
import { checkIdentity, observeIdentity } from "../../src/steps/kit/fleet-ops.js";
import { context, reasons, refOf, scripted } from "../support/fleet-fake.js";

describe("fleet identity: observed on every read, checked before every command", () => {
  const snap = (...ps: Partial<Progress>[]): FleetSnapshot => ({
    at: Date.parse("2026-01-01T03:00:00Z"),
    instances: ps.map((p, i) => ({ ref: refOf(i), progress: { state: "RUNNING", ...p } })),
  });
  const dir = (s: string, d: string) => ({ directionMapping: { Source: `${s}: h:1`, Destination: `${d}: h:2` } });
  const one = scripted({ sends: [], reads: [[{}], [{}]] }).fleet;

  it("[item 2] says once when the instances stop being one fleet, remembers it, and refuses every command after", () => {
    const { ctx, events } = context(one);
    const good = snap(
      { mongosyncID: "a", coordinatorID: "a", ...dir("cluster0", "cluster1") },
      { mongosyncID: "b", coordinatorID: "a", ...dir("cluster0", "cluster1") },
    );
    observeIdentity(ctx.run, good);
    expect(() => checkIdentity(ctx, good)).not.toThrow();
    const bad = snap(
      { mongosyncID: "a", coordinatorID: "a", ...dir("cluster0", "cluster1") },
      { mongosyncID: "b", coordinatorID: "z", ...dir("cluster0", "cluster1") },
    );
    observeIdentity(ctx.run, bad);
    observeIdentity(ctx.run, bad);
    expect(reasons(events, "identity").filter((r) => /not one fleet/.test(r))).toHaveLength(1);
    observeIdentity(ctx.run, good);
    expect(() => checkIdentity(ctx, good)).toThrow(
      /they report one fleet now, but did not at 2026-01-01T03:00:00.000Z/,
    );
  });

  it("[item 2] the direction learned from the first read (or the start body) is expected from then on", () => {
    const { ctx } = context(one);
    observeIdentity(ctx.run, snap(dir("cluster0", "cluster1")));
    expect(ctx.run.memory.identity.direction).toMatchObject({ source: "cluster0", destination: "cluster1" });
    expect(() => checkIdentity(ctx, snap(dir("cluster1", "cluster0")))).toThrow(/expected source cluster "cluster0"/);
  });

  it("[item 2] during a reverse either way round is legal, and the new way becomes the expectation once every instance shows it", () => {
    const { ctx } = context(one);
    ctx.run.memory.identity.direction = { source: "cluster0", destination: "cluster1", from: "x", either: true };
    observeIdentity(ctx.run, snap(dir("cluster0", "cluster1"), dir("cluster0", "cluster1")));
    expect(ctx.run.memory.identity.broken).toBeUndefined();
    observeIdentity(ctx.run, snap(dir("cluster1", "cluster0"), dir("cluster1", "cluster0")));
    expect(ctx.run.memory.identity.direction).toMatchObject({ source: "cluster1", destination: "cluster0" });
    expect(ctx.run.memory.identity.direction?.either).toBeUndefined();
    expect(() => checkIdentity(ctx, snap(dir("cluster2", "cluster0")))).toThrow(/not one fleet/);
  });

  it("[item 2] an instance's mongosyncID that changes is another process at its address", () => {
    const { ctx } = context(one);
    observeIdentity(ctx.run, snap({ mongosyncID: "a" }));
    expect(() => checkIdentity(ctx, snap({ mongosyncID: "z" }))).toThrow(
      /sync0 now reports mongosyncID "z", and "a" earlier in this run/,
    );
  });

  it("[item 2] --force=fleet-identity records the override and lets the command go", () => {
    const { ctx, events } = context(one, { force: ["fleet-identity"] });
    const bad = snap({ mongosyncID: "a", coordinatorID: "a" }, { mongosyncID: "b", coordinatorID: "z" });
    expect(() => checkIdentity(ctx, bad)).not.toThrow();
    expect(reasons(events, "identity").at(-1)).toMatch(/overridden by --force=fleet-identity/);
  });

  it("[item 2] IDLE (ids null) and versions before 1.3 (no ids) say nothing: only what is known is checked", () => {
    const { ctx } = context(one);
    const idle = snap({ state: "IDLE", mongosyncID: null, coordinatorID: null }, { state: "IDLE" });
    observeIdentity(ctx.run, idle);
    expect(() => checkIdentity(ctx, idle)).not.toThrow();
  });
});
