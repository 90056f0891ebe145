/**
 * A `--resume` that completes a split command sends it only to the instances that have not taken
 * it (src/run/resume.ts, `complete.only`): an earlier cutover's command on the others is no reason
 * to refuse it. It was judged as if it sent to the whole fleet, and refused: a split start (sync2
 * refused it), a new cutover's `--from start --to start --only sync2` refused again, and the
 * `--resume` that would complete it on sync2 alone was refused by the first cutover's start on
 * sync0 and sync1. An instance the completion would send to that the earlier command may have
 * reached is still refused. The new cutover's end, failed at that start (a step that sends a
 * command), offers the `--resume` and claims no refusal: the check of the whole fleet from that
 * step is not asked there (`failedSends`, src/cli/run.ts). The built CLI against the simulator over
 * loopback.
 */
import { describe, expect, it } from "vitest";
import { cleanedUpAfterAll, posts, threeInstanceCutover } from "../support/crash-harness.js";

const made = cleanedUpAfterAll();

/**
 * A whole-cutover runbook on three instances, `faults` on its start; its run stopped at the start
 * (split), then a new cutover's start to sync2 alone (`more`: its arguments besides), refused
 * again (the fault still on sync2).
 */
async function splitStartTwice(faults: string[], more: string[] = []) {
  const c = await threeInstanceCutover([...faults, "http500@2/start"]);
  made.sims.push(c.sim);
  made.dirs.push(c.dir);
  const first = await c.run("--to", "start", "--yes");
  expect(first.code, first.all).toBe(1);
  expect(posts(c.sim, "start"), first.all).toEqual([1, 1, 1]);
  const only = await c.run("--new-cutover", "--from", "start", "--to", "start", "--only", "sync2", ...more, "--yes");
  const where = `${first.all}\n--- --new-cutover --from start --to start --only sync2\n${only.all}`;
  expect(only.code, where).toBe(1);
  expect(posts(c.sim, "start"), where).toEqual([1, 1, 2]);
  c.sim.control.clearFaults();
  return { ...c, where, only };
}

describe("a --resume completing a split command, after an earlier cutover's command on the other instances", () => {
  it("completes a start on the instance that refused it alone, and goes on: the earlier cutover's start on the others is not sent again", async () => {
    const c = await splitStartTwice([]);
    // the new cutover's end offers that --resume: the step that failed sends a command, which the
    // resume completes where the fleet shows it missing (src/cli/run.ts, `failedSends`), so the
    // end asks no check of that step to the whole fleet, which the earlier cutover's start on
    // sync0 and sync1 would refuse (a review: such a check claimed a refusal the resume never makes)
    expect(c.only.all, c.where).toMatch(/\n {2}resume with: syncbook run \S+ --resume\n/);
    expect(c.only.all, c.where).not.toContain("a --resume would be refused");
    // no-errors: the start the two refused (src/steps/commit.ts: "no instance answered with an error")
    const resume = await c.run("--resume", "--force", "no-errors", "--yes");
    const where = `${c.where}\n--- --resume\n${resume.all}`;
    expect(resume.all, where).not.toMatch(/cannot resume/);
    expect(resume.all, where).toContain("start to sync2 only (completing the start sync0, sync1 took it)");
    expect(resume.code, where).toBe(0);
    // the start reached sync2 alone; the commit after it the whole fleet, once
    expect(posts(c.sim, "start"), where).toEqual([1, 1, 3]);
    expect(posts(c.sim, "commit"), where).toEqual([1, 1, 1]);
    expect(c.sim.control.state().instances.map((i) => i.state)).toEqual(["COMMITTED", "COMMITTED", "COMMITTED"]);
  }, 180_000);

  it("an instance the completion would send to that the earlier cutover's start may have reached is still refused (exit 3), nothing sent", async () => {
    // the first cutover's start to sync0 lost its connection before it was handled: no answer,
    // never applied; the completion would send it there (sync0 is IDLE), where the journal cannot
    // say it never arrived
    // (sync0 IDLE: the new cutover's start to sync2 alone is forced past fleet-state)
    const c = await splitStartTwice(["reset@0/start"], ["--force", "fleet-state"]);
    const resume = await c.run("--resume", "--yes");
    const where = `${c.where}\n--- --resume\n${resume.all}`;
    expect(resume.code, where).toBe(3);
    expect(resume.all, where).toMatch(
      /cannot resume the last cutover at step "start": the journal .* of an earlier cutover, \S+, shows start \(step 1 "start"\) may have reached sync0 \(sync0 gave no usable answer\), and this resume would send it again/,
    );
    expect(posts(c.sim, "start"), where).toEqual([1, 1, 2]);
  }, 180_000);
});
