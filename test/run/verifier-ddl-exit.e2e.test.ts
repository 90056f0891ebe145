/**
 * A verifier that exits on DDL on the source during the verify step (its default `--ddlHandling
 * failAll`; README: "any DDL change events will crash the verifier"). The run cannot read the
 * verifier's log, only see its progress stop answering, so its hint names the likely causes, DDL
 * among them with the log line to look for, and the way on: the verifier restarted with `--clean`,
 * then the full `syncbook run … --resume` (src/steps/kit/verifier.ts `verifierGoneHint`). Restarted
 * without `--clean`, the verifier resumes its change stream from the resume token it saved before
 * that DDL, reads it again and exits again (migration-verifier v0.2.1 internal/verifier/
 * change_stream.go lines 217-230, 262-269 and 383-411; `--clean` drops the metadata, check.go lines
 * 190-196); the simulator does the same (src/sim/README.md, `verifierDdlHandling`). Before, the hint
 * said "restart it, then run again with --resume" (at the step's time limit: "Look at the instances
 * named above; once they are ready, … waits again"), and a restart as that allowed met the same DDL.
 */
import { describe, expect, it } from "vitest";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { cli, startCli, watchState } from "../support/run.js";
import type { WatchState } from "../../src/watch/state.js";
import {
  CHECK,
  CLI_CUTOVER_DEFAULTS,
  COMMIT,
  COMMITTED,
  DRAINED,
  READY,
  START,
  STOP,
  cleanedUpAfterAll,
  cutoverYaml,
  fastSim,
  tempDir,
  until,
} from "../support/crash-harness.js";

const made = cleanedUpAfterAll();

/** The verify step gives up on a verifier that does not answer after 3 s (its default: 60 s). */
const VERIFY = "  - { id: verify, verify: { giveUpAfter: 3s } }\n";

const EXIT =
  'received event with unknown optype: {"operationType": "createIndexes"}; to skip this event, run the verifier with `ddlHandling` set to `warnMost`';

const HINT =
  'The verifier is not running: it exits on any DDL on the source under its default --ddlHandling failAll (its log then shows "Fatal error." with the error "received event with unknown optype: …"), on a failed check (e.g. a collection that exists only on the source), or on a second operational request while one is handled. Read its log. With no more DDL run on the source, restart the verifier with --clean (or on a new metadata database): restarted without --clean, it resumes its change stream from the resume token it saved before that DDL, reads it again and exits again. Not with --ddlHandling warnMost, which that error suggests: this cutover refuses a result that skipped DDL. Then `syncbook run rb.yaml --resume`: this step sends a new check, which compares every collection as it is now.';

/** The run's end line ("■ run …"): one. */
function endLine(all: string): string {
  const end = all.split("\n").filter((l) => /■ run /.test(l));
  expect(end, all).toHaveLength(1);
  return end[0]!;
}

describe("a verifier that exits on DDL on the source during the verify step (--ddlHandling failAll)", () => {
  it("names DDL among the causes, the --clean restart and the full --resume; restarted so, that command verifies", async () => {
    // writesOff is answered 2 s late (its handler holds the request lock): DDL run meanwhile is read
    // by the change reader, which has not had the writes-off timestamp yet
    const sim = await fastSim({ instances: 1, timeScale: 100, graceMs: 120_000, faults: ["writes-off-slow=2s"] });
    made.sims.push(sim);
    const dir = tempDir();
    made.dirs.push(dir);
    writeFileSync(
      join(dir, "rb.yaml"),
      cutoverYaml(sim, {
        defaults: CLI_CUTOVER_DEFAULTS,
        steps: START + READY + CHECK + STOP + DRAINED + COMMIT + COMMITTED + VERIFY,
      }),
    );
    const control = (path: string, body: unknown) =>
      fetch(`${sim.instances[0]!.url}${path}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      }).then((r) => r.json() as Promise<Record<string, unknown>>);
    const resume = (args: string[]) => cli([...args, "--renderer", "simple", "--yes"], { cwd: dir });

    const first = startCli(["run", "rb.yaml", "--renderer", "simple", "--yes"], { cwd: dir });
    await until(
      "the verify step's writesOff",
      () => (sim.control.counts().verifier["POST /api/v1/writesOff"] ?? 0) > 0,
      60_000,
    );
    // an index built on the source while the verify step waits for writesOff's answer
    expect(await control("/sim/ddl", { type: "createIndexes" })).toEqual({ success: true, duringVerification: true });
    const run = await first.done;
    expect(sim.control.state().verifier.exited).toBe(EXIT);
    expect(run.code, run.all).toBe(1);
    expect(run.all).toMatch(
      /✖ \[8\/8\] Verify the destination against the source failed in .*: the verifier has failed for 3s: .*ECONNREFUSED/,
    );
    expect(run.all).toContain(`hint: ${HINT}`);
    expect(run.all).not.toContain("waits again");
    expect(endLine(run.all)).toMatch(
      /■ run failed .*· committed · not verified \(no `verify` step passed on this cutover's verification result: step 8 "verify" failed: the verifier has failed for 3s: .*ECONNREFUSED.*\) · exit 1/,
    );
    expect(run.all).not.toMatch(/■ run ok|· verified/);

    // status and the watch page offer the same --resume, with the same hint first
    const status = (await cli(["status", "rb.yaml"], { cwd: dir })).all;
    expect(status).toContain(
      `    syncbook run rb.yaml --resume\n        goes on with the cutover where its last run stopped: step 8 verify runs again, once what its failure said is done: ${HINT}`,
    );
    expect(status).toMatch(
      /verification: not verified \(no `verify` step passed on this cutover's verification result: step 8 "verify" failed: the verifier has failed for 3s/,
    );
    expect(status).not.toContain("waits again");
    const page: WatchState = await watchState(["rb.yaml"], dir);
    expect(page.runner.next).toBe(`syncbook run rb.yaml --resume   (first, as step 8 verify's failure said: ${HINT})`);

    // restarted without --clean (what "restart it" allowed): it meets the same DDL, and exits again
    expect(await control("/sim/verifier/restart", { clean: false })).toEqual({ success: true });
    const unclean = await resume(["run", "rb.yaml", "--resume"]);
    expect(unclean.code, unclean.all).toBe(1);
    expect(sim.control.state().verifier).toMatchObject({ resumed: true, exited: EXIT });
    expect(unclean.all).toContain(`hint: ${HINT}`);
    expect(endLine(unclean.all)).toMatch(/■ run failed .*· committed · not verified/);

    // as the hint says: restarted with --clean (its --ddlHandling kept: failAll), then its command pasted
    expect(await control("/sim/verifier/restart", { clean: true })).toEqual({ success: true });
    expect(sim.control.state().verifier).toMatchObject({ clean: true, ddlHandling: "failAll", exited: null });
    const command = /`(syncbook run [^`]+)`/.exec(HINT)![1]!;
    expect(command).toBe("syncbook run rb.yaml --resume");
    const again = await resume(command.split(" ").slice(1));
    expect(again.code, again.all).toBe(0);
    expect(endLine(again.all)).toMatch(/■ run ok .*· committed · verified/);
    expect(again.all).toMatch(/^\d\d:\d\d:\d\d verified: phase idle, generation 1, /m);
    expect(sim.control.state().verifier).toMatchObject({ resumed: false, exited: null });
    expect((await cli(["status", "rb.yaml"], { cwd: dir })).all).toMatch(/verification: verified/);
  }, 180_000);
});
