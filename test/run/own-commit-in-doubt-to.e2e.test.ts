/**
 * A cutover's own commit in doubt (sent to sync0 and sync1, no usable answer), then a `--from
 * stop-writes --to stop-writes` of the same cutover (not `--new-cutover`), with a wait between the
 * stop and the commit. That run's journal carries the commit (src/journal/state.ts), and the
 * `--resume` of it goes on at the wait, before the commit: its reconciliation refuses on the journal
 * alone, whatever the fleet shows (`sentAhead`, src/journal/reconcile.ts). A review reported the
 * run's end offering that `--resume`; tried, the end named the refusal of the folder's other
 * journals instead (the same cutover's first journal, called "an earlier cutover" that "a newer
 * cutover of this runbook left unfinished"), with another way on than the resume's, and `status`
 * offered the `--resume` as one that "reads the fleet" and adopts the commit. The run's end and
 * `status` now say the resume's own refusal and hint, and the resume, run, says the same. The built
 * CLI against the simulator over loopback; what the service received is read from the simulator.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cli, watchState } from "../support/run.js";
import {
  cleanedUpAfterAll,
  CLI_CUTOVER_DEFAULTS,
  COMMIT,
  COMMITTED,
  cutoverYaml,
  DRAINED,
  fastSim,
  posts,
  READY,
  START,
  stopVia,
  tempDir,
} from "../support/crash-harness.js";

const made = cleanedUpAfterAll();

describe("a --to run of a cutover whose own commit is in doubt", () => {
  it.each([
    // sync2 refused the commit, sync0 and sync1 joined its round and their answers were lost
    [
      "a split commit whose answers were lost",
      3,
      ["commit-refused@2", "drop-after-effect@0/commit", "drop-after-effect@1/commit"],
    ],
    // both took it, their answers lost, progress showing RUNNING still
    ["a commit whose answers were lost after it took effect", 2, ["late-effect=100000s@*/commit"]],
  ] as const)(
    "%s: the end and status say the --resume's own refusal, in its words, not the --resume",
    async (_, instances, faults) => {
      const sim = await fastSim({ instances, timeScale: 100, graceMs: 120_000 });
      made.sims.push(sim);
      const dir = tempDir();
      made.dirs.push(dir);
      writeFileSync(
        join(dir, "rb.yaml"),
        cutoverYaml(sim, {
          defaults: CLI_CUTOVER_DEFAULTS,
          steps: START + READY + stopVia(sim.verifierUrl) + DRAINED + COMMIT + COMMITTED,
        }),
      );
      const run = (args: readonly string[]) => cli(["run", "rb.yaml", "--renderer", "simple", ...args], { cwd: dir });
      for (const f of faults) sim.control.addFault(f);
      const first = await run(["--yes"]);
      let log = `--- run --yes\n${first.all}`;
      expect(first.code, log).toBe(1);
      expect(first.all, log).toMatch(/sync0: http\S+: commit failed: connection failed/);
      const sent = posts(sim, "commit");
      expect(sent.slice(0, 2), log).toEqual([1, 1]);

      const to = await run(["--from", "stop-writes", "--to", "stop-writes", "--yes"]);
      log += `\n--- --from stop-writes --to stop-writes\n${to.all}`;
      expect(to.code, log).toBe(0);
      expect(to.all, log).toMatch(/cutover: this run continues cutover /);
      // not the --resume, and not another check's refusal that calls its own cutover an earlier one
      expect(to.all, log).not.toMatch(/the cutover goes on with:/);
      expect(to.all, log).not.toMatch(/of an earlier cutover|a newer cutover of this runbook/);
      const said =
        /stopped at --to stop-writes; a --resume would be refused \((cannot resume from \S+: .*)\)\. (See the fleet: .*)$/m.exec(
          to.all,
        );
      expect(said, log).not.toBeNull();
      expect(said![1]).toMatch(
        /: commit \(step 5 "commit"\) was sent by an earlier run of this cutover \(its journal's record, carried by the --from run that wrote this one\); answers: sync0 unknown, sync1 unknown.*; this resume goes on at step 4 "drained", before it, and would send it again on its way: a commit is never sent twice to an instance$/,
      );
      expect(said![2]).toBe(
        "See the fleet: syncbook status rb.yaml; if every instance shows the commit took effect, go on after it with: syncbook run rb.yaml --from committed; if not, find out from the service's own log which instances received /commit and send it by hand only to those that did not, then go on after it",
      );

      // status, for the same folder: the same refusal, and no --resume (nor --abort) offered
      const status = await cli(["status", "rb.yaml"], { cwd: dir });
      log += `\n--- status\n${status.all}`;
      expect(status.code, log).toBe(0);
      expect(status.stdout, log).toContain("  next: no command of syncbook's, while this holds:");
      expect(status.stdout, log).toContain(`    (a --resume is refused: ${said![1]})`);
      expect(status.stdout, log).toContain(`    (${said![2]!.replace(/^S/, "s")})`);
      expect(status.stdout, log).not.toMatch(/syncbook run rb\.yaml --(resume|abort)\b/);
      const json = await cli(["status", "rb.yaml", "--json"], { cwd: dir });
      const j = (JSON.parse(json.stdout) as { journal: { resumeRefused?: { message: string } } }).journal;
      expect(j.resumeRefused?.message, json.all).toBe(said![1]);

      // the watch page, from the same journals: status first, not that --resume (nor an earlier
      // run's failure hint as if the resume ran its step again)
      const page = (await watchState(["rb.yaml"], dir)).runner;
      expect(page.next, JSON.stringify(page)).toBe(
        "syncbook status rb.yaml   (a --resume is refused on its journal, whatever the fleet shows: a start, commit or reverse sent by an earlier run is in doubt ahead of where it goes on; status says the refusal and the way on)",
      );
      // the --resume offered before, run: refused in those very words, nothing sent
      const resume = await run(["--resume", "--yes"]);
      log += `\n--- --resume\n${resume.all}`;
      expect(resume.code, log).toBe(1);
      expect(resume.all, log).toContain(`syncbook: ${said![1]}\n`);
      expect(resume.all, log).toContain(`  hint: ${said![2]!.replace(/^S/, "s")}`);
      expect(posts(sim, "commit"), log).toEqual(sent);

      // a --from run of the same cutover meets that commit in the first run's journal: an earlier
      // run of this cutover, not "an earlier cutover" a newer one left unfinished (a review)
      for (const from of ["commit", "drained"]) {
        const r = await run(["--from", from, "--yes"]);
        log += `\n--- --from ${from}\n${r.all}`;
        expect(r.code, log).toBe(3);
        expect(r.all, log).toMatch(
          new RegExp(
            `cannot go on with the last cutover from ${from}: the journal \\S+ of an earlier run of this cutover, \\S+, shows commit \\(step 5 "commit"\\) may have reached sync0, sync1 \\([^)]*\\), and this run would send it again: the fleet may still hold it: a commit is never sent twice to an instance; nothing was sent`,
          ),
        );
        expect(r.all, log).not.toMatch(/of an earlier cutover|a newer cutover of this runbook/);
        expect(posts(sim, "commit"), log).toEqual(sent);
      }
    },
    120_000,
  );
});
