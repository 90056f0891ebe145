/**
 * A verifier result that passed over DDL on the source is not a verification (src/steps/kit/earned.ts
 * `skippedSourceDdl`, src/steps/verify.ts judge). migration-verifier v0.2.1 under `--ddlHandling
 * warnMost` warns of and counts a source event of type create, modify, createIndexes, dropIndexes,
 * shardCollection, reshardCollection or refineCollectionShardKey, and does not verify it
 * (internal/verifier/change_stream.go lines 218-232, change_reader.go `allowedSrcDDLOpTypes`); its
 * README: "In this case you **MUST** manually confirm that the change is replicated to the
 * destination". `srcChangeStats.eventCounts` holds them, cumulative since the verifier first started
 * (api/change_event_counts.go). Under the default `failAll` any DDL makes it exit. Before, every output
 * said "verified" over such a skip. The simulator's verifier runs either way (`verifierDdlHandling`,
 * src/sim/README.md); the runbook's hook puts a createIndexes on the source during the verification
 * (`POST /sim/ddl`), as someone building an index during the cutover would.
 */
import { describe, expect, it } from "vitest";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Simulator, SimulatorOptions } from "../../src/sim/index.js";
import { cli, watchState } from "../support/run.js";
import type { WatchState } from "../../src/watch/state.js";
import { escapeXml } from "../../src/text.js";
import {
  CHECK,
  CLI_CUTOVER_DEFAULTS,
  COMMIT,
  COMMITTED,
  DRAINED,
  READY,
  START,
  STOP,
  VERIFY,
  cleanedUpAfterAll,
  cutoverYaml,
  fastSim,
  tempDir,
} from "../support/crash-harness.js";

const made = cleanedUpAfterAll();

/**
 * `node app.mjs <url>`: the application's own script, which builds an index on the source during the
 * verification (the simulator's `POST /sim/ddl`). Its command names no DDL: lint's
 * `ddl-during-verify` (src/steps/hook.ts) refuses a hook that looks like DDL, and DDL run by
 * something lint cannot see into is the case the verifier's count catches.
 */
const APP = `const [url] = process.argv.slice(2);
const r = await fetch(url + "/sim/ddl", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ type: "createIndexes" }) });
const body = await r.json();
if (!r.ok || body.duringVerification !== true) { console.error("app", r.status, JSON.stringify(body)); process.exit(1); }
`;

interface Outcome {
  sim: Simulator;
  dir: string;
  run: Awaited<ReturnType<typeof cli>>;
}

/** A full cutover (start … check, DDL on the source, … commit, COMMITTED, verify) against a simulator with these options. */
async function cutover(opts: SimulatorOptions, defaults = CLI_CUTOVER_DEFAULTS): Promise<Outcome> {
  const sim = await fastSim({ instances: 1, timeScale: 100, graceMs: 120_000, ...opts });
  made.sims.push(sim);
  const dir = tempDir();
  made.dirs.push(dir);
  writeFileSync(join(dir, "app.mjs"), APP);
  const node = JSON.stringify(process.execPath);
  const app = `  - { id: app, hook: { use: shell, with: { command: [${node}, ${JSON.stringify(join(dir, "app.mjs"))}, "${sim.instances[0]!.url}"] } } }\n`;
  writeFileSync(
    join(dir, "rb.yaml"),
    cutoverYaml(sim, {
      defaults,
      steps: START + READY + CHECK + app + STOP + DRAINED + COMMIT + COMMITTED + VERIFY,
    }),
  );
  const run = await cli(["run", "rb.yaml", "--renderer", "simple", "--yes", "--report", "rep"], { cwd: dir });
  return { sim, dir, run };
}

interface Status {
  journal: {
    finished?: { verified: boolean };
    verifier?: { verified: boolean; why?: string };
    verification?: { verified: boolean; why?: string; text: string };
  };
}
const status = async (dir: string): Promise<{ json: Status; text: string }> => ({
  json: JSON.parse((await cli(["status", "rb.yaml", "--json"], { cwd: dir })).stdout) as Status,
  text: (await cli(["status", "rb.yaml"], { cwd: dir })).all,
});
const report = (dir: string): { verification: { verified: boolean; why?: string } } =>
  JSON.parse(readFileSync(join(dir, "rep", "report.json"), "utf8")) as { verification: { verified: boolean } };
