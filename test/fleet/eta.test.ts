import { describe, expect, it } from "vitest";
import { COPY_DEFAULTS, addCopySample, copyProgress, emptyCopyState, readCollectionCopy } from "../../src/fleet/eta.js";
import type { CopyState } from "../../src/fleet/eta.js";

const GiB = 1024 ** 3;

/** Feeds one instance's (copied, total) every `every` ms. */
function feed(
  state: CopyState,
  instance: string,
  points: [number, number][],
  t0: number,
  every = 2000,
): { state: CopyState; t: number } {
  let s = state;
  let t = t0;
  for (const [copied, total] of points) {
    s = addCopySample(s, instance, { copied, total }, t);
    t += every;
  }
  return { state: s, t };
}

const linear = (from: number, step: number, n: number, total: number): [number, number][] =>
  Array.from({ length: n }, (_, i) => [from + i * step, total]);

describe("copyProgress", () => {
  it("has no percent and no ETA on the 0-of-1 placeholder (spec: progress rule 3)", () => {
    const { state } = feed(
      emptyCopyState(),
      "a",
      [
        [0, 1],
        [0, 1],
        [0, 1],
        [0, 1],
      ],
      0,
    );
    const v = copyProgress(state);
    expect(v.started).toBe(false);
    expect(v.fraction).toBeUndefined();
    expect(v.eta).toBe("—");
  });

  it("shows … until enough samples, then a sane ETA from a steady rate", () => {
    let { state, t } = feed(emptyCopyState(), "a", [[0, 1]], 0);
    ({ state, t } = feed(state, "a", [[100 * 1024 ** 2, 10 * GiB]], t));
    expect(copyProgress(state).eta).toBe("…");
    // 100 MiB every 2 s = 50 MiB/s; 10 GiB total
    ({ state, t } = feed(state, "a", linear(200 * 1024 ** 2, 100 * 1024 ** 2, 10, 10 * GiB), t));
    const v = copyProgress(state);
    expect(v.rate).toBeCloseTo(50 * 1024 ** 2, -3);
    const left = (10 * GiB - 1100 * 1024 ** 2) / (50 * 1024 ** 2);
    expect(v.etaMs! / 1000).toBeCloseTo(left, 0);
    expect(v.eta).toBe("3m 03s"); // 182.x s rounded up to the second (an ETA must not promise more than it knows), in formatDuration's one format
  });

  it("resets the window when the estimate grows, and never goes negative", () => {
    let { state, t } = feed(emptyCopyState(), "a", linear(0, GiB / 10, 10, 2 * GiB), 0);
    expect(copyProgress(state).etaMs).toBeGreaterThan(0);
    ({ state, t } = feed(state, "a", [[GiB, 4 * GiB]], t));
    expect(state.resetKind).toBe("changed");
    const v = copyProgress(state);
    expect(v.fraction).toBeCloseTo(0.25);
    expect(v.eta).toBe("…");
    ({ state, t } = feed(state, "a", linear(GiB + GiB / 10, GiB / 10, 5, 4 * GiB), t));
    const w = copyProgress(state);
    expect(w.etaMs).toBeGreaterThan(0);
    expect(w.etaMs! / 1000).toBeCloseTo(((4 * GiB - 1.5 * GiB) / (GiB / 10)) * 2, -1);
  });

  it("restarts at 0 of 1 after a live upgrade (spec: progress rule 4): no bar, no ETA, then measures afresh", () => {
    let { state, t } = feed(emptyCopyState(), "a", linear(0, GiB / 10, 10, 5 * GiB), 0);
    ({ state, t } = feed(state, "a", [[0, 1]], t));
    expect(state.resetKind).toBe("restarted");
    expect(copyProgress(state)).toMatchObject({ started: false, eta: "—" });
    ({ state, t } = feed(state, "a", [[GiB / 100, 3 * GiB]], t));
    expect(state.resetKind).toBe("began");
    expect(copyProgress(state).eta).toBe("…");
    ({ state, t } = feed(state, "a", linear(GiB / 50, GiB / 100, 4, 3 * GiB), t));
    const v = copyProgress(state);
    expect(v.etaMs).toBeGreaterThan(0);
    expect(Number.isFinite(v.etaMs)).toBe(true);
  });

  it("says stalled when nothing moves, and recovers when bytes flow again", () => {
    let { state, t } = feed(emptyCopyState(), "a", linear(0, GiB / 10, 5, 5 * GiB), 0);
    // 2 minutes without progress: the 60 s window holds only flat samples
    ({ state, t } = feed(
      state,
      "a",
      Array.from({ length: 60 }, () => [0.4 * GiB, 5 * GiB] as [number, number]),
      t,
    ));
    expect(copyProgress(state)).toMatchObject({ eta: "stalled", rate: 0 });
    expect(copyProgress(state).etaMs).toBeUndefined();
    ({ state } = feed(state, "a", linear(0.5 * GiB, GiB / 10, 40, 5 * GiB), t));
    expect(copyProgress(state).etaMs).toBeGreaterThan(0);
  });

  it("hides absurd ETAs (> 7 days) instead of printing them", () => {
    const { state } = feed(emptyCopyState(), "a", linear(1000, 10, 20, 100 * GiB), 0);
    const v = copyProgress(state);
    expect(v.etaMs).toBeUndefined();
    expect(v.eta).toBe(">7d 0h");
  });

  it("sums copied bytes over instances against the global total (not the sum of totals)", () => {
    let s = emptyCopyState();
    for (const i of ["a", "b", "c"]) s = addCopySample(s, i, { copied: GiB, total: 6 * GiB }, 1000);
    const v = copyProgress(s);
    expect(v.total).toBe(6 * GiB);
    expect(v.copied).toBe(3 * GiB);
    expect(v.fraction).toBeCloseTo(0.5);
  });

  it("one instance dropping back resets the rate even if the sum still grows", () => {
    let s = emptyCopyState();
    let t = 0;
    for (let k = 0; k < 5; k++, t += 2000) {
      s = addCopySample(s, "a", { copied: k * GiB, total: 10 * GiB }, t);
      s = addCopySample(s, "b", { copied: k * GiB, total: 10 * GiB }, t);
    }
    const before = s.resets;
    s = addCopySample(s, "a", { copied: 0, total: 10 * GiB }, t);
    expect(s.resets).toBe(before + 1);
    expect(copyProgress(s).eta).toBe("…");
  });

  it("is done at 100% with ETA 0, and clamps copied to the total", () => {
    const { state } = feed(
      emptyCopyState(),
      "a",
      [
        [0, 1],
        [GiB, 2 * GiB],
        [2 * GiB, 2 * GiB],
      ],
      0,
    );
    expect(copyProgress(state)).toMatchObject({ done: true, fraction: 1, etaMs: 0, eta: "done" });
  });

  it("keeps the last figures when an instance reports none (failed read, IDLE)", () => {
    const { state } = feed(emptyCopyState(), "a", [[GiB, 2 * GiB]], 0);
    expect(addCopySample(state, "a", undefined, 5000)).toBe(state);
  });

  it("keeps a minimum of samples even when polls are slower than the window", () => {
    const { state } = feed(emptyCopyState(), "a", linear(0, GiB / 10, 5, 10 * GiB), 0, 5 * 60_000);
    expect(state.window.length).toBeGreaterThanOrEqual(COPY_DEFAULTS.minSamples);
    expect(copyProgress(state).etaMs).toBeGreaterThan(0);
  });

  it("reads collectionCopy from a checked progress answer", () => {
    const p = { state: "RUNNING", collectionCopy: { estimatedTotalBytes: 10, estimatedCopiedBytes: 4 } } as const;
    expect(readCollectionCopy(p)).toEqual({ copied: 4, total: 10 });
    expect(readCollectionCopy({ state: "IDLE", collectionCopy: null })).toBeUndefined();
    expect(readCollectionCopy({ state: "RUNNING", collectionCopy: { estimatedTotalBytes: 10 } })).toBeUndefined();
  });
});

