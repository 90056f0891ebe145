/**
 * An instance restarted during the commit while no runner was alive: the runner killed with the
 * fleet COMMITTING, an instance down and up, then `--resume`. Nothing refused a read and no
 * INITIALIZING was seen (before 1.20 a restart shows none), and the resume turned the application's
 * writes on and ended ok (an adversarial run, reproduced here). Its `totalEventsApplied` went down:
 * the count "is not persisted" (mongodb/docs content/mongosync/current/source/includes/api/tables/
 * progress-response.rst), so the process restarted between the two reads, a time that meets the
 * commit's; the documentation says the migration must then be restarted to be verified
 * (src/fleet/window.ts `StoppedInCommit`). The built CLI against the simulator over loopback.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cli, startCli } from "../support/run.js";
import {
  cleanedUpAfterAll,
  COMMIT,
  COMMITTED,
  cutoverYaml,
  DRAINED,
  fastSim,
  READY,
  START,
  STOP,
  tempDir,
} from "../support/crash-harness.js";

const made = cleanedUpAfterAll();
const secretOf = (s: { verifierUrl: string }): string => s.verifierUrl.replace("http://", "http://ops:pa55word@");
const APP_ON = "  - { id: app-on, hook: { use: sim-writes, with: { enabled: true }, writesOn: true } }\n";

describe("an instance restarted during the commit while no runner was alive", () => {
  /** The cutover of `steps` killed at COMMITTING, instance 0 restarted while no runner lived, the clock going again. */
  async function restartedUnwatched(steps: string, secretSwitch = false) {
    const s = await fastSim({ instances: 2 });
    made.sims.push(s);
    // COMMITTING lasts the lag at the commit: at 200× a drained lag of a second or two is 5 to
    // 10 ms, which the 5 ms poll below missed twice in CI (the fleet went on to COMMITTED unseen,
    // "the fleet never reached COMMITTING"). Held at 10 s, the waits' bounds above it, it lasts 50 ms
    s.control.addFault("lag-floor=10");
    const dir = tempDir();
    made.dirs.push(dir);
    // a switch --var given with a password: declared at a default that is no switch of this fleet
    const yaml = cutoverYaml(s, { steps: steps.replaceAll(/lagBelow: \d+/g, "lagBelow: 15") });
    writeFileSync(
      join(dir, "rb.yaml"),
      secretSwitch ? yaml.replace(/^steps:\n/m, 'vars: { switch: "http://127.0.0.1:9" }\nsteps:\n') : yaml,
    );
    const vars = secretSwitch ? ["--var", `switch=${secretOf(s)}`] : [];
    const runner = startCli(["run", "rb.yaml", "--renderer", "simple", ...vars], { cwd: dir });
    // the fleet COMMITTING: the clock stops (COMMITTING then lasts), the runner is killed
    const deadline = Date.now() + 60_000;
    while (!s.control.state().instances.some((i) => i.state === "COMMITTING")) {
      expect(Date.now(), "the fleet never reached COMMITTING").toBeLessThan(deadline);
      await new Promise((r) => setTimeout(r, 5));
    }
    s.control.setTimeScale(0);
    const frozen = s.control.state().instances.map((i) => i.state);
    // a read or two of COMMITTING journaled first, with its count of events applied
    await new Promise((r) => setTimeout(r, 300));
    runner.child.kill("SIGKILL");
    const killed = await runner.done;
    // the case this file is about: the runner killed before the fleet was COMMITTED (a CI run once
    // saw its resume find the COMMITTED wait done; this says so with what the runner printed)
    expect(frozen, killed.all).toContain("COMMITTING");
    expect(killed.all, `frozen at ${frozen.join(", ")}`).not.toMatch(/✔ \[\d+\/\d+\] Wait for state COMMITTED/);
    // no runner alive: instance 0 restarts, and the commit goes on
    await s.control.down(0);
    await s.control.up(0);
    s.control.setTimeScale(200);
    return { s, dir };
  }

  it("the resume sees its events applied go down and refuses the writes-on hook (stopped-in-commit); status says it and offers the new cutover, then the forced resume", async () => {
    const { s, dir } = await restartedUnwatched(START + READY + STOP + DRAINED + COMMIT + COMMITTED + APP_ON);
    const resume = await cli(["run", "rb.yaml", "--renderer", "simple", "--resume"], { cwd: dir });
    expect(resume.code, resume.all).toBe(3);
    expect(resume.all).toMatch(
      /sync0 reported fewer events applied at .* than at .* \(the count is not persisted: its process restarted in between/,
    );
    expect(resume.all).toMatch(/stopped-in-commit/);
    // the run's end: the documented way first, the forced one for one who accepts it
    expect(resume.all).toContain(
      "  the migration must be restarted to be verified (a new sync to an emptied destination), then: syncbook run rb.yaml --new-cutover (a plain --resume is refused again at the writes-on hook or verify step); ONLY if",
    );
    expect(s.control.state().writes.enabled, "the application was not told to write").toBe(false);
    const status = await cli(["status", "rb.yaml", "--json"], { cwd: dir });
    const j = (
      JSON.parse(status.stdout) as { journal: { stoppedInCommit?: unknown; next?: { runs: { args: string }[] } } }
    ).journal;
    expect(j.stoppedInCommit).toMatchObject({ instance: "sync0", how: "restarted", refused: true });
    // the documented way first (a new cutover once the migration was restarted), the forced one for one who accepts it
    expect(j.next?.runs.map((r) => r.args)).toEqual(["--new-cutover", "--resume --force=stopped-in-commit"]);
    // pasted before the migration was restarted: its start's interlock finds the fleet not IDLE, nothing sent
    const fresh = await cli(["run", "rb.yaml", "--renderer", "simple", "--new-cutover"], { cwd: dir });
    expect(fresh.code, fresh.all).toBe(3);
    expect(fresh.all).toMatch(/fleet-idle/);
    expect(s.control.state().instances.map((i) => i.state)).toEqual(["COMMITTED", "COMMITTED"]);
  }, 120_000);

  // a review of every command the product prints: the new cutover checks no value against this
  // one's, so a secret --var left out of it is read at the runbook's default, another fleet (here
  // another switch). The run's end and status name it as the cutover had it, masked, and say so.
  it("with a --var that holds a secret: the run's end and status name it in the new cutover, masked, and never show it", async () => {
    const appOn =
      '  - { id: app-on, hook: { use: sim-writes, with: { url: "${vars.switch}", enabled: true }, writesOn: true } }\n';
    const { s, dir } = await restartedUnwatched(START + READY + STOP + DRAINED + COMMIT + COMMITTED + appOn, true);
    const secret = secretOf(s);
    const masked = s.verifierUrl.replace("http://", "http://***@");
    const resume = await cli(["run", "rb.yaml", "--renderer", "simple", "--resume", "--var", `switch=${secret}`], {
      cwd: dir,
    });
    expect(resume.code, resume.all).toBe(3);
    expect(resume.all).not.toContain("pa55word");
    expect(resume.all).toContain(
      `then: syncbook run rb.yaml --var 'switch=${masked}' --new-cutover (a --var shown with *** holds a secret: set each as that run did) (a plain --resume`,
    );
    // the forced --resume beside it leaves it out: still said how to give it
    expect(resume.all).toMatch(/note: these commands leave out --var switch, which holds a secret/);
    const status = await cli(["status", "rb.yaml"], { cwd: dir });
    expect(status.all).not.toContain("pa55word");
    expect(status.stdout).toContain(`    syncbook run rb.yaml --new-cutover --var 'switch=${masked}'\n`);
    expect(status.stdout).toContain(
      "warning: one command offered shows --var switch as the cutover's runs journaled it, with a secret (shown as ***), and the others leave it out: set it in each as its runs were given it",
    );
    const json = JSON.parse((await cli(["status", "rb.yaml", "--json"], { cwd: dir })).stdout) as {
      journal: { next: { runs: { args: string; does: string }[] } };
    };
    expect(json.journal.next.runs[0]!.args).toBe(`--new-cutover --var 'switch=${masked}'`);
    expect(json.journal.next.runs[0]!.does).toMatch(
      /\(a --var shown with \*\*\* holds a secret: set each as that run did\)$/,
    );
    expect(json.journal.next.runs[1]!.args).toBe("--resume --force=stopped-in-commit");
  }, 120_000);

  // "If mongosync stops during commit, before the /progress endpoint reports canWrite: true, you
  // must restart the entire migration to ensure that it's verified" (docs-cluster-to-cluster-sync
  // source/includes/fact-verification.rst): a verify that passes after it does not ensure it
  it("forced on (--force=stopped-in-commit), the cutover is never verified: the run's end, status and the report say why", async () => {
    const { s, dir } = await restartedUnwatched(
      START + READY + STOP + DRAINED + COMMIT + COMMITTED + APP_ON + "  - { id: verify, verify: {} }\n",
    );
    const refused = await cli(["run", "rb.yaml", "--renderer", "simple", "--resume"], { cwd: dir });
    expect(refused.code, refused.all).toBe(3);
    const forced = await cli(
      ["run", "rb.yaml", "--renderer", "simple", "--resume", "--force=stopped-in-commit", "--report", "rep"],
      { cwd: dir },
    );
    // the simulator's verifier finds what the restart during the commit left behind; whatever it
    // finds, the cutover's verdict says why it cannot be verified
    expect(forced.code, forced.all).toBe(1);
    expect(forced.all).toMatch(
      /· not verified \(sync0 stopped during the commit before the destination took writes: the documentation says the entire migration must then be restarted to ensure that it is verified\)/,
    );
    expect(s.control.state().writes.enabled).toBe(true);
    const report = JSON.parse(readFileSync(join(dir, "rep", "report.json"), "utf8")) as {
      verification: { verified: boolean; why?: string };
    };
    expect(report.verification).toMatchObject({
      verified: false,
      why: expect.stringMatching(/^sync0 stopped during the commit/),
    });
    const status = await cli(["status", "rb.yaml"], { cwd: dir });
    expect(status.all).toMatch(/ {2}verification: not verified \(sync0 stopped during the commit/);
    // --json's verdict is the rule's, not "a verify passed" (a review: `verified: true` beside the why)
    const json = JSON.parse((await cli(["status", "rb.yaml", "--json"], { cwd: dir })).stdout) as {
      journal: { verifier: { passed: boolean; verified: boolean; why?: string } };
    };
    expect(json.journal.verifier).toMatchObject({
      verified: false,
      why: expect.stringMatching(/^sync0 stopped during the commit/),
    });
    // the verify itself passed or not, as the simulator's verifier found it: said apart
    expect(typeof json.journal.verifier.passed).toBe("boolean");
  }, 120_000);

  it("a runbook with no writes-on hook: the resume ends ok, and its end says the instance restarted and the migration must be restarted", async () => {
    const { dir } = await restartedUnwatched(START + READY + STOP + DRAINED + COMMIT + COMMITTED);
    const resume = await cli(["run", "rb.yaml", "--renderer", "simple", "--resume"], { cwd: dir });
    expect(resume.code, resume.all).toBe(0);
    const end = resume.all.slice(resume.all.lastIndexOf("run ok"));
    expect(end).toMatch(
      /warning: sync0 reported fewer events applied .*; the migration must be restarted to be verified \(a new sync to an emptied destination\)/,
    );
  }, 120_000);
});
