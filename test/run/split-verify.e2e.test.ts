/**
 * The documented way to finish a split commit (README, "one instance refused the commit":
 * `syncbook run x.yaml --from commit --only shard-c`) on a runbook whose verifier check started
 * before the commit (the recommended cutover: the check during change event application). The
 * `--from` run continues the cutover, so the check is this cutover's: its verify goes on from it,
 * as `--resume`'s would (src/run/earlier.ts carries the verifier's memory). Before, that run
 * committed, then refused the check its own cutover had started ("started outside this run, and
 * not adopted … generation 342"): committed, not verified, and only a new verification from
 * generation 0 could verify it.
 */
import { describe, expect, it } from "vitest";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Simulator } from "../../src/sim/index.js";
import { cli, startCli } from "../support/run.js";
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
 * A 3-instance fleet with `faults`, and the recommended cutover (the check before the write stop,
 * verify after COMMITTED) with `after` steps between the stop and drained, `before` steps between
 * COMMITTED and verify. `run` drives the built CLI in the runbook's folder.
 */
async function cutover(opts: { faults?: string[]; after?: string; before?: string } = {}): Promise<{
  sim: Simulator;
  dir: string;
  run: (...a: string[]) => ReturnType<typeof cli>;
}> {
  const sim = await fastSim({ instances: 3, timeScale: 100, graceMs: 120_000 });
  made.sims.push(sim);
  for (const f of opts.faults ?? []) sim.control.addFault(f);
  const dir = tempDir();
  made.dirs.push(dir);
  const file = join(dir, "rb.yaml");
  const steps =
    START +
    READY +
    CHECK +
    stopVia(sim.verifierUrl) +
    (opts.after ?? "") +
    DRAINED +
    COMMIT +
    COMMITTED +
    (opts.before ?? "") +
    VERIFY;
  writeFileSync(file, cutoverYaml(sim, { defaults: CLI_CUTOVER_DEFAULTS, steps }));
  return { sim, dir, run: (...a) => cli(["run", file, "--renderer", "simple", ...a], { cwd: dir }) };
}

/** A run whose commit sync2 refused: the fleet split, writes stopped; the fault then cleared. */
async function splitCommit(gate?: string): Promise<Awaited<ReturnType<typeof cutover>>> {
  const c = await cutover({ faults: ["commit-refused@2"], ...(gate ? { before: gate } : {}) });
  const first = await c.run();
  expect(first.code, first.all).toBe(1);
  expect(first.all).toContain("split: commit reached 2 of 3 instances (refused by sync2)");
  c.sim.control.clearFaults();
  return c;
}

