/**
 * A `--from` run never sends a start, commit or reverse again to an instance its journal shows it
 * may have reached (an adversarial run: `--from commit` after a commit whose answers were lost
 * sent commit a second time to both instances; `--from rollback` a second reverse, whose refusal
 * the step then called "nothing took effect"). `--resume` reads the fleet and adopts or completes
 * such a command; `--from` reads none for it, so it is refused, and `--only` the instances that
 * refused it still works. The built CLI against the simulator over loopback.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cli } from "../support/run.js";
import {
  cleanedUpAfterAll,
  cliCutover,
  COMMIT,
  commitToTheRefusingOnly,
  COMMITTED,
  DRAINED,
  posts,
  READY,
  START,
  STOP,
  threeInstanceCutover,
} from "../support/crash-harness.js";

const made = cleanedUpAfterAll();

describe("--from after a command whose answer was lost", () => {
  it("is refused before anything is sent (exit 3), naming the command, the instance and --resume with its vars", async () => {
    const c = await cliCutover(made, ["reset=1@0/commit"], START + READY + STOP + DRAINED + COMMIT);
    const first = await cli(c.args("--yes"), { cwd: c.dir });
    expect(first.code, first.all).toBe(1);
    expect(first.all).toMatch(/gave no usable answer .* nothing was resent/);
    expect(posts(c.s, "commit"), first.all).toEqual([1]);
    c.s.control.clearFaults();

    const again = await cli(c.args("--from", "commit", "--yes"), { cwd: c.dir });
    const where = `${first.all}\n--- --from commit\n${again.all}`;
    expect(again.code, where).toBe(3);
    expect(again.all, where).toMatch(
      /cannot go on with the cutover of .* from commit: its journal shows commit \(step 5 "commit"\) may have reached sync0 \(sync0 gave no usable answer\), and this run would send it again: a commit is never sent twice to an instance/,
    );
    expect(again.all, where).toContain(
      `hint: Run syncbook run ${c.file} --journal-dir ${c.jd} --resume: it reads the fleet`,
    );
    // the new cutover it names starts from the start (the fleet-idle interlock), never --from a later step
    expect(again.all, where).toContain(
      `start a new cutover from its start, whose interlock checks the fleet is IDLE: syncbook run ${c.file} --journal-dir ${c.jd} --new-cutover (without --from: a new cutover from a later step is refused by this journal too, since the commit may still be on the fleet).`,
    );
    // nothing sent: no second commit, no journal of a run
    expect(posts(c.s, "commit"), where).toEqual([1]);
    expect(again.all, where).not.toMatch(/▶ \[/);

    // nor with the runbook edited since (its journal is of another text: read for this all the same)
    writeFileSync(c.file, `${readFileSync(c.file, "utf8")}# edited after the commit was lost\n`);
    const edited = await cli(c.args("--from", "commit", "--yes"), { cwd: c.dir });
    expect(edited.code, `${where}\n--- edited, --from commit\n${edited.all}`).toBe(3);
    expect(edited.all, edited.all).toMatch(/its journal shows commit \(step 5 "commit"\) may have reached/);
    expect(posts(c.s, "commit"), edited.all).toEqual([1]);

    // a --to before the commit sends none: allowed (the edited text counts nothing from the journal)
    const before = await cli(c.args("--from", "drained", "--to", "drained", "--yes"), { cwd: c.dir });
    expect(before.code, `${where}\n--- --from drained --to drained\n${before.all}`).toBe(0);
    expect(posts(c.s, "commit")).toEqual([1]);
  }, 120_000);

  // an adversarial run: the refusal's own way on after a lost commit ("if every instance shows the
  // commit took effect, go on after it with: ... --from committed") waited for COMMITTED, passed,
  // and ended "not committed" (its run.finished, its notification, the report of its cutover): the
  // commit it carried was in doubt, and what the run saw of the fleet never settled it
  it("a --from run past a lost commit that sees the fleet COMMITTED ends committed, and its report says so", async () => {
    const c = await cliCutover(
      made,
      ["late-effect=2000s@0/commit"],
      START + READY + STOP + DRAINED + COMMIT + COMMITTED,
    );
    const first = await cli(c.args("--yes"), { cwd: c.dir });
    expect(first.code, first.all).toBe(1);
    expect(first.all).toMatch(/gave no usable answer .* nothing was resent/);
    const on = await cli(c.args("--from", "committed", "--yes"), { cwd: c.dir });
    const where = `${first.all}\n--- --from committed\n${on.all}`;
    expect(on.code, where).toBe(0);
    expect(c.s.control.state().instances.map((i) => i.state)).toEqual(["COMMITTED"]);
    expect(on.all, where).toMatch(/■ run ok in .* · committed · /);
    expect(on.all, where).not.toContain("not committed");
    expect(posts(c.s, "commit"), where).toEqual([1]);
    const report = await cli(["report", join(c.jd, "crash")], { cwd: c.dir });
    expect(report.all, report.all).toMatch(/run ok, committed/);
  }, 120_000);

  // found in the review: the steps were matched by the runbook's own ids, so a commit step without
  // one (named `commit-5` by the journal and by --from) escaped the refusal
  it("a command step without an id is found by the name the journal and --from give it", async () => {
    const c = await cliCutover(made, ["reset=1@0/commit"], START + READY + STOP + DRAINED + "  - { commit: {} }\n");
    const first = await cli(c.args("--yes"), { cwd: c.dir });
    expect(first.code, first.all).toBe(1);
    expect(posts(c.s, "commit"), first.all).toEqual([1]);
    c.s.control.clearFaults();
    const again = await cli(c.args("--from", "commit-5", "--yes"), { cwd: c.dir });
    expect(again.code, `${first.all}\n--- --from commit-5\n${again.all}`).toBe(3);
    expect(again.all, again.all).toMatch(/its journal shows commit \(step 5 "commit-5"\) may have reached/);
    expect(posts(c.s, "commit"), again.all).toEqual([1]);
  }, 120_000);

  // an adversarial run: the commit step renamed after the loss (`commit` → `commit-now`), then
  // --from a step before it: the steps were matched by id, and the commit went out a second time
  it("a command step renamed since is found by its command: a --from before it is refused", async () => {
    const c = await cliCutover(made, ["reset=1@0/commit"], START + READY + STOP + DRAINED + COMMIT);
    const first = await cli(c.args("--yes"), { cwd: c.dir });
    expect(first.code, first.all).toBe(1);
    c.s.control.clearFaults();
    writeFileSync(c.file, readFileSync(c.file, "utf8").replace("{ id: commit, commit", "{ id: commit-now, commit"));
    const again = await cli(c.args("--from", "stop-writes", "--yes"), { cwd: c.dir });
    expect(again.code, `${first.all}\n--- renamed, --from stop-writes\n${again.all}`).toBe(3);
    expect(again.all, again.all).toMatch(/its journal shows commit \(step 5 "commit"\) may have reached/);
    expect(posts(c.s, "commit"), again.all).toEqual([1]);
  }, 120_000);

  // an adversarial run: a --from run between (`--from stop-writes --to stop-writes`, no commit in
  // its range) wrote a journal of its own, and the --resume offered after it read only that one:
  // it sent the commit again. The --from run carries the commit's answers into its journal
  // the refusal's hint named `--from committed` alone: without the runbook and the cutover's --var
  // values it was no command one could paste at a bad hour
  it("a --resume after a --from run that sent no commit still knows the commit per instance: refused, not sent again", async () => {
    const c = await cliCutover(made, ["reset=1@0/commit"], START + READY + STOP + DRAINED + COMMIT + COMMITTED);
    writeFileSync(c.file, readFileSync(c.file, "utf8").replace(/^steps:\n/m, "vars: { site: east }\nsteps:\n"));
    const site = ["--var", "site=west"];
    const first = await cli(c.args(...site, "--yes"), { cwd: c.dir });
    expect(first.code, first.all).toBe(1);
    c.s.control.clearFaults();
    const between = await cli(c.args(...site, "--from", "stop-writes", "--to", "stop-writes", "--yes"), {
      cwd: c.dir,
    });
    const where = `${first.all}\n--- --from stop-writes --to stop-writes\n${between.all}`;
    expect(between.code, where).toBe(0);
    // status reads that journal: its last command is the first run's commit, said to be that run's
    const status = await cli(["status", c.file, "--journal-dir", c.jd], { cwd: c.dir });
    expect(status.all, `${where}\n--- status\n${status.all}`).toMatch(
      /last command: commit \(step 5\), sent by an earlier run of this cutover, in \S+\.jsonl \(carried by the --from run that wrote this journal; no run of this journal sent one\):\n {4}sync0: /,
    );
    const resume = await cli(c.args(...site, "--resume", "--yes"), { cwd: c.dir });
    expect(resume.code, `${where}\n--- --resume\n${resume.all}`).toBe(1);
    expect(resume.all, resume.all).toMatch(
      /commit \(step 5 "commit"\) was sent by an earlier run of this cutover .*; answers: sync0 unknown; this resume goes on at step 4 "drained", before it, and would send it again on its way: a commit is never sent twice to an instance/,
    );
    // the commands as one pastes them: the runbook, and the --var values the cutover ran with
    expect(resume.all, resume.all).toContain(
      `hint: see the fleet: syncbook status ${c.file} --journal-dir ${c.jd}; if every instance shows the commit took effect, go on after it with: syncbook run ${c.file} --journal-dir ${c.jd} --var site=west --from committed; if not,`,
    );
    expect(posts(c.s, "commit"), resume.all).toEqual([1]);
    // nor a --from over it, from that journal
    const from = await cli(c.args(...site, "--from", "drained", "--yes"), { cwd: c.dir });
    expect(from.code, from.all).toBe(3);
    expect(posts(c.s, "commit"), from.all).toEqual([1]);
  }, 120_000);

  // an adversarial run, following the refusal's "--new-cutover": a new cutover --from the commit
  // read no journal, and sent commit again to the instances holding the last cutover's (a split
  // commit keeps them RUNNING with canCommit true, so the commit step's interlocks passed)
  it("a --new-cutover --from past the start is refused by the unfinished cutover's journal all the same", async () => {
    const c = await threeInstanceCutover(["commit-refused@2"]);
    made.sims.push(c.sim);
    made.dirs.push(c.dir);
    const first = await c.run("--yes");
    expect(first.code, first.all).toBe(1);
    expect(first.all).toContain("split: commit reached 2 of 3 instances (refused by sync2)");
    expect(posts(c.sim, "commit"), first.all).toEqual([1, 1, 1]);
    c.sim.control.clearFaults();

    const again = await c.run("--new-cutover", "--from", "commit", "--force", "writes-stopped", "--yes");
    const where = `${first.all}\n--- --new-cutover --from commit\n${again.all}`;
    expect(again.code, where).toBe(3);
    expect(again.all, where).toMatch(
      /cannot start a new cutover from commit: the last cutover's journal .* shows commit \(step 5 "commit"\) may have reached sync0, sync1 \(sync0 gave no usable answer, sync1 gave no usable answer\), and this run would send it again: --new-cutover counts nothing from that cutover, but the fleet may still hold its commit, and a commit is never sent twice to an instance; nothing was sent/,
    );
    expect(again.all, where).toContain(
      `hint: Go on with the last cutover: syncbook run ${c.file} --resume reads the fleet`,
    );
    expect(again.all, where).toContain(`syncbook run ${c.file} --new-cutover (without --from)`);
    expect(posts(c.sim, "commit"), where).toEqual([1, 1, 1]);
    expect(again.all, where).not.toMatch(/▶ \[/);

    // the instance that refused it is not among those it may have reached: a new cutover may send it there
    await commitToTheRefusingOnly(c, where);
  }, 120_000);

  // found in a review: a newer cutover hid the split one. A `--new-cutover --from stop-writes --to
  // stop-writes` after the split commit acted (its write stop) and sent no commit; its journal, the
  // newest that acted, was the only one the next `--new-cutover --from commit` read, and that run
  // sent commit again to all three instances, the two holding the first cutover's among them
  it("a --new-cutover --from after a newer cutover that sent no commit is refused by the older cutover's journal all the same", async () => {
    const c = await threeInstanceCutover(["commit-refused@2"]);
    made.sims.push(c.sim);
    made.dirs.push(c.dir);
    const first = await c.run("--yes");
    expect(first.code, first.all).toBe(1);
    expect(first.all).toContain("split: commit reached 2 of 3 instances (refused by sync2)");
    expect(posts(c.sim, "commit"), first.all).toEqual([1, 1, 1]);
    c.sim.control.clearFaults();

    // a new cutover that acts and sends no commit: the newest journal that acted, of another cutover
    const between = await c.run("--new-cutover", "--from", "stop-writes", "--to", "stop-writes", "--yes");
    const where = `${first.all}\n--- --new-cutover --from stop-writes --to stop-writes\n${between.all}`;
    expect(between.code, where).toBe(0);
    expect(between.all, where).toContain("starting a new cutover (--new-cutover)");

    const again = await c.run("--new-cutover", "--from", "commit", "--force", "writes-stopped", "--yes");
    const all = `${where}\n--- --new-cutover --from commit\n${again.all}`;
    expect(posts(c.sim, "commit"), all).toEqual([1, 1, 1]);
    expect(again.code, all).toBe(3);
    expect(again.all, all).toMatch(
      /cannot start a new cutover from commit: the journal .* of an earlier cutover, \S+, shows commit \(step 5 "commit"\) may have reached sync0, sync1 \(sync0 gave no usable answer, sync1 gave no usable answer\), and this run would send it again: a newer cutover .* sent none since, and the fleet may still hold it: a commit is never sent twice to an instance; nothing was sent/,
    );
    // the way on: the instance that refused it, alone; the folder set aside after a restart by hand
    expect(again.all, all).toContain(
      `syncbook run ${c.file} --new-cutover --from stop-writes --only <the instances it did not reach>`,
    );
    expect(again.all, all).toMatch(/mv \S+ \S+\.set-aside/);
    expect(again.all, all).not.toMatch(/▶ \[/);
    // nor a --from, nor a --resume, of that newer cutover: its journal, the one they read, shows no commit
    const from = await c.run("--from", "commit", "--force", "writes-stopped", "--yes");
    expect(from.code, `${all}\n--- --from commit\n${from.all}`).toBe(3);
    expect(from.all, from.all).toMatch(
      /cannot go on with the last cutover from commit: the journal .* of an earlier cutover, \S+, shows commit \(step 5 "commit"\) may have reached sync0, sync1/,
    );
    expect(from.all, from.all).toContain(
      `syncbook run ${c.file} --from stop-writes --only <the instances it did not reach>`,
    );
    const resume = await c.run("--resume", "--yes");
    expect(resume.code, `${all}\n--- --resume\n${resume.all}`).toBe(3);
    expect(resume.all, resume.all).toMatch(
      /cannot resume the last cutover at step "drained": the journal .* of an earlier cutover, \S+, shows commit \(step 5 "commit"\) may have reached sync0, sync1 .*, and this resume would send it again/,
    );
    expect(posts(c.sim, "commit"), resume.all).toEqual([1, 1, 1]);

    // nor is that newer cutover called off with --abort: its undo would turn writes on under the
    // commit held in its round (test/run/abort.e2e.test.ts); and a new cutover after it is refused still
    const abort = await c.run("--abort", "--yes");
    expect(abort.code, `${all}\n--- --abort\n${abort.all}`).toBe(1);
    expect(abort.all, abort.all).toMatch(
      /cannot abort from .*: the journal .* of an earlier cutover, \S+, shows commit/,
    );
    expect(c.sim.control.state().writes.enabled, abort.all).toBe(false);
    const afterAbort = await c.run("--new-cutover", "--from", "commit", "--force", "writes-stopped", "--yes");
    expect(afterAbort.code, `${all}\n--- --abort\n${abort.all}\n--- again\n${afterAbort.all}`).toBe(3);
    expect(posts(c.sim, "commit"), afterAbort.all).toEqual([1, 1, 1]);

    // the instance that refused it is not among those it may have reached: a new cutover may send it there
    await commitToTheRefusingOnly(c, all);
  }, 180_000);

  // an outside review: the earlier-cutover checks passed over every journal of the run's own
  // cutover by its id; a journal written for another text of the runbook is not counted by the
  // --from run that continues it, so its split commit reached neither the new journal nor a check
  it("a journal of the cutover that a --from run did not count (the runbook edited since) still refuses its commit again, and --abort's undo", async () => {
    const c = await threeInstanceCutover(["commit-refused@2"]);
    made.sims.push(c.sim);
    made.dirs.push(c.dir);
    const first = await c.run("--yes");
    expect(first.code, first.all).toBe(1);
    expect(posts(c.sim, "commit"), first.all).toEqual([1, 1, 1]);
    c.sim.control.clearFaults();
    writeFileSync(c.file, `${readFileSync(c.file, "utf8")}# a timeout changed after the split commit\n`);
    const between = await c.run("--from", "stop-writes", "--to", "stop-writes", "--yes");
    const where = `${first.all}\n--- --from stop-writes --to stop-writes (edited)\n${between.all}`;
    expect(between.code, where).toBe(0);

    const again = await c.run("--from", "commit", "--yes");
    const all = `${where}\n--- --from commit\n${again.all}`;
    expect(posts(c.sim, "commit"), all).toEqual([1, 1, 1]);
    expect(again.code, all).toBe(3);
    expect(again.all, all).toMatch(/shows commit \(step 5 "commit"\) may have reached sync0, sync1/);

    const abort = await c.run("--abort", "--yes");
    const all2 = `${all}\n--- --abort\n${abort.all}`;
    expect(c.sim.control.state().writes.enabled, `writes turned on under the held commit\n${all2}`).toBe(false);
    expect(abort.code, all2).toBe(1);
  }, 180_000);

  // an outside review: the check above was skipped when the journal could not be read, and the
  // commit on its way went out again all the same
  it("a --new-cutover --from whose unfinished cutover's journal cannot be read is refused: it cannot tell what is on the fleet", async () => {
    const c = await cliCutover(made, ["reset=1@0/commit"], START + READY + STOP + DRAINED + COMMIT);
    const first = await cli(c.args("--yes"), { cwd: c.dir });
    expect(first.code, first.all).toBe(1);
    c.s.control.clearFaults();
    const journal = readdirSync(join(c.jd, "crash"))
      .filter((f) => f.endsWith(".jsonl"))
      .map((f) => join(c.jd, "crash", f))[0]!;
    const lines = readFileSync(journal, "utf8").split("\n");
    lines[4] = "{ not json";
    writeFileSync(journal, lines.join("\n"));

    const again = await cli(c.args("--new-cutover", "--from", "commit", "--force", "writes-stopped", "--yes"), {
      cwd: c.dir,
    });
    const where = `${first.all}\n--- --new-cutover --from commit (journal corrupt)\n${again.all}`;
    expect(again.code, where).toBe(3);
    expect(again.all, where).toMatch(
      /cannot start a new cutover from commit: the journal .*: its cutover \S+ did not finish, and its journal cannot be acted on .*: whether it records a start, commit or reverse still on the fleet, which this run would send \(commit\), cannot be told; nothing was sent/,
    );
    // the way on: the fleet, the journal set aside and this command again, or a new cutover from its start
    expect(again.all, where).toContain(`See the fleet: syncbook status ${c.file} --journal-dir ${c.jd}.`);
    expect(again.all, where).toContain(`then run this command again: mv ${journal} ${journal}.set-aside.`);
    expect(again.all, where).toContain(`syncbook run ${c.file} --journal-dir ${c.jd} --new-cutover (without --from)`);
    expect(posts(c.s, "commit"), where).toEqual([1]);
  }, 120_000);

  // an outside review: one file of the journal folder that could not be read dropped the whole
  // folder's check (a --from run and a --resume said so and went on), and the commit an earlier
  // cutover left on its way went out again. A directory where a journal is expected cannot be read
  // as root too (a chmod 000 file can)
  it("a journal of the folder that cannot be read refuses a --from and a --resume that would send a commit, naming it; a range that sends none goes on", async () => {
    const c = await threeInstanceCutover(["commit-refused@2"]);
    made.sims.push(c.sim);
    made.dirs.push(c.dir);
    const first = await c.run("--yes");
    expect(first.code, first.all).toBe(1);
    c.sim.control.clearFaults();
    const between = await c.run("--new-cutover", "--from", "stop-writes", "--to", "stop-writes", "--yes");
    expect(between.code, between.all).toBe(0);
    const folder = join(c.dir, ".syncbook", readdirSync(join(c.dir, ".syncbook"))[0]!);
    expect(readdirSync(folder).filter((f) => f.endsWith(".jsonl")).length, folder).toBe(2);
    const bad = join(folder, "zz-copied.jsonl");
    mkdirSync(bad);

    const from = await c.run("--from", "commit", "--force", "writes-stopped", "--yes");
    const where = `${first.all}\n--- between\n${between.all}\n--- --from commit\n${from.all}`;
    expect(posts(c.sim, "commit"), where).toEqual([1, 1, 1]);
    expect(from.code, where).toBe(3);
    expect(from.all, where).toContain(
      `cannot go on with the last cutover from commit: the journal ${bad}: it cannot be read (EISDIR`,
    );
    expect(from.all, where).toMatch(/which this run would send \(commit\), cannot be told; nothing was sent/);
    expect(from.all, where).toContain(`then run this command again: mv ${bad} ${bad}.set-aside`);
    expect(from.all, where).not.toMatch(/▶ \[/);
    const resume = await c.run("--resume", "--yes");
    expect(resume.code, `${where}\n--- --resume\n${resume.all}`).toBe(3);
    expect(resume.all, resume.all).toContain(`cannot resume the last cutover at step "drained": the journal ${bad}`);
    expect(posts(c.sim, "commit"), resume.all).toEqual([1, 1, 1]);

    // a range that sends no start, commit or reverse goes on, the file named
    const none = await c.run("--from", "drained", "--to", "drained", "--yes");
    expect(none.code, `${where}\n--- --from drained --to drained\n${none.all}`).toBe(0);
    expect(none.all, none.all).toContain(`journal: ${bad}: it cannot be read (EISDIR`);

    // the way on it offers: with the file set aside, the earlier cutover's journal is judged again
    renameSync(bad, `${bad}.set-aside`);
    expect(existsSync(bad)).toBe(false);
    const again = await c.run("--from", "commit", "--force", "writes-stopped", "--yes");
    expect(again.code, again.all).toBe(3);
    expect(again.all, again.all).toMatch(/the journal .* of an earlier cutover, \S+, shows commit \(step 5 "commit"\)/);
    expect(posts(c.sim, "commit"), again.all).toEqual([1, 1, 1]);
  }, 180_000);
});
