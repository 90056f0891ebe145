/**
 * A verifier result that compared nothing is not a verification (src/steps/kit/earned.ts
 * `comparedNothing`, src/steps/verify.ts judge). A verifier started without `--verifyAll` or
 * `--srcNamespace` creates no task (migration-verifier v0.2.1 internal/verifier/check.go lines
 * 500-505, `CreateInitialTasksIfNeeded`: "if len(verifier.srcNamespaces) == 0 { return nil }"): its
 * generations end at once, no task fails, it goes idle after writesOff, and gen0Stats is all 0
 * (progress.go lines 81-97; summary.go lines 362-365). Before, every output said "verified" on it
 * (an outside conformance review). A check whose filter matches no document compares none either.
 * The simulator's verifier runs that way with `verifierNamespaces: "none"` and
 * `checkFilterMatches: "none"` (src/sim/README.md).
 */
import { describe, expect, it } from "vitest";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { SimulatorOptions } from "../../src/sim/index.js";
import { cli, watchState } from "../support/run.js";
import type { WatchState } from "../../src/watch/state.js";
import {
  CHECK,
  CLI_CUTOVER_DEFAULTS,
  COMMIT,
  COMMITTED,
  DRAINED,
  READY,
  START,
  STOP,
  VERIFY,
  cleanedUpAfterAll,
  cutoverYaml,
  fastSim,
  tempDir,
} from "../support/crash-harness.js";

const made = cleanedUpAfterAll();

interface Outcome {
  run: Awaited<ReturnType<typeof cli>>;
  status: { journal: { finished?: { verified: boolean }; verifier?: { verified: boolean } } };
  statusText: string;
  report: { verification: { verified: boolean; why?: string } };
  /** The writesOff requests the verifier received. */
  writesOff: number;
  /** The watch page's state (`/state.json`). */
  page: WatchState;
}

/** A full cutover (start … commit, COMMITTED, verify) against a simulator with these options. */
async function cutover(opts: SimulatorOptions, check = CHECK, verify = VERIFY): Promise<Outcome> {
  const sim = await fastSim({ instances: 1, timeScale: 100, graceMs: 120_000, ...opts });
  made.sims.push(sim);
  const dir = tempDir();
  made.dirs.push(dir);
  const file = join(dir, "rb.yaml");
  writeFileSync(
    file,
    cutoverYaml(sim, {
      defaults: CLI_CUTOVER_DEFAULTS,
      steps: START + READY + check + STOP + DRAINED + COMMIT + COMMITTED + verify,
    }),
  );
  const run = await cli(["run", file, "--renderer", "simple", "--yes", "--report", "rep"], { cwd: dir });
  const json = await cli(["status", "rb.yaml", "--json"], { cwd: dir });
  const text = await cli(["status", "rb.yaml"], { cwd: dir });
  return {
    run,
    status: JSON.parse(json.stdout) as Outcome["status"],
    statusText: text.all,
    report: JSON.parse(readFileSync(join(dir, "rep", "report.json"), "utf8")) as Outcome["report"],
    writesOff: sim.control.counts().verifier["POST /api/v1/writesOff"] ?? 0,
    page: await watchState(["rb.yaml"], dir),
  };
}

/** Not verified in every output: the run's end, status (JSON and text) and the report. */
function notVerifiedEverywhere(o: Outcome, why: string): void {
  const { run } = o;
  expect(run.code, run.all).toBe(1);
  expect(run.all).toContain(`not verified: ${why}`);
  // the run's end line (the report's paths follow it)
  const end = run.all.split("\n").filter((l) => /■ run /.test(l));
  expect(end, run.all).toHaveLength(1);
  expect(end[0]).toMatch(/■ run failed .*· committed · not verified \(/);
  expect(run.all).not.toMatch(/■ run ok|· verified/);
  // the cutover committed, and writesOff went: the result was read, and refused
  expect(o.writesOff).toBe(1);
  expect(o.status.journal.finished?.verified, JSON.stringify(o.status)).toBe(false);
  expect(o.status.journal.verifier?.verified ?? false).toBe(false);
  expect(o.statusText).not.toMatch(/verification: verified/);
  expect(o.statusText).toContain("verification: not verified");
  expect(o.report.verification.verified).toBe(false);
  // the watch page: the verdict as the report's, never "earned" of a generation after writesOff (a
  // trial: it said "result earned: generation 60 is after writesOff" under this refusal)
  expect(o.page.verification).toMatchObject({ verified: false, text: expect.stringMatching(/^not verified \(/) });
}

describe("a verifier result that compared nothing", () => {
  it("a verifier started without --verifyAll or --srcNamespace: exit 1, not verified, in the run, status and the report", async () => {
    const o = await cutover({ verifierNamespaces: "none" });
    notVerifiedEverywhere(o, "the verifier compared no collection");
    expect(o.run.all).toContain("gen0Stats.totalNamespaces 0");
    // the way on names the verifier's flags
    expect(o.run.all).toContain("Start the verifier again with --verifyAll");
  }, 120_000);

  it("a check whose filter matches no document: exit 1, not verified, in the run, status and the report", async () => {
    const filter = '{ filter: { tenant: "nobody" } }';
    const o = await cutover({ checkFilterMatches: "none" }, CHECK.replace("{}", filter), VERIFY.replace("{}", filter));
    notVerifiedEverywhere(o, `the check's filter {"tenant":"nobody"} matched no document`);
    expect(o.run.all).toMatch(/generation 0 compared 0 of about \d+/);
  }, 120_000);
});
