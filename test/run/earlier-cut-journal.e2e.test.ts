/**
 * An older cutover's journal of the folder cut short (lines lost off its end, its witness kept) is
 * not taken as whole by the checks that read every journal of the folder (`readFolderJournals`):
 * its commit, on its way in the lost lines (held in its round: a split commit), is neither sent
 * again by a newer cutover's `--from commit` nor left to close with writes turned back on by the
 * unwind of a newer run's write stop; and a `--from` run going on with the cut cutover itself is
 * refused as `--resume` refuses its journal. Built CLI, simulator: three instances, sync2 refusing
 * the commit, sync0 and sync1 holding it in its round (RUNNING, canCommit still true).
 */
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CLI_CUTOVER_DEFAULTS, cleanedUpAfterAll, posts, threeInstanceCutover } from "../support/crash-harness.js";

const made = cleanedUpAfterAll();

const GO = '  - { id: go, confirm: "Commit?" }\n';

/**
 * A cutover whose commit split (sync2 refused it; sync0 and sync1 hold it in its round), then,
 * when `newer`, a newer cutover that acted and sent no commit; then the first cutover's journal
 * cut back to before its commit step, its witness kept.
 */
async function commitCutAway(newer: boolean) {
  const { sim, file, dir, run } = await threeInstanceCutover(["commit-refused@2"], CLI_CUTOVER_DEFAULTS, GO);
  made.sims.push(sim);
  made.dirs.push(dir);
  const first = await run("--yes");
  expect(first.code, first.all).toBe(1);
  expect(first.all).toContain("split: commit reached 2 of 3 instances (refused by sync2)");
  expect(posts(sim, "commit"), first.all).toEqual([1, 1, 1]);
  sim.control.clearFaults();
  const folder = join(dir, ".syncbook", "crash");
  const older = join(
    folder,
    readdirSync(folder).find((f) => f.endsWith(".jsonl"))!,
  );
  let before = first.all;
  if (newer) {
    const between = await run("--new-cutover", "--from", "stop-writes", "--to", "stop-writes", "--yes");
    before += `\n--- --new-cutover --from stop-writes --to stop-writes\n${between.all}`;
    expect(between.code, before).toBe(0);
  }
  // its commit step and all after it lost: shorter than its witness says
  const lines = readFileSync(older, "utf8").trimEnd().split("\n");
  const at = lines.findIndex((l) => l.includes('"type":"step.started"') && l.includes('"id":"commit"'));
  expect(at, before).toBeGreaterThan(0);
  writeFileSync(older, `${lines.slice(0, at).join("\n")}\n`);
  expect(sim.control.state().writes.enabled, before).toBe(false);
  return { sim, file, older, run, before };
}

const cutShort = (journal: string): string =>
  `cannot trust ${journal}: the journal is shorter than its last fsynced point`;

describe("an older cutover's journal cut short of its witness", () => {
  it("a newer cutover's --from commit is refused (exit 3), naming that journal and why; no commit sent", async () => {
    const c = await commitCutAway(true);
    const again = await c.run("--new-cutover", "--from", "commit", "--force", "writes-stopped", "--yes");
    const where = `${c.before}\n--- --new-cutover --from commit\n${again.all}`;
    expect(posts(c.sim, "commit"), where).toEqual([1, 1, 1]);
    expect(again.code, where).toBe(3);
    expect(again.stderr, where).toContain(
      `cannot start a new cutover from commit: the journal ${c.older}: it cannot be trusted (${cutShort(c.older)}`,
    );
    expect(again.stderr, where).toContain(
      "whether it records a start, commit or reverse still on the fleet, which this run would send (commit), cannot be told; nothing was sent",
    );
    expect(again.all, where).not.toMatch(/▶ \[/);
  }, 120_000);

  it("the undo of a newer run's write stop keeps writes stopped, naming that journal and why", async () => {
    const c = await commitCutAway(true);
    // sends no commit: goes on, the journal named; stops writes, fails at the confirm (no terminal)
    const again = await c.run("--new-cutover", "--from", "stop-writes", "--to", "go");
    const where = `${c.before}\n--- --new-cutover --from stop-writes --to go\n${again.all}`;
    expect(c.sim.control.state().writes.enabled, `writes stay stopped\n${where}`).toBe(false);
    expect(again.code, where).toBe(1);
    expect(again.stderr, where).toContain(`journal: ${c.older}: it cannot be trusted (${cutShort(c.older)}`);
    expect(again.stderr, where).toMatch(
      /the undo of step 3 "stop-writes" was not run, so application writes stay STOPPED: /,
    );
    expect(again.stderr, where).toContain(`${c.older}: it cannot be trusted (${cutShort(c.older)}`);
    expect(again.stderr, where).toContain(
      "whether an earlier cutover's commit may still take effect on the fleet cannot be told",
    );
    expect(posts(c.sim, "commit"), where).toEqual([1, 1, 1]);
  }, 120_000);

  it("a --from run going on with that cutover is refused as --resume refuses its journal (exit 2); no commit sent", async () => {
    const c = await commitCutAway(false);
    const again = await c.run("--from", "stop-writes", "--yes");
    const where = `${c.before}\n--- --from stop-writes\n${again.all}`;
    expect(posts(c.sim, "commit"), where).toEqual([1, 1, 1]);
    expect(again.code, where).toBe(2);
    const resume = await c.run("--resume", "--yes");
    expect(resume.code, resume.all).toBe(2);
    const hint = (s: string) => /\n {2}hint: (.*)\n/.exec(s)?.[1];
    // the message and the commands that help next are --resume's: the fleet, the journal set aside
    expect(again.stderr, where).toContain(cutShort(c.older));
    expect(hint(again.stderr), where).toBe(hint(resume.stderr));
    expect(hint(again.stderr), where).toContain(
      `See the fleet and check the application's writes: syncbook status ${c.file};`,
    );
    expect(again.stderr, where).not.toContain("it cannot be trusted (");
    expect(again.all, where).not.toMatch(/▶ \[/);
    expect(posts(c.sim, "commit"), where).toEqual([1, 1, 1]);
  }, 120_000);
});
