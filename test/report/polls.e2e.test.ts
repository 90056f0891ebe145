/**
 * Issue #15, point 1, from a real rehearsal with faults: runbooks/rs-to-sharded.yaml against the
 * simulator with `http500=0.3@0/progress` (three in ten progress reads of the instance fail). The
 * report counts every progress read the service saw, per instance and endpoint, with p50/p95 and
 * every failure with its error; the events hold no line per read.
 */
import { beforeAll, describe, expect, it } from "vitest";
import type { RunEvent, RunEventOf } from "../../src/events.js";
import { buildReport, renderHtml, type Report } from "../../src/report/index.js";
import { rehearsalEvents, type RehearsalResult } from "../support/rehearsal.js";

const of = <K extends RunEvent["type"]>(events: readonly RunEvent[], type: K): RunEventOf<K>[] =>
  events.filter((e): e is RunEventOf<K> => e.type === type);

describe("progress reads in the report of a rehearsal with failing reads", () => {
  let real: RehearsalResult;
  let report: Report;
  let html: string;

  beforeAll(async () => {
    real = await rehearsalEvents({ faults: ["http500=0.3@0/progress"], seed: 7 });
    if (real.reason !== undefined) throw new Error(`the rehearsal did not run: ${real.reason}`);
    report = buildReport(real.events);
    html = renderHtml(report);
  }, 120_000);

  it("the rehearsal still committed: failed reads are retried, never fatal", () => {
    if (real.reason !== undefined) throw new Error(real.reason);
    expect(real.result.outcome).toBe("ok");
    expect(real.verdict.safe).toBe(true);
  });

  it("counts exactly the reads and the failures the simulator saw", () => {
    if (real.reason !== undefined) throw new Error(real.reason);
    const instance = report.polls.find((p) => p.target === "service" && p.instance?.index === 0);
    const verifier = report.polls.find((p) => p.target === "verifier");
    const hits = real.faults.find((f) => f.kind === "http500")?.hits ?? 0;
    expect(hits).toBeGreaterThan(0);
    expect(instance).toMatchObject({
      label: "sales-rs",
      path: "/api/v1/progress",
      count: real.counts.instances[0]!["GET /api/v1/progress"],
      failed: hits,
    });
    expect(verifier?.count).toBe(real.counts.verifier["GET /api/v1/progress"]);
    expect(verifier?.failed).toBe(0);
    expect(report.counts).toMatchObject({
      polls: instance!.count + verifier!.count,
      failedPolls: hits,
      failedRequests: hits,
      commands: report.requests.length,
    });
  });

  it("has p50 and p95 per instance and endpoint", () => {
    for (const p of report.polls) {
      expect(p.p50Ms, p.label).toBeGreaterThanOrEqual(0);
      expect(p.p95Ms, p.label).toBeGreaterThanOrEqual(p.p50Ms!);
      expect(p.p95Ms, p.label).toBeLessThanOrEqual(p.maxMs);
      expect(
        p.histogram.reduce((n, [, c]) => n + c, 0),
        p.label,
      ).toBe(p.count);
    }
  });

  it("lists every failure with its error", () => {
    const failed = report.polls.reduce((n, p) => n + p.failed, 0);
    expect(report.pollFailures).toHaveLength(failed);
    for (const f of report.pollFailures) {
      expect(f).toMatchObject({ target: "service", label: "sales-rs", path: "/api/v1/progress", status: 500 });
      expect(f.error).toMatch(/InternalError/);
    }
    expect(html).toMatch(
      new RegExp(
        `<tr class="bad" data-target="sales-rs" data-count="${report.polls[0]!.count}" data-failed="${failed}">`,
      ),
    );
    expect(html.match(/<table id="poll-failures">.*?<\/table>/s)?.[0].match(/<tr class="bad">/g)).toHaveLength(failed);
  });

  it("records them compactly: no line per read, a summary per step", () => {
    if (real.reason !== undefined) throw new Error(real.reason);
    const reads = report.counts.polls;
    expect(of(real.events, "request.sent").filter((e) => e.method === "GET")).toEqual([]);
    const summaries = of(real.events, "polls.summary").length;
    expect(summaries).toBeGreaterThan(0);
    expect(summaries).toBeLessThanOrEqual(of(real.events, "step.finished").length + 1);
    expect(summaries).toBeLessThan(reads / 2);
    // the last summary holds the whole run
    const last = of(real.events, "polls.summary").at(-1)!;
    expect(last.polls.reduce((n, p) => n + p.count, 0)).toBe(reads);
  });

  it("states the verifier's final counters and the window for the record", () => {
    if (real.reason !== undefined) throw new Error(real.reason);
    const last = of(real.events, "verifier.sampled").at(-1)!;
    expect(report.record.verifier).toMatchObject({
      phase: last.progress.phase,
      counters: Object.fromEntries(
        Object.entries(last.progress.verificationStatus ?? {}).filter(([, v]) => typeof v === "number"),
      ),
    });
    expect(report.record.verifier?.counters.failedTasks).toBe(0);
    expect(html).toMatch(/<table id="verifier-final">/);
    // writes were stopped by the runbook's hook and the one instance said canWrite
    expect(report.window).toMatchObject({ closedBy: "canWrite", open: false });
    expect(report.window!.durationMs).toBeGreaterThan(0);
    expect(of(real.events, "window.closed")).toHaveLength(1);
  });
});
