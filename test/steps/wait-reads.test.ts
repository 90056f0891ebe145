/**
 * Which instances a wait reads inside the write-stop window (src/steps/kit/wait.ts, issue 41): a
 * condition that reads only the first process's `canWrite` (the others' "is not valid", the
 * cutover page) is read there alone, at the bound (no instance more than twice in any
 * `windowPollInterval`), with the whole fleet read for people at most every four intervals; a
 * condition with instance checks, a verifier condition, or a wait outside the window reads every
 * instance. Counts and gaps are asserted against the bound, never durations a slow machine stretches.
 */
import { describe, expect, it, vi } from "vitest";
import type { InstanceRef } from "../../src/events.js";
import {
  conditionReads,
  evaluate,
  instanceSignature,
  readCondition,
  type ConditionBody,
  type Fleet,
  type FleetSnapshot,
  type InstanceSample,
} from "../../src/fleet/index.js";
import { waitUntil } from "../../src/steps/kit/wait.js";
import type { StepContext } from "../../src/steps/index.js";

// large enough that the bound's gaps (W/2 to 0.55 W) and the interval's (W/2 to W) are told apart
const W = 100;

/** A fleet of n: instance 0 (the first process) shows canWrite from `turnAt` ms; every read recorded. */
function stub(n: number, opts: { open?: boolean; turnAfterMs: number }) {
  const refs: InstanceRef[] = Array.from({ length: n }, (_, index) => ({
    url: `http://127.0.0.1:${index + 1}`,
    index,
  }));
  const t0 = performance.now();
  const reads: { at: number; instances: number[] }[] = [];
  const sampleOf = (i: number): InstanceSample => ({
    ref: refs[i]!,
    progress: {
      state: "COMMITTING",
      canCommit: true,
      canWrite: i === 0 ? performance.now() - t0 >= opts.turnAfterMs : false,
      info: "",
      lagTimeSeconds: 1,
    } as never,
  });
  const read = (only?: readonly number[]): FleetSnapshot => {
    const instances = (only ? refs.filter((r) => only.includes(r.index)) : refs).map((r) => sampleOf(r.index));
    reads.push({ at: performance.now() - t0, instances: instances.map((s) => s.ref.index) });
    return { at: Date.now(), instances };
  };
  const fleet = {
    refs,
    progress: (_signal?: AbortSignal, only?: readonly number[]) => Promise.resolve(read(only)),
    sample: (i: number) => Promise.resolve(read([i]).instances.length ? sampleOf(i) : sampleOf(i)),
  } as unknown as Fleet;
  const ctx = {
    index: 5,
    id: "writable",
    signal: AbortSignal.timeout(10_000),
    run: {
      fleet,
      verifier: undefined,
      emit: () => undefined,
      window: { open: opts.open ?? true },
      defaults: { windowPollMs: W },
    },
  } as unknown as StepContext;
  return { ctx, reads };
}

async function waitFor(body: ConditionBody, n: number, opts: { open?: boolean; turnAfterMs: number }) {
  const s = stub(n, opts);
  const cond = readCondition(body, 0);
  const r = await waitUntil(s.ctx, {
    pollMs: 400,
    slowAfterMs: 60_000,
    describe: cond.text,
    evaluate: (snap) => evaluate(cond, snap),
    watch: (sample) => instanceSignature(cond, sample),
    reads: conditionReads(cond, n),
  });
  return { ...s, result: r };
}

/**
 * `waitFor` on a fake clock (its timers and `performance.now()`): each read is recorded at the
 * instant the wait asks for it, so a gap is the wait's own schedule, exactly. On the real clock a
 * gap also holds the time the OS kept the process off the CPU between the wait's mark and the read
 * (4 ms under a loaded machine: a flaky test, not a broken bound).
 */
async function waitForOnFakeClock(body: ConditionBody, n: number, opts: { open?: boolean; turnAfterMs: number }) {
  vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "performance"] });
  try {
    let settled = false;
    const p = waitFor(body, n, opts).finally(() => (settled = true));
    for (let ms = 0; !settled; ms++) {
      if (ms > 60_000) throw new Error("the wait did not end within a minute of the fake clock");
      await vi.advanceTimersByTimeAsync(1);
    }
    return await p;
  } finally {
    vi.useRealTimers();
  }
}

