/**
 * Issue 36, point 2: a wave report never calls a runbook that passed without a verification of
 * its cutover plain SAFE: its status reads `SAFE · NOT VERIFIED` in the HTML and the terminal,
 * the counts say how many, and its JUnit case says why, while a verified one stays SAFE.
 */
import { describe, expect, it } from "vitest";
import {
  buildWaveReport,
  countsText,
  notVerified,
  renderWaveHtml,
  renderWaveJunit,
  outcomeText,
  statusText,
  type WaveReportEntry,
} from "../../src/wave/report.js";

const ENTRIES: WaveReportEntry[] = [
  { name: "sales", after: [], status: "SAFE", verified: true, durationMs: 1000 },
  {
    name: "billing",
    after: [],
    status: "SAFE",
    verified: false,
    durationMs: 1000,
    message: "the runbook has no `verify` step",
  },
  // a report of an older syncbook does not say: nothing is claimed either way
  { name: "legacy", after: [], status: "DONE", durationMs: 1000 },
];

describe("a wave report and verification", () => {
  const report = buildWaveReport({ wave: "w", source: "rehearse", runbooks: ENTRIES, complete: true });

  it("names the runbooks that passed unverified, in the status and the counts", () => {
    expect(notVerified(report).map((r) => r.name)).toEqual(["billing"]);
    expect(ENTRIES.map(statusText)).toEqual(["SAFE", "SAFE · NOT VERIFIED", "DONE"]);
    expect(countsText(report)).toBe("2 SAFE, 1 DONE; 1 not verified");
    expect(outcomeText(report)).toBe("PASSED · 1 NOT VERIFIED");
    const verified = buildWaveReport({
      wave: "w",
      source: "rehearse",
      runbooks: [ENTRIES[0]!, ENTRIES[2]!],
      complete: true,
    });
    expect(outcomeText(verified)).toBe("PASSED");
    expect(renderWaveHtml(verified)).not.toContain("NOT VERIFIED");
  });

  it("the HTML and JUnit say not verified, and why, for that runbook only", () => {
    const html = renderWaveHtml(report);
    expect(html).toContain("SAFE · NOT VERIFIED");
    // the runbook's row, and the wave's title and heading
    expect(html).toContain("<title>wave w: PASSED · 1 NOT VERIFIED</title>");
    expect(html.match(/NOT VERIFIED/g)?.length).toBe(3);
    const junit = renderWaveJunit(report);
    expect(junit).toContain("<system-out>not verified: the runbook has no `verify` step</system-out>");
    expect(junit.match(/not verified/g)?.length).toBe(1);
  });
});
