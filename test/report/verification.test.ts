/**
 * The report's verification: each verifier sample keeps its generation and the generation's documents
 * (facts: "Progress: `{ "progress": { phase, generation, generationStats, error, verificationStatus: … } }`"),
 * and the page's facts say how the verification ended, in the words of the verifier's source
 * (migration-verifier v0.2.1 internal/verifier/statistics.go: generationStats counts the current
 * generation only, its totalDocs an estimated count in generation 0 and "the # of documents to recheck"
 * later; api.go, v0.1.10 and later: gen0Stats, "the final doc/byte counts from generation 0").
 */
import { describe, expect, it } from "vitest";
import { buildReport, renderHtml, renderJunit, type Report } from "../../src/report/index.js";
import type { RunEvent, RunEventOf } from "../../src/events.js";
import type { VerifierProgress } from "../../src/api/index.js";
import type { VerifierMemory } from "../../src/api/verifier-memory.js";
import { synthRun } from "../support/report-fixture.js";
import { escapeXml as esc } from "../../src/text.js";

const STATUS = {
  totalTasks: 6,
  addedTasks: 0,
  processingTasks: 0,
  failedTasks: 0,
  completedTasks: 2,
  metadataMismatchTasks: 4,
};

/** The report of a run whose last verifier sample is `progress`. */
function withLast(progress: VerifierProgress) {
  const { events } = synthRun();
  const at = events.at(-1)!.at;
  const seq = Math.max(...events.map((e) => e.seq));
  const last = { type: "verifier.sampled" as const, seq: seq + 1, at, progress: { error: null, ...progress } };
  return buildReport([...events, last]);
}

describe("the report's verifier samples", () => {
  it("keep generation, generationStats and gen0Stats; the page says the last generation's documents are its own, and generation 0's from gen0Stats", () => {
    const report = withLast({
      phase: "idle",
      generation: 2,
      generationStats: { docsCompared: 1200, totalDocs: 1500, srcBytesCompared: 0 },
      gen0Stats: { docsCompared: 1048576, totalDocs: 1048576, srcBytesCompared: 0 },
      verificationStatus: STATUS,
    });
    expect(report.verifierSamples.at(-1)).toMatchObject({
      phase: "idle",
      generation: 2,
      docsCompared: 1200,
      totalDocs: 1500,
      gen0DocsCompared: 1048576,
      gen0TotalDocs: 1048576,
      counters: { metadataMismatchTasks: 4, failedTasks: 0 },
    });
    expect(renderHtml(report)).toContain(
      "<dt>verifier&#39;s last sample</dt><dd>phase idle, generation 2, 1200 of 1500 docs to recheck compared (this generation only, not a total; generation 0 compared 1048576 of about 1048576), failedTasks 0, metadataMismatchTasks 4</dd>",
    );
  });

  it("without gen0Stats (before v0.1.10) nothing is said of generation 0; in generation 0 its total is an estimate", () => {
    const old = withLast({
      phase: "idle",
      generation: 2,
      generationStats: { docsCompared: 1200, totalDocs: 1500, srcBytesCompared: 0 },
      verificationStatus: STATUS,
    });
    expect(old.verifierSamples.at(-1)).not.toHaveProperty("gen0DocsCompared");
    expect(renderHtml(old)).toContain(
      "<dd>phase idle, generation 2, 1200 of 1500 docs to recheck compared (this generation only, not a total), failedTasks 0",
    );
    const first = withLast({
      phase: "check",
      generation: 0,
      generationStats: { docsCompared: 300, totalDocs: 1000, srcBytesCompared: 0 },
      verificationStatus: STATUS,
    });
    expect(renderHtml(first)).toContain(
      "<dd>phase check, generation 0, 300 of about 1000 docs compared (the first pass; 1000 is the estimated count of the collections sized so far), failedTasks 0",
    );
  });
});

describe("a --from run's carried verification (verifier.carried)", () => {
  /** A synthetic run (its verify passed, unless `drop`), then the memory a --from run carried. */
  function carried(memory: VerifierMemory, drop = false) {
    const { events } = synthRun();
    const kept = drop ? events.filter((e) => e.type !== "verifier.verified") : events;
    const last = kept.at(-1)!;
    const e = { type: "verifier.carried" as const, seq: last.seq + 1, at: last.at, memory, from: "/j/earlier.jsonl" };
    return buildReport([...kept, e]).verification;
  }
  const passed = { verified: { at: 1, generation: 3 } };

  it("its own report, without the earlier run that passed verify: verified, as its run ended", () => {
    expect(carried({}, true)).toMatchObject({ verified: false });
    expect(carried(passed, true)).toEqual({ verified: true, headline: "VERIFIED" });
  });

  it("the cutover's report, with that run: the verify step it passed is kept", () => {
    expect(carried(passed)).toMatchObject({ verified: true, step: "verify" });
  });

  it("the memory whole, as the journal's fold takes it: a carried one without a verify passed, or after a reverse, is not verified", () => {
    expect(carried({ check: { answered: "ok", at: 1 } })).toEqual({
      verified: false,
      why: "no `verify` step passed on this cutover's verification result",
      headline: "NOT VERIFIED",
    });
    expect(carried({ reversed: "rollback" }).why).toMatch(/^a reverse was sent \(step rollback\)/);
  });
});