describe("the instances a condition reads", () => {
  const n = 64;
  const all = Array.from({ length: n }, (_, i) => i);
  it.each([
    ["canWrite alone: the first process", { canWrite: true }, [0]],
    ["canWrite as an expect path: the first process", { expect: [{ path: "canWrite", equals: true }] }, [0]],
    ["an instance check with canWrite: every instance", { canWrite: true, state: "COMMITTING" }, all],
    ["an instance check: every instance", { canCommit: true, lagBelow: 5 }, all],
    ["on: any: every instance (each answer is looked at)", { state: "COMMITTED", on: "any" }, all],
    [
      "on: coordinator: every instance (which one it is, only answers tell)",
      { state: "COMMITTED", on: "coordinator" },
      all,
    ],
    ["a verifier condition with canWrite: every instance", { canWrite: true, phase: "idle" }, all],
    ["a verifier condition alone: every instance (read for people, not judged)", { phase: "idle" }, all],
  ] as [string, ConditionBody, number[]][])("%s", (_name, body, want) => {
    expect(conditionReads(readCondition(body, 0), n)).toEqual(want);
  });

  it("canWrite with no first process declared: every instance (the step is refused before it reads)", () => {
    expect(conditionReads(readCondition({ canWrite: true }, undefined), 3)).toEqual([0, 1, 2]);
  });

  it("the first process where the runbook declares it, not only first in the list", () => {
    expect(conditionReads(readCondition({ canWrite: true }, 2), 3)).toEqual([2]);
  });

  it("a condition with no check at all (a library caller's): every instance", () => {
    expect(conditionReads(readCondition({}, 0), 3)).toEqual([0, 1, 2]);
  });

  it("a first process outside the fleet (a library caller's slip): every instance", () => {
    expect(conditionReads(readCondition({ canWrite: true }, 7), 3)).toEqual([0, 1, 2]);
  });
});

describe("a canWrite wait inside the write-stop window, 64 instances", () => {
  it("reads the first process alone at the bound, the whole fleet at most every four intervals, and ends on the read that shows canWrite", async () => {
    const turnAfterMs = 8 * W;
    const { reads, result } = await waitForOnFakeClock({ canWrite: true }, 64, { turnAfterMs });
    // the first read of a wait is whole: the state of the fleet when it began
    expect(reads[0]!.instances).toHaveLength(64);
    const whole = reads.filter((r) => r.instances.length === 64);
    const alone = reads.filter((r) => r.instances.length === 1);
    expect(alone.length).toBeGreaterThan(whole.length);
    for (const r of alone) expect(r.instances).toEqual([0]);
    // the whole fleet (for people: the live view, the journal) at most every 4 W, and still read:
    // the first whole read after 4 W is the next read of the schedule
    expect(whole.length).toBeGreaterThanOrEqual(2);
    for (let k = 1; k < whole.length; k++) expect(whole[k]!.at - whole[k - 1]!.at).toBeGreaterThanOrEqual(4 * W);
    // the first process, whole reads included: never more than twice in any W (every gap ≥ W/2)
    for (let k = 1; k < reads.length; k++) expect(reads[k]!.at - reads[k - 1]!.at).toBeGreaterThanOrEqual(W / 2);
    // at the bound, not at the interval's gaps (W/2 to W, 0.75 W on average): the first process
    // read alone every 0.525 W on average (a late timer only adds), the turn seen on the next read
    const gaps = alone.slice(1).map((r, k) => r.at - alone[k]!.at);
    const mean = gaps.reduce((a, b) => a + b, 0) / gaps.length;
    expect(mean).toBeLessThan(0.64 * W);
    const last = reads[reads.length - 1]!;
    const before = reads[reads.length - 2]!;
    expect(before.at).toBeLessThan(turnAfterMs);
    expect(last.at).toBeGreaterThanOrEqual(turnAfterMs);
    // judged on the first process's answer alone
    expect(result.snapshot.instances.map((s) => s.ref.index)).toEqual(last.instances);
    expect(result.snapshot.instances.find((s) => s.ref.index === 0)?.progress?.canWrite).toBe(true);
  });

  it("outside the window, every read is of the whole fleet", async () => {
    const { reads } = await waitFor({ canWrite: true }, 4, { open: false, turnAfterMs: 900 });
    expect(reads.length).toBeGreaterThan(1);
    for (const r of reads) expect(r.instances).toEqual([0, 1, 2, 3]);
  });

  it("a condition with instance checks reads every instance, however it is paced", async () => {
    const { reads } = await waitFor({ canWrite: true, state: "COMMITTING" }, 2, { turnAfterMs: 4 * W });
    expect(reads.length).toBeGreaterThan(1);
    for (const r of reads) expect(r.instances).toEqual([0, 1]);
  });
});