describe("an ETA once the rate is known", () => {
  const GiB = 1 << 30;
  const run = (times: number[], perRound = 1) => {
    let st = emptyCopyState();
    times.forEach((t, k) => {
      for (let i = 0; i < perRound; i++)
        st = addCopySample(st, `i${i}`, { copied: (k + 1) * 100 * 1024 * 1024, total: 4 * GiB }, t + i);
    });
    return copyProgress(st);
  };
  it("fast polls (a rehearsal): an ETA after three rounds, though they span less than minSpanMs", () => {
    expect(run([0, 40, 80]).eta).toMatch(/^\d+s$/);
    expect(run([0, 40]).eta).toBe("…");
  });
  it("one round of several instances answering within milliseconds is not a rate", () => {
    expect(run([0], 3).eta).toBe("…");
    expect(run([0, 40, 80], 3).eta).toMatch(/^\d+s$/);
  });
  it("real polls every 2 s: still minSpanMs", () => {
    expect(run([0, 2000]).eta).toBe("…");
    expect(run([0, 2000, 4000]).eta).toMatch(/^\d+[sm]( \d+s)?$/);
  });
});

describe("addCopySample on a fleet's answers", () => {
  // What the reducer was before an unchanged answer stopped copying the instances (issue 41):
  // every answer recomputed the fleet's sum from a fresh copy. The fast path must add the very
  // same points, resets and reasons.
  function reference(
    state: CopyState,
    instance: string,
    sample: { copied: number; total: number } | undefined,
    t: number,
  ): CopyState {
    if (sample === undefined) return state;
    const prev = state.instances[instance];
    const instances = { ...state.instances, [instance]: sample };
    const last = state.window[state.window.length - 1];
    const at = last !== undefined ? Math.max(t, last.t) : t;
    let copied = 0;
    for (const c of Object.values(instances)) copied += c.copied;
    const reset =
      prev === undefined
        ? sample.copied > 0 && state.window.length > 0
        : sample.total !== prev.total || sample.copied < prev.copied;
    if (reset) return { ...addCopySample(state, instance, sample, t), instances, window: [{ t: at, copied }] };
    const window = [...state.window, { t: at, copied }];
    while (
      window.length > COPY_DEFAULTS.minSamples &&
      (window.length > COPY_DEFAULTS.maxSamples || (window[0]?.t ?? at) < at - COPY_DEFAULTS.windowMs)
    )
      window.shift();
    return { ...state, instances, window };
  }

  it("adds the same points as summing the fleet afresh, through joins, unchanged answers, growth and resets", () => {
    // a deterministic walk: 8 instances, mostly unchanged answers (the write-stop window), some growth,
    // an estimate change, a copy that goes back, a failed read
    let seed = 7;
    const rnd = (): number => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const figures = new Map<string, { copied: number; total: number }>();
    let mine = emptyCopyState();
    let theirs = emptyCopyState();
    let unchanged = 0;
    for (let k = 0; k < 3000; k++) {
      const name = `sync${Math.floor(rnd() * 8)}`;
      const was = figures.get(name) ?? { copied: 0, total: 100 * GiB };
      const r = rnd();
      const next =
        r < 0.6
          ? was
          : r < 0.9
            ? { copied: was.copied + Math.floor(rnd() * GiB), total: was.total }
            : r < 0.95
              ? { copied: was.copied, total: was.total + GiB }
              : r < 0.98
                ? { copied: Math.floor(was.copied / 2), total: was.total }
                : undefined;
      if (next) figures.set(name, next);
      if (next === was && mine.instances[name] !== undefined) unchanged++;
      const t = k * 13;
      mine = addCopySample(mine, name, next && { ...next }, t);
      theirs = reference(theirs, name, next && { ...next }, t);
      expect(mine.window).toEqual(theirs.window);
      expect(mine.instances).toEqual(theirs.instances);
      expect([mine.resets, mine.resetReason]).toEqual([theirs.resets, theirs.resetReason]);
    }
    expect(unchanged).toBeGreaterThan(1000);
  });

  it("an answer with the figures the instance had keeps the instances as they are (no copy of the fleet per answer)", () => {
    let s = emptyCopyState();
    for (let i = 0; i < 64; i++) s = addCopySample(s, `sync${i}`, { copied: GiB, total: 64 * GiB }, 0);
    const next = addCopySample(s, "sync5", { copied: GiB, total: 64 * GiB }, 100);
    expect(next.instances).toBe(s.instances);
    expect(next.window.at(-1)).toEqual({ t: 100, copied: 64 * GiB });
    expect(addCopySample(s, "sync5", { copied: 2 * GiB, total: 64 * GiB }, 100).instances).not.toBe(s.instances);
  });
});
