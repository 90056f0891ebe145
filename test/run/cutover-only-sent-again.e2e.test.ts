/**
 * A cutover-only runbook (no start: the sync was started by hand, or by an earlier runbook) run
 * without `--from` is in effect a `--from` its first step: it sends no start, so no fleet-idle
 * interlock stands between it and a commit an earlier cutover left on its way. A plain run (no
 * unfinished cutover) and a `--new-cutover` without `--from` sent commit a second time to the
 * instances holding a split commit's (their rounds open, RUNNING with canCommit true, so the
 * commit step's interlocks passed). They are refused as the `--from` run is, and the refusal never
 * offers the new cutover "from its start, whose interlock checks the fleet is IDLE" this runbook
 * does not have. The built CLI against the simulator over loopback.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Simulator } from "../../src/sim/index.js";
import { cli } from "../support/run.js";
import {
  CLI_CUTOVER_DEFAULTS,
  cleanedUpAfterAll,
  COMMIT,
  COMMITTED,
  commitToTheRefusingOnly,
  cutoverYaml,
  DRAINED,
  fastSim,
  posts,
  READY,
  stopVia,
  tempDir,
} from "../support/crash-harness.js";

const made = cleanedUpAfterAll();

/** Every instance started by hand: the cutover-only runbook finds the sync running. */
async function startByHand(s: Simulator): Promise<void> {
  for (const i of s.instances) {
    const r = await fetch(`${i.url}/api/v1/start`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ source: "cluster0", destination: "cluster1" }),
    });
    expect(r.ok, `start by hand on ${i.url}: ${r.status}`).toBe(true);
  }
}

/**
 * Three instances started by hand, a runbook from the wait for canCommit to COMMITTED (no start),
 * and its first run: commit split, refused by sync2, on its way to the other two (their rounds
 * stay open for the simulator's grace window).
 */
async function splitCommitOfCutoverOnly(extra = "") {
  const sim = await fastSim({ instances: 3, timeScale: 100, graceMs: 120_000 });
  made.sims.push(sim);
  const dir = tempDir();
  made.dirs.push(dir);
  const file = join(dir, "rb.yaml");
  writeFileSync(
    file,
    cutoverYaml(sim, {
      defaults: CLI_CUTOVER_DEFAULTS,
      steps: READY + extra + stopVia(sim.verifierUrl) + DRAINED + COMMIT + COMMITTED,
    }),
  );
  const run = (...a: string[]) => cli(["run", file, "--renderer", "simple", ...a], { cwd: dir });
  await startByHand(sim);
  sim.control.addFault("commit-refused@2");
  const first = await run("--yes");
  expect(first.code, first.all).toBe(1);
  expect(first.all).toContain("split: commit reached 2 of 3 instances (refused by sync2)");
  expect(posts(sim, "commit"), first.all).toEqual([1, 1, 1]);
  sim.control.clearFaults();
  return { sim, file, dir, run, first };
}

/** The refusal of a run that would send the commit again: nothing sent, and no way out this runbook lacks. */
function refusedTrue(r: { code: number | null; all: string }, sim: Simulator, where: string): void {
  expect(posts(sim, "commit"), where).toEqual([1, 1, 1]);
  expect(r.code, where).toBe(3);
  expect(r.all, where).toMatch(/may have reached sync0, sync1 .* a commit is never sent twice to an instance/);
  expect(r.all, where).not.toMatch(/▶ \[/);
  // this runbook sends no start: no new cutover "from its start" is offered
  expect(r.all, where).not.toMatch(/interlock checks the fleet is IDLE|without --from/);
}

describe("a cutover-only runbook (no start) run without --from, after a split commit", () => {
  it("a --new-cutover is refused by the unfinished cutover's journal (exit 3): it would send commit again", async () => {
    const c = await splitCommitOfCutoverOnly();
    const again = await c.run("--new-cutover", "--yes");
    const where = `${c.first.all}\n--- --new-cutover\n${again.all}`;
    refusedTrue(again, c.sim, where);
    expect(again.all, where).toMatch(
      /cannot start a new cutover at its first step, "ready" \(the runbook sends no start, whose interlock would check the fleet is IDLE\): the last cutover's journal .* shows commit \(step 4 "commit"\) may have reached sync0, sync1/,
    );
    // the ways on that are true: the last cutover's --resume, and the folder set aside after a restart by hand
    expect(again.all, where).toContain(
      `hint: Go on with the last cutover: syncbook run ${c.file} --resume reads the fleet`,
    );
    expect(again.all, where).toMatch(/set its folder aside .*: mv \S+ \S+\.set-aside/);
  }, 180_000);

  it("a plain run, once a newer cutover that sent no commit was called off, is refused by the split one's journal (exit 3)", async () => {
    // a hook step whose undo turns no writes on: a newer cutover that runs it acts
    const c = await splitCommitOfCutoverOnly(
      `  - { id: notice, hook: { use: shell, with: { command: [node, -e, "0"] }, undo: { use: shell, with: { command: [node, -e, "0"] } } } }\n`,
    );
    // a newer cutover that acts and sends no commit, then called off: no cutover is unfinished (one
    // whose write stop the abort would undo is not called off: that undo would turn writes on under
    // the held commit, test/run/abort.e2e.test.ts)
    const between = await c.run("--new-cutover", "--from", "notice", "--to", "notice", "--yes");
    let where = `${c.first.all}\n--- --new-cutover --from notice --to notice\n${between.all}`;
    expect(between.code, where).toBe(0);
    const abort = await c.run("--abort", "--yes");
    where += `\n--- --abort\n${abort.all}`;
    expect(abort.code, where).toBe(0);

    const plain = await c.run("--yes");
    where += `\n--- plain run\n${plain.all}`;
    refusedTrue(plain, c.sim, where);
    expect(plain.all, where).toMatch(
      /cannot start a new cutover at its first step, "ready" \(the runbook sends no start, whose interlock would check the fleet is IDLE\): the journal .* of an earlier cutover, \S+, shows commit \(step 5 "commit"\) may have reached sync0, sync1/,
    );
    // the instance that refused it, alone: the command that goes through
    expect(plain.all, where).toContain(
      `syncbook run ${c.file} --new-cutover --from stop-writes --only <the instances it did not reach>`,
    );
    await commitToTheRefusingOnly(c, where);
  }, 180_000);
});
