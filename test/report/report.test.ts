/**
 * Issue #7: reports for people and CI. report.json (the timeline), junit.xml (one test case per
 * step), report.html (self-contained, inline SVG charts), all from the runner's events.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { RunEvent, RunEventOf } from "../../src/events.js";
import {
  buildReport,
  chartSeries,
  createReportListener,
  renderHtml,
  renderJunit,
  writeReport,
} from "../../src/report/index.js";
import { redactSecretFields as redactValue, stripUserinfo } from "../../src/redact.js";
import { segmentsOf } from "../../src/report/svg.js";
import { TOTAL, T0, synthRun } from "../support/report-fixture.js";
import { findAll, parseXml } from "../support/xml.js";

const dirs: string[] = [];
const tmp = (): string => {
  const d = mkdtempSync(join(tmpdir(), "syncbook-report-"));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** `<g class="series" data-series="…" data-points="N" data-samples="M">` of a page, by series key. */
function seriesAttrs(html: string): Map<string, { points: number; samples: number; polylinePoints: number }> {
  const out = new Map<string, { points: number; samples: number; polylinePoints: number }>();
  const re = /<g class="series" data-series="([^"]*)" data-points="(\d+)" data-samples="(\d+)"[^>]*>(.*?)<\/g>/gs;
  for (const m of html.matchAll(re)) {
    const drawn = [...(m[4] ?? "").matchAll(/<polyline points="([^"]*)"/g)].reduce(
      (n, p) => n + (p[1] ?? "").trim().split(/\s+/).length,
      0,
    );
    out.set((m[1] ?? "").replace(/&amp;/g, "&"), {
      points: Number(m[2]),
      samples: Number(m[3]),
      polylinePoints: drawn,
    });
  }
  return out;
}

