/**
 * A commit taken up by a resumed run stays the cutover's commit in every later run. The runner is
 * killed with the commit on its way (delayed), the commit takes effect while no runner lives, a
 * `--resume` adopts it (the fleet shows COMMITTED: not sent again) and is killed in its turn
 * during `verify`, and a second `--resume` finishes the cutover. That last run said "not
 * committed" and wrote `"committed": false` to report.json while the fleet was COMMITTED (an
 * outside review's adversarial run): the adoption lived only in the words of a `step.skipped`, and
 * the next resume counted the commit's unanswered request as neither sent ok nor accepted.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cli, startCli, type CliResult } from "../support/run.js";
import {
  cleanedUpAfterAll,
  COMMIT,
  COMMITTED,
  DRAINED,
  READY,
  START,
  STOP,
  until,
  VERIFY,
  cliCutover,
  REVERSE,
  START_REV,
} from "../support/crash-harness.js";

const made = cleanedUpAfterAll();
const cutover = (faults: string[], steps: string) => cliCutover(made, faults, steps);

const transcript = (...runs: CliResult[]): string =>
  runs.map((r, i) => `--- run ${i + 1}: exit ${r.code} ${r.signal ?? ""}\n${r.all}`).join("\n");

describe("a commit adopted by a resumed run", () => {
  it("counts as the cutover's commit in the run that finishes it: its last word, report.json and status say committed", async () => {
    // the commit is handled 4 s after it arrives; writesOff is answered 4 s late
    const { s, dir, file, jd, args } = await cutover(
      ["latency=4s@0/commit", "writes-off-slow=4s"],
      START + READY + STOP + DRAINED + COMMIT + COMMITTED + VERIFY,
    );
    const commits = () => s.control.counts().instances[0]?.["POST /api/v1/commit"] ?? 0;
    const writesOffs = () => s.control.counts().verifier["POST /api/v1/writesOff"] ?? 0;

    // 1. killed with the commit on its way
    const one = startCli(args(), { cwd: dir });
    await until("the commit arrives", () => commits() === 1, 30_000);
    one.child.kill("SIGKILL");
    const first = await one.done;
    // it takes effect while no runner lives
    await until("COMMITTED", () => s.control.state().instances[0]?.state === "COMMITTED", 30_000);

    // 2. the resumed run adopts it, and is killed during verify
    const two = startCli(args("--resume"), { cwd: dir });
    await until("writesOff arrives", () => writesOffs() === 1, 30_000);
    two.child.kill("SIGKILL");
    const second = await two.done;
    const where2 = transcript(first, second);
    expect(second.all, where2).toMatch(/Commit skipped: adopted: commit took effect/);
    expect(commits(), where2).toBe(1);

    // 3. the last resume finishes the cutover
    const report = join(dir, "report");
    const third = await cli(args("--resume", "--report", report), { cwd: dir });
    const where = transcript(first, second, third);
    expect(third.code, where).toBe(0);
    expect(third.all, where).toMatch(/run ok in .* · committed · verified · exit 0/);
    expect(third.all, where).not.toMatch(/not committed/);
    expect(commits(), where).toBe(1);
    const json = JSON.parse(readFileSync(join(report, "report.json"), "utf8")) as { committed: boolean };
    expect(json.committed, where).toBe(true);
    const st = await cli(["status", file, "--journal-dir", jd], { cwd: dir });
    expect(st.stdout, st.all).toMatch(/run ended ok \(committed\) · verified/);
  }, 120_000);

  // an adversarial run: the same reverse read "not committed" uninterrupted and "committed" (in
  // report.json too) when a resume adopted it; the sync that runs after a reverse is a new one
  it("a reverse adopted by a resume: not committed, as the run without the kill says", async () => {
    const { s, dir, file, jd, args } = await cutover(
      ["latency=4s@0/reverse"],
      START_REV + READY + STOP + DRAINED + COMMIT + COMMITTED + REVERSE,
    );
    const reverses = () => s.control.counts().instances[0]?.["POST /api/v1/reverse"] ?? 0;

    const one = startCli(args(), { cwd: dir });
    await until("the reverse arrives", () => reverses() === 1, 30_000);
    one.child.kill("SIGKILL");
    const first = await one.done;
    // status between the runs: the reverse is the last command, the commit before it still rules
    // out --abort (it refuses: after commit nothing is undone), and offers none
    const st = await cli(["status", file, "--journal-dir", jd], { cwd: dir });
    expect(st.stdout, st.all).toContain("(no --abort: a commit was sent, and after commit nothing is undone)");
    expect(st.stdout, st.all).not.toContain(`syncbook run ${file} --abort`);
    expect(st.stdout, st.all).not.toContain("writes stay stopped");
    const report = join(dir, "report");
    const second = await cli(args("--resume", "--report", report), { cwd: dir });
    const where = transcript(first, second);
    expect(second.code, where).toBe(0);
    expect(second.all, where).toMatch(/skipped: adopted: reverse took effect/);
    expect(reverses(), where).toBe(1);
    // the sync that runs since the reverse is not committed; the one before it was
    expect(second.all, where).toMatch(/■ run ok .* · not committed since the reverse \(step rollback\) · /);
    const json = JSON.parse(readFileSync(join(report, "report.json"), "utf8")) as { committed: boolean };
    expect(json.committed, where).toBe(false);
  }, 120_000);

  // the same reverse, its answer lost and progress not showing it for as long as the runner reads
  // (the simulator's late-effect): run 1 ends failed with it in doubt; once progress shows it, the
  // resume adopts it. report.json and JUnit read its step "failed"
  it("a reverse whose answer was lost, adopted by the resume: its step reads adopted in report.json and JUnit, not failed", async () => {
    const { s, dir, args, jd } = await cutover(
      ["late-effect=100000s@0/reverse"],
      START_REV + READY + STOP + DRAINED + COMMIT + COMMITTED + REVERSE,
    );
    const reverses = () => s.control.counts().instances[0]?.["POST /api/v1/reverse"] ?? 0;
    const summary = join(dir, "summary.md");
    const first = await cli(args(), { cwd: dir, env: { GITHUB_STEP_SUMMARY: summary } });
    expect(first.code, first.all).toBe(1);
    expect(reverses(), first.all).toBe(1);
    // its last word, its page and its job summary: committed, and the reverse in doubt after it
    // ("· committed ·" alone told the bridge the destination takes writes)
    const doubt =
      /committed; a reverse \(step rollback\) may have reached the fleet after it was committed \(its step did not end ok\): the sync may run the other way now, its destination taking writes only after its own commit/;
    expect(first.all, first.all).toMatch(new RegExp(`■ run failed .* · ${doubt.source} · `));
    const md = readFileSync(summary, "utf8");
    expect(md, md).toMatch(/FAILED AFTER COMMIT · ❔ REVERSE IN DOUBT/);
    expect(md, md).toMatch(
      /\| sync direction \| a reverse \(step rollback\) may have reached the fleet after it was committed/,
    );
    // and `syncbook report`'s line, from the journal
    const rep = await cli(["report", join(jd, "crash"), "--out", join(dir, "report-1")], { cwd: dir });
    const html = readFileSync(join(dir, "report-1", "report.html"), "utf8");
    expect(html).toMatch(/<h1>FAILED AFTER COMMIT · REVERSE IN DOUBT /);
    expect(html).toMatch(/<title>FAILED · REVERSE IN DOUBT · NOT VERIFIED · crash · syncbook report<\/title>/);
    expect(rep.stdout, rep.all).toMatch(
      /run failed, committed; a reverse \(step rollback\) may have reached the fleet after it was committed/,
    );
    // the reverse shows on progress now
    s.control.advance(100_001);
    const report = join(dir, "report");
    const second = await cli(args("--resume", "--report", report), { cwd: dir });
    const where = transcript(first, second);
    expect(second.code, where).toBe(0);
    expect(second.all, where).toMatch(/skipped: adopted: reverse took effect/);
    expect(reverses(), where).toBe(1);
    // the cutover's word is the one after a kill: the sync that runs since the reverse is not committed
    expect(second.all, where).toMatch(/■ run ok .* · not committed since the reverse \(step rollback\) · /);
    const json = JSON.parse(readFileSync(join(report, "report.json"), "utf8")) as {
      committed: boolean;
      steps: { id: string; outcome: string; attempts?: { outcome: string }[] }[];
    };
    expect(json.committed, where).toBe(false);
    const rollback = json.steps.find((x) => x.id === "rollback");
    expect(rollback?.outcome, where).toBe("skipped");
    expect(rollback?.attempts?.[0]?.outcome, where).toBe("failed");
    const junit = readFileSync(join(report, "junit.xml"), "utf8");
    expect(junit, where).toMatch(/failures="0" errors="0"/);
  }, 120_000);

  // an outside review: after a reverse, a run undoes the new sync's write stop if it fails (its
  // undo stack rearmed); the resume of a killed run registered no undo at all
  it("after a reverse, a resumed run that fails undoes the reverse sync's write stop, and never the one before the commit", async () => {
    const after =
      REVERSE +
      "  - { id: stop-again, stopWrites: { use: sim-writes, undo: { use: sim-writes, with: { enabled: true } } } }\n" +
      // killed during the nap; the gate fails in the resumed run
      "  - { id: nap, sleep: 5s }\n" +
      '  - { id: gate, hook: { use: shell, with: { command: [node, -e, "process.exit(3)"] } } }\n';
    const { s, dir, args } = await cutover([], START_REV + READY + STOP + DRAINED + COMMIT + COMMITTED + after);

    const one = startCli(args(), { cwd: dir });
    await one.waitFor(/▶ \[10\/11\] sleep/, 60_000);
    one.child.kill("SIGKILL");
    const first = await one.done;
    expect(s.control.state().writes.enabled, "the second write stop held when the runner died").toBe(false);
    const second = await cli(args("--resume"), { cwd: dir });
    const where = transcript(first, second);
    expect(second.code, where).toBe(1);
    expect(second.all, where).toMatch(/✖ \[11\/11\] .* failed/);
    expect(second.all, where).toMatch(/undo hook sim-writes started \(stop-again\)/);
    expect(second.all, where).not.toMatch(/undo hook sim-writes started \(stop-writes\)/);
    expect(s.control.state().writes.enabled, where).toBe(true);
  }, 120_000);
});
