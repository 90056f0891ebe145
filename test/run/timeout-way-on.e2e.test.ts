/**
 * A step that ran out of time: its hint names both ways on, each as one pastes it. Raising the
 * step's `timeout` edits the runbook, and a plain `--resume` of a changed runbook is refused
 * (src/journal/reconcile.ts `changed-runbook`): the hint said "Raise the step's `timeout`" and the
 * run's end offered the plain `--resume`, which was then refused (a review of every hint's command).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import type { Simulator } from "../../src/sim/index.js";
import { cli, runbookFor, sim, START, tempDir, writeRunbook } from "../support/run.js";

let s: Simulator | undefined;
afterEach(async () => {
  await s?.close();
  s = undefined;
});

describe("a wait that timed out", () => {
  it("names the plain --resume and, for a raised timeout, the --resume --allow-changed-runbook that then runs", async () => {
    s = await sim({ timeScale: 200 });
    const dir = tempDir();
    const file = writeRunbook(
      dir,
      runbookFor(s, `${START}  - { id: ready, waitFor: { canCommit: true, timeout: 1ms } }\n`),
    );
    const first = await cli(["run", file, "--renderer", "simple"], { cwd: dir });
    expect(first.code, first.all).toBe(1);
    expect(first.all).toMatch(/Wait for canCommit true failed in \d+ms: timed out after 1ms/);
    const hint = /hint: (Look at the instances named above.*)/.exec(first.all)?.[1];
    expect(hint, first.all).toBe(
      `Look at the instances named above; once they are ready, \`syncbook run ${file} --resume\` waits again. Or raise the step's \`timeout\` in the runbook, then \`syncbook run ${file} --resume --allow-changed-runbook\`.`,
    );
    // the runbook edited as the hint says: the plain --resume is refused, the one it names runs
    writeFileSync(file, readFileSync(file, "utf8").replace("timeout: 1ms", "timeout: 2m"));
    const plain = await cli(["run", file, "--renderer", "simple", "--resume"], { cwd: dir });
    expect(plain.code, plain.all).toBe(2);
    expect(plain.all).toMatch(/changed/);
    const named = /`syncbook run (\S+) (--resume --allow-changed-runbook)`/.exec(hint!)!;
    const after = await cli(["run", named[1]!, ...named[2]!.split(" "), "--renderer", "simple"], { cwd: dir });
    expect(after.code, after.all).toBe(0);
  }, 60_000);

  // a reread: the hint named `syncbook run … --resume` in a rehearsal too, which pasted acts on the
  // runbook's real fleet; a failed rehearsal suggests no --resume (rehearse-options.e2e)
  it("in a rehearsal: names no syncbook run, only the raised timeout and the rehearsal again", async () => {
    s = await sim({ timeScale: 200 });
    const dir = tempDir();
    const file = writeRunbook(
      dir,
      runbookFor(s, `${START}  - { id: ready, waitFor: { canCommit: true, timeout: 1ms } }\n`),
    );
    const r = await cli(["rehearse", file, "--renderer", "simple"], { cwd: dir });
    expect(r.code, r.all).toBe(1);
    expect(r.all).toContain(
      "hint: Look at the instances named above, or raise the step's `timeout` in the runbook, then rehearse again.",
    );
    expect(r.all).not.toContain("--resume");
    expect(r.all).not.toContain("syncbook run");
  }, 60_000);
});