describe("buildReport: the timeline", () => {
  const synth = synthRun();
  const report = buildReport(synth.events);

  it("has the run's outcome and metadata", () => {
    expect(report).toMatchObject({
      runbook: "sales-rs-to-sharded",
      mode: "rehearse",
      outcome: "ok",
      committed: true,
      exitCode: 0,
      startedAt: T0,
    });
    expect(report.instances.map((i) => i.name)).toEqual(["shard-a", "shard-b"]);
    expect(report.failedStep).toBeUndefined();
    expect(report.warnings).toEqual([]);
  });

  it("has every step with start, end, outcome and duration, in order", () => {
    expect(report.steps.map((s) => [s.id, s.outcome])).toEqual(synth.steps.map((s) => [s.id, "ok"]));
    for (const s of report.steps) {
      expect(s.start).toBeTypeOf("number");
      expect(s.end).toBeGreaterThanOrEqual(s.start ?? 0);
      expect(s.durationMs).toBe((s.end ?? 0) - (s.start ?? 0));
    }
    const starts = report.steps.map((s) => s.start ?? -1);
    expect([...starts].sort((a, b) => a - b)).toEqual(starts);
  });

  it("pairs every request with its answer by id and files it under its step", () => {
    expect(report.requests).toHaveLength(synth.requests);
    expect(report.counts).toMatchObject({ requests: synth.requests, unanswered: 0, failedRequests: 0 });
    for (const r of report.requests) {
      expect(r.answer?.ok).toBe(true);
      expect(r.answer?.t).toBeGreaterThanOrEqual(r.t);
    }
    const start = report.steps.find((s) => s.id === "start");
    expect(start?.requests).toHaveLength(2);
    expect(
      report.requests.filter((r) => r.step === 0).every((r) => r.method === "POST" && r.path === "/api/v1/start"),
    ).toBe(true);
    const commits = report.requests.filter((r) => r.path === "/api/v1/commit");
    expect(commits.map((r) => r.instance?.name)).toEqual(["shard-a", "shard-b"]);
    expect(commits.every((r) => r.step === 4)).toBe(true);
  });

  it("keeps decisions, hooks and commits", () => {
    expect(report.decisions).toEqual([
      expect.objectContaining({ kind: "interlock", ok: true, check: "canCommit", index: 4, id: "commit" }),
    ]);
    expect(report.steps[4]?.decisions).toEqual([0]);
    expect(report.hooks).toEqual([
      expect.objectContaining({ id: "stop-writes", use: "shell", undo: false, ok: true, durationMs: 250 }),
    ]);
    expect(report.commits).toEqual([
      expect.objectContaining({ id: "commit", skewMs: 3, instances: ["shard-a", "shard-b"] }),
    ]);
    expect(report.logs).toEqual([expect.objectContaining({ level: "warn" })]);
  });

  it("has progress samples per instance as time series (copied/total, lag, events applied)", () => {
    expect(report.progress.map((s) => s.label)).toEqual(["shard-a", "shard-b"]);
    for (const s of report.progress) {
      expect(s.samples).toHaveLength(synth.progressSamples.get(s.instance.index) ?? -1);
      expect(s.samples.filter((x) => x.lagSeconds !== undefined)).toHaveLength(
        synth.lagSamples.get(s.instance.index) ?? -1,
      );
      const copied = s.samples.map((x) => x.copiedBytes ?? -1);
      expect(copied[0]).toBe(0);
      expect(Math.max(...copied)).toBe(TOTAL / 2);
      expect(s.samples.every((x) => x.totalBytes === TOTAL)).toBe(true);
      expect(s.samples[s.samples.length - 1]).toMatchObject({ state: "COMMITTED", canWrite: true });
      const ts = s.samples.map((x) => x.t);
      expect([...ts].sort((a, b) => a - b)).toEqual(ts);
    }
  });

  it("has the verifier's counters over time", () => {
    expect(report.verifierSamples).toHaveLength(synth.verifierSamples);
    expect(report.verifierSamples[0]?.counters).toMatchObject({ totalTasks: 40, completedTasks: 0, failedTasks: 0 });
    expect(report.verifierSamples.at(-1)).toMatchObject({ phase: "idle", counters: { completedTasks: 40 } });
  });

  it("sorts events by seq (a journal may be read in any order)", () => {
    const shuffled = [...synth.events].reverse();
    expect(buildReport(shuffled)).toEqual(report);
  });

  it("a refused interlock fails its step; later steps are not reached", () => {
    const r = buildReport(synthRun({ refuseCommit: true }).events);
    expect(r.outcome).toBe("failed");
    expect(r.committed).toBe(false);
    expect(r.failedStep).toBe(4);
    expect(r.steps.map((s) => s.outcome)).toEqual(["ok", "ok", "ok", "skipped", "failed", "pending", "pending"]);
    expect(r.steps[3]?.reason).toMatch(/when:/);
    expect(r.steps[4]).toMatchObject({ error: expect.stringMatching(/refused/), hint: expect.any(String) });
    expect(r.decisions).toEqual([expect.objectContaining({ kind: "interlock", ok: false, check: "stopWrites" })]);
  });

  // an adversarial run: a runner killed with a reverse on its way after the commit: report.json said
  // committed alone, where status said the reverse may have reached the fleet
  it("a reverse on its way when the events end: said beside committed, in the JSON and on the page", () => {
    const all = synthRun().events;
    const cut = all.filter((e) => e.type !== "run.finished");
    const last = cut.at(-1)!;
    const more = [
      {
        type: "step.started",
        seq: last.seq + 1,
        at: last.at + 10,
        index: 6,
        id: "assert-committed",
        kind: "assert",
        title: "a",
      },
      {
        type: "request.sent",
        seq: last.seq + 2,
        at: last.at + 20,
        id: 999,
        instance: { url: "http://127.0.0.1:27182", name: "shard-a", index: 0 },
        target: "service",
        method: "POST",
        path: "/api/v1/reverse",
      },
    ] as unknown as RunEvent[];
    const r = buildReport([...cut, ...more]);
    expect(r.outcome).toBe("unfinished");
    expect(r.committed).toBe(true);
    expect(r.reverseInDoubt).toEqual({ step: "assert-committed", instances: ["shard-a"] });
    expect(renderHtml(r)).toContain(
      "a reverse (step assert-committed) may have reached the fleet after it was committed",
    );
    expect(buildReport(all).reverseInDoubt).toBeUndefined();
  });

  it("events cut short (a crash): unfinished, the running step says so", () => {
    const all = synthRun().events;
    const cut = all.findIndex((e) => e.type === "verifier.sampled") + 1;
    const r = buildReport(all.slice(0, cut));
    expect(r.outcome).toBe("unfinished");
    expect(r.failedStep).toBe(2);
    expect(r.steps[2]?.outcome).toBe("running");
    expect(r.steps.slice(3).every((s) => s.outcome === "pending")).toBe(true);
    expect(r.warnings.join("\n")).toMatch(/no run\.finished/);
  });

  it("copes with no events and with events lacking run.started", () => {
    expect(buildReport([])).toMatchObject({ outcome: "unfinished", steps: [], requests: [] });
    const events = synthRun().events.filter((e) => e.type !== "run.started");
    const r = buildReport(events);
    expect(r.warnings[0]).toMatch(/no run\.started/);
    expect(r.steps.map((s) => s.id)).toContain("commit");
    expect(() => renderHtml(r)).not.toThrow();
    expect(() => parseXml(renderJunit(r))).not.toThrow();
  });
});

