/**
 * Issue 26, point 6: the operator after a failure, through the built CLI against the simulator.
 * - `--abort`: "one command that runs the journal's open undos (writes back on), sends no
 *   command to the service, and records the run as aborted in the journal, `status` and the
 *   report"; refused once commit may have reached the fleet.
 * - "after a refused commit, `--from commit --only <instance>` finishes the cutover when the
 *   journal shows this cutover's writes stopped and not undone" (and refuses when it does not).
 * - a commit refused for want of a write stop points at `--from <the stopWrites step>`, not at
 *   `--resume`, which would meet the same refusal (the loop the issue describes).
 * What the service received is read from the simulator's request counts.
 */
import { cell } from "../../src/cli/step-summary.js";
import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Simulator } from "../../src/sim/index.js";
import { inPty } from "../support/pty.js";
import { cli, startCli, watchState } from "../support/run.js";
import { CALLED_OFF_RESUME } from "../../src/next-run.js";
import {
  cleanedUpAfterAll,
  CLI_CUTOVER_DEFAULTS,
  cliCutover,
  COMMIT,
  COMMITTED,
  cutoverYaml,
  DRAINED,
  fastSim,
  posts,
  READY,
  START,
  START_REV,
  STOP,
  stopVia,
  tempDir,
  totalPosts,
  threeInstanceCutover,
} from "../support/crash-harness.js";

let s: Simulator | undefined;
afterEach(async () => {
  await s?.close();
  s = undefined;
});

/** The whole cutover against a fresh 3-instance fleet (test/support/crash-harness.ts); `s` is closed after each test. */
async function setup(
  faults: string[] = [],
  defaults?: string,
  afterStop?: string,
): ReturnType<typeof threeInstanceCutover> {
  const c = await threeInstanceCutover(faults, defaults, afterStop);
  s = c.sim;
  return c;
}

/**
 * A run killed with -9 in the drained wait (step 4), writes stopped: the lag stays at 4 s
 * (`lag-floor=4`), so ready (below 5) passes and drained (below 3) never does.
 */
async function killedInDrained(file: string, dir: string): Promise<void> {
  const child = startCli(["run", file, "--renderer", "simple"], { cwd: dir });
  await child.waitFor(/▶ \[4\/6\] waitFor/, 30_000);
  child.child.kill("SIGKILL");
  await child.done;
}

