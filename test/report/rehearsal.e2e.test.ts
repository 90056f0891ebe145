/**
 * A real rehearsal, in process (simulator + runner, runbooks/rs-to-sharded.yaml at ×50), with
 * the report listener: the report must reflect what happened. report.json is the run's timeline
 * (every step, every request paired with its answer, one progress sample per poll), junit.xml
 * has one passing test case per step, and report.html's charts are drawn from the run's samples.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildReport, createReportListener, type Report } from "../../src/report/index.js";
import type { RunEvent, RunEventOf } from "../../src/events.js";
import { rehearsalEvents, type RehearsalResult } from "../support/rehearsal.js";
import { findAll, parseXml } from "../support/xml.js";

const dir = mkdtempSync(join(tmpdir(), "syncbook-report-rehearsal-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const of = <K extends RunEvent["type"]>(events: readonly RunEvent[], type: K): RunEventOf<K>[] =>
  events.filter((e): e is RunEventOf<K> => e.type === type);
const rec = (v: unknown): Record<string, unknown> | undefined =>
  v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
/** The inner progress object of a sampled answer (`{success, progress: {…}}` or the object itself). */
const inner = (p: unknown): Record<string, unknown> => {
  const o = rec(p) ?? {};
  return !("state" in o) && !("phase" in o) && rec(o.progress) ? (rec(o.progress) ?? {}) : o;
};
const isNum = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v);
/** `data-points` of a chart series in report.html, or undefined when the series is not drawn. */
const drawn = (html: string, key: string): number | undefined => {
  const m = new RegExp(
    `data-series="${key.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}" data-points="(\\d+)" data-samples="(\\d+)"`,
  ).exec(html);
  return m ? Number(m[1]) : undefined;
};

