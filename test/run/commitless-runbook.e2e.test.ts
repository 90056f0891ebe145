/**
 * A runbook with no commit step (a verify-only runbook, run after the cutover was committed by
 * another runbook or by hand) ended "run ok · not committed · verified" on a COMMITTED fleet: a
 * word on the fleet that was false. Its end, its notification and its summary now say "no commit
 * in this runbook" (`commitWords`, src/writes-words.ts); a runbook with a commit still says "not
 * committed" when it did not. The built CLI against the simulator over loopback.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cli } from "../support/run.js";
import {
  cleanedUpAfterAll,
  cliCutover,
  COMMIT,
  COMMITTED,
  DRAINED,
  READY,
  START,
  STOP,
} from "../support/crash-harness.js";

const made = cleanedUpAfterAll();

describe("a runbook with no commit step, on a fleet another runbook committed", () => {
  it('ends "no commit in this runbook", never "not committed"; its notification says the same', async () => {
    const c = await cliCutover(made, [], START + READY + STOP + DRAINED + COMMIT + COMMITTED);
    const cutover = await cli(c.args(), { cwd: c.dir });
    expect(cutover.code, cutover.all).toBe(0);
    expect(c.s.control.state().instances.map((i) => i.state)).toEqual(["COMMITTED"]);
    // the verification, a runbook of its own (writes stay stopped: said so, not a stopWrites step)
    const verifyOnly = join(c.dir, "verify.yaml");
    const notes = join(c.dir, "notes.jsonl");
    writeFileSync(
      verifyOnly,
      readFileSync(c.file, "utf8")
        .replace(/^name: .*$/m, "name: verify-only\nwritesStoppedExternally: true")
        .replace(
          /^steps:[\s\S]*$/m,
          `notify:\n  - { use: file, with: { path: ${JSON.stringify(notes)} }, on: [run.finished] }\nsteps:\n  - { id: verify, verify: {} }\n`,
        ),
    );
    const r = await cli(["run", verifyOnly, "--renderer", "simple", "--journal-dir", c.jd], { cwd: c.dir });
    expect(r.code, r.all).toBe(0);
    expect(r.all, r.all).toMatch(/■ run ok in .* · no commit in this runbook · verified · exit 0/);
    expect(r.all, r.all).not.toMatch(/not committed/);
    const note = JSON.parse(readFileSync(notes, "utf8").trim().split("\n").at(-1)!) as { text: string };
    expect(note.text).toMatch(/run finished \(no commit in this runbook\) after /);
  }, 120_000);
});