describe("a split commit finished with --from commit --only, the verifier's check started before it", () => {
  it("the --from run commits to the one that refused and verifies on the cutover's own check", async () => {
    const { run, sim } = await splitCommit();
    const checks = (): number => sim.control.counts().verifier["POST /api/v1/check"] ?? 0;
    expect(checks()).toBe(1);
    const second = await run("--from", "commit", "--only", "sync2", "--yes");
    expect(second.code, second.all).toBe(0);
    expect(second.all).toMatch(/shows this cutover's verifier check \(accepted\): this run's verify goes on from it/);
    expect(second.all).not.toMatch(/not adopted/);
    expect(second.all).toMatch(/■ run ok .*· committed · verified/);
    // no second check: the verifier runs one verification per process
    expect(checks()).toBe(1);
  }, 120_000);

  it("a new cutover (--new-cutover) does not take the earlier cutover's check as its own", async () => {
    const { run, dir } = await splitCommit();
    // a new cutover knows nothing of the old one's write stop: forced past it, to reach its verify
    const second = await run(
      "--from",
      "commit",
      "--only",
      "sync2",
      "--yes",
      "--new-cutover",
      "--force",
      "writes-stopped",
    );
    expect(second.all).not.toMatch(/verifier check/);
    expect(second.all).toMatch(/the verifier is already checking, started outside this run, and not adopted/);
    expect(second.code, second.all).not.toBe(0);
    expect(second.all).toMatch(/committed · not verified/);
    // status's --resume says what it needs first: run as it is, that verify is refused again (a trial)
    const st = await cli(["status", join(dir, "rb.yaml")], { cwd: dir });
    expect(st.stdout).toMatch(
      /--resume\n\s+goes on with the cutover where its last run stopped: step \d+ verify runs again, once what its failure said is done: Its result would not verify this cutover\. Restart the verifier with --clean/,
    );
  }, 120_000);

  // an adversarial run: `--to` ended its cutover, so the write stop it left counted for nothing, a
  // `--resume` had "nothing to resume", and the advice after an --abort went round in a circle
  it("a run that stopped at --to leaves its cutover open: the next --from run continues it (its write stop and its check count), and so does --resume", async () => {
    const { sim, run } = await cutover();
    const first = await run("--to", "stop-writes");
    expect(first.code, first.all).toBe(0);
    const second = await run("--from", "drained", "--yes");
    expect(second.all).toMatch(/shows this cutover's writes stopped \(a stopWrites held, not undone\)/);
    expect(second.all).not.toMatch(/this run counts nothing from it/);
    expect(second.code, second.all).toBe(0);
    expect(second.all).toMatch(/■ run ok .*· committed · verified/);
    expect(sim.control.counts().instances.map((c) => c["POST /api/v1/commit"] ?? 0)).toEqual([1, 1, 1]);
    const v = sim.control.counts().verifier;
    expect([v["POST /api/v1/check"], v["POST /api/v1/writesOff"]]).toEqual([1, 1]);
  }, 120_000);

  it("--resume after a run that stopped at --to goes on with the next step; after an --abort of it, too", async () => {
    const { sim, run } = await cutover();
    const first = await run("--to", "stop-writes");
    expect(first.code, first.all).toBe(0);
    expect(first.all).toMatch(/· writes stopped/);
    // called off: the write stop's undo runs (writes back on), and the way on it names works
    const aborted = await run("--abort");
    expect(aborted.code, aborted.all).toBe(0);
    expect(aborted.all).toContain("to go on with this cutover later: syncbook run");
    const resumed = await run("--resume", "--yes");
    expect(resumed.all).toMatch(/continuing at step 4\/\d+ "stop-writes"|continuing at step \d+\/\d+ "stop-writes"/);
    expect(resumed.code, resumed.all).toBe(0);
    expect(resumed.all).toMatch(/■ run ok .*· committed · verified/);
    expect(sim.control.counts().instances.map((c) => c["POST /api/v1/commit"] ?? 0)).toEqual([1, 1, 1]);
  }, 120_000);

  it("the --from run's own journal carries the check: a --resume of it verifies on the same check, with one check and one writesOff in all", async () => {
    // a gate between the commit and the verification that fails until a file exists: the --from
    // run ends there, and --resume (which reads only that run's journal) goes on to verify
    const gateDir = tempDir();
    made.dirs.push(gateDir);
    const ok = join(gateDir, "gate-ok");
    const GATE = `  - { id: gate, hook: { use: shell, with: { command: [node, -e, "process.exit(require('fs').existsSync('${ok}') ? 0 : 1)"] } } }\n`;
    const { sim, run } = await splitCommit(GATE);
    const second = await run("--from", "commit", "--only", "sync2", "--yes");
    expect(second.code, second.all).toBe(1);
    expect(second.all).toMatch(/step gate failed/);
    writeFileSync(ok, "");
    const third = await run("--resume", "--yes");
    expect(third.code, third.all).toBe(0);
    expect(third.all).not.toMatch(/not adopted/);
    expect(third.all).toMatch(/■ run ok .*· committed · verified/);
    const v = sim.control.counts().verifier;
    expect([v["POST /api/v1/check"], v["POST /api/v1/writesOff"]]).toEqual([1, 1]);
  }, 120_000);

  it("after --abort the cutover is called off: a --from run is a new one and does not take the called-off cutover's check", async () => {
    // a gate after the write stop fails: the run ends inside the window, after the check
    const FAIL = '  - { id: gate, hook: { use: shell, with: { command: [node, -e, "process.exit(1)"] } } }\n';
    const { run } = await cutover({ after: FAIL });
    const first = await run();
    expect(first.code, first.all).toBe(1);
    expect(first.all).toMatch(/step gate failed/);
    const aborted = await run("--abort");
    expect(aborted.code, aborted.all).toBe(0);
    // writes are back on: only a forced interlock reaches the verify step of this new cutover
    const again = await run("--from", "commit", "--yes", "--force", "writes-stopped");
    expect(again.all).not.toMatch(/shows this cutover's verifier check/);
    expect(again.all).toMatch(/the verifier is already checking, started outside this run, and not adopted/);
    expect(again.code, again.all).not.toBe(0);
  }, 120_000);

  it("the verifier restarted between the two runs: the --from run follows the restart (a check to the new process, writesOff again) and verifies, as --resume does", async () => {
    const { run, sim } = await splitCommit();
    const r = await fetch(`${sim.verifierUrl}/sim/verifier/restart`, { method: "POST", body: "{}" });
    expect(r.ok).toBe(true);
    const second = await run("--from", "commit", "--only", "sync2", "--yes");
    expect(second.code, second.all).toBe(0);
    expect(second.all).toMatch(/the verifier restarted: a new process answers/);
    expect(second.all).toMatch(/■ run ok .*· committed · verified/);
    // the old process's check, then one to the new process: never two to one process
    expect(sim.control.counts().verifier["POST /api/v1/check"]).toBe(2);
  }, 120_000);
});

// an adversarial run: a verify that failed under continueOnError on a committed cutover was a dead
// end: --resume had "nothing to resume", --from verify was refused for want of a write stop, and
// its hint sent the operator to stop writes again and wait for canCommit on a COMMITTED fleet
describe("a verify that failed under continueOnError, after the cutover committed", () => {
  it("the run and status name --from verify; that run continues the cutover (its commit counts), with the runbook's timeout raised, and so does another after it", async () => {
    const sim = await fastSim({ instances: 3, timeScale: 100, graceMs: 120_000 });
    made.sims.push(sim);
    const dir = tempDir();
    made.dirs.push(dir);
    const file = join(dir, "rb.yaml");
    // the verifier's progress answers {"error": …} from the commit's end on: verify times out
    const fault = JSON.stringify({ spec: "verifier-progress-error@verifier" });
    const BREAK = `  - { id: break, hook: { use: shell, with: { command: [node, -e, ${JSON.stringify(
      `fetch(${JSON.stringify(`${sim.verifierUrl}/sim/faults`)}, { method: "POST", headers: { "content-type": "application/json" }, body: ${JSON.stringify(fault)} }).then((r) => process.exit(r.ok ? 0 : 1))`,
    )}] } } }\n`;
    const steps =
      START +
      READY +
      CHECK +
      stopVia(sim.verifierUrl) +
      DRAINED +
      COMMIT +
      COMMITTED +
      BREAK +
      "  - { id: verify, verify: { timeout: 2s }, continueOnError: true }\n" +
      '  - { id: announce, notify: "moved" }\n';
    writeFileSync(file, cutoverYaml(sim, { defaults: CLI_CUTOVER_DEFAULTS, steps }));
    const run = (...a: string[]): ReturnType<typeof cli> =>
      cli(["run", file, "--renderer", "simple", ...a], { cwd: dir });
    const first = await run();
    expect(first.code, first.all).toBe(0);
    expect(first.all).toMatch(/■ run ok .*· committed · not verified/);
    // the verify's own hint says --resume (a run that stops there); past it, that would not run it again
    expect(first.all).toContain(
      "step verify failed; continueOnError lets the run go on (--resume would not run this step again)",
    );
    expect(first.all).toContain(
      `step verify failed and the run went on past it (continueOnError); to run it again in this cutover (its commit counts): syncbook run ${file} --from verify`,
    );
    sim.control.clearFaults();
    // --resume has nothing to resume (the run finished ok): it names --from, not a new run
    const resumed = await run("--resume");
    expect(resumed.all).toContain(
      `hint: step 9 verify failed and the run went on past it (continueOnError): run it again in this cutover with: syncbook run ${file} --from verify`,
    );
    expect(resumed.code, resumed.all).toBe(0);
    // --from the commit is a new cutover's: refused for want of a write stop, and the way on is
    // not to stop writes again (its wait for canCommit would never end on a COMMITTED fleet)
    const recommit = await run("--from", "commit", "--yes");
    expect(recommit.code, recommit.all).toBe(3);
    expect(recommit.all).toContain(
      `every instance already shows COMMITTED: this cutover's commit went through before this run (an earlier run, or by hand); stopping writes again would wait for a canCommit that never comes. See the fleet and the journal: syncbook status ${file}`,
    );
    expect(recommit.all).not.toMatch(/--from stop-writes/);
    // in a journal folder without the cutover: refused (no writesOff sent), and the way on is not
    // to stop writes again (its readiness wait would wait for canCommit on a COMMITTED fleet)
    const elsewhere = await run("--from", "verify", "--journal-dir", join(dir, "elsewhere"));
    expect(elsewhere.code, elsewhere.all).toBe(3);
    expect(elsewhere.all).toContain(
      "if its runs journaled elsewhere, run again with --journal-dir <that folder>; if writes were stopped outside syncbook, say so in the runbook (writesStoppedExternally: true)",
    );
    expect(elsewhere.all).not.toMatch(/--from stop-writes|--resume/);
    expect(sim.control.counts().verifier["POST /api/v1/writesOff"] ?? 0).toBe(0);
    let told = await cli(["status", file], { cwd: dir });
    expect(told.all).toContain(`next:\n    syncbook run ${file} --from verify\n`);
    // the natural fix: the verify step's timeout raised in the runbook (another text)
    writeFileSync(file, readFileSync(file, "utf8").replace("verify: { timeout: 2s }", "verify: { timeout: 30s }"));
    told = await cli(["status", file], { cwd: dir });
    expect(told.all).toContain(`next:\n    syncbook run ${file} --from verify --allow-changed-runbook\n`);
    // refused before it runs: as a new cutover unasked it ended "not committed" (its notification
    // too) on the COMMITTED fleet
    const unflagged = await run("--from", "verify");
    expect(unflagged.code, unflagged.all).toBe(2);
    expect(unflagged.all).toContain(`cannot go on from verify: the runbook's last cutover committed (journal `);
    expect(unflagged.all).toContain(
      `and the runbook changed since that run: without --allow-changed-runbook this run would be a new cutover that counts nothing from it, not even its commit; nothing was sent`,
    );
    expect(unflagged.all).toContain(
      `hint: Go on with that cutover from verify (its commit counts): syncbook run ${file} --from verify --allow-changed-runbook. To start a new cutover on purpose instead (it counts nothing from the one that committed): syncbook run ${file} --from verify --new-cutover`,
    );
    expect(unflagged.all).not.toMatch(/■ run|not committed/);
    // a new cutover on purpose: said, with the command that goes on with the one that committed
    const fresh = await run("--from", "verify", "--new-cutover");
    expect(fresh.code, fresh.all).toBe(3);
    expect(fresh.all).toContain(
      `  to go on with the cutover that committed: syncbook run ${file} --from verify --allow-changed-runbook (without --new-cutover)`,
    );
    // the fleet must still show the commit: an instance that does not answer cannot be told
    sim.control.addFault("down@1");
    const down = await run("--from", "verify", "--allow-changed-runbook");
    expect(down.code, down.all).toBe(3);
    expect(down.all).toMatch(
      /refused \(fleet-state\): cutover \S+ committed \(journal .*\), but the fleet no longer shows its commit: sync1 does not answer \(http:\/\/127\.0\.0\.1:\d+: progress failed/,
    );
    sim.control.clearFaults();
    // Ctrl-C while that read waits on a slow instance: it ends at once, not at the request's time
    // limit (the read took no signal)
    const slowText = readFileSync(file, "utf8");
    writeFileSync(file, slowText.replace("requestTimeout: 1s", "requestTimeout: 30s"));
    const slow = sim.control.addFault("latency=20s@1/progress");
    const waiting = startCli(["run", file, "--renderer", "simple", "--from", "verify", "--allow-changed-runbook"], {
      cwd: dir,
    });
    await new Promise((r) => setTimeout(r, 2000));
    const askedAt = Date.now();
    waiting.child.kill("SIGINT");
    const stopped = await waiting.done;
    expect(Date.now() - askedAt, stopped.all).toBeLessThan(8000);
    expect(stopped.code, stopped.all).toBe(130);
    expect(stopped.all).not.toMatch(/■ run/);
    sim.control.removeFault(slow.id);
    writeFileSync(file, slowText);
    expect(told.all).not.toContain(`syncbook run ${file} --resume`);
    const toldJson = await cli(["status", file, "--json"], { cwd: dir });
    const next = (JSON.parse(toldJson.stdout) as { journal: { next?: { runs: { args: string }[] } } }).journal.next;
    expect(next?.runs.map((r) => r.args)).toEqual(["--from verify --allow-changed-runbook"]);
    expect(told.all).not.toContain("--abort");

    const second = await run("--from", "verify", "--allow-changed-runbook");
    expect(second.code, second.all).toBe(0);
    expect(second.all).toMatch(
      /cutover: this run continues cutover \S+ \(journal .*\): it committed, and --from verify comes after its commit/,
    );
    expect(second.all).not.toMatch(/counts nothing from it|refused/);
    expect(second.all).toMatch(/■ run ok .*· committed · verified/);
    // the journal of the run that continued it: its status tells the cutover as a whole
    const status = await cli(["status", file, "--json"], { cwd: dir });
    const j = (JSON.parse(status.stdout) as { journal: Record<string, unknown> }).journal;
    expect(j.destinationWrites, status.stdout).toMatchObject({ by: "committed" });
    expect(j.commitSent).toBe(true);
    expect(j).not.toHaveProperty("againFrom");
    expect(j).not.toHaveProperty("next");

    // it journaled what it counted: a run after it, which reads only its journal, counts it too
    const third = await run("--from", "verify");
    expect(third.code, third.all).toBe(0);
    expect(third.all).toMatch(/cutover: this run continues cutover/);
    expect(third.all).toMatch(/■ run ok .*· committed · verified/);
    const aborted = await run("--abort");
    expect(aborted.code, aborted.all).not.toBe(0);
    expect(aborted.all).toContain("The cutover's last run finished ok: nothing is left to finish or to undo");
    expect(sim.control.counts().instances.map((c) => c["POST /api/v1/commit"] ?? 0)).toEqual([1, 1, 1]);
  }, 120_000);
});
