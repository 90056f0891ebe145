/** The clock (issue #3, item 7), the units, and the default profile's wall-time budget. */
import { afterEach, describe, expect, it } from "vitest";
import { SimClock } from "../../src/sim/clock.js";
import { SourceTimeline } from "../../src/sim/source.js";
import { parseBytes, parseSeconds, startSimulator, type Simulator } from "../../src/sim/index.js";
import { RS_TO_SHARDED, broadcast, call, frozen, progress, verifierProgress } from "../support/sim.js";

let sim: Simulator | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

describe("SimClock", () => {
  it("runs timeScale simulated seconds per wall second, re-anchors on a new scale, jumps with advance", () => {
    let wall = 0;
    const c = new SimClock(10, () => wall);
    wall = 1000;
    expect(c.now()).toBe(10);
    c.setTimeScale(1);
    wall = 3000;
    expect(c.now()).toBe(12);
    c.advance(100);
    expect(c.now()).toBe(112);
    c.setTimeScale(0);
    wall = 99_000;
    expect(c.now()).toBe(112);
    expect(c.wallMsUntil(113)).toBe(Infinity);
    c.dispose();
  });

  it("runs scheduled actions when simulated time reaches them (advance, or the one timer)", async () => {
    const c = new SimClock(0);
    const fired: string[] = [];
    c.at(5, () => fired.push("a"));
    const cancel = c.at(6, () => fired.push("b"));
    c.at(1e9, () => fired.push("late"));
    c.advance(5);
    expect(fired).toEqual(["a"]);
    cancel();
    c.advance(2);
    expect(fired).toEqual(["a"]);
    c.at(c.now() + 5, () => fired.push("timer"));
    c.setTimeScale(1000); // 5 simulated seconds = 5 ms
    await new Promise((r) => setTimeout(r, 60));
    expect(fired).toEqual(["a", "timer"]);
    c.dispose();
    expect(() => new SimClock(-1)).toThrow(RangeError);
  });
});

describe("SourceTimeline", () => {
  it("E(t) and its inverse across rate changes", () => {
    const s = new SourceTimeline(100);
    s.setRate(10, 0);
    s.setRate(20, 50);
    expect(s.events(5)).toBe(500);
    expect(s.events(15)).toBe(1000);
    expect(s.events(30)).toBe(1500);
    expect(s.timeOf(500)).toBe(5);
    expect(s.timeOf(1000)).toBe(10); // the last event before the writes stopped
    expect(s.timeOf(1250)).toBe(25);
    // Applying 200/s from t=0 with a0 = 0: limited by E until it meets the flat stretch.
    expect(s.minThroughBreakpoints(0, 30, 200)).toBe(Math.min(1000 + 200 * 20, 1000 + 200 * 10));
  });
});

describe("units", () => {
  it("parses byte sizes and durations", () => {
    expect(parseBytes("5GiB")).toBe(5 * 2 ** 30);
    expect(parseBytes("500 MB")).toBe(500e6);
    expect(parseBytes("1.5KiB")).toBe(1536);
    expect(parseBytes("1024")).toBe(1024);
    expect(() => parseBytes("5 GiBs")).toThrow(/invalid byte size/);
    expect(parseSeconds("120s")).toBe(120);
    expect(parseSeconds("50ms")).toBeCloseTo(0.05);
    expect(parseSeconds("2m")).toBe(120);
    expect(parseSeconds("3")).toBe(3);
    expect(() => parseSeconds("-3s")).toThrow(/invalid duration/);
  });
});

describe("wall-time budget", () => {
  // Issue #3: "the default profile takes a simulated multi-GB copy, change event application and commit through in under 5 s of wall time"
  it("the default profile: a 5 GiB copy, CEA and commit in under 5 s of wall time", async () => {
    sim = await startSimulator({ instances: 2 });
    const t0 = performance.now();
    await broadcast(sim, "start", RS_TO_SHARDED);
    // "after the sync service's progress shows `info` equal to `change event application`, verification checks may start"
    let checked = false;
    let committed = false;
    while (performance.now() - t0 < 8000) {
      const ps = await Promise.all([0, 1].map(async (i) => (await progress(sim!, i)).progress));
      if (ps.every((p) => p.state === "COMMITTED")) {
        committed = true;
        break;
      }
      if (!checked && ps.every((p) => p.info === "change event application")) {
        await call(`${sim.verifierUrl}/api/v1/check`, "POST", {});
        checked = true;
      }
      if (checked && ps.every((p) => p.canCommit) && sim.control.state().writes.enabled) {
        sim.control.setWrites({ enabled: false });
        await broadcast(sim, "commit");
      }
      await new Promise((r) => setTimeout(r, 25));
    }
    const elapsed = performance.now() - t0;
    expect(committed).toBe(true);
    expect(elapsed).toBeLessThan(5000);
    expect(sim.control.state().writes.lost).toBe(0);
    await call(`${sim.verifierUrl}/api/v1/writesOff`, "POST", {});
    while ((await verifierProgress(sim)).phase !== "idle" && performance.now() - t0 < 8000)
      await new Promise((r) => setTimeout(r, 25));
    expect((await verifierProgress(sim)).verificationStatus.failedTasks).toBe(0);
    expect(performance.now() - t0).toBeLessThan(5000);
  });

  it("--time-scale 1 is real time", async () => {
    sim = await startSimulator({ timeScale: 1 });
    const a = sim.control.now();
    const w = performance.now();
    await new Promise((r) => setTimeout(r, 300));
    const d = sim.control.now() - a;
    expect(Math.abs(d - (performance.now() - w) / 1000)).toBeLessThan(0.02);
    expect(d).toBeGreaterThan(0.25);
  });

  it("the clock is adjustable at run time through /sim/clock", async () => {
    sim = await startSimulator({ timeScale: 0 });
    const u = `${sim.instances[0]!.url}/sim/clock`;
    expect((await call(u, "POST", { advance: 42 })).json).toEqual({ success: true, simSeconds: 42, timeScale: 0 });
    expect((await call(u, "POST", { timeScale: -1 })).json.success).toBe(false);
    expect((await call(u, "POST", { timeScale: "fast" })).json.success).toBe(false);
    expect((await call(u)).json).toMatchObject({ success: true, simSeconds: 42 });
  });
});

describe("jumps", () => {
  it("a jump stops at scheduled actions on the way: an instance goes down at its own time", async () => {
    sim = await frozen({ faults: ["down=0,after=10s"] });
    await broadcast(sim, "start", RS_TO_SHARDED);
    sim.control.advance(100); // down at 10 s: the copy stopped at 7 s of copying (3 s pre-copy)
    const st = sim.control.state();
    expect(st.instances[0]!.down).toBe(true);
    expect(st.instances[0]!.copiedBytes).toBe(7 * 64 * 2 ** 20);
  });
});
