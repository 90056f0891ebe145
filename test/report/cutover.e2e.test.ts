/**
 * Issue 37, point 2: one report of a cutover across its runs and journals. A split commit (journal
 * A), fixed with `--from commit --only sync2` (journal B) whose runner is killed (kill -9) while a
 * hook runs, then `--resume`d (journal B again): `syncbook report` on the runbook's journal folder
 * builds the cutover's report from every run of it. One write-stop window from the stop (run 1) to
 * canWrite (run 3); the time no runner was alive is the "none" share and said in words, never the
 * runner's; a banner names every run and how it ended; UTC times beside the relative ones. The
 * resumed run's own `--report` links to the cutover's.
 */
import { readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Report } from "../../src/report/index.js";
import type { Simulator } from "../../src/sim/index.js";
import { cli, startCli, type CliResult } from "../support/run.js";
import {
  COMMIT,
  COMMITTED,
  CLI_CUTOVER_DEFAULTS,
  DRAINED,
  READY,
  START,
  cutoverYaml,
  fastSim,
  stopVia,
  tempDir,
} from "../support/crash-harness.js";

describe("the cutover's report: a split commit, its fix with --from --only, a kill -9 and --resume", () => {
  let s: Simulator;
  let dir: string;
  let folder: string;
  let reportCli: CliResult;
  let report: Report;
  let html: string;
  let live: Report;
  let killedAt = 0;
  let resumedAt = 0;

  beforeAll(async () => {
    s = await fastSim({ instances: 3, timeScale: 100, graceMs: 120_000 });
    s.control.addFault("commit-refused@2");
    dir = tempDir();
    const file = join(dir, "rb.yaml");
    // after the commit, a hook that says "holding" and runs 2 s: the runner is killed while it runs
    const hold = `  - { id: hold, hook: { use: shell, with: { command: [node, -e, "console.log('holding'); setTimeout(() => {}, 2000)"] } } }\n`;
    writeFileSync(
      file,
      cutoverYaml(s, {
        defaults: CLI_CUTOVER_DEFAULTS,
        steps: START + READY + stopVia(s.verifierUrl) + DRAINED + COMMIT + hold + COMMITTED,
      }),
    );
    folder = join(dir, ".syncbook", "crash");
    const run = (...a: string[]) => cli(["run", file, "--renderer", "simple", ...a], { cwd: dir });
    const split = await run();
    expect(split.code, split.all).toBe(1);
    expect(split.all).toContain("split: commit reached 2 of 3 instances");
    s.control.clearFaults();
    const fixing = startCli(["run", file, "--renderer", "simple", "--from", "commit", "--only", "sync2", "--yes"], {
      cwd: dir,
    });
    await fixing.waitFor(/holding/, 60_000);
    fixing.child.kill("SIGKILL");
    await fixing.done;
    killedAt = Date.now();
    // nobody runs syncbook for a while
    await new Promise((r) => setTimeout(r, 1500));
    resumedAt = Date.now();
    const resumed = await run("--resume", "--yes", "--report", join(dir, "own"));
    expect(resumed.code, resumed.all).toBe(0);
    expect(readdirSync(folder).filter((f) => f.endsWith(".jsonl"))).toHaveLength(2);
    reportCli = await cli(["report", folder, "--out", join(dir, "cutover")], { cwd: dir });
    report = JSON.parse(readFileSync(join(dir, "cutover", "report.json"), "utf8")) as Report;
    html = readFileSync(join(dir, "cutover", "report.html"), "utf8");
    live = JSON.parse(readFileSync(join(dir, "own", "report.json"), "utf8")) as Report;
  }, 180_000);

  afterAll(async () => {
    await s?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("is built from both journals: three runs, each with how it ended", () => {
    expect(reportCli.code, reportCli.all).toBe(0);
    expect(reportCli.stdout).toMatch(/3 runs in 2 journals/);
    expect(report.runs.map((r) => [r.n, r.mode, r.outcome])).toEqual([
      [1, "run", "failed"],
      [2, "run", "unfinished"],
      [3, "resume", "ok"],
    ]);
    expect(report.runs.map((r) => r.journal)).toEqual([
      expect.stringMatching(/\.jsonl$/),
      expect.stringMatching(/\.jsonl$/),
      expect.stringMatching(/\.jsonl$/),
    ]);
    expect(report.runs[0]!.journal).not.toBe(report.runs[1]!.journal);
    expect(report.runs[1]!.journal).toBe(report.runs[2]!.journal);
    expect(report.cutover?.id).toMatch(/^\d{8}T\d{6}Z-[0-9a-f]{8}-[0-9a-f]{8}$/);
    expect(report.outcome).toBe("ok");
    expect(report.committed).toBe(true);
    // the banner names every run and how it ended, with its UTC time
    for (const words of [
      /run 1 \(run\) [^<]*ended failed[^<]*: commit reached 2 of 3 instances/,
      /run 2 [^<]*ended without a word at \d\d:\d\d:\d\d UTC/,
      /run 3 \(--resume\) [^<]*ended ok/,
    ])
      expect(html).toMatch(words);
  });

  // three instances and none declared the first process (`startedFirst`): no canWrite is valid, so
  // the window closes on COMMITTED of every instance (issue 36; mongodb/docs cutover-process.txt)
  it("measures one write-stop window, from the stop in run 1 to COMMITTED in run 3", () => {
    expect(report.windows).toHaveLength(1);
    const w = report.window!;
    expect(w.closedBy).toBe("committed");
    expect(w.openedBy?.id).toBe("stop-writes");
    expect(w.openedAt).toBeLessThan(report.runs[1]!.startedAt);
    expect(w.closedAt).toBeGreaterThan(report.runs[2]!.startedAt);
  });

  it("charges the time no runner was alive to no runner, never to the runner, and says so in words", () => {
    const w = report.window!;
    // the kill -9 to the resume (1.5 s at least), and the gap between the split run and its fix
    expect(w.shares.none).toBeGreaterThanOrEqual(resumedAt - killedAt - 100);
    const dead = w.parts.filter((p) => p.share === "none");
    expect(dead.length).toBeGreaterThanOrEqual(2);
    // the runner's share is what the runners did while alive: much less than the dead time
    expect(w.shares.runner).toBeLessThan(w.shares.none);
    expect(report.gaps?.map((g) => g.how)).toEqual(["ended", "killed"]);
    expect(html).toMatch(
      /no runner: the run ended without a word at \d\d:\d\d:\d\d UTC; resumed at \d\d:\d\d:\d\d UTC/,
    );
  });

  it("gives UTC times beside the relative ones", () => {
    expect(html).toMatch(/\+\d[^<]* · \d\d:\d\d:\d\d UTC/);
  });

  it("a run's own report links to the cutover's", () => {
    expect(live.cutover?.id).toBe(report.cutover?.id);
    expect(live.cutover?.report).toContain(`syncbook report ${folder}`);
  });
});