describe("a run after a verified, committed one: it counts what it carried, nothing more (src/run/earlier.ts fromJournal)", () => {
  /**
   * The synthetic run (its verify passed, it committed), then a second run's start, as a `--from`
   * run journals it, `mode` and what it carried, then `more` (its `verifier.carried`, say), and its
   * end with the run's own words (`committed`, `verified`).
   */
  function second(
    start: { mode: "run" | "resume"; carried?: { commitAccepted: boolean } },
    end: { committed: boolean; verified: boolean },
    more: (seq: number, at: number) => RunEvent[] = () => [],
  ): Report {
    const { events } = synthRun();
    const first = events.find((e) => e.type === "run.started") as RunEventOf<"run.started">;
    let seq = events.at(-1)!.seq + 1;
    const at = events.at(-1)!.at + 60_000;
    const started: RunEvent = {
      ...first,
      seq: seq++,
      at,
      // another text of the runbook: a journal written for it counts nothing
      hash: "sha256:edited",
      mode: start.mode,
      ...(start.carried
        ? { carried: { from: "/j/earlier.jsonl", writesStopped: false, commitSent: true, ...start.carried } }
        : {}),
    };
    const extra = more(seq, at + 1);
    seq += extra.length;
    const finished: RunEvent = {
      type: "run.finished",
      seq,
      at: at + 500,
      outcome: "ok",
      exitCode: 0,
      durationMs: 500,
      ...end,
    };
    return buildReport([...events, started, ...extra, finished]);
  }
  const carriedVerified = (seq: number, at: number): RunEvent[] => [
    { type: "verifier.carried", seq, at, memory: { verified: { at: 1, generation: 2 } }, from: "/j/earlier.jsonl" },
  ];

  it("a --from run that counted nothing (a journal of another text): not verified, as the run ended; still committed, by the earlier run", () => {
    const r = second({ mode: "run" }, { committed: false, verified: false });
    expect(r.verification.verified).toBe(false);
    // the earlier run's commit took effect whatever this run counts: "not committed" on the bridge
    // would say writes may go back on the source (src/model/fold.ts runsCommitted)
    expect(r.committed).toBe(true);
    expect(renderHtml(r)).toContain('data-verified="false"');
    expect(renderJunit(r)).toMatch(/not verified/);
  });

  it("a --from run that carried the commit and the verification: committed and verified, the verify step the earlier run passed kept", () => {
    const r = second(
      { mode: "run", carried: { commitAccepted: true } },
      { committed: true, verified: true },
      carriedVerified,
    );
    expect(r.verification).toMatchObject({ verified: true, step: "verify" });
    expect(r.committed).toBe(true);
  });

  it("a --from run that carried the commit but no verification: committed, not verified", () => {
    const r = second({ mode: "run", carried: { commitAccepted: true } }, { committed: true, verified: false });
    expect(r.verification.verified).toBe(false);
    expect(r.committed).toBe(true);
  });

  it("a --resume goes on from its journal's memory: the verification and the commit before it still count", () => {
    const r = second({ mode: "resume" }, { committed: true, verified: true });
    expect(r.verification).toMatchObject({ verified: true, step: "verify" });
    expect(r.committed).toBe(true);
  });
});