describe("a real rehearsal's report (runbooks/rs-to-sharded.yaml, in process)", () => {
  let real: RehearsalResult;
  let events: RunEvent[] = [];
  let report: Report;
  let json: unknown;
  let junit: ReturnType<typeof parseXml>;
  let html: string;

  beforeAll(async () => {
    real = await rehearsalEvents();
    if (real.reason !== undefined) throw new Error(`the rehearsal did not run: ${real.reason}`);
    events = real.events;
    const r = createReportListener(dir);
    for (const e of events) await r.listener(e);
    ({ report } = await r.finish());
    json = JSON.parse(readFileSync(join(dir, "report.json"), "utf8"));
    junit = parseXml(readFileSync(join(dir, "junit.xml"), "utf8"));
    html = readFileSync(join(dir, "report.html"), "utf8");
  }, 60_000);

  it("the rehearsal committed, safely", () => {
    if (real.reason !== undefined) throw new Error(real.reason);
    expect(real.result.outcome).toBe("ok");
    expect(real.verdict.committed).toBe(real.verdict.instances);
    expect(real.verdict.safe).toBe(true);
    expect(of(events, "run.started")[0]?.mode).toBe("rehearse");
    expect(of(events, "commit.sent")).toHaveLength(1);
  });

  it("report.json is the run's timeline", () => {
    expect(json).toEqual(JSON.parse(JSON.stringify(report)));
    expect(report).toEqual(buildReport(events));
    const finished = of(events, "run.finished")[0];
    expect(report.outcome).toBe(finished?.outcome);
    expect(report.outcome).toBe("ok");
    expect(report.committed).toBe(true);
    expect(report.mode).toBe("rehearse");
    // every step of the runbook, in order, with its outcome and its time on the timeline
    const started = of(events, "run.started")[0];
    expect(report.steps.map((s) => s.id)).toEqual(started?.steps.map((s) => s.id));
    const ends = new Map(of(events, "step.finished").map((e) => [e.id, e]));
    let last = 0;
    for (const s of report.steps) {
      expect(s.outcome).toBe("ok");
      expect(s.start).toBeGreaterThanOrEqual(last);
      expect(s.end).toBeGreaterThanOrEqual(s.start ?? 0);
      expect(s.durationMs).toBe(ends.get(s.id)?.durationMs);
      last = s.start ?? 0;
    }
    expect(report.steps.find((s) => s.id === "commit")?.requests.length).toBeGreaterThan(0);
    // every request in the report has its answer (the count is the known failure below)
    expect(report.counts.unanswered).toBe(0);
    expect(report.requests.every((r) => r.answer !== undefined)).toBe(true);
    expect(report.requests.filter((r) => r.method === "POST" && r.path.endsWith("/commit"))).toHaveLength(1);
    expect(report.commits).toHaveLength(1);
    expect(report.hooks.some((h) => h.id === "stop-writes" && h.ok === true && !h.undo)).toBe(true);
    // one progress sample per poll, per instance; one verifier sample per verifier poll
    expect(report.progress).toHaveLength(started?.instances.length ?? -1);
    for (const series of report.progress) {
      const n = of(events, "progress.sampled").filter((e) => e.instance.index === series.instance.index).length;
      expect(n).toBeGreaterThan(3);
      expect(series.samples).toHaveLength(n);
      expect(series.samples.at(-1)?.state).toBe("COMMITTED");
      expect(series.samples.some((x) => x.copiedBytes !== undefined && x.totalBytes !== undefined)).toBe(true);
    }
    expect(report.verifierSamples).toHaveLength(of(events, "verifier.sampled").length);
    expect(report.verifierSamples.length).toBeGreaterThan(0);
  });

  // one request id sequence per run (the fleet and the verifier client share it)
  it("report.json has every request of the run, paired with its answer (ids unique per run)", () => {
    const sent = of(events, "request.sent");
    expect(new Set(sent.map((e) => e.id)).size).toBe(sent.length);
    expect(report.requests).toHaveLength(sent.length);
    expect(report.warnings).toEqual([]);
    expect(report.requests.map((r) => `${r.method} ${r.path}`).sort()).toEqual(
      sent.map((e) => `${e.method} ${e.path}`).sort(),
    );
  });

  it("junit.xml has one passing test case per step", () => {
    const cases = findAll(junit, "testcase");
    expect(cases).toHaveLength(report.steps.length);
    cases.forEach((c, i) => {
      const step = report.steps[i];
      expect(c.attrs.name).toContain(step?.id);
      expect(c.attrs.classname).toBe(report.runbook);
      for (const bad of ["failure", "error", "skipped"]) expect(findAll(c, bad)).toHaveLength(0);
    });
    expect(findAll(junit, "failure")).toHaveLength(0);
  });

  it("report.html draws its charts from the run's samples", () => {
    expect(html).toMatch(/id="outcome"[^>]*data-outcome="ok"/);
    expect(html).toContain(`data-rows="${report.steps.length}"`);
    const progress = of(events, "progress.sampled");
    for (const series of report.progress) {
      const mine = progress.filter((e) => e.instance.index === series.instance.index).map((e) => inner(e.progress));
      const copy = mine.filter(
        (p) =>
          isNum(rec(p.collectionCopy)?.estimatedCopiedBytes) &&
          (rec(p.collectionCopy)?.estimatedTotalBytes as number) > 0,
      ).length;
      const lag = mine.filter((p) => isNum(p.lagTimeSeconds)).length;
      const applied = mine.filter((p) => isNum(p.totalEventsApplied) || isNum(p.eventsApplied)).length;
      expect(copy).toBeGreaterThan(1);
      expect(lag).toBeGreaterThan(1);
      // a rehearsal this short is never thinned (thinning starts above 800 points)
      expect(drawn(html, `copy:${series.label}`)).toBe(copy);
      expect(drawn(html, `lag:${series.label}`)).toBe(lag);
      expect(drawn(html, `events:${series.label}`)).toBe(applied);
    }
    const verifier = of(events, "verifier.sampled").map((e) => rec(inner(e.progress).verificationStatus) ?? {});
    const counters = new Set(verifier.flatMap((v) => Object.keys(v).filter((k) => isNum(v[k]))));
    expect(counters.size).toBeGreaterThan(0);
    for (const c of counters) expect(drawn(html, `verifier:${c}`)).toBe(verifier.filter((v) => isNum(v[c])).length);
    // the markers where writes stopped and commit was sent
    expect(html).toContain('data-marker="writes off"');
    expect(html).toContain('data-marker="commit"');
    expect(html).not.toMatch(/<script/i);
  });
});
