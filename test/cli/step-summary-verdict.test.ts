/**
 * The job summary's headline says whether the cutover is verified where report.html's banner says
 * it, in its words (src/steps/kit/earned.ts `verificationShown`, one helper for both). A review: a
 * run that failed before any commit ended its summary's headline "❌ FAILED · ⚠️ NOT VERIFIED",
 * where the report's banner said "FAILED" alone (nothing that could take writes to verify yet),
 * and a verified cutover's headline never said VERIFIED, where the banner did.
 */
import { describe, expect, it } from "vitest";
import { createRunSummary } from "../../src/cli/step-summary.js";
import type { RunEvent } from "../../src/events.js";
import { buildReport } from "../../src/report/model.js";
import { synthRun } from "../support/report-fixture.js";

/** The summary's headline (its first line) after `events`, as the run's listener folds them. */
function headline(events: readonly RunEvent[]): string {
  const { listener, markdown } = createRunSummary();
  for (const e of events) listener(e);
  return markdown("run").split("\n")[0] ?? "";
}
/** The verdict the report's banner adds, or undefined. */
const reportSays = (events: readonly RunEvent[]): string | undefined => buildReport(events).verification.headline;

/** The synthetic run's end rewritten (`end`), its verify passed unless `verified` is false. */
function after(end: Record<string, unknown>, verified: boolean): RunEvent[] {
  return synthRun()
    .events.filter((e) => verified || e.type !== "verifier.verified")
    .map((e) =>
      e.type === "step.finished" && e.index === 2 && !verified
        ? { ...e, outcome: "failed" as const, error: "not verified: the verifier skipped DDL on the source" }
        : e.type === "run.finished"
          ? { ...e, ...end }
          : e,
    );
}

describe("the job summary's verdict: where and as the report says it", () => {
  it("a run that failed before any commit: no verdict in the headline, as in the report's banner", () => {
    let seq = 0;
    const ev = (type: string, body: object): RunEvent => ({ type, seq: ++seq, at: 1000 + seq, ...body }) as RunEvent;
    const steps = [
      { index: 0, id: "ready", kind: "waitFor", title: "ready" },
      { index: 1, id: "commit", kind: "commit", title: "commit" },
      { index: 2, id: "verify", kind: "verify", title: "verify" },
    ];
    const instances = [{ url: "http://a", name: "a", index: 0 }];
    const events = [
      ev("run.started", { runbook: "rb", file: "rb.yaml", hash: "h", mode: "run", instances, steps }),
      ev("step.started", steps[0]!),
      ev("step.finished", { index: 0, id: "ready", outcome: "failed", durationMs: 5, error: "timed out" }),
      ev("run.finished", {
        outcome: "failed",
        exitCode: 1,
        committed: false,
        verified: false,
        unverified: "no `verify` step passed on this cutover's verification result",
        durationMs: 10,
        message: "step ready failed: timed out",
      }),
    ];
    expect(headline(events)).toBe("### syncbook run rb: ❌ FAILED");
    expect(reportSays(events)).toBeUndefined();
  });

  it("a run stopped at its --to before the commit: no verdict, as in the report", () => {
    const events = synthRun({ refuseCommit: true }).events.map((e) =>
      e.type === "run.finished"
        ? ({
            type: e.type,
            seq: e.seq,
            at: e.at,
            outcome: "ok",
            exitCode: 0,
            committed: false,
            verified: false,
            unverified: "x",
            to: "verify",
            durationMs: 1,
          } as unknown as RunEvent)
        : e.type === "step.finished" && e.outcome === "failed"
          ? { ...e, outcome: "ok" as const }
          : e,
    );
    expect(headline(events)).not.toMatch(/VERIFIED/);
    expect(reportSays(events)).toBeUndefined();
  });

  it("after the commit: the report's verdict, VERIFIED or NOT VERIFIED, however the run ended", () => {
    const verified = after({ outcome: "ok", exitCode: 0, committed: true, verified: true }, true);
    expect(headline(verified)).toBe("### syncbook run sales-rs-to-sharded: ✅ COMMITTED · ✅ VERIFIED");
    expect(reportSays(verified)).toBe("VERIFIED");
    const failedAfter = after(
      { outcome: "failed", exitCode: 1, committed: true, verified: false, unverified: "x" },
      false,
    );
    expect(headline(failedAfter)).toBe(
      "### syncbook run sales-rs-to-sharded: ❌ FAILED AFTER COMMIT · ⚠️ NOT VERIFIED",
    );
    expect(reportSays(failedAfter)).toBe("NOT VERIFIED");
    const failedVerified = after({ outcome: "failed", exitCode: 1, committed: true, verified: true }, true);
    expect(headline(failedVerified)).toBe("### syncbook run sales-rs-to-sharded: ❌ FAILED AFTER COMMIT · ✅ VERIFIED");
    expect(reportSays(failedVerified)).toBe("VERIFIED");
  });
});

// an outside review: a rehearsal's job summary said "(syncbook status, or --resume, which reads it
// first)" in its application-writes row, a real run's way on, pasted on the runbook's real fleet
describe("the job summary's application-writes row in a rehearsal", () => {
  it("names no real run's way on; a run's names it", () => {
    const events = after(
      { outcome: "failed", exitCode: 1, committed: false, commitInDoubt: true, writes: "stopped" },
      false,
    );
    const summary = (command: "run" | "rehearse"): string => {
      const { listener, markdown } = createRunSummary();
      for (const e of events) listener(e);
      return (
        markdown(command)
          .split("\n")
          .find((l) => l.includes("application writes")) ?? ""
      );
    };
    expect(summary("run")).toContain("(syncbook status, or --resume, which reads it first)");
    const rehearsed = summary("rehearse");
    expect(rehearsed).toContain("the rehearsal&#39;s verdict says whether it took effect");
    expect(rehearsed).not.toMatch(/syncbook (status|run)|--resume|--abort/);
  });
});