// the report said "no `verify` step passed on this cutover's verification result" alone where the
// verify step had refused the result (the verifier skipped DDL on the source): its why names that
// step's failure (src/model/verify-failed.ts), in every writer, userinfo stripped as the steps' are
describe("a verify step that failed: the report says why the cutover is not verified", () => {
  const ERROR =
    "not verified: the verifier skipped DDL on the source (createIndexes 1; --ddlHandling warnMost), said by http://admin:hunter2@verifier:27020";
  const WHY =
    'no `verify` step passed on this cutover\'s verification result: step 3 "verify" failed: not verified: the verifier skipped DDL on the source (createIndexes 1; --ddlHandling warnMost), said by http://***@verifier:27020';
  /** The synthetic run, its verify step failed with `ERROR` (continueOnError: the run went on and ended ok). */
  function refused(): Report {
    const { events } = synthRun();
    return buildReport(
      events
        .filter((e) => e.type !== "verifier.verified")
        .map((e) =>
          e.type === "step.finished" && e.index === 2 ? { ...e, outcome: "failed" as const, error: ERROR } : e,
        ),
    );
  }

  it("report.json's why, the HTML's verification fact and banner, and junit", () => {
    const r = refused();
    expect(r.verification).toEqual({ verified: false, why: WHY, headline: "NOT VERIFIED" });
    const html = renderHtml(r);
    expect(html).toContain(`<dt>verification</dt><dd>${esc(`not verified (${WHY})`)}</dd>`);
    expect(html).toContain(esc(` It is not verified: ${WHY}; the documentation says`));
    expect(html).not.toContain("hunter2");
    const junit = renderJunit(r);
    expect(junit).toContain(`skipped message="${esc(`not verified: ${WHY}`)}"`);
    expect(junit).toContain(`value="${esc(`not verified (${WHY})`)}"`);
    expect(junit).not.toContain("hunter2");
  });

  it("a verify step that passed since names nothing: verified", () => {
    const { events } = synthRun();
    const r = buildReport(events);
    expect(r.verification).toMatchObject({ verified: true, step: "verify" });
    expect(renderHtml(r)).toContain("<dt>verification</dt><dd>verified</dd>");
  });
});

