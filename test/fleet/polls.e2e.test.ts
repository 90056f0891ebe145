/**
 * Issue #15, point 1: every request is in the record, compactly. Progress reads are counted per
 * instance and endpoint with a latency histogram (`polls.summary`), each failure is an event of
 * its own (`poll.failed`), and a read never makes a line of its own. Against the simulator: the
 * counts are the ones the service saw; and never two progress requests in flight per instance.
 */
import { afterEach, describe, expect, it } from "vitest";
import { ServiceError, TransportError } from "../../src/api/index.js";
import type { RunEventMap, RunEventType } from "../../src/events.js";
import {
  bucketBound,
  bucketOf,
  createFleet,
  createPollRecorder,
  histogramPercentile,
  mergeHistograms,
  type Fleet,
  type FleetEmit,
} from "../../src/fleet/index.js";
import type { Simulator } from "../../src/sim/index.js";
import { frozen } from "../support/sim.js";

type Seen = { [K in RunEventType]: { type: K; payload: RunEventMap[K] } }[RunEventType];

function recorder(): { events: Seen[]; emit: FleetEmit; of: <K extends RunEventType>(t: K) => RunEventMap[K][] } {
  const events: Seen[] = [];
  const emit: FleetEmit = (type, payload) => events.push({ type, payload } as Seen);
  const of = <K extends RunEventType>(t: K): RunEventMap[K][] =>
    events.filter((e) => e.type === t).map((e) => e.payload as RunEventMap[K]);
  return { events, emit, of };
}

const ref = (index: number) => ({ url: `http://127.0.0.1:${27182 + index}`, name: `shard-${index}`, index });

describe("the latency histogram", () => {
  it("puts every latency in a bucket whose bound is at most 19 % above it", () => {
    for (const ms of [0.05, 0.1, 0.11, 0.5, 1, 1.7, 9.99, 10, 42, 250, 999, 1000, 12_345, 600_000]) {
      const k = bucketOf(ms);
      const hi = bucketBound(k);
      expect(hi, `${ms} ms`).toBeGreaterThanOrEqual(Math.min(ms, 0.1) - 0.005);
      if (ms > 0.1) {
        expect(hi, `${ms} ms`).toBeGreaterThanOrEqual(ms - 0.005);
        expect(hi / ms, `${ms} ms`).toBeLessThanOrEqual(2 ** 0.25 + 0.01);
        expect(bucketBound(k - 1), `${ms} ms`).toBeLessThan(ms);
      }
    }
  });

  it("reads p50 and p95 within one bucket of the exact values, capped at the largest latency", () => {
    const xs = Array.from({ length: 1000 }, (_, i) => 1 + (i % 100) * 2.5); // 1 … 248.5 ms
    const hist = new Map<number, number>();
    for (const x of xs) hist.set(bucketBound(bucketOf(x)), (hist.get(bucketBound(bucketOf(x))) ?? 0) + 1);
    const pairs = [...hist.entries()];
    const sorted = [...xs].sort((a, b) => a - b);
    const exact = (p: number) => sorted[Math.ceil((p / 100) * sorted.length) - 1]!;
    for (const p of [50, 95, 99]) {
      const got = histogramPercentile(pairs, p, Math.max(...xs))!;
      expect(got).toBeGreaterThanOrEqual(exact(p));
      expect(got / exact(p)).toBeLessThanOrEqual(2 ** 0.25 + 0.01);
    }
    expect(histogramPercentile(pairs, 100, 248.5)).toBe(248.5);
    expect(histogramPercentile([], 50)).toBeUndefined();
  });

  it("merges histograms of two runs bucket by bucket", () => {
    expect(
      mergeHistograms(
        [
          [1, 2],
          [5, 1],
        ],
        [
          [5, 3],
          [0.5, 1],
        ],
      ),
    ).toEqual([
      [0.5, 1],
      [1, 2],
      [5, 4],
    ]);
  });
});

