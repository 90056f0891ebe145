/**
 * A reverse ends the verification before it. A runbook that commits, verifies, reverses, commits
 * the sync that runs the other way and verifies again ended "committed · verified" without a
 * second verification: its second check adopted the first one's accepted check (the run's memory
 * kept it across the reverse), and its second verify passed at once on the result from before the
 * reverse (found by an adversarial run). What a verifier compared before a reverse does not
 * speak for the sync after it; a verifier that finished a verification takes no second check
 * (it exits: service facts), so the second check is refused with the way on, and a run that ends
 * after the second commit says "not verified" and why. The same after a kill -9 and `--resume`
 * that adopts the reverse (the journal's fold, src/journal/verifier.ts). The built CLI against
 * the simulator over loopback.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cli, startCli } from "../support/run.js";
import {
  CHECK,
  cleanedUpAfterAll,
  COMMIT,
  COMMITTED,
  DRAINED,
  READY,
  STOP,
  until,
  VERIFY,
  cliCutover,
  REVERSE,
  START_REV,
  STOP_AGAIN,
  DRAINED_AGAIN,
  COMMIT_AGAIN,
} from "../support/crash-harness.js";

const made = cleanedUpAfterAll();

/** The sync that runs the other way: its own write stop, wait, commit. */
const SECOND = STOP_AGAIN + DRAINED_AGAIN + COMMIT_AGAIN;
const VERIFY_AGAIN = "  - { id: check-again, startVerification: {} }\n  - { id: verify-again, verify: {} }\n";
const FIRST = START_REV + READY + CHECK + STOP + DRAINED + COMMIT + COMMITTED + VERIFY;

async function cutover(steps: string, faults: string[] = []) {
  const c = await cliCutover(made, faults, steps);
  const checks = () => c.s.control.counts().verifier["POST /api/v1/check"] ?? 0;
  return { ...c, checks };
}

const REFUSED =
  /the verifier already finished a verification \(.*\), of the sync before the reverse \(step rollback\): it does not verify the sync that runs the other way, and a check now would make it exit, so none is sent/;

