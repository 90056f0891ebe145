/**
 * Issue #15, points 2 and 4, through the built CLI against the simulator: a cutover interrupted
 * (Ctrl-C while `drained` waits, after writes were stopped: the undo turns them back on), then
 * `--resume`d to COMMITTED. `syncbook report` on the journal tells it as one story: both runs on
 * one time axis, each step with its attempts (a step done in run 1 keeps its outcome), markers
 * for the interruption, the undo, the resume, writes stopped, commit sent, canWrite and
 * COMMITTED, and two write-stop windows: the first ended by the undo, the second by canWrite.
 * The live `--report` of the resumed run says the same, and the record names who ran it.
 */
import { readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { hostname, userInfo } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Report } from "../../src/report/index.js";
import type { Simulator } from "../../src/sim/index.js";
import {
  COMMIT,
  DRAINED,
  READY,
  START,
  STOP,
  cli,
  runbookFor,
  sim,
  startCli,
  tempDir,
  writeRunbook,
  type CliResult,
} from "../support/run.js";
import { cleanedUpAfterAll, cliCutover } from "../support/crash-harness.js";

const pkg = JSON.parse(readFileSync(join(process.cwd(), "package.json"), "utf8")) as { version: string };

describe("the report of an interrupted, then resumed cutover", () => {
  let s: Simulator;
  let dir: string;
  let first: CliResult;
  let second: CliResult;
  let reportCli: CliResult;
  let report: Report;
  let live: Report;
  let html: string;
  let summary: string;

  beforeAll(async () => {
    s = await sim({ instances: 2 });
    dir = tempDir();
    // `hold` keeps `drained` waiting (a lag floor) until the test lifts it
    const hold = `  - { id: hold, hook: { use: http, with: { url: "${s.instances[0]!.url}/sim/faults", method: POST, body: { spec: "lag-floor=10" } } } }\n`;
    const file = writeRunbook(dir, runbookFor(s, START + READY + STOP + hold + DRAINED + COMMIT));
    const journals = join(dir, "journals");
    const run1 = startCli(["run", file, "--renderer", "simple", "--journal-dir", journals], { cwd: dir });
    await run1.waitFor(/waiting \(drained\)/, 30_000);
    run1.child.kill("SIGINT");
    first = await run1.done;
    s.control.clearFaults();
    const summaryFile = join(dir, "summary.md");
    second = await cli(
      ["run", file, "--resume", "--renderer", "simple", "--journal-dir", journals, "--report", join(dir, "live")],
      { cwd: dir, env: { GITHUB_STEP_SUMMARY: summaryFile } },
    );
    summary = readFileSync(summaryFile, "utf8");
    const folder = join(journals, "e2e");
    reportCli = await cli(["report", folder, "--out", join(dir, "after")], { cwd: dir });
    report = JSON.parse(readFileSync(join(dir, "after", "report.json"), "utf8")) as Report;
    live = JSON.parse(readFileSync(join(dir, "live", "report.json"), "utf8")) as Report;
    html = readFileSync(join(dir, "after", "report.html"), "utf8");
    expect(readdirSync(folder).filter((f) => f.endsWith(".jsonl"))).toHaveLength(1);
  }, 120_000);

  afterAll(async () => {
    await s?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("ran as intended: interrupted with the undo, then resumed to COMMITTED", () => {
    expect(first.code, first.all).toBe(130);
    expect(first.all).toMatch(/undo hook sim-writes ok/);
    // the interrupt's message once: the renderer's last line says it, the CLI does not repeat it
    expect(first.all.match(/interrupted during step drained/g), first.all).toHaveLength(1);
    expect(second.code, second.all).toBe(0);
    expect(reportCli.code, reportCli.all).toBe(0);
    expect(reportCli.stdout).toMatch(/2 runs, /);
    expect(reportCli.stdout).toMatch(
      /write-stop window: .* \(writes stopped → canWrite on the first process\): service /,
    );
  });

  it("shows both runs on one time axis", () => {
    expect(report.runs.map((r) => [r.n, r.mode, r.outcome, r.exitCode])).toEqual([
      [1, "run", "interrupted", 130],
      [2, "resume", "ok", 0],
    ]);
    const [r1, r2] = report.runs;
    expect(r2!.start).toBeGreaterThanOrEqual(r1!.end);
    // the story's length is the whole span, not the last run's
    expect(report.durationMs).toBeGreaterThanOrEqual(r2!.end - 50);
    expect(report.durationMs).toBeGreaterThanOrEqual(r1!.durationMs + r2!.durationMs);
    expect(report.outcome).toBe("ok");
    expect(report.committed).toBe(true);
    expect(report.warnings.filter((w) => /out of order|sent twice|without its request/.test(w))).toEqual([]);
  });

  it("keeps every attempt of a step; a step done in run 1 is not 'skipped'", () => {
    const step = (id: string) => report.steps.find((x) => x.id === id)!;
    for (const id of ["start", "ready", "hold"]) {
      expect(step(id).outcome, id).toBe("ok");
      expect(
        step(id).attempts.map((a) => [a.run, a.outcome]),
        id,
      ).toEqual([[1, "ok"]]);
      expect(step(id).resumeNote, id).toMatch(/^run 2: done in an earlier run/);
    }
    // its undo started: run 2 stops writes again
    expect(step("stop-writes").attempts.map((a) => [a.run, a.outcome])).toEqual([
      [1, "ok"],
      [2, "ok"],
    ]);
    expect(step("drained").attempts.map((a) => [a.run, a.outcome])).toEqual([
      [1, "interrupted"],
      [2, "ok"],
    ]);
    expect(step("commit").attempts.map((a) => [a.run, a.outcome])).toEqual([[2, "ok"]]);
    expect(report.failedStep).toBeUndefined();
    // the job summary's table says it as the report does (it said "⏭️ skipped" of what run 1 did)
    for (const id of ["start", "ready", "hold"])
      expect(summary, id).toMatch(new RegExp(`\\| ${id}[^|]*\\| \\w+ \\| ✅ ok \\(run 1\\) \\|`));
    expect(summary).toMatch(/\| drained[^|]*\| waitFor \| ✅ ok \|/);
    expect(summary).not.toMatch(/skipped|not reached/);
    expect(html).toMatch(/<g class="step" data-step="drained" data-outcome="ok" data-bars="2">/);
    expect(html).toMatch(/<table id="runs">/);
    expect(html).toMatch(/<g class="run-band" data-run="2">/);
  });

  it("marks the interruption, the undo, the resume, writes stopped, commit, canWrite and COMMITTED, in order", () => {
    const kinds = report.markers.map((m) => m.kind);
    expect(kinds).toEqual([
      "writes-stopped",
      "undo",
      "interrupted",
      "run",
      "writes-stopped",
      "commit-sent",
      "can-write",
      "committed",
    ]);
    const ts = report.markers.map((m) => m.t);
    expect([...ts].sort((a, b) => a - b)).toEqual(ts);
    expect(report.markers.find((m) => m.kind === "undo")?.label).toBe("undo: stop-writes");
    expect(html).toContain('data-marker="writes off"');
    expect(html).toContain('data-marker="canWrite"');
  });

  it("measures the write-stop windows: one ended by the undo, the cutover's by canWrite", () => {
    expect(report.windows.map((w) => w.closedBy)).toEqual(["undone", "canWrite"]);
    const w = report.window!;
    expect(w.open).toBe(false);
    expect(w.durationMs).toBeGreaterThan(0);
    expect(w.openedAt! - report.startedAt).toBeGreaterThanOrEqual(report.runs[1]!.start);
    expect(Object.values(w.shares).reduce((a, b) => a + b, 0)).toBe(w.measuredMs);
    expect(w.shares.service).toBeGreaterThan(0);
    expect(html).toMatch(/<section id="write-stop-window">/);
    expect(summary).toMatch(/\| write-stop window \| .*canWrite on the first process.*service/);
  });

  it("the live report of the resumed run tells the same story", () => {
    expect(live.runs.map((r) => [r.n, r.outcome])).toEqual([
      [1, "interrupted"],
      [2, "ok"],
    ]);
    expect(live.steps.map((x) => [x.id, x.outcome, x.attempts.length])).toEqual(
      report.steps.map((x) => [x.id, x.outcome, x.attempts.length]),
    );
    expect(live.windows.map((w) => w.closedBy)).toEqual(["undone", "canWrite"]);
    expect(live.warnings.filter((w) => /out of order|sent twice|without its request/.test(w))).toEqual([]);
  });

  it("states for the record who ran it, with which syncbook, runbook and service version", () => {
    const me = (() => {
      try {
        return userInfo().username;
      } catch {
        return undefined;
      }
    })();
    expect(report.record.by).toEqual([{ user: me ?? expect.any(String), host: hostname(), runs: [1, 2] }]);
    expect(report.record.syncbook).toEqual([pkg.version]);
    expect(report.record.runbook).toMatchObject({ name: "e2e", format: 1, serviceVersion: "1.8.0" });
    expect(report.record.runbook.hash).toMatch(/^[0-9a-f]{64}$/);
    // the simulator emulates 1.8.0: `totalEventsApplied` (1.8) and no `lag` (1.21); no `verification` says
    // nothing (the documentation's 1.9–1.13 example on the migration verifier's page has none either)
    expect(report.record.serviceVersionSeen).toMatchObject({
      atLeast: { version: "1.8" },
      below: { version: "1.21" },
    });
    expect(report.record.serviceVersionMismatch).toBeUndefined();
    const interlocks = report.record.interlocks.map((i) => report.decisions[i]!);
    expect(interlocks.map((d) => [d.check, d.ok])).toEqual(
      expect.arrayContaining([
        ["writes-stopped", true],
        ["fleet-identity", true],
        ["can-commit", true],
        ["no-errors", true],
      ]),
    );
    for (const d of interlocks) expect(d.reason.length).toBeGreaterThan(10);
    expect(html).toMatch(/<section id="record">/);
    expect(html).toMatch(
      /service version seen<\/dt><dd>1\.8 or later \(`totalEventsApplied` in progress\), before 1\.21 \(no `lag` in progress\)/,
    );
  });
});

// a helper's adversarial run: after `--to stop-writes` (writes stopped, no commit, the cutover
// open), the report's banner said "SUCCEEDED · NOT VERIFIED … Every step succeeded." where status
// and the watch page said the run ended at --to, before the runbook's end
describe("the report of a run stopped at --to", () => {
  const made = cleanedUpAfterAll();
  it("says where it stopped and that the cutover goes on, not 'succeeded'; after the --resume, COMMITTED", async () => {
    const c = await cliCutover(made, [], "");
    writeFileSync(c.file, readFileSync(c.file, "utf8") + START + READY + STOP + DRAINED + COMMIT);
    const first = await cli(c.args("--to", "stop-writes", "--yes"), { cwd: c.dir });
    expect(first.code, first.all).toBe(0);
    const read = async (out: string): Promise<{ json: Report; html: string }> => {
      const made_ = await cli(["report", join(c.jd, "crash"), "--out", join(c.dir, out)], { cwd: c.dir });
      expect(made_.code, made_.all).toBe(0);
      return {
        json: JSON.parse(readFileSync(join(c.dir, out, "report.json"), "utf8")) as Report,
        html: readFileSync(join(c.dir, out, "report.html"), "utf8"),
      };
    };
    const stopped = await read("stopped");
    expect(stopped.json.runs.at(-1)?.to).toBe("stop-writes");
    expect(stopped.html, first.all).toContain("<h1>STOPPED AT --to stop-writes · NOT COMMITTED ");
    expect(stopped.html).not.toContain("SUCCEEDED");
    expect(stopped.html).not.toContain("Every step succeeded");
    expect(stopped.html).toContain(`syncbook status ${c.file} --journal-dir ${c.jd}`);
    const resumed = await cli(c.args("--resume", "--yes"), { cwd: c.dir });
    expect(resumed.code, resumed.all).toBe(0);
    const done = await read("done");
    expect(done.html).toContain("<h1>COMMITTED · NOT VERIFIED ");
  }, 120_000);
});
