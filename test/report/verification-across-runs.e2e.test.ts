/**
 * A cutover done in two runs, the second a `--from` run that continues it: what every reader says
 * about its verification. The `--from` run journals the memory it carried (`verifier.carried`,
 * src/run/runner.ts), and its own verdict (`run.finished.verified`) is that memory's. Its own
 * `--report` (report.json, report.html, junit.xml), the cutover's report (`syncbook report`, every
 * journal of it), `status` and the watch page's read model must say the same: a verification the
 * cutover earned in its first run is not lost in the second's report, and one it never earned is
 * never claimed.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Report } from "../../src/report/index.js";
import { traitsOf } from "../../src/steps/index.js";
import { JournalFeed } from "../../src/watch/journal-feed.js";
import { cli } from "../support/run.js";
import {
  CHECK,
  CLI_CUTOVER_DEFAULTS,
  COMMIT,
  COMMITTED,
  DRAINED,
  READY,
  START,
  VERIFY,
  cleanedUpAfterAll,
  cutoverYaml,
  fastSim,
  stopVia,
  tempDir,
} from "../support/crash-harness.js";

const made = cleanedUpAfterAll();

/**
 * The recommended cutover with a gate `where` ("before" or "after" the verify step) that fails
 * until a file exists: the first run ends there, the second goes on `--from` (the gate by default)
 * once it exists.
 */
async function twoRuns(
  where: "before" | "after",
  from = "gate",
): Promise<{
  dir: string;
  first: Awaited<ReturnType<typeof cli>>;
  second: Awaited<ReturnType<typeof cli>>;
  own: { json: Report; html: string; junit: string };
  cutover: Report;
  status: { journal: { verifier?: { verified: boolean }; finished?: { verified: boolean } } };
  statusText: string;
  feed: JournalFeed;
}> {
  const sim = await fastSim({ instances: 3, timeScale: 100, graceMs: 120_000 });
  made.sims.push(sim);
  const dir = tempDir();
  made.dirs.push(dir);
  const ok = join(dir, "gate-ok");
  const GATE = `  - { id: gate, hook: { use: shell, with: { command: [node, -e, "process.exit(require('fs').existsSync(${JSON.stringify(ok).replace(/"/g, "'")}) ? 0 : 1)"] } } }\n`;
  const file = join(dir, "rb.yaml");
  const steps =
    START +
    READY +
    CHECK +
    stopVia(sim.verifierUrl) +
    DRAINED +
    COMMIT +
    COMMITTED +
    (where === "before" ? GATE + VERIFY : VERIFY + GATE) +
    '  - { id: announce, notify: "moved" }\n';
  writeFileSync(file, cutoverYaml(sim, { defaults: CLI_CUTOVER_DEFAULTS, steps }));
  const run = (...a: string[]): ReturnType<typeof cli> =>
    cli(["run", file, "--renderer", "simple", ...a], { cwd: dir });
  const first = await run();
  expect(first.code, first.all).toBe(1);
  expect(first.all).toMatch(/step gate failed/);
  writeFileSync(ok, "");
  const second = await run("--from", from, "--yes", "--report", join(dir, "own"));
  expect(second.code, second.all).toBe(0);
  expect(second.all).toMatch(/cutover: this run continues cutover/);
  const read = (d: string, f: string): string => readFileSync(join(dir, d, f), "utf8");
  const folder = join(dir, ".syncbook", "crash");
  const made_ = await cli(["report", folder, "--out", join(dir, "cutover")], { cwd: dir });
  expect(made_.code, made_.all).toBe(0);
  const statusJson = await cli(["status", file, "--json"], { cwd: dir });
  const statusText = await cli(["status", file], { cwd: dir });
  const feed = new JournalFeed(folder, traitsOf);
  await feed.refresh();
  return {
    dir,
    first,
    second,
    own: {
      json: JSON.parse(read("own", "report.json")) as Report,
      html: read("own", "report.html"),
      junit: read("own", "junit.xml"),
    },
    cutover: JSON.parse(read("cutover", "report.json")) as Report,
    status: JSON.parse(statusJson.stdout) as never,
    statusText: statusText.all,
    feed,
  };
}

describe("a cutover verified in its first run, finished by a --from run", () => {
  it("every reader says verified: the run's end, its own report (JSON, HTML, JUnit), the cutover's report, status, the watch page's model", async () => {
    const r = await twoRuns("after");
    expect(r.first.all).toMatch(/■ run failed .*· committed · verified/);
    expect(r.second.all).toMatch(/■ run ok .*· committed · verified/);
    // the --from run's own report: the verification it carried, not "no verify step passed"
    expect(r.own.json.verification).toMatchObject({ verified: true });
    expect(r.own.html).toContain('data-verified="true"');
    expect(r.own.html).not.toContain("NOT VERIFIED");
    expect(r.own.junit).not.toMatch(/not verified/);
    expect(r.cutover.verification).toMatchObject({ verified: true, step: "verify" });
    expect(r.status.journal.verifier?.verified).toBe(true);
    expect(r.status.journal.finished?.verified).toBe(true);
    expect(r.statusText).toMatch(/run ended ok \(committed\) · verified/);
    expect(r.feed.fold.view().verifier?.writesOffGeneration).toBeDefined();
  }, 120_000);
});

describe("a cutover not verified in its first run, finished by a --from run", () => {
  it("--from the gate before verify: the second run's verify passes on the carried check, and every reader says verified", async () => {
    const r = await twoRuns("before");
    expect(r.first.all).toMatch(/■ run failed .*· not verified/);
    expect(r.second.all).toMatch(/■ run ok .*· committed · verified/);
    expect(r.own.json.verification).toMatchObject({ verified: true, step: "verify" });
    expect(r.cutover.verification).toMatchObject({ verified: true, step: "verify" });
    expect(r.status.journal.verifier?.verified).toBe(true);
    expect(r.status.journal.finished?.verified).toBe(true);
  }, 120_000);

  it("--from past verify (it ran in neither run): the carried check is no verification, and no reader claims one", async () => {
    const r = await twoRuns("before", "announce");
    expect(r.second.all).toMatch(/■ run ok .*· not verified/);
    expect(r.own.json.verification.verified).toBe(false);
    expect(r.own.html).toContain('data-verified="false"');
    expect(r.cutover.verification.verified).toBe(false);
    expect(r.status.journal.verifier?.verified).toBe(false);
    expect(r.status.journal.finished?.verified).toBe(false);
    expect(r.statusText).toMatch(/not verified/);
  }, 120_000);
});