describe("a reverse ends the verification before it", () => {
  it("a second check after the reverse is refused (the verifier finished the first), never adopted; no second verify passes on the first result", async () => {
    const { s, dir, file, jd, args, checks } = await cutover(FIRST + REVERSE + SECOND + VERIFY_AGAIN);
    const report = join(dir, "report");
    const r = await cli(args("--report", report), { cwd: dir });
    expect(r.code, r.all).toBe(1);
    expect(r.all, r.all).toMatch(/✔ \[8\/16\] Verify the destination against the source ok/);
    expect(r.all, r.all).toMatch(REFUSED);
    expect(r.all, r.all).toContain("Restart it for the reversed sync, its --srcURI and --dstURI swapped, with --clean");
    expect(r.all, r.all).toMatch(/step check-again failed/);
    expect(r.all, r.all).not.toMatch(/· verified ·/);
    expect(r.all, r.all).toMatch(/not verified \(a reverse was sent \(step rollback\)/);
    // one check, the first verification's: none sent to a verifier that finished
    expect(checks(), r.all).toBe(1);
    expect(s.control.state().instances.map((i) => i.state)).toEqual(["COMMITTED"]);
    const json = JSON.parse(readFileSync(join(report, "report.json"), "utf8")) as {
      verification: { verified: boolean; why?: string; headline?: string };
    };
    // committed: the banner's verdict too (src/steps/kit/earned.ts verificationShown)
    expect(json.verification).toEqual({
      verified: false,
      why: expect.stringMatching(/^a reverse was sent \(step rollback\)/) as unknown,
      headline: "NOT VERIFIED",
    });
    const st = await cli(["status", file, "--journal-dir", jd], { cwd: dir });
    expect(st.stdout, st.all).toMatch(/not verified/);
    expect(st.stdout, st.all).not.toMatch(/· verified/);
  }, 120_000);

  it("a run that ends after the second commit: committed, not verified, and why (it said verified on the first sync's result)", async () => {
    const { dir, file, jd, args, checks } = await cutover(FIRST + REVERSE + SECOND);
    const r = await cli(args(), { cwd: dir });
    expect(r.code, r.all).toBe(0);
    expect(r.all, r.all).toMatch(
      /run ok in .* · committed · not verified \(a reverse was sent \(step rollback\): the verification before it does not speak for the sync that runs now, and no `verify` step passed since\)/,
    );
    expect(checks(), r.all).toBe(1);
    // status reads the verifier as the run left it: the verification it shows is the one before the reverse
    const st = await cli(["status", file, "--journal-dir", jd], { cwd: dir });
    expect(st.stdout, st.all).toContain(
      "not this cutover's verification result: a reverse was sent (step rollback) since this cutover's last check: what the verifier shows is the sync's before it, and no check since reached it",
    );
    expect(st.stdout, st.all).toContain(
      "  verification: not verified (a reverse was sent (step rollback): the verification before it does not speak for the sync that runs now, and no `verify` step passed since)",
    );
  }, 120_000);

  it("a check still running from before the reverse (no verify before it) is not adopted by the second check", async () => {
    const { dir, args, checks } = await cutover(
      START_REV + READY + CHECK + STOP + DRAINED + COMMIT + COMMITTED + REVERSE + SECOND + VERIFY_AGAIN,
    );
    const r = await cli(args(), { cwd: dir });
    expect(r.code, r.all).toBe(1);
    expect(r.all, r.all).toMatch(
      /the verifier is already checking \(.*\), and a reverse was sent \(step rollback\) since this cutover's last verification began: this may be that verification, of the sync before the reverse, so it is not adopted/,
    );
    expect(r.all, r.all).not.toMatch(/· verified ·/);
    expect(checks(), r.all).toBe(1);
  }, 120_000);

  it("kill -9 with the reverse on its way, then --resume adopts it: the journal's verification ends there too", async () => {
    const { s, dir, args, checks } = await cutover(FIRST + REVERSE + SECOND + VERIFY_AGAIN, ["latency=4s@0/reverse"]);
    const reverses = () => s.control.counts().instances[0]?.["POST /api/v1/reverse"] ?? 0;
    const one = startCli(args(), { cwd: dir });
    await until("the reverse arrives", () => reverses() === 1, 60_000);
    one.child.kill("SIGKILL");
    const first = await one.done;
    const report = join(dir, "report");
    const second = await cli(args("--resume", "--report", report), { cwd: dir });
    const where = `${first.all}\n--- resume\n${second.all}`;
    expect(second.all, where).toMatch(/skipped: adopted: reverse took effect/);
    expect(reverses(), where).toBe(1);
    expect(second.code, where).toBe(1);
    expect(second.all, where).toMatch(REFUSED);
    expect(second.all, where).not.toMatch(/· verified ·/);
    expect(checks(), where).toBe(1);
    // the report reads the adopted reverse as the run did
    const json = JSON.parse(readFileSync(join(report, "report.json"), "utf8")) as {
      verification: { verified: boolean; why?: string };
    };
    expect(json.verification.why, where).toMatch(/^a reverse was sent \(step rollback\)/);
  }, 120_000);

  // an outside review: --from reads no fleet, and counted the write stop, commit and verification of
  // the sync before a reverse that the runner died sending: --from commit-again would commit the
  // reversed sync with writes on its source never stopped, and its verify pass on the old result
  it("kill -9 with the reverse on its way, then --from the second commit: refused before anything runs, --resume named", async () => {
    const { s, dir, file, jd, args } = await cutover(FIRST + REVERSE + SECOND + VERIFY_AGAIN, ["latency=4s@0/reverse"]);
    const reverses = () => s.control.counts().instances[0]?.["POST /api/v1/reverse"] ?? 0;
    const commits = () => s.control.counts().instances[0]?.["POST /api/v1/commit"] ?? 0;
    const one = startCli(args(), { cwd: dir });
    await until("the reverse arrives", () => reverses() === 1, 60_000);
    one.child.kill("SIGKILL");
    const first = await one.done;
    await until("the sync runs the other way", () => s.control.state().instances[0]?.state === "RUNNING", 60_000);
    const from = await cli(args("--from", "commit-again", "--yes"), { cwd: dir });
    const where = `${first.all}\n--- --from commit-again\n${from.all}`;
    expect(from.all, where).toMatch(
      /cannot go on with the cutover of .* from commit-again: its journal shows a reverse \(step 9 "rollback"\) that may have reached the fleet and whose step did not end ok: the sync may run either way, and a --from run reads no fleet for it/,
    );
    expect(from.code, where).toBe(3);
    // with the journal folder this run was given: without it, the --resume offered reads another
    expect(from.all, where).toContain(
      `hint: Run syncbook run ${file} --journal-dir ${jd} --resume: it reads the fleet, adopts the reverse`,
    );
    // nothing ran: no step, no write stop
    expect(from.all, where).not.toMatch(/▶ \[/);
    expect(commits(), where).toBe(1);
    // the way it names: the reverse adopted, never sent again
    const resume = await cli(args("--resume", "--yes"), { cwd: dir });
    expect(resume.all, `${where}\n--- --resume\n${resume.all}`).toMatch(/skipped: adopted: reverse took effect/);
    expect(reverses()).toBe(1);
  }, 120_000);

  // an adversarial run: after a run that reversed the sync, `--from stop-writes` (a run that skips
  // the start) took the direction it first saw and committed the sync the other way round from
  // the runbook's start and its own confirm
  it("a run past the start meets a fleet syncing the other way: refused (fleet-identity), nothing sent", async () => {
    const { s, dir, file, jd, args } = await cutover(FIRST + REVERSE);
    const commits = () => s.control.counts().instances[0]?.["POST /api/v1/commit"] ?? 0;
    const one = await cli(args(), { cwd: dir });
    expect(one.code, one.all).toBe(0);
    expect(s.control.state().instances[0]?.state).toBe("RUNNING");
    // it committed, then reversed: "not committed" alone said it never committed
    expect(one.all, one.all).toMatch(/■ run ok .* · not committed since the reverse \(step rollback\) · /);
    // status: the destination that took writes is the reversed sync's source now (it said "the
    // destination takes writes since …", of the sync before the reverse)
    const st = await cli(["status", file, "--journal-dir", jd], { cwd: dir });
    expect(st.stdout, st.all).toMatch(
      /writes: the destination took writes from \S+ \(.*\) until the reverse \(step rollback\): the sync now runs the other way, from that cluster, and its destination takes writes only after its own commit/,
    );
    expect(st.stdout, st.all).not.toMatch(/the destination takes writes since/);
    const again = await cli(args("--from", "stop-writes", "--yes", "--new-cutover"), { cwd: dir });
    const where = `${one.all}\n--- --from stop-writes\n${again.all}`;
    expect(again.code, where).toBe(3);
    expect(again.all, where).toMatch(/the direction of the runbook's start step start, which this run begins after/);
    expect(commits(), where).toBe(1);
    // a --from after the reverse is the reversed sync's: either way round is legal there
    const after = await cli(args("--from", "reversed", "--new-cutover"), { cwd: dir });
    expect(after.code, after.all).toBe(0);
  }, 120_000);
});
