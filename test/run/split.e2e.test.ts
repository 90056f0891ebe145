/**
 * Issue 14, points 2 and 3: "A split commit is completed, not handed to a human. … Once the
 * remaining instances are RUNNING with `canCommit` true, `--resume` sends commit to exactly those
 * (after `confirm`, or `--yes`), never again to the others. The same for a fan-out cut by kill -9
 * (start sent to some instances): finish it where progress proves it is safe, else stop with what
 * was seen." and "Targeted commands, with interlocks: send one lifecycle command to named
 * instances … journaled like any step; every interlock still applies."
 *
 * Commit blocks until every instance has received it (service facts, "Multiple instances"), so a
 * commit one instance refuses leaves the others waiting in its round: RUNNING, holding it. What
 * the service received is read from the simulator's request counts.
 */
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Simulator } from "../../src/sim/index.js";
import { cli, startCli } from "../support/run.js";
import {
  CLI_CUTOVER_DEFAULTS,
  COMMIT,
  COMMITTED,
  DRAINED,
  READY,
  REVERSE,
  START_REV,
  cutoverYaml,
  fastSim,
  posts,
  stopVia,
  tempDir,
  threeInstanceCutover,
} from "../support/crash-harness.js";

let s: Simulator | undefined;
afterEach(async () => {
  await s?.close();
  s = undefined;
});

/** The whole cutover against a fresh 3-instance fleet (test/support/crash-harness.ts); `s` is closed after each test. */
async function setup(faults: string[] = [], defaults?: string): ReturnType<typeof threeInstanceCutover> {
  const c = await threeInstanceCutover(faults, defaults);
  s = c.sim;
  return c;
}

/**
 * A plain `--resume` refused by no-errors over a start refusal (exit 3, no commit sent), and the
 * forced `--resume` that `status` then offers: its output, for what a test checks after.
 */
async function plainResumeRefused(
  run: (...a: string[]) => ReturnType<typeof cli>,
  file: string,
  dir: string,
): Promise<{ stdout: string }> {
  const plain = await run("--resume", "--yes");
  expect(plain.code, plain.all).toBe(3);
  expect(plain.all).toMatch(/✗ interlock no-errors refused: instances answered with errors earlier: start: /);
  expect(posts(s!, "commit")).toEqual([0, 0, 0]);
  const status = await cli(["status", file], { cwd: dir });
  expect(status.stdout).toContain(`syncbook run ${file} --resume --force=no-errors`);
  return status;
}

