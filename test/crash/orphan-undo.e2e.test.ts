/**
 * Issue 30, case 1: a runner killed (kill -9) while the undo of its stopWrites runs leaves the
 * undo running in its own process group. A slow undo (a feature flag service, a deployment
 * scale-up) then turns writes back on seconds later. `--resume` must not stop writes and commit
 * while that undo may still run: it waits the orphan out (it carries its call's token; its pid is
 * journaled), then runs stopWrites again and commits with writes really stopped.
 *
 * Shape: start, ready, stop-writes (shell: off; undo: shell, on after 4 s), hold (a shell hook
 * that blocks once, so the test can SIGTERM the run there), drained, commit, committed. SIGTERM
 * at hold makes the run undo (the slow undo starts), and kill -9 while it runs.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Simulator } from "../../src/sim/index.js";
import { cli, startCli, type CliResult } from "../support/run.js";
import { until } from "../support/sim.js";
import {
  cleanedUpAfterAll,
  COMMIT,
  COMMITTED,
  cutoverYaml,
  DRAINED,
  fastSim,
  KILL_RESUME_DEFAULTS,
  posts,
  READY,
  START,
  tempDir,
  writeSwitchSteps,
} from "../support/crash-harness.js";

const { sims, dirs } = cleanedUpAfterAll();

const UNDO_DELAY_MS = 4000;

/** The cutover with the slow write switch (its undo marks `undo-running`) and a hold before drained. */
function setUp(s: Simulator, afterCommit = ""): { dir: string; args: string[] } {
  const dir = tempDir();
  dirs.push(dir);
  const { stopWrites, hold } = writeSwitchSteps(dir, s.verifierUrl, {
    delayMs: UNDO_DELAY_MS,
    mark: join(dir, "undo-running"),
  });
  const file = join(dir, "rb.yaml");
  writeFileSync(
    file,
    cutoverYaml(s, {
      steps: START + READY + stopWrites + hold + DRAINED + COMMIT + afterCommit + COMMITTED,
      defaults: KILL_RESUME_DEFAULTS,
    }),
  );
  return { dir, args: ["run", file, "--renderer", "simple", "--journal-dir", join(dir, "journals")] };
}

describe("a slow undo left running by a killed runner", () => {
  it("is waited out before --resume stops writes and commits: no write is lost", async () => {
    const s = await fastSim({ instances: 2, timeScale: 100 });
    sims.push(s);
    const { dir, args } = setUp(s);
    const run = startCli(args, { cwd: dir });
    await run.waitFor(/hook shell started \(hold\)/, 30_000);
    await until(() => existsSync(join(dir, "held")), 20_000);
    run.child.kill("SIGTERM");
    // killed once the undo's process runs (not in the instant between its journal line and its spawn)
    await until(() => existsSync(join(dir, "undo-running")), 20_000);
    run.child.kill("SIGKILL");
    const first = await run.done;
    expect(first.signal).toBe("SIGKILL");
    // the orphaned undo has not switched writes on yet
    expect(s.control.state().writes.enabled).toBe(false);

    const resumes: CliResult[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await cli([...args, "--resume"], { cwd: dir });
      resumes.push(r);
      if (r.code === 0) break;
    }
    const where = resumes.map((r, i) => `--- resume ${i + 1}: exit ${r.code}\n${r.all}`).join("\n");
    expect(resumes.at(-1)!.code, where).toBe(0);
    const st = s.control.state();
    expect(
      st.instances.map((i) => i.state),
      where,
    ).toEqual(["COMMITTED", "COMMITTED"]);
    expect(st.writes.lost, where).toBe(0);
    // nothing in this runbook turns writes on after the cutover: the orphan's switch must not land behind it
    expect(st.writes.enabled, where).toBe(false);
    expect(posts(s, "commit"), where).toEqual([1, 1]);
    expect(posts(s, "start"), where).toEqual([1, 1]);
    expect(resumes[0]!.all, where).toMatch(/the undo of step 3 "stop-writes" \(shell; pid \d+\) is still running/);
    expect(resumes[0]!.all, where).toMatch(/hook processes have exited/);
  }, 90_000);

  it("after a commit, a resume runs no pre-commit step again (stopWrites, the canCommit wait)", async () => {
    const s = await fastSim({ instances: 2, timeScale: 100 });
    sims.push(s);
    const node = JSON.stringify(process.execPath);
    const { dir, args } = setUp(
      s,
      // a second hold right after the commit: the second run is killed there, commit sent
      `  - { id: hold2, hook: { use: shell, with: { command: [${node}, "HOLD", "HELD2"] } } }\n`,
    );
    // the placeholders: this runbook's own scripts
    const file = args[1]!;
    writeFileSync(
      file,
      readFileSync(file, "utf8")
        .replace('"HOLD"', JSON.stringify(join(dir, "hold.mjs")))
        .replace('"HELD2"', JSON.stringify(join(dir, "held2"))),
    );
    // 1: SIGTERM at hold: the run undoes stopWrites (the undo runs to its end)
    const run = startCli(args, { cwd: dir });
    await run.waitFor(/hook shell started \(hold\)/, 30_000);
    await until(() => existsSync(join(dir, "held")), 20_000);
    run.child.kill("SIGTERM");
    const first = await run.done;
    expect(first.all).toMatch(/undo hook shell ok/);
    // 2: --resume stops writes again and commits; kill -9 at hold2 (after the commit)
    const second = startCli([...args, "--resume"], { cwd: dir });
    await second.waitFor(/hook shell started \(hold2\)/, 40_000);
    await until(() => existsSync(join(dir, "held2")), 20_000);
    second.child.kill("SIGKILL");
    const r2 = await second.done;
    // the held hook outlives its runner; a resume would wait it out (case 1): it goes now
    process.kill(Number(readFileSync(join(dir, "held2"), "utf8")), "SIGKILL");
    expect(r2.all).toMatch(/commit sent/);
    // 3: --resume: the commit was sent, nothing before it runs again
    const third = await cli([...args, "--resume"], { cwd: dir });
    const where = `--- run\n${first.all}\n--- resume 1\n${r2.all}\n--- resume 2: exit ${third.code}\n${third.all}`;
    expect(third.code, where).toBe(0);
    expect(third.all, where).not.toMatch(/runs again: its undo started/);
    expect(third.all, where).not.toMatch(/hook shell started \(stop-writes\)/);
    expect(
      s.control.state().instances.map((i) => i.state),
      where,
    ).toEqual(["COMMITTED", "COMMITTED"]);
    expect(posts(s, "commit"), where).toEqual([1, 1]);
    expect(s.control.state().writes.lost, where).toBe(0);
  }, 120_000);
});