describe("createPollRecorder", () => {
  it("emits each failure at once, and cumulative counts per instance and endpoint on flush", () => {
    const rec = recorder();
    const polls = createPollRecorder(rec.emit);
    polls.record("service", ref(0), "/api/v1/progress", { durationMs: 3 });
    polls.record("service", ref(0), "/api/v1/progress", { durationMs: 5 });
    const refused = new ServiceError("http://127.0.0.1:27182", "progress", "InternalError", "boom", 500);
    polls.record("service", ref(0), "/api/v1/progress", { durationMs: 2, error: refused });
    polls.record("service", ref(1), "/api/v1/progress", { durationMs: 7 });
    const reset = new TransportError("http://127.0.0.1:27020", "verifier.progress", "network", "connection reset", {
      requestSent: true,
    });
    polls.record("verifier", undefined, "/api/v1/progress", { durationMs: 1, error: reset });
    expect(rec.of("poll.failed")).toEqual([
      {
        target: "service",
        instance: ref(0),
        path: "/api/v1/progress",
        error: refused.message,
        errorKind: "service",
        status: 500,
        durationMs: 2,
      },
      {
        target: "verifier",
        path: "/api/v1/progress",
        error: reset.message,
        errorKind: "transport",
        durationMs: 1,
      },
    ]);
    expect(rec.of("polls.summary")).toEqual([]);
    polls.flush();
    polls.flush(); // nothing new: no second line
    const [summary] = rec.of("polls.summary");
    expect(rec.of("polls.summary")).toHaveLength(1);
    expect(summary!.polls).toEqual([
      {
        target: "service",
        instance: ref(0),
        path: "/api/v1/progress",
        count: 3,
        failed: 1,
        totalMs: 10,
        maxMs: 5,
        histogram: [
          [bucketBound(bucketOf(2)), 1],
          [bucketBound(bucketOf(3)), 1],
          [bucketBound(bucketOf(5)), 1],
        ],
      },
      {
        target: "service",
        instance: ref(1),
        path: "/api/v1/progress",
        count: 1,
        failed: 0,
        totalMs: 7,
        maxMs: 7,
        histogram: [[bucketBound(bucketOf(7)), 1]],
      },
      {
        target: "verifier",
        path: "/api/v1/progress",
        count: 1,
        failed: 1,
        totalMs: 1,
        maxMs: 1,
        histogram: [[bucketBound(bucketOf(1)), 1]],
      },
    ]);
    // cumulative: the next summary holds everything since the start
    polls.record("service", ref(1), "/api/v1/progress", { durationMs: 1 });
    polls.flush();
    expect(rec.of("polls.summary")[1]!.polls.find((p) => p.instance?.index === 1)?.count).toBe(2);
  });

  it("does not count a read the caller aborted (Ctrl-C, a step's time limit): it is not the service's", () => {
    const rec = recorder();
    const polls = createPollRecorder(rec.emit);
    const aborted = new TransportError("http://x", "progress", "aborted", "aborted", { requestSent: true });
    polls.record("service", ref(0), "/api/v1/progress", { durationMs: 9, error: aborted });
    polls.flush();
    expect(rec.events).toEqual([]);
  });

  it("emits a summary at least every `everyMs` while polls go on (a 12-hour wait is a handful of lines)", () => {
    const rec = recorder();
    let now = 0;
    const polls = createPollRecorder(rec.emit, { everyMs: 60_000, now: () => now });
    for (let i = 0; i < 3600; i++) {
      now += 2000; // a poll every 2 s for two hours
      polls.record("service", ref(0), "/api/v1/progress", { durationMs: 4 });
    }
    const summaries = rec.of("polls.summary");
    expect(summaries.length).toBe(120);
    expect(summaries.at(-1)!.polls[0]!.count).toBe(3600);
  });
});

describe("the fleet counts every progress read", () => {
  let sim: Simulator | undefined;
  let fleet: Fleet | undefined;
  afterEach(async () => {
    await fleet?.close();
    await sim?.close();
    fleet = undefined;
    sim = undefined;
  });

  it("as many reads and failures as the simulator saw, and no request/response line for a read", async () => {
    sim = await frozen({ instances: 2, faults: ["http500=1@1/progress"] });
    const rec = recorder();
    fleet = createFleet({
      instances: sim.instances.map((i) => ({ url: i.url, name: `shard-${i.index}` })),
      requestTimeoutMs: 2000,
      emit: rec.emit,
    });
    for (let i = 0; i < 5; i++) await fleet.progress();
    fleet.polls.flush();
    const counts = sim.control.counts().instances.map((c) => c["GET /api/v1/progress"]);
    const [summary] = rec.of("polls.summary");
    expect(summary!.polls.map((p) => [p.instance?.index, p.count, p.failed])).toEqual([
      [0, counts[0], 0],
      [1, counts[1], 5],
    ]);
    expect(rec.of("poll.failed")).toHaveLength(5);
    expect(rec.of("poll.failed")[0]).toMatchObject({ status: 500, errorKind: "service", instance: { index: 1 } });
    expect(rec.of("request.sent")).toEqual([]);
    expect(rec.of("progress.sampled")).toHaveLength(5);
  });

  it("joins a read still in flight instead of sending a second request to the instance", async () => {
    sim = await frozen({ instances: 2, faults: ["latency=0.3"] });
    fleet = createFleet({ instances: sim.instances.map((i) => ({ url: i.url })), requestTimeoutMs: 5000 });
    const [a, b] = await Promise.all([fleet.progress(), fleet.progress()]);
    expect(sim.control.counts().instances.map((c) => c["GET /api/v1/progress"])).toEqual([1, 1]);
    expect(a.instances.map((i) => i.progress?.state)).toEqual(["IDLE", "IDLE"]);
    expect(b.instances).toEqual(a.instances);
    // a snapshot that joined a read counts its age from that read's start
    expect(b.at).toBe(a.at);
    await fleet.progress();
    expect(sim.control.counts().instances.map((c) => c["GET /api/v1/progress"])).toEqual([2, 2]);
  });
});
