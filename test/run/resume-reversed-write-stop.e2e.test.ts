/**
 * `--resume` after a reverse runs the new sync's write stop again once its undo ran. A run that
 * reversed the sync, stopped writes on its new source and then failed before the new sync's commit
 * ran the stopWrites' undo (writes back on). Its `--resume` counted the first sync's commit as "a
 * commit may have been sent" and so never ran that write stop again (src/run/resume.ts): it went on
 * to the commit, which the writes-stopped interlock refused (exit 3), and the way on took a second
 * command (`--from`). The new sync's write stop counts against the new sync's commit only. And a
 * second resume still knows the reverse (src/journal/state.ts: the first resume's "skipped: done in
 * an earlier run" line is not the reverse's outcome). The built CLI against the simulator over
 * loopback.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { cli } from "../support/run.js";
import {
  CHECK,
  cleanedUpAfterAll,
  cliCutover,
  COMMIT,
  COMMIT_AGAIN,
  COMMITTED,
  DRAINED,
  DRAINED_AGAIN,
  failingHook,
  READY,
  REVERSE,
  START_REV,
  STOP,
  STOP_AGAIN,
  VERIFY,
} from "../support/crash-harness.js";

const made = cleanedUpAfterAll();

/** A reversible cutover, its reverse, then the new sync's write stop, a gate that fails `failures` times, and its commit. */
async function reversedWithGate(failures: number) {
  const c = await cliCutover(made, [], "");
  const again = STOP_AGAIN + failingHook(c.dir, "gate", failures) + DRAINED_AGAIN + COMMIT_AGAIN;
  // cliCutover wrote the runbook with no steps: its steps are these
  const steps = START_REV + READY + CHECK + STOP + DRAINED + COMMIT + COMMITTED + VERIFY + REVERSE + again;
  writeFileSync(c.file, readFileSync(c.file, "utf8") + steps);
  const commits = () => c.s.control.counts().instances[0]?.["POST /api/v1/commit"] ?? 0;
  return { ...c, commits };
}

describe("--resume after a reverse, when the new sync's write stop was undone", () => {
  it("runs that write stop again before the new sync's commit, and the commit goes through", async () => {
    const c = await reversedWithGate(1);
    const first = await cli(c.args(), { cwd: c.dir });
    expect(first.code, first.all).toBe(1);
    expect(first.all, first.all).toMatch(/step gate failed/);
    // the undo of the new sync's write stop ran: writes are back on its source
    expect(first.all, first.all).toMatch(/undo hook sim-writes ok/);
    expect(c.commits(), first.all).toBe(1);

    const resumed = await cli(c.args("--resume"), { cwd: c.dir });
    const where = `${first.all}\n--- resume\n${resumed.all}`;
    expect(resumed.all, where).toMatch(/resume: step 11 "stop-again" runs again: its undo ran: writes went back on/);
    expect(resumed.all, where).not.toMatch(/refused \(writes-stopped\)/);
    expect(resumed.code, where).toBe(0);
    expect(c.commits(), where).toBe(2);
    expect(c.s.control.state().instances.map((i) => i.state)).toEqual(["COMMITTED"]);
  }, 120_000);

  // an adversarial run: the first resume journals the reverse as "skipped: done in an earlier run";
  // the journal's reader took that for its outcome, and the second resume lost the reverse: it
  // counted the first sync's commit as the new one's, ran no write stop again, undid nothing, and
  // its commit was refused (or, with a verify there, writesOff went out with writes flowing)
  it("a second resume still knows the reverse: the write stop runs again, the commit goes through, and nothing says committed before it", async () => {
    const c = await reversedWithGate(2);
    const first = await cli(c.args(), { cwd: c.dir });
    expect(first.code, first.all).toBe(1);
    const second = await cli(c.args("--resume"), { cwd: c.dir });
    expect(second.code, second.all).toBe(1);
    expect(second.all, second.all).toMatch(/resume: step 11 "stop-again" runs again: its undo ran/);
    expect(second.all, second.all).toMatch(/step gate failed/);
    // its own end: the sync that runs since the reverse is not committed, and its write stop was undone
    expect(second.all, second.all).toMatch(/■ run failed .* · not committed since the reverse \(step rollback\) · /);
    expect(second.all, second.all).toMatch(/undo hook sim-writes ok/);
    const third = await cli(c.args("--resume"), { cwd: c.dir });
    const where = `${first.all}\n--- resume\n${second.all}\n--- resume\n${third.all}`;
    expect(third.all, where).toMatch(/resume: step 11 "stop-again" runs again: its undo ran/);
    expect(third.all, where).not.toMatch(/refused \(writes-stopped\)/);
    expect(third.code, where).toBe(0);
    expect(third.all, where).toMatch(/■ run ok .* · committed · /);
    expect(c.commits(), where).toBe(2);
    expect(c.s.control.state().instances.map((i) => i.state)).toEqual(["COMMITTED"]);
  }, 150_000);
});

// an adversarial run: a run stopped at --to after the new sync's write stop (its commit not sent);
// --abort was refused, "commit was accepted … going back to the source after a commit is a
// reverse", though the reverse had been done, and its hint's --resume lacked the --var
describe("--abort after a reverse, before the new sync's commit", () => {
  it("undoes the new sync's write stop, as Ctrl-C does; the first sync's is not undone; its end says the reverse as status does", async () => {
    const c = await reversedWithGate(0);
    const first = await cli(c.args("--to", "stop-again"), { cwd: c.dir });
    expect(first.code, first.all).toBe(0);
    expect(c.s.control.state().writes.enabled, first.all).toBe(false);
    const st = await cli(["status", c.file, "--journal-dir", c.jd], { cwd: c.dir });
    expect(st.stdout, st.all).toContain(`syncbook run ${c.file} --journal-dir ${c.jd} --abort`);
    expect(st.stdout, st.all).not.toContain("no --abort");

    const abort = await cli(c.args("--abort"), { cwd: c.dir });
    const where = `${first.all}\n--- status\n${st.all}\n--- --abort\n${abort.all}`;
    expect(abort.code, where).toBe(0);
    expect(abort.all, where).toMatch(
      /abort: step 4 "stop-writes" belongs to the sync before the reverse \(step 9\), which committed: not undone/,
    );
    expect(abort.all, where).toMatch(/undoing step 11 "stop-again"/);
    expect(c.s.control.state().writes.enabled, where).toBe(true);
    expect(c.commits(), where).toBe(1);
    // its end says the reverse as status does, one verdict (src/steps/kit/earned.ts): it said "not
    // committed · not verified (no `verify` step passed on this cutover's verification result)"
    const after = await cli(["status", c.file, "--journal-dir", c.jd], { cwd: c.dir });
    const said = /^ {2}verification: (not verified \(a reverse was sent \(step rollback\).*)$/m.exec(after.stdout)?.[1];
    expect(said, `${where}\n--- status\n${after.all}`).toBeDefined();
    const end = abort.all.split("\n").find((l) => l.includes("■ run aborted"));
    expect(end, where).toContain(` · not committed since the reverse (step rollback) · ${said!} · `);
  }, 120_000);

  it("is refused once the new sync's commit may have been sent, naming it", async () => {
    const c = await reversedWithGate(0);
    const first = await cli(c.args(), { cwd: c.dir });
    expect(first.code, first.all).toBe(0);
    const abort = await cli(c.args("--abort"), { cwd: c.dir });
    expect(abort.code, abort.all).not.toBe(0);
    expect(abort.all, abort.all).toMatch(
      /cannot abort from .*: the reversed sync's commit \(after the reverse, step 9\) was accepted by the fleet/,
    );
  }, 120_000);
});
