/**
 * The one polling loop (src/steps/kit/poll.ts) and the runner's fleet read built on it
 * (`readFleet`): "Progress calls can fail for at least two minutes after a sync is resumed or
 * restarted (from version 1.7.3); retrying is safe."
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { ServiceError } from "../../src/api/index.js";
import type { RunEvent } from "../../src/events.js";
import { createFleet, type Fleet } from "../../src/fleet/index.js";
import type { Simulator } from "../../src/sim/index.js";
import type { StepContext } from "../../src/steps/index.js";
import { readFleet } from "../../src/steps/kit/fleet-ops.js";
import { poll } from "../../src/steps/kit/poll.js";
import { frozen } from "../support/sim.js";

describe("poll", () => {
  it("ends with the first result the judge gives, reading at most once per period from the start of a read", async () => {
    const starts: number[] = [];
    const r = await poll({
      read: async () => {
        starts.push(Date.now());
        await new Promise((res) => setTimeout(res, 200)); // a slow answer must not stretch the period
        return starts.length;
      },
      judge: (n) => (n === 3 ? `third` : undefined),
      every: 300,
      signal: new AbortController().signal,
    });
    expect(r).toEqual({ done: true, result: "third", value: 3 });
    const gaps = starts.slice(1).map((t, i) => t - starts[i]!);
    // 300 ms apart, not 300 + 200 (a period stretched by the slow answer)
    for (const g of gaps) {
      expect(g).toBeGreaterThanOrEqual(295);
      expect(g).toBeLessThan(450);
    }
  });

  /** The gaps between the starts of `reads` reads of a poll every `every` ms, measured by the monotonic clock. */
  async function gapsOf(every: number, reads: number): Promise<number[]> {
    const starts: number[] = [];
    await poll({
      read: () => Promise.resolve(starts.push(performance.now())),
      judge: (n) => (n === reads ? true : undefined),
      every,
      signal: new AbortController().signal,
    });
    return starts.slice(1).map((t, i) => t - starts[i]!);
  }

  it("keeps its period by the monotonic clock when a timer fires before that clock says it is due", async () => {
    // a monotonic clock that runs at half speed: every timer "fires early" by it, as one counting
    // from a stale event-loop time does under load
    const t0 = performance.now();
    const real = performance.now.bind(performance);
    const spy = vi.spyOn(performance, "now").mockImplementation(() => t0 + (real() - t0) / 2);
    try {
      for (const g of await gapsOf(40, 4)) expect(g).toBeGreaterThanOrEqual(40);
    } finally {
      spy.mockRestore();
    }
  });

  it("keeps its period whatever the wall clock does (stepped back)", async () => {
    // a wall clock stepped back a second at every reading: a pause measured by it would last seconds
    let wall = 1e12;
    const stepped = vi.spyOn(Date, "now").mockImplementation(() => (wall -= 1000));
    try {
      for (const g of await gapsOf(30, 3)) {
        expect(g).toBeGreaterThanOrEqual(29);
        expect(g).toBeLessThan(1000);
      }
    } finally {
      stepped.mockRestore();
    }
  });

  it("gives up after giveUpMs with the last value, unjudged", async () => {
    let reads = 0;
    const t0 = Date.now();
    const r = await poll({
      read: () => Promise.resolve(++reads),
      judge: () => undefined,
      every: 20,
      giveUpMs: 100,
      signal: new AbortController().signal,
    });
    expect(r.done).toBe(false);
    expect(r.value).toBe(reads);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(95);
    expect(Date.now() - t0).toBeLessThan(400);
  });

  it("throws the signal's reason at once when aborted while waiting", async () => {
    const ac = new AbortController();
    const reason = new Error("step limit");
    setTimeout(() => ac.abort(reason), 30);
    const t0 = Date.now();
    await expect(
      poll({ read: () => Promise.resolve(0), judge: () => undefined, every: 10_000, signal: ac.signal }),
    ).rejects.toBe(reason);
    expect(Date.now() - t0).toBeLessThan(1000);
  });

  it("a judge that throws ends the poll with that error", async () => {
    const err = new Error("verifier failed");
    await expect(
      poll({
        read: () => Promise.resolve(1),
        judge: () => {
          throw err;
        },
        every: 10,
        signal: new AbortController().signal,
      }),
    ).rejects.toBe(err);
  });
});

describe("readFleet", () => {
  let sim: Simulator | undefined;
  let fleet: Fleet | undefined;
  afterEach(async () => {
    await fleet?.close();
    await sim?.close();
    fleet = undefined;
    sim = undefined;
  });

  const ctxOf = (f: Fleet, events: unknown[], giveUpMs: number): StepContext =>
    ({
      run: {
        fleet: f,
        emit: (type: string, payload: object) => events.push({ type, ...payload }),
        defaults: { progressGiveUpMs: giveUpMs },
      },
      index: 0,
      id: "read",
      signal: new AbortController().signal,
    }) as unknown as StepContext;

  it("reads again, with backoff, until every instance answers, and says why", async () => {
    sim = await frozen({ instances: 2 });
    const fault = sim.control.addFault("http500=1@1/progress");
    fleet = createFleet({ instances: sim.instances.map((i) => ({ url: i.url })), requestTimeoutMs: 2000 });
    const events: RunEvent[] = [];
    const s = sim;
    setTimeout(() => s.control.removeFault(fault.id), 700);
    const snap = await readFleet(ctxOf(fleet, events, 20_000));
    expect(snap.instances.every((i) => i.progress?.state === "IDLE")).toBe(true);
    expect(sim.control.counts().instances[1]!["GET /api/v1/progress"]).toBeGreaterThanOrEqual(2);
    const retries = events.filter((e) => e.type === "decision" && e.kind === "retry");
    expect(retries.length).toBeGreaterThan(0);
    expect((retries[0] as { reason: string }).reason).toMatch(
      new RegExp(`^progress failing on ${sim.instances[1]!.url} \\(.*InternalError.*\\); retrying in \\d+ ms`),
    );
  });

  it("gives up at giveUpMs and returns the last snapshot, errors included", async () => {
    sim = await frozen({ instances: 2, faults: ["http500=1@0/progress"] });
    fleet = createFleet({ instances: sim.instances.map((i) => ({ url: i.url })), requestTimeoutMs: 2000 });
    const t0 = Date.now();
    const snap = await readFleet(ctxOf(fleet, [], 300));
    expect(Date.now() - t0).toBeLessThan(2000);
    expect(snap.instances[0]!.error).toBeInstanceOf(ServiceError);
    expect(snap.instances[1]!.progress?.state).toBe("IDLE");
  });
});
