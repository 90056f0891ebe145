/**
 * A real rehearsal, in process (simulator + runner), with the report listener: the report must
 * reflect what happened. Skipped (with the reason) until the runner can run one.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { buildReport, createReportListener } from "../../src/report/index.js";
import { rehearsalEvents } from "./rehearsal.js";
import { findAll, parseXml } from "./xml.js";

const real = await rehearsalEvents();
const dir = mkdtempSync(join(tmpdir(), "syncbook-report-rehearsal-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe.skipIf(!real.events)(`a real rehearsal's report${real.reason ? ` (skipped: ${real.reason})` : ""}`, () => {
  const events = real.events ?? [];

  it("the listener's files match the run", async () => {
    const r = createReportListener(dir);
    for (const e of events) await r.listener(e);
    const { report } = await r.finish();
    const finished = events.find((e) => e.type === "run.finished");
    expect(report.outcome).toBe(finished?.type === "run.finished" ? finished.outcome : "unfinished");
    const started = events.find((e) => e.type === "run.started");
    expect(report.steps).toHaveLength(started?.type === "run.started" ? started.steps.length : 0);
    for (const s of report.steps) expect(["ok", "skipped"]).toContain(s.outcome);
    expect(report.counts.unanswered).toBe(0);
    expect(report.requests).toHaveLength(events.filter((e) => e.type === "request.sent").length);
    for (const series of report.progress) {
      const n = events.filter((e) => e.type === "progress.sampled" && e.instance.index === series.instance.index).length;
      expect(series.samples).toHaveLength(n);
      expect(n).toBeGreaterThan(0);
    }
    expect(report.verifierSamples).toHaveLength(events.filter((e) => e.type === "verifier.sampled").length);
    expect(JSON.parse(readFileSync(join(dir, "report.json"), "utf8"))).toEqual(JSON.parse(JSON.stringify(report)));
    const junit = parseXml(readFileSync(join(dir, "junit.xml"), "utf8"));
    expect(findAll(junit, "testcase")).toHaveLength(report.steps.length);
    const html = readFileSync(join(dir, "report.html"), "utf8");
    for (const series of report.progress) {
      const lag = series.samples.filter((x) => x.lagSeconds !== undefined).length;
      if (lag > 0 && lag <= 800) expect(html).toContain(`data-series="lag:${series.label}" data-points="${lag}"`);
    }
    expect(report).toEqual(buildReport(events));
  });
});