describe("a split commit, completed by --resume", () => {
  // issue 39, point 8: "after a split commit `status` shows `unknown` for an instance that holds the
  // commit": each answer in words, with what its state adds; unknown only where nothing tells, and why
  it("status after a split commit: the refusal said as such; the others unknown with why (commit applies only once every instance has it)", async () => {
    const { run, file, dir } = await setup(["commit-refused@2"]);
    const first = await run();
    expect(first.code, first.all).toBe(1);
    const st = await cli(["status", file], { cwd: dir });
    const out = st.stdout;
    expect(out, out).toMatch(/last command: commit \(step \d\):\n/);
    // its error without its own URL: the line names it already (and equal refusals then group)
    expect(out).toMatch(/\n {4}sync2: refused or never sent \(commit refused[^\n]*\)\n/);
    for (const n of ["sync0", "sync1"])
      expect(out).toMatch(
        new RegExp(
          `\\n {4}${n}: unknown: sent, no answer; commit is answered and applied only once every instance has it \\(sync2 refused it\\), so its state \\(RUNNING\\) cannot tell whether it holds it\\n`,
        ),
      );
    // once the commit reaches every instance, the state tells: no unknown left
    s!.control.clearFaults();
    const done = await run("--resume", "--yes");
    expect(done.code, done.all).toBe(0);
    const after = await cli(["status", file], { cwd: dir });
    expect(after.stdout).not.toMatch(/: unknown/);
    expect(after.stdout).toMatch(/ {4}sync2: accepted\n/);
  });

  // an outside review: the completion's own refusal everywhere it went set "every instance refused
  // it", and the run ended "not committed" while sync0 and sync1 held the first send in its round
  it("a completion refused again ends 'commit in doubt', not 'not committed': the others still hold the first send", async () => {
    const { run, file, dir } = await setup(["commit-refused@2"]);
    const first = await run();
    expect(first.code, first.all).toBe(1);
    const summary = join(dir, "summary.md");
    const again = await cli(["run", file, "--renderer", "simple", "--resume", "--yes"], {
      cwd: dir,
      env: { GITHUB_STEP_SUMMARY: summary },
    });
    expect(again.code, again.all).toBe(1);
    expect(again.all).toContain("split: commit reached 2 of 3 instances (not sync2)");
    const jdir = join(dir, ".syncbook", "crash");
    const finished = readdirSync(jdir)
      .filter((f) => f.endsWith(".jsonl"))
      .flatMap((f) => readFileSync(join(jdir, f), "utf8").split("\n"))
      .filter((l) => l.includes('"run.finished"'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(finished.at(-1), again.all).toMatchObject({ committed: false, commitInDoubt: true });
    expect(readFileSync(summary, "utf8")).toMatch(/^### syncbook run crash: ❌ FAILED · ❔ COMMIT IN DOUBT/);
    expect(s!.control.state().writes.enabled, "writes back on under a commit that may hold").toBe(false);
  });

  it("one of three refuses commit: the run says split and keeps writes stopped; --resume sends commit to that one only, after yes", async () => {
    const { run } = await setup(["commit-refused@2"]);
    const first = await run();
    expect(first.code, first.all).toBe(1);
    expect(first.all).toContain("split: commit reached 2 of 3 instances (refused by sync2)");
    expect(first.all).toMatch(
      /■ run failed in .* · split: commit reached 2 of 3 instances \(refused by sync2\) · (.* · )?exit 1/,
    );
    expect(first.all).toContain("--resume` completes it");
    expect(s!.control.state().writes.enabled, "writes were turned back on under a pending commit").toBe(false);
    s!.control.clearFaults();
    const before = posts(s!, "commit");

    // without a terminal and without --yes: it asks, cannot, and sends nothing
    const asked = await run("--resume");
    expect(asked.code, asked.all).toBe(1);
    expect(asked.all).toMatch(
      /A confirm step needs an answer, and there is no terminal to ask: "Send commit to sync2 only/,
    );
    expect(posts(s!, "commit")).toEqual(before);
    expect(s!.control.state().writes.enabled, "a declined completion undid the write stop").toBe(false);

    const done = await run("--resume", "--yes");
    expect(done.code, done.all).toBe(0);
    expect(done.all).toMatch(/resume: .* it will be sent to sync2 only/);
    expect(done.all).toContain("interlock fleet-state: commit to sync2 only");
    const after = posts(s!, "commit");
    expect(
      after.map((n, i) => n - before[i]!),
      "commit sent to the refusing instance only",
    ).toEqual([0, 0, 1]);
    const st = s!.control.state();
    expect(st.instances.map((i) => i.state)).toEqual(["COMMITTED", "COMMITTED", "COMMITTED"]);
    expect(st.writes.lost).toBe(0);
    expect(st.fleetErrors).toEqual([]);
  });

  it("a split commit is told once, as soon as the refusal arrives; the run ends at the others' time limit, not after a settle window; a refused completion says the others still hold it", async () => {
    const { run } = await setup(
      ["commit-refused@2"],
      "{ pollInterval: 50ms, timeout: 60s, requestTimeout: 4s, retry: { giveUpAfter: 3s } }",
    );
    const first = await run();
    expect(first.code, first.all).toBe(1);
    const lines = first.all.split("\n");
    // the refusal is news before the fan-out's answers are in (the others answer only at their time limit)
    const news = lines.findIndex((l) =>
      /✗ reconcile: sync2 refused commit \(.*\) while 2 other instance\(s\) have not answered: .*the fleet is split; nothing more is sent/.test(
        l,
      ),
    );
    const fanout = lines.findIndex((l) => /commit → 0\/3 ok/.test(l));
    expect(news, first.all).toBeGreaterThanOrEqual(0);
    expect(news).toBeLessThan(fanout);
    // a blocking command one instance refused: no settle window (twice the request time limit) after the answers
    const failed = /✖ \[5\/6\] Commit failed in ([\d.]+)s/.exec(first.all);
    expect(Number(failed?.[1])).toBeLessThan(7);
    // one paragraph: the step's failure; the run's summary and the last word point up to it
    const paragraph = "so the instances that took it hold it until sync2 has it; nothing was resent";
    expect(first.all.split(paragraph)).toHaveLength(2);
    expect(first.all.split("hint: Find out why sync2 refused")).toHaveLength(2);
    // the split's hint is to be done before the --resume (as status and the page say it)
    expect(first.stderr).toMatch(
      /\nfailed: step commit failed \(said above\)\n {2}once the hint above is done, resume with: /,
    );

    // the completion refused again: the two that hold the commit are said to hold it
    const again = await run("--resume", "--yes");
    expect(again.code, again.all).toBe(1);
    expect(again.all).toContain("split: commit reached 2 of 3 instances (not sync2): sync2 refused it again (");
    expect(again.all).toContain("and the other instances still hold the commit; nothing was resent");
    expect(again.all).not.toMatch(/nothing took effect\)|no instance accepted it/);
    expect(s!.control.state().writes.enabled).toBe(false);
  });

  it("start cut by kill -9 while one instance had not answered (and did not take it): --resume never sends it a second start", async () => {
    // instance 2 answers its start after 3 s, with a refusal that applied nothing: killed meanwhile
    const { file, dir, run } = await setup(
      ["latency=3@2/start", "http500@2/start", "lag-floor=30"],
      // its request timeout outlasts the 3 s, so the kill finds sync2's start still in flight
      "{ pollInterval: 50ms, timeout: 30s, requestTimeout: 5s, retry: { giveUpAfter: 3s } }",
    );
    const child = startCli(["run", file, "--renderer", "simple"], { cwd: dir });
    await child.waitFor(/▶ \[1\/6\] start/, 20_000);
    await new Promise((r) => setTimeout(r, 1000));
    child.child.kill("SIGKILL");
    await child.done;
    expect(posts(s!, "start")).toEqual([1, 1, 1]);
    await new Promise((r) => setTimeout(r, 2500));
    expect(s!.control.state().instances.map((i) => i.state)).toEqual(["RUNNING", "RUNNING", "IDLE"]);
    s!.control.clearFaults();
    // sync2 may have received its start (no answer reached the dead runner): never sent twice
    const r = await run("--resume", "--yes");
    expect(r.code, r.all).toBe(1);
    expect(r.all).toMatch(
      /sync0 RUNNING, sync1 RUNNING \(start took effect\); sync2 IDLE \(start did not take effect\)/,
    );
    expect(r.all).toMatch(/send start by hand to the ones that did not take it/);
    expect(posts(s!, "start")).toEqual([1, 1, 1]);
    expect(posts(s!, "commit")).toEqual([0, 0, 0]);
  });

  // a trial: the --resume that completed the start was refused at its commit by no-errors (the
  // refusal still counts: nothing published says a late start leaves the destination a consistent
  // copy), and a plain --resume after it committed, the journal reading the completed start as
  // never refused; the hint said "rerun with --force=no-errors". Both now refuse, and the way on
  // is the forced --resume the hint, status and the run's end name
  it("a split start completed by --resume: its commit refused by no-errors, again on a plain --resume; the forced one commits", async () => {
    const { run, file, dir } = await setup(["http500@1/start", "lag-floor=30"]);
    expect((await run("--yes")).code).toBe(1);
    s!.control.clearFaults();
    const r = await run("--resume", "--yes");
    expect(r.code, r.all).toBe(3);
    expect(posts(s!, "start")).toEqual([1, 2, 1]);
    // said at the completion's question, before the write stop, not found out at the commit
    expect(r.all).toMatch(
      /Send start to \S+ only \(completing the start[^)]*\)\? The refusal of the start still counts at the commit: nothing published says an instance started after the others leaves the destination a consistent copy, so a commit of this sync, in this run or a later one, goes on only with --force=no-errors\./,
    );
    expect(r.all).toMatch(/✗ interlock no-errors refused: instances answered with errors earlier: start: /);
    expect(r.all).toContain("A command refused and taken later (a split `start` completed) counts too");
    expect(r.all).toContain(`Only if you are certain it is safe: \`syncbook run ${file} --resume --force=no-errors\`.`);
    expect(r.all).toContain(
      `once the hint above is done, resume with: syncbook run ${file} --resume --force=no-errors`,
    );
    await plainResumeRefused(run, file, dir);
    const forced = await run("--resume", "--force=no-errors", "--yes");
    expect(forced.all).toMatch(
      /✓ force no-errors: instances answered with errors earlier: start: .* — overridden by --force=no-errors/,
    );
    expect(posts(s!, "commit")).toEqual([1, 1, 1]);
  });
});

describe("a rollback after a split commit completed", () => {
  // a review of the refusals a --from run counts: the forward commit's refusal, completed by the
  // README's `--from commit --only`, refused the rollback's commit, a new sync's, by no-errors
  it("the reversed sync's commit does not count the forward sync's refusals (a new sync)", async () => {
    const sim = await fastSim({ instances: 3, timeScale: 100, graceMs: 120_000 });
    s = sim;
    sim.control.addFault("commit-refused@2");
    const dir = tempDir();
    const file = join(dir, "rb.yaml");
    const back = (id: string) => id.replace(/id: (\S+?),/, "id: $12,");
    writeFileSync(
      file,
      cutoverYaml(sim, {
        defaults: CLI_CUTOVER_DEFAULTS,
        steps:
          START_REV +
          READY +
          stopVia(sim.verifierUrl) +
          DRAINED +
          COMMIT +
          COMMITTED +
          REVERSE +
          back(stopVia(sim.verifierUrl)) +
          back(DRAINED) +
          back(COMMIT) +
          back(COMMITTED),
      }),
    );
    const run = (...a: string[]) => cli(["run", file, "--renderer", "simple", ...a], { cwd: dir });
    expect((await run("--to", "committed", "--yes")).code).toBe(1);
    sim.control.clearFaults();
    const only = await run("--from", "commit", "--to", "committed", "--only", "sync2", "--yes");
    expect(only.code, only.all).toBe(0);
    expect(only.all).toContain("besides the commit refusals of sync2 being completed");
    // the rollback: a new sync, whose commit counts its own refusals (none)
    const back2 = await run("--from", "rollback", "--yes");
    expect(back2.code, back2.all).toBe(0);
    expect(back2.all).toContain("✓ interlock no-errors: no instance answered with an error in this run");
    expect(posts(sim, "commit")).toEqual([2, 2, 3]);
  }, 120_000);
});

describe("--only: a targeted command", () => {
  it("completes a start one instance refused; the others must already have it, else it is refused and nothing is sent", async () => {
    const { run } = await setup(["http500@1/start", "lag-floor=30"]);
    const first = await run("--to", "start");
    expect(first.code, first.all).toBe(1);
    expect(posts(s!, "start")).toEqual([1, 1, 1]);
    s!.control.clearFaults();

    expect((await run("--only", "sync1")).stderr).toMatch(
      /--only sends a command to part of the fleet, so it goes with --from/,
    );
    const typo = await run("--from", "start", "--only", "synk1");
    expect(typo.code).toBe(2);
    expect(typo.stderr).toMatch(/--only synk1: the runbook lists no such instance \(did you mean `sync1`\?\)/);

    const r = await run("--from", "start", "--to", "start", "--only", "sync1", "--yes");
    expect(r.code, r.all).toBe(0);
    expect(r.all).toContain(
      "interlock fleet-state: start to sync1 only (--only sync1); the others are sync0 RUNNING, sync2 RUNNING",
    );
    expect(r.all).toContain("interlock fleet-idle: every instance is IDLE");
    expect(posts(s!, "start")).toEqual([1, 2, 1]);
    // once more: the journal shows sync1 took start, so it is refused before anything runs (exit 3),
    // nothing sent (the start interlock would refuse it too: sync1 is RUNNING now)
    const again = await run("--from", "start", "--to", "start", "--only", "sync1", "--yes");
    expect(again.code, again.all).toBe(3);
    expect(again.all).toMatch(
      /its journal shows start \(step 1 "start"\) may have reached sync1 \(sync1 accepted it\), and this run would send it again: a start is never sent twice to an instance/,
    );
    expect(posts(s!, "start")).toEqual([1, 2, 1]);
  });

  // the note of 2026-12-07: the refusal the --from run completed counted nowhere after it. Its own
  // memory held none (its question did not warn), and a --resume of it, which reads only its
  // journal, committed without --force=no-errors what --resume of the first run refuses
  it("a split start completed by --from start --only: its question warns, a --resume of it is refused by no-errors, the forced one commits", async () => {
    const { run, file, dir } = await setup(["http500@1/start", "lag-floor=30"]);
    expect((await run("--to", "start")).code).toBe(1);
    s!.control.clearFaults();
    const only = await run("--from", "start", "--to", "start", "--only", "sync1", "--yes");
    expect(only.code, only.all).toBe(0);
    expect(posts(s!, "start")).toEqual([1, 2, 1]);
    expect(only.all).toMatch(
      /Send start to sync1 only \(--only sync1\)\? The refusal of the start still counts at the commit: [^\n]*goes on only with --force=no-errors\./,
    );
    // status says it before the plain --resume it offers meets it (a review)
    const before = await cli(["status", file], { cwd: dir });
    expect(before.stdout).toContain(
      "its commit is refused by no-errors: start by sync1 refused earlier (a command refused and taken later counts too); find out from the service's log why, and only if you are certain it is safe, give --force=no-errors with it",
    );
    const status = await plainResumeRefused(run, file, dir);
    // offered forced: not said again
    expect(status.stdout).not.toContain("give --force=no-errors with it");
    const forced = await run("--resume", "--force=no-errors", "--yes");
    expect(forced.code, forced.all).toBe(0);
    expect(posts(s!, "commit")).toEqual([1, 1, 1]);
    // committed: nothing ahead to refuse
    expect((await cli(["status", file], { cwd: dir })).stdout).not.toContain("refused by no-errors");
  });

  // the way --only's own refusal offers for a whole cutover: the start alone to the write stop, then
  // `--from commit` to the whole fleet, which reads only the --from run's journal
  it("a split start completed by --from start --to drained --only, then --from commit: refused by no-errors, nothing sent; forced, it commits", async () => {
    const { run, file, dir } = await setup(["http500@1/start", "lag-floor=30"]);
    expect((await run("--to", "start")).code).toBe(1);
    s!.control.clearFaults();
    const refused = await run("--from", "start", "--only", "sync1", "--yes");
    expect(refused.code, refused.all).toBe(2);
    expect(refused.stderr).toContain("then run the rest to the whole fleet: --from commit (without --only)");
    const only = await run("--from", "start", "--to", "drained", "--only", "sync1", "--yes");
    expect(only.code, only.all).toBe(0);
    const r = await run("--from", "commit", "--yes");
    expect(r.code, r.all).toBe(3);
    expect(r.all).toMatch(/✗ interlock no-errors refused: instances answered with errors earlier: start: /);
    expect(posts(s!, "commit")).toEqual([0, 0, 0]);
    // that run sent nothing and is passed over: the --resume status offers is the earlier one's,
    // and says the refusal its commit meets (it offered a plain --resume, refused again: a review)
    const st = await cli(["status", file], { cwd: dir });
    expect(st.stdout).toContain("its commit is refused by no-errors: start by sync1 refused earlier");
    const forced = await run("--from", "commit", "--force=no-errors", "--yes");
    expect(forced.code, forced.all).toBe(0);
    expect(posts(s!, "commit")).toEqual([1, 1, 1]);
  });

  // a review: fromJournal counted nothing but a commit of a journal of another text, and the split
  // start it shows went uncounted: edited, `--from stop-writes` (the way its refusal offers) committed
  it("a split start completed by --from start --only, then the runbook edited: --from stop-writes is refused by no-errors, nothing sent", async () => {
    const { run, file } = await setup(["http500@1/start", "lag-floor=30"]);
    expect((await run("--to", "start")).code).toBe(1);
    s!.control.clearFaults();
    const only = await run("--from", "start", "--to", "drained", "--only", "sync1", "--yes");
    expect(only.code, only.all).toBe(0);
    writeFileSync(
      file,
      readFileSync(file, "utf8").replace(
        "waitFor: { state: COMMITTED }",
        "waitFor: { state: COMMITTED }, timeout: 40s",
      ),
    );
    const r = await run("--from", "stop-writes", "--yes");
    expect(r.code, r.all).toBe(3);
    expect(r.all).toMatch(
      /another text of the runbook: this run counts nothing from it but the refusal it shows \(start by sync1\)/,
    );
    expect(r.all).toMatch(/✗ interlock no-errors refused: instances answered with errors earlier: start: /);
    expect(posts(s!, "commit")).toEqual([0, 0, 0]);
  });

  it("a targeted start on an idle fleet would split it: refused by fleet-state (exit 3), nothing sent", async () => {
    const { run } = await setup([]);
    const r = await run("--from", "start", "--to", "start", "--only", "sync0", "--yes");
    expect(r.code, r.all).toBe(3);
    expect(r.all).toMatch(
      /start to sync0 only would split the fleet: sync1 is IDLE, sync2 is IDLE, which has not taken start/,
    );
    expect(posts(s!, "start")).toEqual([0, 0, 0]);
  });
});
