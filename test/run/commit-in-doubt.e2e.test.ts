/**
 * A commit whose answers were lost after it took effect (service facts: "`commit` and `reverse`
 * block until they have been called on every instance"; the simulator's `late-effect`: applied,
 * answer dropped, progress showing the state before). Tried against the simulator: the run said
 * at once that the commit "may be holding", then ended "· not committed ·", and so did its
 * notification, the report (FAILED, `committed: false`) and the watch page, whose state left said
 * "its runner died with it on its way" of a run that had ended. "Not committed" on the bridge
 * says writes may go back on the source, which a commit that holds would lose. Every reader now
 * says "commit in doubt"; a commit every instance refused still says "not committed". The built
 * CLI against the simulator over loopback.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cli, watchState } from "../support/run.js";
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
const run = promisify(execFile);

async function cutover(faults: string[], instances: number) {
  const s = await fastSim({ instances, faults });
  made.sims.push(s);
  const dir = tempDir();
  made.dirs.push(dir);
  const notes = join(dir, "notes.jsonl");
  writeFileSync(
    join(dir, "rb.yaml"),
    cutoverYaml(s, {
      steps: START + READY + STOP + DRAINED + COMMIT + COMMITTED,
      head: `notify:\n  - { use: file, with: { path: ${JSON.stringify(notes)} }, on: [run.finished] }\n`,
    }),
  );
  const summary = join(dir, "summary.md");
  const r = await cli(["run", "rb.yaml", "--renderer", "simple", "--report", "rep"], {
    cwd: dir,
    env: { GITHUB_STEP_SUMMARY: summary },
  });
  const note = (JSON.parse(readFileSync(notes, "utf8").trim().split("\n").at(-1)!) as { text: string }).text;
  const report = JSON.parse(readFileSync(join(dir, "rep", "report.json"), "utf8")) as Record<string, unknown>;
  const html = readFileSync(join(dir, "rep", "report.html"), "utf8");
  const junit = readFileSync(join(dir, "rep", "junit.xml"), "utf8");
  return { s, dir, r, note, report, html, junit, summary: readFileSync(summary, "utf8") };
}

describe("a commit whose answers were lost after it took effect", () => {
  it('every reader says "commit in doubt", never "not committed"', async () => {
    // the effect never shows in progress while the test runs: only the lost answers are known
    const c = await cutover(["late-effect=100000s@*/commit"], 2);
    expect(c.r.code, c.r.all).toBe(1);
    // the service has it: both instances joined the round
    expect(c.s.control.state().instances.map((i) => i.state)).toEqual(["COMMITTED", "COMMITTED"]);
    expect(c.r.all).toMatch(/■ run failed in .* · commit in doubt: sent, not known to have taken effect · /);
    expect(c.r.all).not.toMatch(/not committed/);
    // the unwind's own word: writes must stay stopped, never "undo by hand" (an adversarial run)
    expect(c.r.all).toMatch(/nothing is undone, and writes must stay stopped, since back on the source they are lost/);
    expect(c.r.all).not.toMatch(/undo by hand/);
    expect(c.note).toMatch(/run failed \(commit in doubt: sent, not known to have taken effect\) after /);
    // writes stay stopped, never "undone … (--abort judges that)" beside a commit that may hold
    expect(c.note).toMatch(/a commit was sent and may hold, so writes must not go back on the source/);
    expect(c.note).not.toMatch(/--abort/);
    const status = await cli(["status", "rb.yaml"], { cwd: c.dir });
    expect(status.stdout, status.all).toMatch(
      /run ended failed \(commit in doubt: sent, not known to have taken effect\)/,
    );
    expect(c.report).toMatchObject({ committed: false, commitInDoubt: { instances: ["sync0", "sync1"] } });
    expect(c.html).toMatch(/<h1>FAILED · COMMIT IN DOUBT /);
    expect(c.html).toContain("commit in doubt: sent, not known to have taken effect: sync0, sync1 may hold it");
    expect(c.junit).toMatch(/<property name="commitInDoubt" value="true"/);
    expect(c.summary).toContain("### syncbook run crash: ❌ FAILED · ❔ COMMIT IN DOUBT");
    // the wave report, from the job's report: not "no" in its committed column
    const wave = await cli(["report", "--wave", join(c.dir, "rep"), "--out", join(c.dir, "wave"), "--quiet"], {
      cwd: c.dir,
    });
    expect(wave.code, wave.all).not.toBe(2);
    const waveJson = JSON.parse(readFileSync(join(c.dir, "wave", "wave.json"), "utf8")) as {
      runbooks: { committed?: boolean; commitInDoubt?: boolean }[];
    };
    expect(waveJson.runbooks).toMatchObject([{ committed: false, commitInDoubt: true }]);
    expect(readFileSync(join(c.dir, "wave", "wave.html"), "utf8")).toContain("<td>in doubt</td>");
    const page = await watchState(["rb.yaml"], c.dir);
    expect(page.model.cutover).toMatchObject({ committed: false, commitInDoubt: { instances: ["sync0", "sync1"] } });
    const left = page.runner.left.join("\n");
    expect(left).toMatch(/commit sent .* ago, in doubt: sync0, sync1 gave no usable answer/);
    expect(left).not.toMatch(/runner died|commit not sent/);
    // a --from run that carries that commit and sees no read settle it (its wait for COMMITTED
    // times out): the same words, not "not committed"
    const from = await cli(["run", "rb.yaml", "--renderer", "simple", "--from", "committed"], { cwd: c.dir });
    expect(from.code, from.all).toBe(1);
    expect(from.all).toMatch(/■ run failed in .* · commit in doubt: sent, not known to have taken effect · /);
    expect(from.all).not.toMatch(/not committed/);
  }, 120_000);

  it('a commit every instance refused: "not committed", no doubt', async () => {
    const c = await cutover(["commit-refused"], 1);
    expect(c.r.code, c.r.all).toBe(1);
    expect(c.s.control.state().instances.map((i) => i.state)).toEqual(["RUNNING"]);
    expect(c.r.all).toMatch(/■ run failed in .* · not committed · /);
    expect(c.r.all).not.toMatch(/in doubt/);
    expect(c.r.all).toMatch(/commit was sent and every instance refused it: nothing is undone here/);
    expect(c.note).toMatch(/run failed \(not committed\) after /);
    expect(c.report.commitInDoubt).toBeUndefined();
    expect(c.html).toMatch(/<h1>FAILED </);
    // nothing that could take writes: no verdict, as the report's banner (src/steps/kit/earned.ts verificationShown)
    expect(c.summary).toMatch(/### syncbook run crash: ❌ FAILED\n/);
    const page = await watchState(["rb.yaml"], c.dir);
    expect(page.model.cutover.commitInDoubt).toBeUndefined();
    expect(page.runner.left).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^commit sent .* ago, refused by every instance it reached: it took no effect$/),
      ]),
    );
  }, 120_000);

  // an adversarial run went round: --resume refused with no command, and the refusal of --from
  // commit offered `--from commit --only <their names>`, which the same check refuses. The way out
  // is the commit by hand to each instance whose log shows it never got one, then --resume.
  it("a commit lost before it reached the fleet: --resume gives each instance's commit by hand and the resume; pasted, the cutover ends committed", async () => {
    const c = await cutover(["reset@*/commit"], 2);
    expect(c.r.code, c.r.all).toBe(1);
    expect(c.s.control.state().instances.map((i) => i.state)).toEqual(["RUNNING", "RUNNING"]);
    const resume = await cli(["run", "rb.yaml", "--renderer", "simple", "--resume"], { cwd: c.dir });
    expect(resume.code, resume.all).not.toBe(0);
    expect(resume.all).toMatch(/sync0, sync1 may have received it \(no usable answer\)/);
    // a line per instance, pasteable as it is printed: the command, `&`, its instance as a comment
    const byHand = [...resume.all.matchAll(/^ {4}(curl .*) & {2}# (sync\d)$/gm)].map((m) => [m[2], m[1]!]);
    expect(byHand.map(([i]) => i)).toEqual(["sync0", "sync1"]);
    expect(resume.all).toContain("then resume (the journal then sees its effect): syncbook run rb.yaml --resume");
    // --from commit: no command of its own that the same check refuses
    const from = await cli(["run", "rb.yaml", "--renderer", "simple", "--from", "commit"], { cwd: c.dir });
    expect(from.code, from.all).toBe(3);
    expect(from.all).not.toMatch(/--only <their names>/);
    expect(from.all).toMatch(/refuses and gives the commands to send it by hand/);
    // the operator reads each instance's log: none got the commit (the fault dropped it unread)
    c.s.control.clearFaults();
    // the block pasted whole into a shell, as printed (a commit answers only once every instance has it)
    const block = resume.all.split("\n").filter((l) => /^ {4}curl .* & {2}# sync\d$/.test(l));
    const pasted = await run("sh", ["-c", `${block.join("\n")}\nwait`]);
    const answers = pasted.stdout.trim().split(/(?<=\})\s*(?=\{)/);
    expect(answers).toHaveLength(2);
    for (const a of answers) expect(JSON.parse(a)).toMatchObject({ success: true });
    const after = await cli(["run", "rb.yaml", "--renderer", "simple", "--resume"], { cwd: c.dir });
    expect(after.code, after.all).toBe(0);
    expect(after.all).toMatch(/adopted, not sent again/);
    expect(c.s.control.state().instances.map((i) => i.state)).toEqual(["COMMITTED", "COMMITTED"]);
  }, 120_000);
});