describe("junit.xml", () => {
  it("is well-formed, one test case per step, passing run", () => {
    const synth = synthRun();
    const doc = parseXml(renderJunit(buildReport(synth.events)));
    expect(doc.name).toBe("testsuites");
    const cases = findAll(doc, "testcase");
    expect(cases).toHaveLength(synth.steps.length);
    expect(cases.map((c) => c.attrs.name)).toEqual(
      synth.steps.map((s) => `${String(s.index + 1).padStart(2, "0")} ${s.id} (${s.kind})`),
    );
    expect(findAll(doc, "failure")).toHaveLength(0);
    const suite = findAll(doc, "testsuite")[0];
    expect(suite?.attrs).toMatchObject({
      name: "sales-rs-to-sharded",
      tests: "7",
      failures: "0",
      errors: "0",
      skipped: "0",
      timestamp: "2025-03-14T03:00:00",
    });
    expect(Number(suite?.attrs.time)).toBeGreaterThan(10);
  });

  it("shows interlock refusals and failed steps as failures, unreached steps as skipped", () => {
    const doc = parseXml(renderJunit(buildReport(synthRun({ refuseCommit: true }).events)));
    const cases = findAll(doc, "testcase");
    const commit = cases.find((c) => c.attrs.name?.includes("commit (commit)"));
    const failure = commit?.children.find((c) => c.name === "failure");
    expect(failure?.attrs.type).toBe("interlock");
    expect(failure?.text).toMatch(/interlock stopWrites refused: no stopWrites step/);
    expect(failure?.text).toMatch(/hint: stop writes before commit/);
    expect(cases.filter((c) => c.children.some((x) => x.name === "skipped")).map((c) => c.attrs.name)).toEqual([
      "04 stop-writes (stopWrites)",
      "06 wait-committed (waitFor)",
      "07 assert-committed (assert)",
    ]);
    expect(findAll(doc, "testsuite")[0]?.attrs).toMatchObject({ tests: "7", failures: "1", skipped: "3" });
  });

  it("an interlock refusal fails its step even when the step went on (forced)", () => {
    const events = synthRun().events.map((e) =>
      e.type === "decision" ? { ...e, ok: false, reason: "lag 9 s above 5 s" } : e,
    ) as RunEvent[];
    const doc = parseXml(renderJunit(buildReport(events)));
    expect(findAll(doc, "failure")).toHaveLength(1);
    expect(findAll(doc, "failure")[0]?.attrs.message).toMatch(/interlock canCommit refused: lag 9 s/);
  });

  it("an --abort that ran every owed undo (exit 0) is a run called off, skipped; one whose undo failed is a failure", () => {
    const all = synthRun().events;
    // the run stopped after its write stop; the --abort's end, as src/run/abort.ts writes it
    const cut = all.slice(
      0,
      all.findIndex((e) => e.type === "step.started" && e.index === 4),
    );
    const last = cut[cut.length - 1]!;
    const aborted = (exitCode: number, message: string, undone = true): RunEvent[] => [
      ...cut,
      // the --abort's undo of the write stop (step 3), writes back on
      ...(undone
        ? ([
            {
              type: "hook.finished",
              seq: last.seq + 1,
              at: last.at + 5,
              index: 3,
              id: "stop-writes",
              use: "shell",
              undo: true,
              ok: true,
              durationMs: 3,
            },
          ] as RunEvent[])
        : []),
      {
        type: "run.finished",
        seq: last.seq + 2,
        at: last.at + 10,
        outcome: "failed",
        exitCode,
        committed: false,
        aborted: true,
        message,
        durationMs: last.at + 10 - cut[0]!.at,
      },
    ];
    const ok = parseXml(renderJunit(buildReport(aborted(0, "aborted by the operator (--abort)"))));
    const run = findAll(ok, "testcase").find((c) => c.attrs.name === "run");
    expect(run?.children.find((c) => c.name === "skipped")?.attrs.message).toBe(
      "called off (--abort): aborted by the operator (--abort)",
    );
    expect(findAll(ok, "failure")).toHaveLength(0);
    expect(findAll(ok, "testsuite")[0]?.attrs).toMatchObject({ failures: "0", errors: "0" });
    const failed = parseXml(renderJunit(buildReport(aborted(1, "the undo of step 4 failed"))));
    expect(findAll(failed, "failure").map((f) => f.attrs.message)).toEqual(["the undo of step 4 failed"]);
    // a journal of an earlier version: exit 0 with the write stop never undone (its step had no
    // `undo:`): writes still stopped is no run called off
    const stuck = parseXml(renderJunit(buildReport(aborted(0, "aborted by the operator (--abort)", false))));
    expect(findAll(stuck, "skipped").map((c) => c.attrs.message)).not.toContain(
      "called off (--abort): aborted by the operator (--abort)",
    );
    expect(findAll(stuck, "failure").map((f) => f.attrs.message)).toEqual(["aborted by the operator (--abort)"]);
  });

  it("a run of the cutover that was an --abort is said in the abort's own words, and the window it handed over is the least it lasted", () => {
    // the runs list said "ended failed" of an --abort that could not undo a write stop with no
    // `undo:` (or undid nothing since the fleet ruled it out), as if a step had failed
    const all = synthRun().events;
    const cut = all.slice(
      0,
      all.findIndex((e) => e.type === "step.started" && e.index === 4),
    );
    const first = cut[0] as RunEventOf<"run.started">;
    const last = cut[cut.length - 1]!;
    const abortRun = (extra: object): RunEvent[] =>
      [
        ...cut,
        { ...first, seq: last.seq + 1, at: last.at + 1000, mode: "resume", abort: true },
        {
          type: "decision",
          seq: last.seq + 2,
          at: last.at + 1001,
          index: 3,
          id: "stop-writes",
          kind: "undo",
          ok: false,
          check: "by-hand",
          reason: "no undo:",
        },
        {
          type: "run.finished",
          seq: last.seq + 3,
          at: last.at + 1002,
          outcome: "failed",
          exitCode: 1,
          committed: false,
          aborted: true,
          message: "aborted by the operator (--abort), but …",
          durationMs: 2,
          ...extra,
        },
      ] as RunEvent[];
    const html = renderHtml(buildReport(abortRun({ undoByHand: "stop-writes", writes: "stopped" })));
    expect(html).toMatch(/run 2 \(--abort\) started[^<]*, ended ABORTED, NOT EVERYTHING UNDONE at /);
    expect(html).not.toMatch(/run 2 \(--abort\) started[^<]*, ended failed/);
    expect(html).toMatch(
      /at least [^<]*\(writes stopped, then handed to a person by --abort: its step has no `undo:`: no cutover\)/,
    );
    // the facts row and the runs table's badge too (a review: they still said "failed")
    expect(html).toMatch(/run 2 \(--abort\) ABORTED, NOT EVERYTHING UNDONE, /);
    expect(html).toMatch(/<tr data-run="2"[^\n]*<span class="badge failed">ABORTED, NOT EVERYTHING UNDONE<\/span>/);
    expect(html).not.toMatch(/run 2 \(--abort\) failed/);
    const kept = renderHtml(buildReport(abortRun({ undoKeptOff: true })));
    expect(kept).toMatch(/run 2 \(--abort\) started[^<]*, ended ABORTED, NOTHING UNDONE: WRITES STAY STOPPED at /);
  });

  it("a crashed run: the running step is an error", () => {
    const all = synthRun().events;
    const doc = parseXml(
      renderJunit(buildReport(all.slice(0, all.findIndex((e) => e.type === "verifier.sampled") + 1))),
    );
    expect(findAll(doc, "error")).toHaveLength(1);
    expect(findAll(doc, "error")[0]?.attrs.type).toBe("running");
  });

  it("escapes everything: markup, quotes, ampersands, control characters", () => {
    const nasty = `a<b>&"c'\u0001\u0008]]>`;
    const events = synthRun({ refuseCommit: true }).events.map((e) => {
      if (e.type === "run.started")
        return { ...e, runbook: nasty, steps: e.steps.map((s) => ({ ...s, id: `${s.id}${nasty}` })) };
      if (e.type === "step.finished" && e.outcome === "failed") return { ...e, error: nasty, hint: nasty };
      if (e.type === "decision") return { ...e, reason: nasty, check: nasty };
      return e;
    }) as RunEvent[];
    const xml = renderJunit(buildReport(events));
    const doc = parseXml(xml);
    expect(findAll(doc, "testsuite")[0]?.attrs.name).toBe(`a<b>&"c']]>`);
    expect(findAll(doc, "failure")[0]?.attrs.message).toBe(`a<b>&"c']]>`);
  });
});

