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
  /**
   * `edit`: the runbook's text changed between the runs (the announce's words), so the journal the
   * second run would continue was written for another text; `flags`: the second run's own; `go`:
   * the gate goes on when it fails (`continueOnError`: the first run ends ok, its cutover committed).
   */
  o: { edit?: boolean; flags?: readonly string[]; go?: boolean; continues?: RegExp } = {},
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
  const GATE = `  - { id: gate, ${o.go === true ? "continueOnError: true, " : ""}hook: { use: shell, with: { command: [node, -e, "process.exit(require('fs').existsSync(${JSON.stringify(ok).replace(/"/g, "'")}) ? 0 : 1)"] } } }\n`;
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
  expect(first.code, first.all).toBe(o.go === true ? 0 : 1);
  expect(first.all).toMatch(/step gate failed/);
  writeFileSync(ok, "");
  if (o.edit === true)
    writeFileSync(file, readFileSync(file, "utf8").replace('notify: "moved"', 'notify: "moved, edited"'));
  const second = await run("--from", from, "--yes", "--report", join(dir, "own"), ...(o.flags ?? []));
  expect(second.code, second.all).toBe(0);
  expect(second.all).toMatch(o.continues ?? /cutover: this run continues cutover/);
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

describe("a cutover verified in its first run, the runbook edited, then a --from run", () => {
  it("the --from run counts nothing from a journal of another text but its commit: every reader says committed, none verified", async () => {
    const r = await twoRuns("after", "gate", { edit: true });
    expect(r.first.all).toMatch(/■ run failed .*· committed · verified/);
    expect(r.second.all).toMatch(
      /was written for another text of the runbook: this run counts nothing from it but its commit, which an instance accepted/,
    );
    // the commit took effect on the fleet: "not committed" here told the bridge writes may go back
    // on the source (it said so before 2026-12-01's fix, src/run/earlier.ts fromJournal)
    expect(r.second.all).toMatch(/■ run ok .*· committed · not verified/);
    expect(r.status.journal.verifier?.verified ?? false).toBe(false);
    expect(r.status.journal.finished).toMatchObject({ committed: true, verified: false });
    expect(r.statusText).toMatch(/run ended ok \(committed\)/);
    expect(r.statusText).not.toMatch(/· verified/);
    // the run's own report and the cutover's (every journal of it), and the watch fold
    for (const rep of [r.own.json, r.cutover]) {
      expect(rep.verification.verified).toBe(false);
      expect(rep.committed).toBe(true);
    }
    const html = readFileSync(join(r.dir, "cutover", "report.html"), "utf8");
    expect(html).toContain('data-verified="false"');
    expect(readFileSync(join(r.dir, "cutover", "junit.xml"), "utf8")).toMatch(/not verified/);
    expect(r.feed.fold.view().cutover.committed).toBe(true);
  }, 120_000);

  it("--allow-changed-runbook before the cutover's end: every reader says what the run's end says", async () => {
    const r = await twoRuns("after", "gate", { edit: true, flags: ["--allow-changed-runbook"] });
    // what the run counted, in its own words (today the flag goes on only after the cutover's
    // end, src/run/earlier.ts afterItsCommit: this run counts only the commit, "committed · not verified")
    const end = /■ run ok .*· (not committed|committed) · (not verified|verified)/.exec(r.second.all);
    expect(end, r.second.all).not.toBeNull();
    const committed = end![1] === "committed";
    const verified = end![2] === "verified";
    expect(r.status.journal.finished).toMatchObject({ committed, verified });
    for (const rep of [r.own.json, r.cutover]) expect(rep.verification.verified).toBe(verified);
    // the first run's commit took effect: the run counts it (fromJournal), and every reader says so
    expect(committed).toBe(true);
    expect(r.cutover.committed).toBe(true);
    expect(r.feed.fold.view().cutover.committed).toBe(true);
  }, 120_000);

  it("--allow-changed-runbook after the cutover committed: the run carries what the journal established, and every reader says so", async () => {
    const r = await twoRuns("after", "gate", {
      edit: true,
      go: true,
      flags: ["--allow-changed-runbook"],
      continues: /cutover: this run continues cutover .*it committed/,
    });
    expect(r.first.all).toMatch(/■ run ok .*· committed · verified/);
    expect(r.second.all).toMatch(/■ run ok .*· committed · verified/);
    expect(r.status.journal.finished).toMatchObject({ committed: true, verified: true });
    expect(r.statusText).toMatch(/run ended ok \(committed\) · verified/);
    for (const rep of [r.own.json, r.cutover]) {
      expect(rep.verification.verified).toBe(true);
      expect(rep.committed).toBe(true);
    }
    expect(r.cutover.verification).toMatchObject({ verified: true, step: "verify" });
    expect(r.feed.fold.view().cutover.committed).toBe(true);
  }, 120_000);
});