/** Every `run.finished` line of the runbook's journals, oldest journal first. */
function finishedLines(dir: string): Record<string, unknown>[] {
  const jdir = join(dir, ".syncbook", "crash");
  return readdirSync(jdir)
    .filter((f) => f.endsWith(".jsonl"))
    .sort()
    .flatMap((f) => readFileSync(join(jdir, f), "utf8").split("\n"))
    .filter((l) => l.includes('"run.finished"'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe("--abort", () => {
  it("after kill -9 before commit: the write stop is undone, nothing is sent to the service, the journal, status and report say aborted", async () => {
    // lag stays at 4 s: ready (below 5) passes, drained (below 3) never does: the run waits
    // there, writes stopped, until it is killed
    const { file, dir, run } = await setup(["lag-floor=4"]);
    await killedInDrained(file, dir);
    expect(s!.control.state().writes.enabled, "the write stop held when the runner died").toBe(false);
    const sent = totalPosts(s!);

    const summary = join(dir, "summary.md");
    const r = await cli(["run", file, "--renderer", "simple", "--abort"], {
      cwd: dir,
      env: { GITHUB_STEP_SUMMARY: summary },
    });
    expect(r.code, r.all).toBe(0);
    // the job summary's headline, as the terminal and the report say it (it said "❌ FAILED" over exit 0)
    // no commit was sent: no verdict after it, as the report's banner (src/steps/kit/earned.ts verificationShown)
    expect(readFileSync(summary, "utf8")).toMatch(/^### syncbook run crash: ⏹️ ABORTED\n/);
    // its steps are the cutover's: what run 1 did, and where it was cut off (every row said "not reached")
    const table = readFileSync(summary, "utf8");
    for (const id of ["start", "ready", "stop-writes"])
      expect(table, id).toMatch(new RegExp(`\\| ${id}: [^|]*\\| \\w+ \\| ✅ ok \\(run 1\\) \\|`));
    expect(table).toMatch(/\| 4 \| drained: [^|]*\| waitFor \| ❔ started, never ended \(cut off\) \(run 1\) \|/);
    expect(table).toMatch(/\| 5 \| commit: Commit \| commit \| ▫️ not reached \|/);
    // the way on, as the terminal names it (the summary named none)
    expect(table).toContain(
      `| next | ${cell(`nothing was sent to the sync; to go on with this cutover later: syncbook run ${file} --resume (${CALLED_OFF_RESUME})`)} |`,
    );
    expect(r.all).toMatch(
      /abort: .*\.jsonl: undoing step 3 "stop-writes" \(last first\); no command is sent to the service/,
    );
    expect(r.all).toContain(
      'aborted by the operator (--abort): 1 undo(s) ran (step 3 "stop-writes"): writes are back on (the undo of step 3 "stop-writes" succeeded); nothing was sent to the service',
    );
    expect(s!.control.state().writes.enabled, "writes back on").toBe(true);
    expect(totalPosts(s!), "no command reached the service").toBe(sent);
    expect(s!.control.state().instances.map((i) => i.state)).toEqual(["RUNNING", "RUNNING", "RUNNING"]);
    expect(finishedLines(dir).at(-1)).toMatchObject({
      aborted: true,
      exitCode: 0,
      committed: false,
      window: { open: false, undone: true },
    });
    // the run's last line: the window the undo closed, said as such (a bare "writes stopped 4s"
    // reads as the cutover's end, the destination taking writes)
    expect(r.all).toMatch(/ · writes stopped \S+, until the undo turned them back on/);

    const st = await cli(["status", file], { cwd: dir });
    expect(st.stdout).toMatch(/run ended called off \(--abort\) at .*: aborted by the operator \(--abort\)/);
    // before any commit, whether it was verified is not the question
    expect(st.stdout).not.toMatch(/not verified/);
    expect(st.stdout).toContain("writes: not stopped by the run (or undone)");
    // the way on the abort's own end named, named by status too (it named none)
    expect(r.all).toContain(`to go on with this cutover later: syncbook run ${file} --resume (${CALLED_OFF_RESUME})`);
    expect(st.stdout).toContain(`  next:\n    syncbook run ${file} --resume\n        ${CALLED_OFF_RESUME}\n`);

    const out = join(dir, "out");
    const rep = await cli(["report", join(dir, ".syncbook", "crash"), "--out", out], { cwd: dir });
    expect(rep.code, rep.all).toBe(0);
    // its printed verdict too (it said "run failed (step 4 drained: running)" while nothing ran)
    expect(rep.stdout).toMatch(/; run aborted \(step 4 drained: started, never ended \(cut off\)\)\n/);
    const report = JSON.parse(readFileSync(join(out, "report.json"), "utf8")) as { outcome: string; aborted?: boolean };
    expect(report.aborted).toBe(true);
    expect(readFileSync(join(out, "junit.xml"), "utf8")).toContain('<property name="aborted" value="true"/>');
    expect(readFileSync(join(out, "report.html"), "utf8")).toContain("ABORTED");
    // the page's title too (it said "FAILED · …" under an ABORTED banner)
    expect(readFileSync(join(out, "report.html"), "utf8")).toMatch(/<title>ABORTED · /);
    // its timeline and its list of runs mark the run as the --abort it was, not a --resume
    const page = readFileSync(join(out, "report.html"), "utf8");
    expect(page).toContain("run 2 (--abort)");
    expect(page).toMatch(/run 2 \(--abort\) started at [^,]*, ended called off \(--abort\)/);
    expect(page).not.toMatch(/run 2 \(--resume\)/);
    // its runs row and table say called off, not the outcome "failed" (a browser trial)
    expect(page).toMatch(/run 2 \(--abort\) called off \(--abort\), /);
    expect(page).not.toMatch(/run 2 \(--abort\) failed/);
    expect(page).toMatch(/<tr data-run="2"[^\n]*<span class="badge skipped">called off \(--abort\)<\/span>/);

    // once more: nothing is owed any more, and still nothing is sent
    const again = await run("--abort");
    expect(again.code, again.all).toBe(0);
    expect(again.all).toContain("no hook's undo is owed");
    expect(again.all).toMatch(/▶ run crash \(--abort\)/);
    expect(totalPosts(s!)).toBe(sent);

    // and later the operator goes on with it: one account of where, and why the write stop runs again
    s!.control.clearFaults();
    const resumed = await run("--resume");
    expect(resumed.code, resumed.all).toBe(0);
    expect(resumed.all).toMatch(/resume: the previous run: aborted by the operator \(--abort\)/);
    expect(resumed.all).not.toMatch(/resuming at step|ended failed|interrupted run/);
    expect(resumed.all).toContain(
      'resume: step 3 "stop-writes" runs again: its undo ran (--abort): writes went back on',
    );
    expect(resumed.all).toContain(
      'resume: continuing at step 3/6 "stop-writes" (it runs again), then step 4/6 "drained", where the cutover stopped',
    );
    expect(resumed.all).toMatch(/↓ \[1\/6\] .* skipped: done in an earlier run \(journal\)/);
    expect(s!.control.state().instances.map((i) => i.state)).toEqual(["COMMITTED", "COMMITTED", "COMMITTED"]);
    // its last line counts the window the --abort closed as downtime too, not only its own
    expect(resumed.all).toMatch(/■ run ok .* · writes stopped \S+ \(and \S+ in an earlier window\) · committed/);
  }, 90_000);

  it("of a write stop with no `undo:` (lint warned): writes stay stopped, and it says so: exit 1, never a clean ABORTED", async () => {
    // an adversarial run: it said "undoing step 3", then "no hook whose undo was still owed",
    // exit 0 and ABORTED, the JUnit run case skipped, with the application's writes still off
    const { file, dir, run } = await setup(["lag-floor=4"]);
    const text = readFileSync(file, "utf8");
    const bare = text.replace(/, undo: \{ use: sim-writes, with: \{ url: "[^"]+", enabled: true \} \}/, "");
    expect(bare).not.toBe(text);
    writeFileSync(file, bare);
    await killedInDrained(file, dir);
    const sent = totalPosts(s!);
    const summary = join(dir, "summary.md");
    const r = await cli(["run", file, "--renderer", "simple", "--abort", "--report", join(dir, "out")], {
      cwd: dir,
      env: { GITHUB_STEP_SUMMARY: summary },
    });
    expect(r.code, r.all).toBe(1);
    // the job summary's writes row (and the run's notification, the same sentence) says by hand,
    // not "--abort judges that": a second --abort cannot undo it either (an outside review)
    const table = readFileSync(summary, "utf8");
    expect(table).toMatch(
      /the runbook gives step stop-writes no \\`undo:\\`, so --abort cannot undo it: turn writes back on by hand, then --resume goes on with the cutover/,
    );
    expect(table).not.toContain("--abort judges that");
    expect(table).toMatch(/ABORTED, NOT EVERYTHING UNDONE/);
    expect(r.all).toContain(
      // said once journaled, as the run's decision: told before, a runner killed in between left a
      // journal without the hand-off, and a later resume counting the stop the operator turned off
      '✗ undo by-hand: step 3 "stop-writes" has no `undo:` in the runbook, so it cannot be undone from here: undo what it did by hand (writes stay stopped until then)',
    );
    expect(r.all).not.toMatch(/undoing step 3/);
    expect(r.all).toMatch(/abort: .*\.jsonl: no owed undo can run from here; nothing is undone, nothing is sent/);
    expect(r.all).toContain(
      'aborted by the operator (--abort), but step 3 "stop-writes" has no `undo:` in the runbook, so nothing undid it: writes stay stopped until a person turns them back on: do it by hand',
    );
    expect(r.all).not.toContain("no hook whose undo was still owed");
    expect(s!.control.state().writes.enabled, "writes still stopped").toBe(false);
    expect(totalPosts(s!), "no command reached the service").toBe(sent);
    // the window's measure ends at the hand-off, the least it lasted: writes stay stopped until a
    // person turns them back on, which no event shows (left open, it counted the time they were
    // back on, and the resume's stop joined it)
    const aborted = finishedLines(dir).at(-1)!;
    expect(aborted).toMatchObject({
      aborted: true,
      exitCode: 1,
      writes: "stopped",
      window: { open: false, byHand: true, atLeast: true },
    });
    expect(r.all).toMatch(
      /⏱ write stop handed to a person by --abort: its step has no `undo:`: writes stay stopped until a person turns them back on; stopped at least \S+ \(.*\) so far; no cutover/,
    );
    expect(r.all).toMatch(/· writes stopped at least \S+, then handed to a person to turn back on by hand ·/);
    const junit = readFileSync(join(dir, "out", "junit.xml"), "utf8");
    expect(junit).toMatch(/<testsuites name="syncbook run" tests="\d+" failures="\d+" errors="[1-9]/);
    expect(junit).not.toContain("called off (--abort)");
    expect(readFileSync(join(dir, "out", "report.html"), "utf8")).toMatch(/<title>ABORTED, NOT EVERYTHING UNDONE · /);
    expect(r.all).toContain(
      `nothing was sent to the sync; turn application writes back on by hand (the runbook gives step stop-writes no \`undo:\`), and to go on with this cutover later: syncbook run ${file} --resume (${CALLED_OFF_RESUME})`,
    );

    // status offers the same way on (it offered none)
    const st = await cli(["status", file], { cwd: dir });
    expect(st.stdout).toContain(
      `  next:\n    syncbook run ${file} --resume\n        ${CALLED_OFF_RESUME}\n    (writes stay stopped until a person turns them back on (the runbook gives step 3 stop-writes no \`undo:\`): do it by hand; the --resume stops them again before its commit)\n`,
    );

    // and says how the abort ended in its own words (it said "run ended aborted")
    expect(st.stdout).toMatch(/run ended ABORTED, NOT EVERYTHING UNDONE at /);
    expect(st.stdout).toContain(
      "  writes: may be stopped, or back on: an --abort handed step 3 stop-writes to a person",
    );

    // the operator turns writes back on by hand, as told; the --resume offered stops them again
    // before its commit (it went on at drained, the stop counted as in force, writes flowing)
    s!.control.setWrites({ enabled: true });
    s!.control.clearFaults();
    // a first --resume that ends before it stops writes again (--step, "abort" at the stop): the
    // next one still stops them again (an outside review: it counted the stop, and committed over
    // writes flowing; the rule read only the last run's end)
    const t = inPty(["run", file, "--resume", "--step", "--renderer", "simple"], { cwd: dir });
    await t.waitFor(/Next: step 3 /, 30_000);
    t.type("\x1b[B\x1b[B\x1b[B\r");
    const cut = await t.done;
    expect(cut.output).toMatch(/step 3 "stop-writes" runs again: the --abort could not undo it/);
    expect(s!.control.state().writes.enabled, "the cut resume stopped nothing").toBe(true);
    // it ended with writes "may be stopped", for the stop handed over: no event shows the person
    // turned them back on (it said nothing of writes: a runner killed there paged not critical)
    expect(finishedLines(dir).at(-1)).toMatchObject({ writes: "may-be-stopped", undoByHand: "stop-writes" });
    // its end says so in the terminal (it said only how the window before ended)
    expect(cut.output).toContain(
      "application writes may be stopped: an --abort handed the write stop of step stop-writes to a person to turn back on by hand",
    );
    // and status says so, as it does right after the abort (it said "not stopped by the run (or undone)")
    const afterCut = await cli(["status", file], { cwd: dir });
    expect(afterCut.stdout).toContain(
      "  writes: may be stopped, or back on: an --abort handed step 3 stop-writes to a person to turn writes back on by hand (the runbook gives it no `undo:`), and the journal cannot show whether they did: check the application's writers; --resume runs the stop again before its commit\n",
    );
    const resumed = await run("--resume");
    expect(resumed.code, resumed.all).toBe(0);
    expect(resumed.all).toContain(
      'resume: step 3 "stop-writes" runs again: the --abort could not undo it (no `undo:` in the runbook) and asked for writes back on by hand, so writes may be flowing',
    );
    // and never, a line before, that the stop it runs again is in force (a terminal trial)
    expect(resumed.all).not.toContain("the commit interlock counts it");
    expect(s!.control.state().instances.map((i) => i.state)).toEqual(["COMMITTED", "COMMITTED", "COMMITTED"]);
    expect(s!.control.state().writes.lost, "no write reached the source after the commit").toBe(0);
    // the resume's window is its own stop's, not one from the first stop through the hand-off and
    // the time writes were back on; the handed-over one is an earlier window, the least it lasted
    const last = finishedLines(dir).at(-1)! as { at: number; window: { durationMs: number } };
    expect(last).toMatchObject({ exitCode: 0, window: { open: false, earlier: { count: 1, atLeast: true } } });
    expect(last.window.durationMs).toBeLessThan(last.at - (aborted.at as number));
    expect(resumed.all).toMatch(/· writes stopped \S+ \(and at least \S+ in an earlier window\) ·/);
  }, 90_000);

  // a second review: with two write stops, the abort undoes the later and hands the earlier (no
  // `undo:`) to a person; status, keyed on the last stop, said "not stopped by the run (or undone)"
  it("of two write stops, the later undone and the earlier handed to a person: status says that one may be stopped", async () => {
    const more = (url: string) =>
      `  - { id: stop-more, stopWrites: { use: sim-writes, with: { url: "${url}" }, undo: { use: sim-writes, with: { url: "${url}", enabled: true } } } }\n`;
    const c = await setup(["lag-floor=4"]);
    const text = readFileSync(c.file, "utf8");
    const url = /url: "([^"]+)", enabled: true/.exec(text)![1]!;
    const two = text
      .replace(/, undo: \{ use: sim-writes, with: \{ url: "[^"]+", enabled: true \} \}/, "")
      .replace(/( {2}- \{ id: drained,)/, `${more(url)}$1`);
    expect(two).toContain("stop-more");
    writeFileSync(c.file, two);
    const child = startCli(["run", c.file, "--renderer", "simple"], { cwd: c.dir });
    await child.waitFor(/▶ \[5\/7\] waitFor/, 30_000);
    child.child.kill("SIGKILL");
    await child.done;
    const r = await cli(["run", c.file, "--renderer", "simple", "--abort"], { cwd: c.dir });
    expect(r.code, r.all).toBe(1);
    const st = await cli(["status", c.file], { cwd: c.dir });
    expect(st.stdout, `${r.all}\n--- status\n${st.all}`).toContain(
      "  writes: may be stopped, or back on: an --abort handed step 3 stop-writes to a person",
    );
  }, 60_000);

  it("of a write stop with no `undo:`, killed before its hand-off is journaled: the resume after it still runs the stop again", async () => {
    // the hand-off (a decision, check by-hand) can be missing: the abort killed before it, or its
    // journal failing as it is written while the operator is still told to do it by hand. A resume
    // then counted the stop, with writes back on by hand; the abort's start is the mark it reads
    const { file, dir, run } = await setup(["lag-floor=4"]);
    const text = readFileSync(file, "utf8");
    writeFileSync(file, text.replace(/, undo: \{ use: sim-writes, with: \{ url: "[^"]+", enabled: true \} \}/, ""));
    await killedInDrained(file, dir);
    // the abort's points, in a dry pass over a copy: the one before its hand-off's line
    const points = join(dir, "points.txt");
    const armed = { SYNCBOOK_TEST_HOOKS: "crash-points" };
    const jdir = join(dir, ".syncbook", "crash");
    const before = readdirSync(jdir).map((f) => [f, readFileSync(join(jdir, f))] as const);
    await cli(["run", file, "--renderer", "simple", "--abort"], {
      cwd: dir,
      env: { ...armed, SYNCBOOK_TEST_CRASH_POINTS: points },
    });
    const labels = readFileSync(points, "utf8")
      .trim()
      .split("\n")
      .map((l) => l.split(" ")[1]);
    const handOff = labels.indexOf("journal:decision:stop-writes");
    expect(handOff, labels.join(", ")).toBeGreaterThan(0);
    // put the journals back as the killed run left them, then the abort killed just before it
    for (const f of readdirSync(jdir)) rmSync(join(jdir, f), { recursive: true, force: true });
    for (const [f, b] of before) writeFileSync(join(jdir, f), b);
    const cut = await cli(["run", file, "--renderer", "simple", "--abort"], {
      cwd: dir,
      env: { ...armed, SYNCBOOK_TEST_CRASH_AT: String(handOff) },
    });
    expect(cut.code, cut.all).not.toBe(0);
    expect(
      readdirSync(jdir)
        .flatMap((f) => (f.endsWith(".jsonl") ? [readFileSync(join(jdir, f), "utf8")] : []))
        .join(""),
    ).not.toContain('"check":"by-hand"');
    // writes on by hand (as a person told by an abort whose word did not reach the journal would)
    s!.control.setWrites({ enabled: true });
    s!.control.clearFaults();
    // status says the stop may hold or not (it said "not stopped by the run (or undone)")
    const st = await cli(["status", file], { cwd: dir });
    expect(st.stdout).toContain(
      "  writes: may be stopped, or back on: step 3 stop-writes stopped them, then an --abort began and the journal does not show what became of them",
    );
    // a --from run at the commit does not count the stop either (a review: 19,692 writes lost)
    const posts = totalPosts(s!);
    const from = await run("--from", "commit", "--yes");
    expect(from.code, from.all).toBe(3);
    expect(from.all).toMatch(/interlock writes-stopped refused/);
    expect(totalPosts(s!), "nothing sent").toBe(posts);
    const resumed = await run("--resume");
    expect(resumed.code, resumed.all).toBe(0);
    expect(resumed.all).toContain(
      'resume: step 3 "stop-writes" runs again: an --abort began after it, and the journal does not show what became of it (undone, or handed to a person to turn writes back on by hand), so writes may be flowing',
    );
    expect(s!.control.state().instances.map((i) => i.state)).toEqual(["COMMITTED", "COMMITTED", "COMMITTED"]);
    expect(s!.control.state().writes.lost, "no write reached the source after the commit").toBe(0);
  }, 90_000);

  it("of a write stop with no `undo:`, over a commit the journal does not show (sent by hand): hands nothing over, writes stay stopped", async () => {
    // an outside review: the hand-off ("undo what it did by hand") read no fleet, where an undo
    // reads it first; a commit sent by hand holds, and writes back on the source are lost to it
    const { file, dir } = await setup(["lag-floor=4"]);
    const text = readFileSync(file, "utf8");
    writeFileSync(file, text.replace(/, undo: \{ use: sim-writes, with: \{ url: "[^"]+", enabled: true \} \}/, ""));
    await killedInDrained(file, dir);
    // commit blocks until every instance has it: sent to all at once
    const answers = await Promise.all(
      s!.instances.map((i) =>
        fetch(`${i.url}/api/v1/commit`, {
          method: "POST",
          body: "{}",
          headers: { "content-type": "application/json" },
        }),
      ),
    );
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
    const r = await cli(["run", file, "--renderer", "simple", "--abort"], { cwd: dir });
    expect(r.code, r.all).toBe(1);
    expect(r.all).toMatch(/ABORTED, NOTHING UNDONE: WRITES STAY STOPPED|nothing was undone/);
    expect(r.all).not.toMatch(/undo what it did by hand|turn application writes back on by hand/);
    expect(finishedLines(dir).at(-1)).toMatchObject({ aborted: true, exitCode: 1, undoKeptOff: true });
    expect(finishedLines(dir).at(-1)!.undoByHand).toBeUndefined();
    expect(s!.control.state().writes.enabled, "writes still stopped").toBe(false);
  }, 90_000);

  it("of another hook with no `undo:`: says so and goes on; writes back on, exit 0 (only a write stop left stopped fails it)", async () => {
    // an outside review: every hook with no `undo:` failed the abort, exit 1, with no way on offered
    const notice = `  - { id: notice, hook: { use: shell, with: { command: [${JSON.stringify(process.execPath)}, -e, "0"] } } }\n`;
    const { file, dir, run } = await setup(["lag-floor=4"], undefined, notice);
    const child = startCli(["run", file, "--renderer", "simple"], { cwd: dir });
    await child.waitFor(/▶ \[5\/7\] waitFor/, 30_000);
    child.child.kill("SIGKILL");
    await child.done;
    const r = await run("--abort");
    expect(r.code, r.all).toBe(0);
    expect(r.all).toContain(
      '✗ undo by-hand: step 4 "notice" has no `undo:` in the runbook, so it cannot be undone from here: undo what it did by hand',
    );
    expect(r.all).toContain("writes are back on (the undo of step 3");
    expect(r.all).toContain(`to go on with this cutover later: syncbook run ${file} --resume`);
    expect(s!.control.state().writes.enabled).toBe(true);
  }, 60_000);

  // the last closing notes: an --abort over a fleet it cannot read was unit-tested only
  it("with an instance that does not answer: writes stay stopped (a commit may have reached it), and the same --abort turns them on once it answers", async () => {
    const { file, dir, run } = await setup(["lag-floor=4"]);
    await killedInDrained(file, dir);
    expect(s!.control.state().writes.enabled).toBe(false);
    s!.control.addFault("down=1");
    const sent = totalPosts(s!);
    const r = await run("--abort");
    expect(r.code, r.all).toBe(1);
    expect(r.all).toMatch(
      /the undo of step 3 "stop-writes" was not run, so application writes stay STOPPED: the fleet could not be read as a whole before commit \(sync1 is unreachable/,
    );
    expect(r.all).toMatch(/turn writes back on with: syncbook run .* --abort \(it reads the fleet again first\)/);
    expect(s!.control.state().writes.enabled, "writes turned on over a fleet not read").toBe(false);
    expect(totalPosts(s!), "nothing is sent to the service").toBe(sent);
    s!.control.clearFaults();
    const again = await run("--abort");
    expect(again.code, again.all).toBe(0);
    expect(again.all).toContain("writes are back on (the undo of step 3");
    expect(s!.control.state().writes.enabled).toBe(true);
    expect(totalPosts(s!)).toBe(sent);
  }, 60_000);

  it("is refused once commit reached part of the fleet: writes stay stopped, nothing is undone (exit 1)", async () => {
    const { run } = await setup(["commit-refused@2"]);
    const first = await run();
    expect(first.code, first.all).toBe(1);
    s!.control.clearFaults();
    const r = await run("--abort");
    expect(r.code, r.all).toBe(1);
    // the two that have it wait in commit's round (no answer yet): it may have reached them
    expect(r.all).toMatch(
      /cannot abort from .*: commit may have reached the fleet \(sent, with no usable answer from some instance\): after commit nothing is undone/,
    );
    expect(r.all).toMatch(
      /--resume \(it goes on where the cutover stopped: a commit part of the fleet refused is completed; .* syncbook status \S+rb\.yaml\)/,
    );
    expect(s!.control.state().writes.enabled, "writes turned on under a pending commit").toBe(false);
  }, 60_000);

  // an outside review: a newer cutover's --abort read only its own journal and the fleet. After
  // an older cutover's split commit (sync0 and sync1 hold it in commit's round, still RUNNING: the
  // fleet read passes), it undid the newer write stop and turned writes on; the commit sent later
  // to sync2 closed the round with writes flowing, and they were lost
  it("is refused while an earlier cutover's commit may still reach the fleet: writes stay stopped, the way on finishes that commit", async () => {
    const { file, run } = await setup(["commit-refused@2"]);
    const first = await run();
    expect(first.code, first.all).toBe(1);
    expect(first.all).toContain("split: commit reached 2 of 3 instances (refused by sync2)");
    s!.control.clearFaults();
    const newer = await run("--new-cutover", "--from", "stop-writes", "--to", "stop-writes", "--yes");
    const where = `${first.all}\n--- --new-cutover --from stop-writes --to stop-writes\n${newer.all}`;
    expect(newer.code, where).toBe(0);
    // its end says the refusal of the --resume refused below, in its words, and points to status
    expect(newer.all).toMatch(
      /stopped at --to stop-writes; a --resume would be refused \(cannot resume the last cutover at step "drained": the journal .*\.jsonl of an earlier cutover, \S+, shows commit \(step 5 "commit"\) may have reached sync0, sync1 .*\)\. See the fleet: syncbook status \S+\. If it shows the commit never reached some instances \(they refused it\), send it only to those: syncbook run \S+ --from stop-writes --only <the instances it did not reach>/,
    );
    expect(newer.all).not.toContain("--resume (syncbook status");
    // the refusal's "nothing was sent" is the resume's, not true of this run, which stopped writes
    expect(newer.all).not.toMatch(/would be refused .*nothing was sent/);
    const sent = totalPosts(s!);

    // status names that commit and offers what closes its round, not the --resume and --abort
    // refused below (an outside review followed them into the refusals)
    const status = await cli(["status", file], { cwd: dirname(file) });
    const said = status.all.slice(status.all.indexOf("\n  next"));
    expect(said, status.all).toContain(`next:\n    syncbook run ${file} --from stop-writes --only sync2\n`);
    expect(said, status.all).toMatch(
      /\(an earlier cutover's commit may still take effect: the journal .*\.jsonl of an earlier cutover, \S+, shows commit \(step 5 "commit"\) may have reached sync0, sync1/,
    );
    expect(said, status.all).toContain("(no --abort while it may:");
    expect(said, status.all).toContain("(no --resume while it may:");
    expect(said, status.all).not.toMatch(/--resume\n|--abort\n/);
    const json = JSON.parse((await cli(["status", file, "--json"], { cwd: dirname(file) })).stdout) as {
      journal: { next: { runs: { args: string }[] } };
      readiness: { instance: string; ready: boolean; past?: string }[];
    };
    expect(json.journal.next.runs.map((x) => x.args)).toEqual(["--from stop-writes --only sync2"]);
    // sync0 and sync1 hold that commit (RUNNING, canCommit): past the question, not "ready to commit"
    const readiness = (r: { instance: string; ready: boolean; past?: string }[]) =>
      r.map((x) => `${x.instance}: ${x.past ?? (x.ready ? "ready" : "not ready")}`);
    const held = ["sync0: an earlier cutover's commit sent", "sync1: an earlier cutover's commit sent", "sync2: ready"];
    expect(readiness(json.readiness)).toEqual(held);
    // the watch page, from the same journals: status first, not the refused --resume
    const watched = await watchState([file], dirname(file));
    // (sync2 as the journal's last sample said it: no live read here)
    expect(readiness(watched.readiness).slice(0, 2)).toEqual(held.slice(0, 2));
    expect(readiness(watched.readiness)[2]).not.toContain("earlier");
    const page = watched.runner;
    expect(page.next, JSON.stringify(page)).toContain(
      `syncbook status ${file}   (it names the way on while an earlier cutover's commit may hold, as said above: a --resume`,
    );
    expect(page.left.join("\n")).toMatch(
      /an earlier cutover's commit may still take effect: the journal .* shows commit \(step 5 "commit"\)/,
    );
    const resumed = await run("--resume", "--yes");
    expect(resumed.code, `${where}\n--- --resume\n${resumed.all}`).toBe(3);
    expect(resumed.all).toMatch(
      /cannot resume the last cutover at step "drained": the journal .* of an earlier cutover/,
    );

    const r = await run("--abort");
    const all = `${where}\n--- --abort\n${r.all}`;
    expect(s!.control.state().writes.enabled, `writes turned on under a pending commit\n${all}`).toBe(false);
    expect(r.code, all).toBe(1);
    expect(r.all, all).toMatch(
      /cannot abort from .*\.jsonl: the journal .*\.jsonl of an earlier cutover, \S+, shows commit \(step 5 "commit"\) may have reached sync0, sync1 \(sync0 gave no usable answer, sync1 gave no usable answer\), and it may still take effect \(an instance holding it waits in commit's round, RUNNING, until every instance has it\): writes at the source then would be lost once that round closes; the undo of step 3 "stop-writes" would turn application writes back on; nothing was undone, and writes stay STOPPED/,
    );
    expect(r.all, all).toContain(
      `hint: See the fleet: syncbook status ${file}. Finish that commit where it did not arrive (writes stay stopped for it): syncbook run ${file} --from stop-writes --only sync2.`,
    );
    expect(totalPosts(s!), "nothing reached the service").toBe(sent);
    expect(s!.control.state().instances.map((i) => i.state)).toEqual(["RUNNING", "RUNNING", "RUNNING"]);

    // the command it offers: the commit reaches sync2, the round closes with writes stopped, none lost
    // (from the write stop: the commit's writes-stopped interlock counts no stop of a journal that
    // holds none, and every command names this one way, as the refusals of --from and --resume do)
    // first without --yes: its commit asks, nobody answers (no terminal), nothing is sent; its end
    // asks the check the --resume it would offer meets (a review: it offered that --resume, which
    // the earlier cutover's held commit refused, exit 3)
    const asked = await run("--from", "stop-writes", "--only", "sync2");
    expect(asked.code, asked.all).not.toBe(0);
    expect(asked.all).toMatch(
      /a --resume would be refused \(cannot resume the last cutover at step "commit": the journal .*\.jsonl of an earlier cutover, \S+, shows commit \(step 5 "commit"\) may have reached sync0, sync1/,
    );
    expect(asked.all).not.toContain("resume with:");
    expect(totalPosts(s!), "nothing reached the service").toBe(sent);
    const on = await run("--from", "stop-writes", "--only", "sync2", "--yes");
    expect(on.code, `${all}\n--- --from stop-writes --only sync2\n${on.all}`).toBe(0);
    const st = s!.control.state();
    expect(st.instances.map((i) => i.state)).toEqual(["COMMITTED", "COMMITTED", "COMMITTED"]);
    expect(st.writes.lost, on.all).toBe(0);
  }, 120_000);

  // what is refused is the undo that turns writes on: a newer cutover that owes only other undos is called off
  it("goes ahead after an earlier cutover's split commit when no undo it owes turns writes on", async () => {
    s = await fastSim({ instances: 3, timeScale: 100, graceMs: 120_000 });
    s.control.addFault("commit-refused@2");
    const dir = tempDir();
    const file = join(dir, "rb.yaml");
    const note = (text: string): string =>
      `{ use: shell, with: { command: [node, -e, "require('fs').appendFileSync('notes', '${text};')"] } }`;
    const steps = `${START + READY}  - { id: notice, hook: { use: shell, with: { command: [node, -e, "require('fs').appendFileSync('notes', 'on;')"] }, undo: ${note("off")} } }\n`;
    writeFileSync(
      file,
      cutoverYaml(s, {
        defaults: CLI_CUTOVER_DEFAULTS,
        steps: steps + stopVia(s.verifierUrl) + DRAINED + COMMIT + COMMITTED,
      }),
    );
    const run = (...a: string[]) => cli(["run", file, "--renderer", "simple", ...a], { cwd: dir });
    const first = await run("--yes");
    expect(first.code, first.all).toBe(1);
    expect(first.all).toContain("split: commit reached 2 of 3 instances (refused by sync2)");
    s.control.clearFaults();
    const newer = await run("--new-cutover", "--from", "notice", "--to", "notice", "--yes");
    expect(newer.code, newer.all).toBe(0);
    // status: that commit finished from the write stop (this cutover holds none, which the commit's
    // writes-stopped interlock would count: --from commit was refused, a review), and --abort, which
    // owes no write stop's undo here
    const st = JSON.parse((await cli(["status", file, "--json"], { cwd: dir })).stdout) as {
      journal: { next: { runs: { args: string }[] } };
    };
    expect(st.journal.next.runs.map((x) => x.args)).toEqual(["--from stop-writes --only sync2", "--abort"]);

    const r = await run("--abort");
    expect(r.code, `${newer.all}\n--- --abort\n${r.all}`).toBe(0);
    expect(r.all).toMatch(/abort: .*\.jsonl: undoing step 3 "notice" \(last first\)/);
    expect(readFileSync(join(dir, "notes"), "utf8")).toBe("on;on;off;");
    // the earlier cutover's write stop is its own: not undone by this abort
    expect(s.control.state().writes.enabled, r.all).toBe(false);
    // called off, the newer cutover's --resume would send the commit (refused): status offers the
    // finish alone (a second review)
    const after = JSON.parse((await cli(["status", file, "--json"], { cwd: dir })).stdout) as {
      journal: { next: { runs: { args: string }[] } };
    };
    expect(after.journal.next.runs.map((x) => x.args)).toEqual(["--from stop-writes --only sync2"]);
    const on = await run("--from", "stop-writes", "--only", "sync2", "--yes");
    expect(on.code, on.all).toBe(0);
    expect(s.control.state().instances.map((i) => i.state)).toEqual(["COMMITTED", "COMMITTED", "COMMITTED"]);
    expect(s.control.state().writes.lost, on.all).toBe(0);
  }, 120_000);

  // an outside review: a newer cutover's run that sent nothing and ran no hook is passed over by
  // --resume, which goes on with the earlier cutover (and completes its commit): its end must not
  // claim that resume is refused
  it("a --to run that sent nothing offers the --resume that goes on with the earlier cutover, and says so", async () => {
    const { run } = await setup(["commit-refused@2"]);
    expect((await run()).code).toBe(1);
    s!.control.clearFaults();
    const newer = await run("--new-cutover", "--from", "drained", "--to", "drained", "--yes");
    expect(newer.code, newer.all).toBe(0);
    expect(newer.all).not.toContain("would be refused");
    // with what that cutover's failure said to do first, as status says it (src/model/again.ts
    // `resumeFirst` of the run that --resume goes on from)
    expect(newer.all).toMatch(
      /stopped at --to drained: the cutover goes on with: syncbook run \S+ --resume \(syncbook status \S+ shows where; first, as step 5 commit's failure said: Find out why sync2 refused .*\)\s+\(it goes on with cutover \S+ \(journal .*\), not this run's: this run sent nothing and ran no hook/,
    );
  }, 60_000);

  it("goes ahead, writes back on, when the earlier cutover left unfinished sent no commit", async () => {
    const { run } = await setup();
    const first = await run("--to", "stop-writes", "--yes");
    expect(first.code, first.all).toBe(0);
    const newer = await run("--new-cutover", "--from", "stop-writes", "--to", "stop-writes", "--yes");
    expect(newer.code, newer.all).toBe(0);
    // no commit of the earlier one may hold: its end offers the plain --resume
    expect(newer.all).toMatch(/stopped at --to stop-writes: the cutover goes on with: syncbook run \S+ --resume/);
    const r = await run("--abort");
    expect(r.code, `${newer.all}\n--- --abort\n${r.all}`).toBe(0);
    expect(r.all).toContain('writes are back on (the undo of step 3 "stop-writes" succeeded)');
    expect(s!.control.state().writes.enabled, r.all).toBe(true);
  }, 120_000);

  // the same, when the earlier cutover's journal cannot be read: it may hold that commit
  it("is refused when an earlier journal of the folder cannot be read: whether a commit of it may take effect cannot be told", async () => {
    const { file, dir, run } = await setup(["commit-refused@2"]);
    expect((await run()).code).toBe(1);
    s!.control.clearFaults();
    const newer = await run("--new-cutover", "--from", "stop-writes", "--to", "stop-writes", "--yes");
    expect(newer.code, newer.all).toBe(0);
    const jdir = join(dir, ".syncbook", "crash");
    const older = join(
      jdir,
      readdirSync(jdir)
        .filter((f) => f.endsWith(".jsonl"))
        .sort()[0]!,
    );
    const lines = readFileSync(older, "utf8").split("\n");
    lines[4] = "{ not json";
    writeFileSync(older, lines.join("\n"));

    // status and the page: none of the commands refused here, and how to set the journal aside
    // (a second review: status offered --resume and --abort without a word)
    const st = JSON.parse((await cli(["status", file, "--json"], { cwd: dir })).stdout) as {
      journal: { next: { runs: { args: string }[]; notes: string[] } };
    };
    expect(st.journal.next.runs, JSON.stringify(st.journal.next)).toEqual([]);
    expect(st.journal.next.notes[0]).toContain(`${older}: it cannot be read`);
    expect(st.journal.next.notes[1]).toContain(
      `set it aside (it stays its run's record), then ask status again: mv ${older} ${older}.set-aside`,
    );
    const page = (await watchState([file], dir)).runner;
    expect(page.next, JSON.stringify(page)).toContain(
      `syncbook status ${file}   (it names the way on while an earlier cutover's commit may hold, as said above: a --resume`,
    );
    const resumed = await run("--resume", "--yes");
    expect(resumed.code, resumed.all).toBe(3);

    const r = await run("--abort");
    expect(s!.control.state().writes.enabled, r.all).toBe(false);
    expect(r.code, r.all).toBe(1);
    expect(r.all).toMatch(
      /cannot abort from .*\.jsonl: .*\.jsonl: it cannot be read \(.*\): whether an earlier cutover's commit may still take effect on the fleet cannot be told; the undo of step 3 "stop-writes" would turn application writes back on; nothing was undone, and writes stay STOPPED/,
    );
    expect(r.all).toContain(
      `then call this cutover off again: syncbook run ${file} --abort; or, once you know no instance holds a commit, turn the application's writes back on by hand.`,
    );
    // the file set aside is a command one pastes, as the other refusals of such a journal say it
    expect(r.all).toContain(`set it aside (it stays its run's record): mv ${older} ${older}.set-aside, then call`);

    // a --to run of this cutover, short of its commit (it sends none: it goes on): its end says the
    // refusal the --resume it offered meets, in that check's words (an outside review: offered)
    const again = await run("--from", "stop-writes", "--to", "stop-writes", "--yes");
    expect(again.code, again.all).toBe(0);
    expect(again.all).toMatch(
      /stopped at --to stop-writes; a --resume would be refused \(cannot resume the last cutover at step "drained": .*it cannot be read/,
    );
    expect(again.all).not.toContain("--resume (syncbook status");
    expect(again.all).not.toMatch(/would be refused .*nothing was sent/);
  }, 120_000);

  it("a --from run after it says it starts a new cutover, counting nothing from the one called off", async () => {
    const { file, dir, run } = await setup(["lag-floor=4"]);
    await killedInDrained(file, dir);
    expect((await run("--abort")).code).toBe(0);
    const r = await run("--from", "commit", "--yes");
    expect(r.code, r.all).toBe(3);
    expect(r.stderr).toMatch(
      /journal: .*\.jsonl records a cutover called off with --abort: this run starts a new cutover: this run counts nothing from it/,
    );
    expect(r.stderr).not.toMatch(/shows no stopWrites that held/);
    expect(r.all).toMatch(/refused \(writes-stopped\)/);
    expect(posts(s!, "commit")).toEqual([0, 0, 0]);
  }, 60_000);

  it("takes no other mode", async () => {
    const { run } = await setup();
    const r = await run("--abort", "--resume");
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--abort runs the undos the journal still owes and nothing else/);
    expect(r.stderr).not.toContain("--var values you gave");
    // typed with a --var: the hint does not repeat its value (it may be a secret), and says to give it
    const typed = await run("--abort", "--from", "commit", "--var", "token=hunter2");
    expect(typed.code).toBe(2);
    expect(typed.stderr).toContain("--abort, with the --var values you gave");
    expect(typed.stderr).not.toContain("hunter2");
  }, 30_000);
});

// the same hole in a newer cutover's own unwind (a helper's adversarial run): its `--new-cutover
// --from stop-writes --to drained` sends no commit, so nothing refuses it; interrupted (or failing)
// in the drained wait, its unwind read the fleet, saw three RUNNING instances and turned writes on
// under the older cutover's commit held in its round
describe("the unwind of a newer cutover's write stop", () => {
  it("keeps writes stopped while an earlier cutover's commit may still take effect, and says which and what next", async () => {
    const { file, dir, run } = await setup(["commit-refused@2"]);
    const first = await run();
    expect(first.code, first.all).toBe(1);
    expect(first.all).toContain("split: commit reached 2 of 3 instances (refused by sync2)");
    s!.control.clearFaults();
    s!.control.addFault("lag-floor=4");
    const newer = startCli(
      ["run", file, "--renderer", "simple", "--new-cutover", "--from", "stop-writes", "--to", "drained", "--yes"],
      { cwd: dir },
    );
    await newer.waitFor(/▶ \[4\/6\] waitFor/, 30_000);
    expect(s!.control.state().writes.enabled, "the newer cutover stopped writes").toBe(false);
    newer.child.kill("SIGINT");
    const r = await newer.done;
    const all = `${first.all}\n--- --new-cutover --from stop-writes --to drained, Ctrl-C\n${r.all}`;
    expect(s!.control.state().writes.enabled, `writes turned on under a held commit\n${all}`).toBe(false);
    expect(r.all, all).toMatch(
      /the undo of step 3 "stop-writes" was not run, so application writes stay STOPPED: the journal .*\.jsonl of an earlier cutover, \S+, shows commit \(step 5 "commit"\) may have reached sync0, sync1/,
    );
    expect(r.all, all).toContain(`syncbook status ${file}`);
    expect(r.all, all).toContain(`syncbook run ${file} --abort`);
    expect(s!.control.state().instances.map((i) => i.state)).toEqual(["RUNNING", "RUNNING", "RUNNING"]);
    // its end: the --resume it would have offered is refused by that commit (the resume's own check,
    // asked at an interrupted run's end too): the refusal and its hint, not "resume with"
    expect(r.all, all).toMatch(
      /a --resume would be refused \(cannot resume the last cutover at step "drained": the journal .*\.jsonl of an earlier cutover, \S+, shows commit \(step 5 "commit"\) may have reached sync0, sync1 .*\)\. See the fleet: syncbook status /,
    );
    expect(r.all, all).not.toContain("resume with:");
    expect(r.all, all).not.toMatch(/would be refused .*nothing was sent/);
  }, 120_000);
});

describe("--from commit --only <instance> after a refused commit (the README's recipe)", () => {
  it("finishes the cutover when the journal shows this cutover's writes stopped: commit to that instance only", async () => {
    const { run } = await setup(["commit-refused@2"]);
    const first = await run();
    expect(first.code, first.all).toBe(1);
    expect(first.all).toContain("split: commit reached 2 of 3 instances (refused by sync2)");
    s!.control.clearFaults();
    const before = posts(s!, "commit");
    const r = await run("--from", "commit", "--only", "sync2", "--yes");
    expect(r.code, r.all).toBe(0);
    expect(r.all).toMatch(/journal: .* shows this cutover's writes stopped \(a stopWrites held, not undone\)/);
    expect(r.all).toContain("interlock writes-stopped:");
    expect(
      posts(s!, "commit").map((n, i) => n - before[i]!),
      "commit to the refusing instance only",
    ).toEqual([0, 0, 1]);
    const st = s!.control.state();
    expect(st.instances.map((i) => i.state)).toEqual(["COMMITTED", "COMMITTED", "COMMITTED"]);
    expect(st.writes.enabled).toBe(false);
    expect(st.writes.lost).toBe(0);
  }, 60_000);

  it("is refused by writes-stopped (exit 3, nothing sent) when the journal shows no write stop that held", async () => {
    const { run } = await setup();
    const first = await run("--to", "ready");
    expect(first.code, first.all).toBe(0);
    const r = await run("--from", "commit", "--only", "sync2", "--yes");
    expect(r.code, r.all).toBe(3);
    // the --to run left its cutover open: this run continues it, and its journal shows no write stop
    expect(r.all).toMatch(
      /journal: .* shows no stopWrites that held \(none ran, one failed, its undo ran, or an --abort handed it to a person\)/,
    );
    expect(r.all).toMatch(/refused \(writes-stopped\)/);
    expect(posts(s!, "commit")).toEqual([0, 0, 0]);
  }, 60_000);
});

describe("a commit refused for want of a write stop", () => {
  // its way on reads whether the fleet shows the commit made already; that read took no signal, and
  // a Ctrl-C while an instance was slow to answer waited out the request's time limit
  it("Ctrl-C during the read its way on makes ends it at once, and still names the stop", async () => {
    const { file, dir, run } = await setup(
      [],
      "{ pollInterval: 50ms, timeout: 30s, requestTimeout: 30s, retry: { giveUpAfter: 3s } }",
    );
    const first = await run("--to", "ready");
    expect(first.code, first.all).toBe(0);
    s!.control.addFault("latency=20s@1/progress");
    const r = startCli(["run", file, "--renderer", "simple", "--from", "commit", "--yes"], { cwd: dir });
    await r.waitFor(/refused \(writes-stopped\)/, 30_000);
    await new Promise((done) => setTimeout(done, 1000));
    const askedAt = Date.now();
    r.child.kill("SIGINT");
    const ended = await r.done;
    expect(Date.now() - askedAt, ended.all).toBeLessThan(8000);
    expect(ended.code, ended.all).toBe(3);
    expect(ended.all).toContain(`stop writes again, then go on: syncbook run ${file} --from stop-writes`);
    expect(ended.all).not.toMatch(/\n\s+at /);
    expect(posts(s!, "commit")).toEqual([0, 0, 0]);
  }, 60_000);

  it("points at --from <the stopWrites step>, not at --resume (which meets the same refusal); that way out works", async () => {
    const { file, dir, run } = await setup();
    // in a terminal, --step: run start and ready, skip stop-writes, run the rest: commit is refused
    const t = inPty(["run", file, "--step", "--renderer", "simple"], { cwd: dir });
    const ENTER = "\r";
    const DOWN = "\x1b[B";
    await t.waitFor(/Next: step 1 /);
    t.type(ENTER);
    await t.waitFor(/Next: step 2 /, 30_000);
    t.type(ENTER);
    await t.waitFor(/Next: step 3 /, 30_000);
    t.type(DOWN + ENTER);
    await t.waitFor(/Next: step 4 /, 30_000);
    t.type(DOWN + DOWN + ENTER);
    const skipped = await t.done;
    expect(skipped.code, skipped.output).toBe(3);
    expect(skipped.output).toMatch(/refused \(writes-stopped\)/);
    expect(skipped.output).toContain("stop writes again, then go on:");
    expect(skipped.output).toContain("--from stop-writes");
    expect(skipped.output).toContain(
      `or, to call the cutover off and turn writes back on: syncbook status ${file} offers --abort where no commit may be on the fleet`,
    );
    expect(skipped.output).not.toContain("resume with:");
    // status, read afterwards, names the same way on (an adversarial run: it named none)
    const st = await cli(["status", file], { cwd: dir });
    expect(st.stdout).toContain(`syncbook run ${file} --from stop-writes`);
    expect(st.stdout).toContain("--resume would meet the same refusal");
    expect(st.stdout).toContain(`syncbook run ${file} --abort`);
    expect(st.stdout).not.toContain(`syncbook run ${file} --resume`);
    const resumed = await run("--resume");
    expect(resumed.code, resumed.all).toBe(3);
    expect(resumed.all).toMatch(/refused \(writes-stopped\)/);
    expect(resumed.all).toContain(`stop writes again, then go on: syncbook run ${file} --from stop-writes`);
    expect(resumed.all).not.toContain("resume with:");
    expect(posts(s!, "commit")).toEqual([0, 0, 0]);
    const done = await run("--from", "stop-writes");
    expect(done.code, done.all).toBe(0);
    expect(s!.control.state().instances.map((i) => i.state)).toEqual(["COMMITTED", "COMMITTED", "COMMITTED"]);
  }, 120_000);
});

// a helper's adversarial run: after a cutover committed and reversed, a new cutover's `--from
// stop-writes` stopped writes, its commit was refused (the fleet syncs the other way round from the
// runbook's start) and its unwind kept writes stopped ("a commit has taken effect"); `status`
// offered `--abort`, which read the same fleet as "no commit" (its first read set the direction)
// and turned writes back on at the reversed sync's destination
describe("--abort after a reverse", () => {
  const made = cleanedUpAfterAll();
  it("judges the fleet by the runbook's direction, as the run that stopped writes did: writes stay stopped", async () => {
    const c = await cliCutover(made, [], "");
    const rollback = '  - { when: "${vars.rollback}", id: rollback, reverse: {} }\n';
    writeFileSync(
      c.file,
      readFileSync(c.file, "utf8").replace(/^steps:\n/m, "vars: { rollback: false }\nsteps:\n") +
        START_REV +
        READY +
        STOP +
        DRAINED +
        COMMIT +
        COMMITTED +
        rollback +
        '  - { when: "${vars.rollback}", id: reversed, waitFor: { state: RUNNING } }\n',
    );
    const first = await cli(c.args("--yes", "--var", "rollback=true"), { cwd: c.dir });
    expect(first.code, first.all).toBe(0);
    // the reversed sync's source takes the application's writes; the runbook's source does not
    expect(c.s.control.state().writes.enabled).toBe(false);
    const from = await cli(c.args("--from", "stop-writes", "--yes"), { cwd: c.dir });
    const all = `${first.all}\n--- --from stop-writes\n${from.all}`;
    expect(from.code, all).toBe(3);
    expect(from.all, all).toMatch(/refused \(fleet-identity\)/);
    expect(from.all, all).toMatch(/application writes stay STOPPED: a commit has taken effect on the fleet/);
    const abort = await cli(c.args("--abort"), { cwd: c.dir });
    const all2 = `${all}\n--- --abort\n${abort.all}`;
    expect(c.s.control.state().writes.enabled, `--abort turned writes on\n${all2}`).toBe(false);
    expect(abort.code, all2).toBe(1);
    expect(abort.all, all2).toMatch(
      /the undo of step 3 "stop-writes" was not run, so application writes stay STOPPED: a commit has taken effect on the fleet \(expected source cluster "cluster0"/,
    );
    expect(posts(c.s, "commit")).toEqual([1]);
  }, 120_000);

  // a helper's adversarial run: a runbook with no commit that reverses a fleet another runbook of
  // the cutover committed, its reverse's answer lost; --abort went on (its rule asked for a commit
  // in this journal), dropped the reverse in doubt from every reader, and the next run sent the
  // reverse again
  it("is refused while a reverse may have reached the fleet, with no commit in this journal: the reverse is never sent again", async () => {
    const c = await cliCutover(made, [], "");
    const header = readFileSync(c.file, "utf8");
    writeFileSync(c.file, header + START_REV + READY + STOP + DRAINED + COMMIT + COMMITTED);
    const first = await cli(c.args("--yes"), { cwd: c.dir });
    expect(first.code, first.all).toBe(0);
    // the same cutover's name and folder, a runbook that only reverses
    writeFileSync(
      c.file,
      header + "  - { id: rollback, reverse: {} }\n" + "  - { id: reversed, waitFor: { state: RUNNING } }\n",
    );
    c.s.control.addFault("late-effect=100000s@0/reverse");
    const reverse = await cli(c.args("--yes"), { cwd: c.dir });
    let all = `${first.all}\n--- reverse\n${reverse.all}`;
    expect(reverse.code, all).not.toBe(0);
    expect(reverse.all, all).toMatch(
      /no commit in this runbook; a reverse \(step rollback\) may have reached the fleet/,
    );
    const sent = posts(c.s, "reverse");
    // status offers no --abort either, and says the reverse is in doubt with no window of its own
    const st = await cli(["status", c.file, "--journal-dir", c.jd], { cwd: c.dir });
    all = `${all}\n--- status\n${st.all}`;
    expect(st.stdout, all).toContain("no --abort: a reverse (step rollback) may have reached the fleet");
    expect(st.stdout, all).toMatch(
      /writes: a reverse \(step rollback\) may have reached the fleet after it was committed/,
    );
    expect(st.stdout, all).not.toMatch(/--abort\n/);
    const abort = await cli(c.args("--abort"), { cwd: c.dir });
    all = `${all}\n--- --abort\n${abort.all}`;
    expect(abort.code, all).toBe(1);
    expect(abort.all, all).toMatch(
      /cannot abort from .*: a reverse \(step 1 "rollback"\) may have reached the fleet and its step did not end ok/,
    );
    expect(abort.all, all).toMatch(/--resume/);
    const again = await cli(c.args("--yes"), { cwd: c.dir });
    all = `${all}\n--- again\n${again.all}`;
    expect(again.code, all).not.toBe(0);
    expect(posts(c.s, "reverse"), `the reverse went out again\n${all}`).toEqual(sent);
  }, 120_000);
});