describe("report.html without a browser", () => {
  const synth = synthRun();
  const report = buildReport(synth.events);
  const html = renderHtml(report);

  it("starts with the outcome banner", () => {
    const body = html.slice(html.indexOf("<body>"));
    expect(body.indexOf('id="outcome"')).toBeGreaterThan(0);
    expect(body.indexOf('id="outcome"')).toBeLessThan(body.indexOf('id="timeline"'));
    expect(html).toMatch(
      /<header id="outcome" class="banner ok" data-outcome="ok" data-committed="true" data-verified="true">\s*<h1>COMMITTED/,
    );
    expect(html).toMatch(/<title>COMMITTED · VERIFIED · sales-rs-to-sharded/);
  });

  // issue 26: "its header says 'Every step succeeded' for that window"
  it("a cutover that ended well after a failed or killed run says so in its banner, not 'every step succeeded'", () => {
    const later = (events: RunEvent[], ms: number, seq: number): RunEvent[] =>
      events.map((e) => ({
        ...e,
        at: e.at + ms,
        seq: e.seq + seq,
        ...(e.type === "run.started" ? { mode: "resume" } : {}),
      }));
    const refused = synthRun({ refuseCommit: true }).events;
    const both = buildReport([...refused, ...later(synthRun().events, 3_600_000, 10_000)]);
    expect(both.outcome).toBe("ok");
    const page = renderHtml(both);
    expect(page).not.toContain("Every step succeeded");
    expect(page).toMatch(
      /<h1>COMMITTED · VERIFIED <span class="runbook">[^<]*<\/span><\/h1>\s*<p>The sync was committed, though not every step succeeded on the way: run 1 \(rehearsal\) failed; step 5 commit failed in run 1 \(commit refused: no stopWrites step has succeeded in this run\); 2 runs in all\. A verify step passed on this cutover&#39;s verification result\.<\/p>/,
    );
    const killed = synthRun({ cutAfter: 120 }).events;
    const again = renderHtml(buildReport([...killed, ...later(synthRun().events, 3_600_000, 10_000)]));
    expect(again).toMatch(
      /though not every step succeeded on the way: run 1 \(rehearsal\) ended without finishing \(killed or crashed\); 2 runs in all\./,
    );
    // one run that went well, or a run stopped on purpose (--to) and continued: as before
    expect(html).toContain("Every step succeeded and the sync was committed.");
  });

  // found in a review: the command named the runbook alone, and pasted after a run with
  // --journal-dir it read the default folder, where no journal is (src/next-run.ts `runbookArgs`)
  it("names the runbook in the way on with the --journal-dir its run was given (run.started.journalDir)", () => {
    const killed = synthRun({ cutAfter: 120 }).events;
    const plain = buildReport(killed);
    expect(plain.journalDir).toBeUndefined();
    expect(renderHtml(plain)).toContain("the way on (syncbook status runbooks/rs-to-sharded.yaml);");
    const given = buildReport(killed.map((e) => (e.type === "run.started" ? { ...e, journalDir: "../journals" } : e)));
    expect(given.journalDir).toBe("../journals");
    expect(renderHtml(given)).toContain(
      "the way on (syncbook status runbooks/rs-to-sharded.yaml --journal-dir ../journals);",
    );
  });

  it("lists a prompt answered before the write stop apart from the window's, never as its downtime", () => {
    const events = synthRun().events.map((e) => ({ ...e }));
    const waitStart = events.findIndex((e) => e.type === "step.started" && e.index === 1);
    const commitStart = events.find((e) => e.type === "step.started" && e.index === 4)!;
    // the operator took 2 s at the --step prompt before the commit: inside the window
    (commitStart as { promptMs?: number }).promptMs = 2_000;
    const confirm = {
      type: "decision",
      seq: 0,
      at: events[waitStart]!.at,
      index: 1,
      kind: "interlock",
      check: "confirm",
      ok: true,
      reason: "yes: Copy looks good?",
    } as unknown as RunEvent;
    events.splice(waitStart + 1, 0, confirm);
    events.forEach((e, i) => (e.seq = i));
    const page = renderHtml(buildReport(events));
    const lists = [...page.matchAll(/<ul class="prompts" data-in-window="(true|false)">(.*?)<\/ul>/gs)].map((m) => [
      m[1],
      m[2],
    ]);
    expect(lists.map(([w]) => w)).toEqual(["true", "false"]);
    expect(lists[0]![1]).toContain("--step prompt before commit: yes");
    expect(lists[0]![1]).not.toContain("confirm");
    expect(lists[1]![1]).toContain("confirm (wait-can-commit): Copy looks good?: yes");
    expect(lists[1]![1]).not.toContain("the operator&#39;s time");
    expect(page).toContain("Prompts outside this window (not part of its downtime):");
  });

  it("has the timeline: a bar and a table row per step", () => {
    expect(html).toMatch(new RegExp(`<svg class="gantt" id="chart-timeline" data-rows="${synth.steps.length}"`));
    for (const s of synth.steps) {
      expect(html).toContain(`<g class="step" data-step="${s.id}" data-outcome="ok" data-bars="1">`);
      expect(html).toContain(`<tr data-step="${s.id}" data-outcome="ok">`);
    }
  });

  // helper 131's finding: a step whose runner was killed read "running" in the report, hours after
  it("a step that started and has no end: 'no end (running, or cut off)' while its run is the last, with no end; 'cut off' once it ended", () => {
    const { events } = synthRun();
    const at = events.findIndex((e) => e.type === "step.started" && e.id === "commit");
    const badge = (cut: RunEvent[]): string | undefined =>
      /<tr data-step="commit" data-outcome="running">.*?<span class="badge running">([^<]*)<\/span>/s.exec(
        renderHtml(buildReport(cut)),
      )?.[1];
    const killed = events.slice(0, at + 1);
    expect(badge(killed)).toBe("no end (running, or cut off)");
    const ended: RunEvent = {
      type: "run.finished",
      seq: 1e6,
      at: killed.at(-1)!.at + 1,
      outcome: "interrupted",
      exitCode: 130,
      committed: false,
      durationMs: 1,
    };
    expect(badge([...killed, ended])).toBe("cut off");
    // a later run began: the killed one's step is cut off, whatever the later run does
    const again = events.find((e) => e.type === "run.started")!;
    expect(badge([...killed, { ...again, seq: 1e6, at: killed.at(-1)!.at + 1000 }])).toBe("cut off");
  });

  it("charts copy progress, lag per instance and the verifier's counters with the run's points", () => {
    for (const id of ["chart-copy", "chart-lag", "chart-events", "chart-verifier"])
      expect(html).toContain(`<figure class="chart" id="${id}"`);
    const series = seriesAttrs(html);
    for (const i of synth.instances) {
      const n = synth.progressSamples.get(i.index) ?? -1;
      expect(series.get(`copy:${i.name}`)).toEqual({ points: n, samples: n, polylinePoints: n });
      expect(series.get(`events:${i.name}`)?.points).toBe(n);
      const lag = synth.lagSamples.get(i.index) ?? -1;
      expect(series.get(`lag:${i.name}`)).toEqual({ points: lag, samples: lag, polylinePoints: lag });
      expect(lag).toBeLessThan(n); // the first samples have no lag: the line has a gap, not zeros
    }
    expect(series.get("copy:fleet")?.points).toBe(Math.max(...synth.progressSamples.values())); // one point per polling round
    for (const c of [
      "totalTasks",
      "completedTasks",
      "processingTasks",
      "failedTasks",
      "addedTasks",
      "metadataMismatchTasks",
      "recheckTasks",
    ]) {
      expect(series.get(`verifier:${c}`)).toEqual({
        points: synth.verifierSamples,
        samples: synth.verifierSamples,
        polylinePoints: synth.verifierSamples,
      });
    }
    expect(html).toContain('data-marker="commit"');
    expect(html).toContain('data-marker="writes off"');
  });

  it("the fleet's copy line reaches 100 % (global total, per-instance copied)", () => {
    const fleet = chartSeries(report).copy.find((s) => s.key === "copy:fleet");
    expect(fleet?.points.at(-1)?.[1]).toBe(100);
    const a = chartSeries(report).copy.find((s) => s.key === "copy:shard-a");
    expect(a?.points.at(-1)?.[1]).toBe(50);
  });

  it("is self-contained: no script, no external reference, no link, no image", () => {
    expect(html).not.toMatch(/<script/i);
    expect(html).not.toMatch(/<(link|img|iframe|object|embed|audio|video|source|base)\b/i);
    expect(html).not.toMatch(/url\(|@import/i);
    expect(html).not.toMatch(/xmlns/);
    // http(s):// may appear in text (instance URLs) but never in an attribute value
    for (const m of html.matchAll(/\s([-\w:]+)\s*=\s*"([^"]*)"/g))
      expect(m[2], `attribute ${m[1]}`).not.toMatch(/^(https?:)?\/\/|https?:\/\//i);
    expect(html).not.toMatch(/\s(src|href|action|formaction|srcset|xlink:href)\s*=/i);
    expect(html).toContain("http://127.0.0.1:27182"); // in text: the facts
  });

  it("is the same bytes for the same events (no clock, no randomness)", () => {
    expect(renderHtml(buildReport(synth.events))).toBe(html);
  });

  it("a failed run: red banner naming the step, its error and hint", () => {
    const failed = renderHtml(buildReport(synthRun({ refuseCommit: true }).events));
    expect(failed).toMatch(
      /<header id="outcome" class="banner failed" data-outcome="failed" data-committed="false" data-verified="true">\s*<h1>FAILED/,
    );
    expect(failed).toMatch(/at step 5 commit \(commit\): commit refused/);
    // a message that says more than the step's error is shown under it
    const bannerOf = (html: string) => /<header id="outcome"[\s\S]*?<\/header>/.exec(html)?.[0] ?? "";
    expect(bannerOf(failed)).toContain("<p>commit refused by an interlock</p>");
    // the runner's own ("step commit failed: <its error>") is the step's error again: said once
    const events = synthRun({ refuseCommit: true }).events.map((e) =>
      e.type === "run.finished"
        ? { ...e, message: "step commit failed: commit refused: no stopWrites step has succeeded in this run" }
        : e,
    );
    const once = bannerOf(renderHtml(buildReport(events)));
    expect(once.match(/no stopWrites step has succeeded/g)).toHaveLength(1);
    expect(failed).toContain("hint: stop writes before commit");
    expect(failed).toContain('data-kind="interlock" data-ok="false"');
  });

  it("thins very long series but says how many samples there were", () => {
    const long = synthRun({ copyPolls: 3000 });
    const series = seriesAttrs(renderHtml(buildReport(long.events)));
    const a = series.get("copy:shard-a");
    expect(a?.samples).toBe(long.progressSamples.get(0));
    expect(a?.points).toBeLessThanOrEqual(800);
    expect(a?.points).toBe(a?.polylinePoints);
    const { segments } = segmentsOf(
      Array.from({ length: 5000 }, (_, i) => [i, i % 7 === 0 ? null : Math.sin(i / 50)] as const),
      400,
    );
    expect(segments.flat().length).toBeLessThanOrEqual(400);
  });

  it("a run without verifier or progress samples says so instead of drawing empty charts", () => {
    const events = synthRun().events.filter((e) => e.type !== "verifier.sampled" && e.type !== "progress.sampled");
    const page = renderHtml(buildReport(events));
    expect(page).toContain("No verifier samples in this run.");
    expect(page).toContain("No lag samples in this run.");
    expect(seriesAttrs(page).size).toBe(0);
  });
});

describe("redaction (defence in depth)", () => {
  it("strips URL userinfo and never keeps header values or secret-named values", () => {
    expect(stripUserinfo("see http://admin:pw@h:1/x and mongodb+srv://u:p@c.example.net/db")).toBe(
      "see http://***@h:1/x and mongodb+srv://***@c.example.net/db",
    );
    expect(
      redactValue({
        headers: { Authorization: "Bearer x", "X-Trace": "1" },
        password: "p",
        nested: [{ apiKey: "k", ok: "http://a:b@h" }],
        canCommit: true,
      }),
    ).toEqual({
      headers: { Authorization: "[redacted]", "X-Trace": "[redacted]" },
      password: "[redacted]",
      nested: [{ apiKey: "[redacted]", ok: "http://***@h" }],
      canCommit: true,
    });
  });

  it("no secret reaches report.json, junit.xml or report.html", async () => {
    const dir = tmp();
    const { files } = await writeReport(synthRun({ leakSecrets: true }).events, dir);
    for (const f of Object.values(files)) {
      const text = readFileSync(f, "utf8");
      for (const secret of ["hunter2", "s3cr3t-token", "pa55w0rd", "admin:"])
        expect(text, `${f} holds ${secret}`).not.toContain(secret);
    }
    const json = JSON.parse(readFileSync(files.json, "utf8"));
    expect(json.instances[1].url).toBe("http://***@127.0.0.1:27183");
    expect(json.requests[0].body.headers).toEqual({ Authorization: "[redacted]" });
  });
});

describe("writeReport and createReportListener", () => {
  it("writes the three files; report.json is the report", async () => {
    const dir = join(tmp(), "nested", "out");
    const synth = synthRun();
    const { files, report } = await writeReport(synth.events, dir);
    expect(JSON.parse(readFileSync(files.json, "utf8"))).toEqual(JSON.parse(JSON.stringify(report)));
    expect(readFileSync(files.junit, "utf8")).toMatch(/^<\?xml/);
    expect(readFileSync(files.html, "utf8")).toMatch(/^<!doctype html>/);
  });

  it("the listener writes on run.finished, before finish() is awaited", async () => {
    const dir = tmp();
    const synth = synthRun();
    const r = createReportListener(dir);
    for (const e of synth.events) await r.listener(e);
    expect(JSON.parse(readFileSync(join(dir, "report.json"), "utf8")).outcome).toBe("ok");
    const done = await r.finish();
    expect(done.report).toEqual(buildReport(synth.events));
  });

  it("finish() writes what arrived when the run ended without run.finished", async () => {
    const dir = tmp();
    const events = synthRun().events.slice(0, 40);
    const r = createReportListener(dir);
    for (const e of events) void r.listener(e);
    const { report } = await r.finish();
    expect(report.outcome).toBe("unfinished");
    expect(JSON.parse(readFileSync(join(dir, "report.json"), "utf8")).counts.events).toBe(40);
  });

  it("an unwritable directory is a clear error from finish(), never a throw into the runner", async () => {
    const file = join(tmp(), "a-file");
    await writeReport([], file); // creates a directory named a-file
    const blocked = join(file, "report.json", "sub");
    const r = createReportListener(blocked);
    for (const e of synthRun().events) await expect(Promise.resolve(r.listener(e))).resolves.toBeUndefined();
    await expect(r.finish()).rejects.toThrow(/cannot write the report/);
  });

  it("keeps its own copy: later mutation of an event does not change the report", async () => {
    const synth = synthRun();
    const r = createReportListener(tmp());
    for (const e of synth.events) await r.listener(e);
    const before = r.snapshot();
    for (const e of synth.events)
      if (e.type === "progress.sampled") (e.progress as Record<string, unknown>).lagTimeSeconds = 999;
    expect(r.snapshot()).toEqual(before);
  });
});

// a reverse starts a new sync: the report of a cutover whose first sync committed, then reversed
// and failed before the new sync's commit said "FAILED AFTER COMMIT" (and left out the writes its
// runs left stopped, which it tells only of a sync not committed)
describe("the report after a reverse that took effect", () => {
  const steps = [
    { index: 0, id: "commit", kind: "commit", title: "commit" },
    { index: 1, id: "back", kind: "reverse", title: "back" },
    { index: 2, id: "hold", kind: "hook", title: "hold" },
  ];
  const instances = [{ url: "http://127.0.0.1:27182", name: "sync0", index: 0 }];
  let seq = 0;
  const ev = (at: number, type: string, body: Record<string, unknown>): RunEvent =>
    ({ type, seq: ++seq, at: T0 + at, ...body }) as unknown as RunEvent;
  const run = (first: Record<string, unknown>, reverseOutcome: "ok" | "failed") => [
    ev(0, "run.started", { runbook: "r", file: "r.yaml", hash: "h", mode: "run", instances, steps }),
    ev(10, "step.started", steps[0]!),
    ev(20, "step.finished", { index: 0, id: "commit", outcome: "ok", durationMs: 10 }),
    ev(30, "step.started", steps[1]!),
    ev(40, "step.finished", { index: 1, id: "back", outcome: reverseOutcome, durationMs: 10 }),
    ev(50, "step.started", steps[2]!),
    ev(60, "step.finished", { index: 2, id: "hold", outcome: "failed", durationMs: 10, error: "boom" }),
    ev(70, "run.finished", { outcome: "failed", exitCode: 1, durationMs: 70, ...first }),
  ];

  it("the sync that runs now is not committed: FAILED, not FAILED AFTER COMMIT", () => {
    const r = buildReport(run({ committed: false, reversed: "back" }, "ok"));
    expect(r.committed).toBe(false);
    expect(renderHtml(r)).toMatch(/data-committed="false"/);
    expect(renderHtml(r)).not.toMatch(/FAILED AFTER COMMIT/);
  });

  it("a run that said committed after the reverse did commit the new sync; a reverse that failed started none", () => {
    expect(buildReport(run({ committed: true }, "ok")).committed).toBe(true);
    expect(buildReport(run({ committed: true }, "failed")).committed).toBe(true);
  });

  it("across runs: the run that committed before the reverse said the sync before", () => {
    const first = [
      ev(0, "run.started", { runbook: "r", file: "r.yaml", hash: "h", mode: "run", instances, steps }),
      ev(10, "step.started", steps[0]!),
      ev(20, "step.finished", { index: 0, id: "commit", outcome: "ok", durationMs: 10 }),
      ev(25, "run.finished", { outcome: "ok", exitCode: 0, durationMs: 25, committed: true, to: "commit" }),
    ];
    const second = [
      ev(100, "run.started", { runbook: "r", file: "r.yaml", hash: "h", mode: "resume", instances, steps }),
      ev(110, "step.started", steps[1]!),
      ev(120, "step.finished", { index: 1, id: "back", outcome: "ok", durationMs: 10 }),
      ev(130, "run.finished", { outcome: "failed", exitCode: 1, durationMs: 30, committed: false, reversed: "back" }),
    ];
    expect(buildReport(first).committed).toBe(true);
    expect(buildReport([...first, ...second]).committed).toBe(false);
  });
});