const html = (dir: string): string => readFileSync(join(dir, "rep", "report.html"), "utf8");
/** The run's end line ("■ run …"): one. */
function endLine(all: string): string {
  const end = all.split("\n").filter((l) => /■ run /.test(l));
  expect(end, all).toHaveLength(1);
  return end[0]!;
}

const WHY =
  "not verified: the verifier skipped DDL on the source (createIndexes 1; --ddlHandling warnMost), which it does not verify: its README says you MUST then confirm by hand that each change reached the destination";
const NO_VERIFY = "no `verify` step passed on this cutover's verification result";
/** The why every output gives: the one rule's words, naming the verify step's refusal (src/model/verify-failed.ts). */
const REFUSED = `${NO_VERIFY}: step 9 "verify" failed: ${WHY} (phase idle, generation `;

describe("a verifier that skipped DDL on the source (--ddlHandling warnMost)", () => {
  it("ends not verified everywhere, names the verifier's clean restart and --resume; restarted clean, that --resume is committed · verified", async () => {
    const { sim, dir, run } = await cutover({ verifierDdlHandling: "warnMost" });
    // the verifier counted the createIndexes and finished: the result was read, and refused
    const p = (await (await fetch(`${sim.verifierUrl}/api/v1/progress`)).json()) as {
      progress: { phase: string; srcChangeStats: { eventCounts: Record<string, number> } };
    };
    expect(p.progress.phase).toBe("idle");
    expect(p.progress.srcChangeStats.eventCounts.createIndexes).toBe(1);
    expect(sim.control.counts().verifier["POST /api/v1/writesOff"]).toBe(1);

    expect(run.code, run.all).toBe(1);
    expect(run.all).toContain(WHY);
    // the run's end names the refusal, in the words the report, the page and status use (below)
    const end = endLine(run.all);
    expect(end).toMatch(/■ run failed .*· committed · not verified \(no `verify` step passed on /);
    const why = end.slice(end.indexOf("· not verified (") + "· not verified (".length, end.lastIndexOf(") · exit 1"));
    expect(why.startsWith(REFUSED), why).toBe(true);
    expect(run.all).not.toMatch(/■ run ok|· verified/);
    // the way on: the verifier's clean restart, then the --resume
    expect(run.all).toContain(
      "Nothing is verified for this cutover: the verifier's log names each DDL event it skipped. With the source's writes and DDL stopped, restart the verifier with --clean (or on a new metadata database) and without --ddlHandling warnMost (DDL during the new check then stops it rather than going unverified), then `syncbook run rb.yaml --resume`: this step sends a new check, which compares every collection as it is now.",
    );

    const s = await status(dir);
    expect(s.json.journal.finished, JSON.stringify(s.json)).toMatchObject({
      outcome: "failed",
      committed: true,
      verified: false,
      exitCode: 1,
      message: expect.stringContaining(`step verify failed: ${WHY} (phase idle, generation `),
    });
    expect(s.json.journal.verifier?.verified ?? false).toBe(false);
    expect(s.json.journal.verifier?.why).toBe(why);
    expect(s.text).toContain(
      "the verifier skipped DDL on the source (createIndexes 1; --ddlHandling warnMost), which it does not verify",
    );
    expect(s.text).toContain(`  verification: not verified (${why})\n`);
    // its verdict asked once, in the words the report and the page use; the run's end line says it too
    expect(s.json.journal.verification).toEqual({ verified: false, why, text: `not verified (${why})` });
    expect(s.text).toMatch(/\n {2}run ended failed .*\(committed\) · not verified at /);
    // finished and refused: no "yet", which says a wait would make it one
    expect(s.text).toContain(
      "  this cutover's verification finished, and its result is refused: the verifier skipped DDL on the source",
    );
    expect(s.text).not.toMatch(/yet \(this cutover's own check runs\)/);
    expect(s.text).not.toMatch(/verification: verified/);
    // the report and the page say why, as the run's end and status do: the verify step's refusal
    expect(report(dir).verification).toEqual({ verified: false, why, headline: "NOT VERIFIED" });
    expect(html(dir)).toContain(`<dt>verification</dt><dd>${escapeXml(`not verified (${why})`)}</dd>`);
    // committed, then refused: the report's headline and title say NOT VERIFIED, not "FAILED AFTER COMMIT" alone
    expect(html(dir)).toMatch(/<h1>FAILED AFTER COMMIT · NOT VERIFIED <span class="runbook">/);
    expect(html(dir)).toMatch(/<title>FAILED · NOT VERIFIED · [^<]* · syncbook report<\/title>/);
    const page: WatchState = await watchState(["rb.yaml"], dir);
    expect(page.verification).toEqual({
      verified: false,
      why,
      text: `not verified (${why})`,
      headline: "NOT VERIFIED",
    });
    // committed: the page's runner section says that verdict beside the run's end (test/watch/page.test.ts)
    expect(page.model.cutover.committed).toBe(true);
    expect(page.runner.state).toBe("finished");

    // the remedy the run named: the verifier restarted with --clean (its --ddlHandling kept), then the --resume
    const restarted = await fetch(`${sim.verifierUrl}/sim/verifier/restart`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ clean: true }),
    });
    expect(await restarted.json()).toEqual({ success: true });
    expect(sim.control.state().verifier).toMatchObject({ clean: true, ddlHandling: "warnMost" });
    const resume = await cli(["run", "rb.yaml", "--resume", "--renderer", "simple", "--yes", "--report", "rep"], {
      cwd: dir,
    });
    expect(resume.code, resume.all).toBe(0);
    expect(endLine(resume.all)).toMatch(/■ run ok .*· committed · verified/);
    expect(resume.all).toMatch(/^\d\d:\d\d:\d\d verified: phase idle, generation 1, /m);
    // a fresh verification: its counts start from 0, and the hook's DDL is not run again
    expect(sim.control.state().verifier).toMatchObject({ resumed: false, ddlDuringVerification: 0, exited: null });
    const again = await status(dir);
    expect(again.json.journal.finished?.verified, JSON.stringify(again.json)).toBe(true);
    expect(again.text).toMatch(/verification: verified/);
    expect(report(dir).verification.verified).toBe(true);
    expect(html(dir)).toContain("<dt>verification</dt><dd>verified</dd>");
    expect(html(dir)).toMatch(/<h1>COMMITTED · VERIFIED <span class="runbook">/);
    expect(again.json.journal.verification).toEqual({ verified: true, text: "verified" });
    expect(again.text).toMatch(/\n {2}run ended ok .*\(committed\) · verified at /);
    expect(again.text).toContain("  verification: verified\n");
  }, 180_000);

  // the default --ddlHandling failAll: "any DDL change events will crash the verifier" (its README)
  it("under the default failAll the verifier exits on the DDL: exit 1, never verified", async () => {
    // the verify step waits 8 s for a verifier that is gone, not 30
    const { sim, dir, run } = await cutover(
      {},
      "{ pollInterval: 50ms, timeout: 8s, requestTimeout: 1s, retry: { giveUpAfter: 3s } }",
    );
    expect(sim.control.state().verifier.exited).toBe(
      'received event with unknown optype: {"operationType": "createIndexes"}; to skip this event, run the verifier with `ddlHandling` set to `warnMost`',
    );
    expect(run.code, run.all).toBe(1);
    expect(run.all).toContain("verifier.progress failed: cannot connect");
    // the verify step's failure, named: no result came to refuse
    const failed = `${NO_VERIFY}: step 9 "verify" failed: timed out after 8s waiting for the verifier to show this run's check`;
    expect(endLine(run.all)).toContain(`· committed · not verified (${failed}`);
    expect(run.all).not.toMatch(/■ run ok|· verified/);
    expect(sim.control.counts().verifier["POST /api/v1/writesOff"] ?? 0).toBe(0);
    const s = await status(dir);
    expect(s.json.journal.finished?.verified ?? false).toBe(false);
    expect(s.text).toContain(`verification: not verified (${failed}`);
    expect(s.text).not.toMatch(/verification: verified/);
    expect(report(dir).verification).toEqual({
      verified: false,
      why: expect.stringContaining(failed),
      headline: "NOT VERIFIED",
    });
  }, 180_000);
});
