/**
 * A wait's watch inside the write-stop window (src/steps/kit/wait.ts, `createWatch`): between
 * whole reads it reads one instance at a time, in turn; a change read alone brings the whole read
 * at once; no instance is read more than twice in any `windowPollInterval` and, with nothing
 * changing, once per interval on average. Counts, not durations, are asserted: a slow machine
 * reads less, never more.
 */
import { describe, expect, it } from "vitest";
import type { InstanceRef } from "../../src/events.js";
import type { Fleet, FleetSnapshot, InstanceSample } from "../../src/fleet/index.js";
import { createWatch, WATCH_MIN_INSTANCES } from "../../src/steps/kit/wait.js";
import type { StepContext } from "../../src/steps/index.js";

const W = 40;

/** A fleet of n whose instance i answers `state()[i]` when read alone; every read start recorded. */
function stub(n: number, opts: { open?: boolean; sample?: boolean } = {}) {
  const refs: InstanceRef[] = Array.from({ length: n }, (_, index) => ({
    url: `http://127.0.0.1:${index + 1}`,
    index,
  }));
  const state = refs.map(() => "RUNNING");
  const reads: { i: number; at: number; alone: boolean }[] = [];
  const sampleOf = (i: number): InstanceSample => ({ ref: refs[i]!, progress: { state: state[i] } as never });
  const fleet = {
    refs,
    ...(opts.sample === false
      ? {}
      : {
          sample: (i: number) => {
            reads.push({ i, at: performance.now(), alone: true });
            return Promise.resolve(sampleOf(i));
          },
        }),
  } as unknown as Fleet;
  const ctx = {
    run: { fleet, window: { open: opts.open ?? true }, defaults: { windowPollMs: W } },
  } as unknown as StepContext;
  const whole = (): FleetSnapshot => {
    for (const r of refs) reads.push({ i: r.index, at: performance.now(), alone: false });
    return { at: Date.now(), instances: refs.map((r) => sampleOf(r.index)) };
  };
  return { ctx, state, reads, whole };
}

const signature = (s: InstanceSample): string => String(s.progress?.state);

describe("a wait's watch inside the write-stop window", () => {
  it(`applies inside the window only, to fleets of ${WATCH_MIN_INSTANCES} or more with an instance reader`, () => {
    expect(createWatch(stub(WATCH_MIN_INSTANCES).ctx, signature, 1000).applies()).toBe(true);
    expect(createWatch(stub(WATCH_MIN_INSTANCES - 1).ctx, signature, 1000).applies()).toBe(false);
    expect(createWatch(stub(8, { open: false }).ctx, signature, 1000).applies()).toBe(false);
    expect(createWatch(stub(8, { sample: false }).ctx, signature, 1000).applies()).toBe(false);
  });

  it("reads one instance at a time, in turn, until a whole read is due", async () => {
    const s = stub(4);
    const watch = createWatch(s.ctx, signature, 1000);
    watch.wholeStarts();
    watch.whole(s.whole());
    await watch.untilChange(new AbortController().signal);
    const alone = s.reads.filter((r) => r.alone).map((r) => r.i);
    // three watches per instance between two whole reads (the fourth read is the whole one)
    expect(alone.length).toBeGreaterThan(0);
    expect(alone.length).toBeLessThanOrEqual(3 * 4);
    expect(alone).toEqual(alone.map((_, k) => k % 4));
  });

  it("paces its reads by the clock: a timer that fires before the clock says reads no more", async () => {
    // a clock at half speed: every timer fires early by it (as one counting from a stale
    // event-loop time does under load); the watch must still read three rounds at most
    const s = stub(4);
    const t0 = performance.now();
    const clock = (): number => t0 + (performance.now() - t0) / 2;
    const watch = createWatch(s.ctx, signature, 1000, clock);
    watch.wholeStarts();
    watch.whole(s.whole());
    await watch.untilChange(new AbortController().signal);
    expect(clock() - t0).toBeGreaterThanOrEqual(4 * W);
    expect(s.reads.filter((r) => r.alone).length).toBeLessThanOrEqual(3 * 4);
  });

  it("ends at the first instance read alone that shows the condition turn: the whole fleet is read next", async () => {
    const s = stub(8);
    const watch = createWatch(s.ctx, signature, 1000);
    watch.wholeStarts();
    watch.whole(s.whole());
    const ac = new AbortController();
    const done = watch.untilChange(ac.signal);
    // the condition turns while the watch goes round
    await new Promise((r) => setTimeout(r, 2 * W));
    const before = s.reads.filter((r) => r.alone).length;
    s.state.fill("COMMITTING");
    await done;
    const after = s.reads.filter((r) => r.alone).length;
    // one read alone saw it (the next in turn, or one already in flight): not a round of them
    expect(after - before).toBeLessThanOrEqual(2);
  });

  it("an instance whose answer did not change is no reason to read the fleet", async () => {
    const s = stub(4);
    const watch = createWatch(s.ctx, signature, 1000);
    watch.wholeStarts();
    watch.whole(s.whole());
    s.state[2] = "COMMITTING";
    const t0 = performance.now();
    watch.wholeStarts();
    watch.whole(s.whole());
    // the whole read saw it: watching goes on until the next whole read is due
    await watch.untilChange(new AbortController().signal);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(4 * W - 2);
    expect(s.reads.filter((r) => r.alone && r.i === 2).length).toBeGreaterThan(0);
  });

  it("never reads an instance more than twice in any windowPollInterval, and once per interval on average", async () => {
    const s = stub(6);
    const watch = createWatch(s.ctx, signature, 1000);
    const t0 = performance.now();
    let flip = 0;
    // whole reads and watches for a while, the answers changing now and then (each change brings a whole read)
    while (performance.now() - t0 < 30 * W) {
      watch.wholeStarts();
      watch.whole(s.whole());
      if (++flip % 3 === 0) s.state[flip % 6] = s.state[flip % 6] === "RUNNING" ? "COMMITTING" : "RUNNING";
      await watch.untilChange(new AbortController().signal);
    }
    const span = performance.now() - t0;
    for (let i = 0; i < 6; i++) {
      const at = s.reads.filter((r) => r.i === i).map((r) => r.at);
      for (let k = 2; k < at.length; k++) expect(at[k]! - at[k - 2]!).toBeGreaterThanOrEqual(W - 1);
      // on average at most one read per interval, and a whole read per instance when its answer turned
      expect(at.length).toBeLessThanOrEqual(span / W + flip / 3 + 2);
    }
  });

  it("stops at once when the step's signal aborts", async () => {
    const s = stub(4);
    const watch = createWatch(s.ctx, signature, 60_000);
    s.ctx.run.defaults.windowPollMs = 60_000;
    watch.wholeStarts();
    watch.whole(s.whole());
    const ac = new AbortController();
    setTimeout(() => ac.abort(new Error("step limit")), 20);
    await expect(watch.untilChange(ac.signal)).rejects.toThrow("step limit");
  });
});