// a review: a run that committed and then failed (its verify refused the result) said "FAILED AFTER
// COMMIT" alone in the banner and the title, where the run's end and the job summary said "not
// verified" on their first line; whenever the destination may take writes the headline says the
// one rule's verdict (src/steps/kit/earned.ts `verification`), however the run ended
describe("the report's headline after a commit: verified or not, however the run ended", () => {
  /** The synthetic run (its commit taken), its verify step refused, the run ending as `end` says (none: cut off). */
  function ended(end: Record<string, unknown> | undefined, verifyOk = false): string {
    const { events } = synthRun();
    const out = events
      .filter((e) => verifyOk || e.type !== "verifier.verified")
      .filter((e) => end !== undefined || e.type !== "run.finished")
      .map((e) =>
        e.type === "step.finished" && e.index === 2 && !verifyOk
          ? { ...e, outcome: "failed" as const, error: "not verified: the verifier skipped DDL on the source" }
          : e.type === "run.finished"
            ? { ...e, ...end }
            : e,
      );
    return renderHtml(buildReport(out));
  }
  const h1 = (html: string): string => /<h1>(.*?) <span class="runbook">/.exec(html)?.[1] ?? "";
  const title = (html: string): string =>
    /<title>(.*?) · sales-rs-to-sharded · syncbook report<\/title>/.exec(html)?.[1] ?? "";

  it("FAILED AFTER COMMIT, INTERRUPTED, UNFINISHED: NOT VERIFIED in the banner and the title", () => {
    const failed = ended({ outcome: "failed", exitCode: 1, committed: true });
    expect(h1(failed)).toBe("FAILED AFTER COMMIT · NOT VERIFIED");
    expect(title(failed)).toBe("FAILED · NOT VERIFIED");
    const interrupted = ended({ outcome: "interrupted", exitCode: 130, committed: true });
    expect(h1(interrupted)).toBe("INTERRUPTED · NOT VERIFIED");
    expect(title(interrupted)).toBe("INTERRUPTED · NOT VERIFIED");
    // no run.finished: the commit the journal shows counts
    const cut = ended(undefined);
    expect(h1(cut)).toBe("UNFINISHED · NOT VERIFIED");
    expect(title(cut)).toBe("UNFINISHED · NOT VERIFIED");
  });

  it("a verify that passed before the failure: VERIFIED; a run that ended ok says it in the title too", () => {
    const failed = ended({ outcome: "failed", exitCode: 1, committed: true }, true);
    expect(h1(failed)).toBe("FAILED AFTER COMMIT · VERIFIED");
    expect(title(failed)).toBe("FAILED · VERIFIED");
    const ok = ended({}, true);
    expect(h1(ok)).toBe("COMMITTED · VERIFIED");
    expect(title(ok)).toBe("COMMITTED · VERIFIED");
    expect(title(ended({}))).toBe("COMMITTED · NOT VERIFIED");
  });

  // a review: a runner killed with its commit requests unanswered read "UNFINISHED", no word of the
  // commit; on its way while the runner lived, which a report, read after, cannot tell
  it("a run killed with its commit requests unanswered: UNFINISHED · COMMIT IN DOUBT, the instances named", () => {
    const { events } = synthRun();
    const isCommit = (e: RunEvent): boolean => e.type === "request.sent" && e.path === "/api/v1/commit";
    const first = events.findIndex(isCommit);
    const cut = [...events.slice(0, first), ...events.slice(first).filter(isCommit)];
    const report = buildReport(cut);
    expect(report.outcome).toBe("unfinished");
    expect(report.committed).toBe(false);
    expect(report.commitInDoubt?.instances.length).toBeGreaterThan(0);
    const html = renderHtml(report);
    expect(h1(html)).toMatch(/^UNFINISHED · COMMIT IN DOUBT/);
    expect(html).toContain("Writes must not go back on the source while it may hold.");
    // the same events with the run's end (a runner that ended): the fold's own rule, no pending
    const ended = buildReport([
      ...cut,
      {
        type: "run.finished",
        seq: 1e6,
        at: cut.at(-1)!.at + 1,
        outcome: "failed",
        exitCode: 1,
        committed: false,
        durationMs: 1,
      },
    ]);
    expect(ended.commitInDoubt?.instances).toEqual(report.commitInDoubt?.instances);
  });

  // a review: under that banner, the commits section said "No commit was sent." (no fan-out ended)
  it("a run killed with its commit requests unanswered: the commits section says the commit is in doubt, not unsent", () => {
    const { events } = synthRun();
    const isCommit = (e: RunEvent): boolean => e.type === "request.sent" && e.path === "/api/v1/commit";
    const first = events.findIndex(isCommit);
    const html = renderHtml(buildReport([...events.slice(0, first), ...events.slice(first).filter(isCommit)]));
    const hooks = html.slice(html.indexOf('<section id="hooks">'), html.indexOf('<section id="commands">'));
    expect(hooks).not.toContain("No commit was sent.");
    expect(hooks).toContain(
      esc(
        // the fixture is a rehearsal's: its simulator, not `syncbook status`, is what held it (seeFleet)
        "No commit fan-out ended (its requests are under Commands sent): commit in doubt: sent, not known to have taken effect: shard-a, shard-b may hold it. Writes must not go back on the source while it may hold. Its simulator stopped with the rehearsal: the rehearsal's verdict, at its end, says whether it took effect.",
      ),
    );
    // nothing sent: as before
    const none = renderHtml(buildReport(events.slice(0, first)));
    expect(none.slice(none.indexOf('<section id="hooks">'))).toContain("<p>No commit was sent.</p>");
  });

  // helper 131's finding: a commit every instance refused read "No commit was sent." there, which
  // told the post-mortem the run never got as far as its commit
  it("a commit sent and refused: the commits section names who refused it and says it took no effect; a split names both", () => {
    const { events } = synthRun();
    const isCommit = (e: RunEvent): boolean => e.type === "request.sent" && e.path === "/api/v1/commit";
    const ids = new Set(events.flatMap((e) => (isCommit(e) && e.type === "request.sent" ? [e.id] : [])));
    const end = events.findIndex((e) => e.type === "commit.sent");
    const answered = (refuse: (n: number) => boolean) => {
      let n = 0;
      return events.slice(0, end).map((e) => {
        if (e.type !== "response.received" || !ids.has(e.id)) return e;
        if (!refuse(n++)) return e;
        return {
          ...e,
          ok: false,
          body: { success: false, error: "CommitRefused", errorDescription: "not ready" },
          error: `${e.instance?.url ?? ""}: commit refused: CommitRefused: not ready`,
          errorKind: "service" as const,
        };
      });
    };
    const section = (cut: RunEvent[]): string => {
      const html = renderHtml(buildReport(cut));
      return html.slice(html.indexOf('<section id="hooks">'), html.indexOf('<section id="commands">'));
    };
    const all = section(answered(() => true));
    expect(all).not.toContain("No commit was sent.");
    expect(all).toContain(
      esc(
        "A commit was sent and no fan-out of it ended (refused by shard-a, shard-b): it took no effect. Its requests are under Commands sent.",
      ),
    );
    expect(section(answered((n) => n === 1))).toContain(
      esc(
        "A commit was sent and no fan-out of it ended (accepted by shard-a; refused by shard-b); commit applies only once every instance has it. Its requests are under Commands sent.",
      ),
    );
  });

  it("nothing committed and no commit in doubt: a failed run's headline says no verdict; a commit in doubt, one", () => {
    const { events } = synthRun({ refuseCommit: true });
    const failed = renderHtml(buildReport(events));
    expect(h1(failed)).toBe("FAILED");
    expect(title(failed)).toBe("FAILED");
    const doubt = renderHtml(
      buildReport(events.map((e) => (e.type === "run.finished" ? { ...e, commitInDoubt: true } : e))),
    );
    // its verify passed before the commit was sent
    expect(h1(doubt)).toBe("FAILED · COMMIT IN DOUBT · VERIFIED");
    expect(title(doubt)).toBe("FAILED · COMMIT IN DOUBT · VERIFIED");
  });
});
