/**
 * The report's verification: each verifier sample keeps its generation and documents compared of
 * the total (facts: "Progress: `{ "progress": { phase, generation, generationStats, error,
 * verificationStatus: … } }`"), and the page's facts say how the verification ended.
 */
import { describe, expect, it } from "vitest";
import { buildReport, renderHtml } from "../../src/report/index.js";
import { synthRun } from "../support/report-fixture.js";

describe("the report's verifier samples", () => {
  it("keep generation and generationStats; the page shows the last sample with the counters that judge it", () => {
    const { events } = synthRun();
    const at = events.at(-1)!.at;
    const seq = Math.max(...events.map((e) => e.seq));
    const last = {
      type: "verifier.sampled" as const,
      seq: seq + 1,
      at,
      progress: {
        phase: "idle",
        generation: 2,
        generationStats: { docsCompared: 1200, totalDocs: 1000, srcBytesCompared: 0 },
        error: null,
        verificationStatus: {
          totalTasks: 6,
          addedTasks: 0,
          processingTasks: 0,
          failedTasks: 0,
          completedTasks: 2,
          metadataMismatchTasks: 4,
        },
      },
    };
    const report = buildReport([...events, last]);
    expect(report.verifierSamples.at(-1)).toMatchObject({
      phase: "idle",
      generation: 2,
      docsCompared: 1200,
      totalDocs: 1000,
      counters: { metadataMismatchTasks: 4, failedTasks: 0 },
    });
    expect(renderHtml(report)).toContain(
      "<dt>verification</dt><dd>phase idle, generation 2, 1200 comparisons of 1000 docs (a recheck compares a document again), failedTasks 0, metadataMismatchTasks 4 (last sample)</dd>",
    );
  });
});
