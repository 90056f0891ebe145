/**
 * A resume with other `--var` values than the run it continues. A `when` is read once per run,
 * from its vars, and lint takes the steps that share one variable as running together. A cutover
 * run without the rollback (`rollback: false`: its reverse skipped) that failed later, resumed with
 * `--var rollback=true`, ran the rollback's write stop on a sync that never reversed: the
 * application's writes stopped on the cluster it uses, then left stopped, since a commit was sent
 * (an adversarial run). The resume is refused, nothing run; with the vars of the run it continues
 * it goes on. The built CLI against the simulator over loopback.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { WatchState } from "../../src/watch/index.js";
import { cli, startCli, watchState } from "../support/run.js";
import { until } from "../support/crash-harness.js";
import {
  cleanedUpAfterAll,
  cliCutover,
  COMMIT,
  COMMITTED,
  DRAINED,
  READY,
  START_REV,
  STOP,
  COMMIT_AGAIN,
  DRAINED_AGAIN,
  failingHook,
  STOP_AGAIN,
} from "../support/crash-harness.js";

const made = cleanedUpAfterAll();

/** Every step of `steps` under `when: "${vars.rollback}"`. */
const rollback = (steps: string): string => steps.replace(/^ {2}- \{ /gm, () => '  - { when: "${vars.rollback}", ');

/** A reversible cutover whose reverse and second commit run under `when: "${vars.rollback}"` (false by default), with a gate between that fails once. */
async function rollbackRunbook(faults: string[] = []) {
  const c = await cliCutover(made, faults, "");
  const steps =
    START_REV +
    READY +
    STOP +
    DRAINED +
    COMMIT +
    COMMITTED +
    rollback("  - { id: reverse-it, reverse: {} }\n  - { id: reversed, waitFor: { state: RUNNING } }\n") +
    failingHook(c.dir, "gate", 1) +
    rollback(STOP_AGAIN + DRAINED_AGAIN + COMMIT_AGAIN);
  writeFileSync(
    c.file,
    readFileSync(c.file, "utf8").replace(/^steps:\n/m, "vars: { rollback: false }\nsteps:\n") + steps,
  );
  return c;
}

describe("a resume with other --var values than the run it continues", () => {
  it("is refused before anything runs, naming the steps its `when` decided otherwise; with the same vars it goes on", async () => {
    const c = await rollbackRunbook();
    const lint = await cli(["lint", c.file], { cwd: c.dir });
    expect(lint.code, lint.all).toBe(0);
    const writesOn = () => c.s.control.state().writes.enabled;

    const first = await cli(c.args(), { cwd: c.dir });
    expect(first.code, first.all).toBe(1);
    expect(first.all, first.all).toMatch(/step gate failed/);
    expect(first.all, first.all).toMatch(/skipped: when: false/);
    // the first sync committed; the application writes to its destination
    await fetch(`${c.s.instances[0]!.url}/sim/writes`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ enabled: true }),
    });

    const other = await cli(c.args("--resume", "--var", "rollback=true"), { cwd: c.dir });
    const where = `${first.all}\n--- resume --var rollback=true\n${other.all}`;
    expect(other.code, where).toBe(2);
    expect(other.all, where).toMatch(
      /cannot resume from .*: its `when` values differ from the runs of this cutover \(step 7 "reverse-it" was skipped by its `when`, and would run now; step 8 "reversed" was skipped by its `when`, and would run now\)/,
    );
    // the exact command: the journal tells the value its runs decided the `when`s with
    expect(other.all, where).toContain(
      `hint: Run with the --var values the cutover ran with: syncbook run ${c.file} --journal-dir ${c.jd} --var rollback=false --resume;`,
    );
    // nothing ran: the application still writes, the sync is as the first run left it
    expect(other.all, where).not.toMatch(/stop-again/);
    expect(writesOn(), where).toBe(true);
    expect(c.s.control.state().instances.map((i) => i.state)).toEqual(["COMMITTED"]);

    // nor a --from run past the skipped reverse: it would take the reverse for done
    const from = await cli(c.args("--from", "stop-again", "--var", "rollback=true", "--yes"), { cwd: c.dir });
    expect(from.code, `${where}\n--- --from\n${from.all}`).toBe(2);
    expect(from.all, from.all).toMatch(
      /cannot go on with the cutover of .* from stop-again: its `when` values differ from the runs of this cutover \(step 7 "reverse-it" was skipped by its `when`, and would run now/,
    );
    expect(writesOn(), from.all).toBe(true);
    const same = await cli(c.args("--resume"), { cwd: c.dir });
    expect(same.code, `${where}\n--- resume\n${same.all}`).toBe(0);
    expect(writesOn()).toBe(true);
  }, 120_000);

  it("the other way round: a step that ran, whose `when` is false now, refuses the resume too", async () => {
    const c = await rollbackRunbook();
    const first = await cli(c.args("--var", "rollback=true"), { cwd: c.dir });
    expect(first.code, first.all).toBe(1);
    expect(first.all, first.all).toMatch(/step gate failed/);
    const other = await cli(c.args("--resume"), { cwd: c.dir });
    const where = `${first.all}\n--- resume\n${other.all}`;
    expect(other.code, where).toBe(2);
    expect(other.all, where).toMatch(/step 7 "reverse-it" ran, and its `when` is false now/);
    // the first run's end and status named the way on with its --var, as the journal tells it
    expect(first.all, first.all).toContain(
      `resume with: syncbook run ${c.file} --journal-dir ${c.jd} --var rollback=true --resume`,
    );
    const st = await cli(["status", c.file, "--journal-dir", c.jd], { cwd: c.dir });
    expect(st.stdout, st.all).toContain(`syncbook run ${c.file} --journal-dir ${c.jd} --resume --var rollback=true`);
    // and the watch page (its runner's "next", what the dead-man's switch pages too), from the journal alone
    const page = await watchPage(c);
    expect(page.model.whenVars).toEqual(["rollback=true"]);
    // the first sync committed, then reversed: the sync that runs now was never committed
    expect(page.model.cutover.committed).toBe(false);
    expect(page.model.cutover.reversed?.id).toBe("reverse-it");
    expect(page.runner.left).toEqual(expect.arrayContaining(["reversed (step reverse-it)", "commit not sent"]));
    expect(page.runner.left).not.toContain("committed");
    expect(page.runner.next, JSON.stringify(page.runner)).toBe(
      `syncbook run ${c.file} --journal-dir ${c.jd} --resume --var rollback=true`,
    );
    const same = await cli(c.args("--resume", "--var", "rollback=true"), { cwd: c.dir });
    expect(same.code, `${where}\n--- resume --var rollback=true\n${same.all}`).toBe(0);
    expect(c.s.control.state().instances.map((i) => i.state)).toEqual(["COMMITTED"]);
  }, 120_000);

  // an adversarial run: the runner killed with its reverse on its way; the --resume that status and
  // the watch page offered (no --var) adopted the reverse, skipped the rest of the rollback by its
  // `when`, and ended "run ok": the rollback abandoned, and no way on left
  it("a step that started and never ended ran on its `when`: a resume without its --var is refused; with it, it goes on", async () => {
    const c = await rollbackRunbook(["latency=4s@0/reverse"]);
    const reverses = () => c.s.control.counts().instances[0]?.["POST /api/v1/reverse"] ?? 0;
    const one = startCli(c.args("--var", "rollback=true"), { cwd: c.dir });
    await until("the reverse arrives", () => reverses() === 1, 60_000);
    one.child.kill("SIGKILL");
    const first = await one.done;
    // the way on, as status tells it: with the value the reverse ran on
    const st = await cli(["status", c.file, "--journal-dir", c.jd], { cwd: c.dir });
    expect(st.stdout, `${first.all}\n--- status\n${st.all}`).toContain(
      `syncbook run ${c.file} --journal-dir ${c.jd} --resume --var rollback=true`,
    );
    // --abort, one step outside: it reads no fleet, so it cannot tell which sync runs now; it says so
    const abort = await cli(c.args("--abort"), { cwd: c.dir });
    expect(abort.code, abort.all).toBe(1);
    expect(abort.all, abort.all).toMatch(
      /cannot abort from .*: a reverse \(step 7 "reverse-it"\) may have reached the fleet and its step did not end ok, after the fleet was committed/,
    );
    expect(abort.all, abort.all).toContain(
      `syncbook run ${c.file} --journal-dir ${c.jd} --var rollback=true --resume (it reads the fleet`,
    );
    expect(abort.all, abort.all).not.toMatch(/Going back to the source after a commit is a reverse/);
    const other = await cli(c.args("--resume"), { cwd: c.dir });
    const where = `${first.all}\n--- resume\n${other.all}`;
    expect(other.code, where).toBe(2);
    expect(other.all, where).toMatch(
      /its `when` values differ from the runs of this cutover \(step 7 "reverse-it" started \(its run ended before it did\), and its `when` is false now\)/,
    );
    expect(other.all, where).toContain(`syncbook run ${c.file} --journal-dir ${c.jd} --var rollback=true --resume`);
    expect(other.all, where).not.toMatch(/run ok/);
    expect(reverses(), where).toBe(1);
    // with it: the reverse adopted (never sent again), the rollback goes on to its gate
    const same = await cli(c.args("--resume", "--var", "rollback=true"), { cwd: c.dir });
    const after = `${where}\n--- resume --var rollback=true\n${same.all}`;
    expect(same.all, after).toMatch(/skipped: adopted: reverse took effect/);
    expect(same.all, after).toMatch(/step gate failed/);
    expect(reverses(), after).toBe(1);
    // the watch page counts the adopted reverse (an adversarial run: it said "committed", and
    // "Ready to commit? past it: commit sent", from the first sync's commit)
    const page = await watchPage(c);
    expect(page.model.cutover.reversed?.id, JSON.stringify(page.runner)).toBe("reverse-it");
    expect(page.model.cutover.committed).toBe(false);
    expect(page.runner.left).toEqual(expect.arrayContaining(["reversed (step reverse-it)", "commit not sent"]));
    expect(page.runner.left).not.toContain("committed");
  }, 120_000);

  // an adversarial run: an --abort given no --var was accepted (it decides no \`when\`), and its end
  // offered "--resume" without the cutover's --var rollback=true: refused when run as printed
  it("an --abort given no --var offers the --resume its cutover's `when`s were decided with, and that command goes on", async () => {
    const c = await rollbackRunbook();
    writeFileSync(join(c.dir, "gate.failed"), "1"); // the gate passes
    const first = await cli(c.args("--var", "rollback=true", "--to", "stop-again"), { cwd: c.dir });
    expect(first.code, first.all).toBe(0);
    const abort = await cli(c.args("--abort"), { cwd: c.dir });
    const where = `${first.all}\n--- --abort\n${abort.all}`;
    expect(abort.code, where).toBe(0);
    expect(abort.all, where).toContain(
      `to go on with this cutover later: syncbook run ${c.file} --journal-dir ${c.jd} --var rollback=true --resume`,
    );
    const again = await cli(c.args("--var", "rollback=true", "--resume", "--yes"), { cwd: c.dir });
    expect(again.code, `${where}\n--- --resume\n${again.all}`).toBe(0);
    expect(c.s.control.state().instances.map((i) => i.state)).toEqual(["COMMITTED"]);
  }, 120_000);
});

/** The watch page's state of the cutover in `c`'s journal folder, read once. */
const watchPage = (c: { file: string; jd: string; dir: string }): Promise<WatchState> =>
  watchState([c.file, "--journal-dir", c.jd], c.dir);
