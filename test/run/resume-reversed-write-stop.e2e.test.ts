/**
 * `--resume` after a reverse runs the new sync's write stop again once its undo ran. A run that
 * reversed the sync, stopped writes on its new source and then failed before the new sync's commit
 * ran the stopWrites' undo (writes back on). Its `--resume` counted the first sync's commit as "a
 * commit may have been sent" and so never ran that write stop again (src/run/resume.ts): it went on
 * to the commit, which the writes-stopped interlock refused (exit 3), and the way on took a second
 * command (`--from`). The new sync's write stop counts against the new sync's commit only. The
 * built CLI against the simulator over loopback.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cli } from "../support/run.js";
import {
  CHECK,
  cleanedUpAfterAll,
  cliCutover,
  COMMIT,
  COMMITTED,
  DRAINED,
  READY,
  REVERSE,
  START_REV,
  STOP,
  VERIFY,
} from "../support/crash-harness.js";

const made = cleanedUpAfterAll();

/** `node fail-once.mjs <mark>`: fails the first time (and leaves `mark`), passes after. */
const FAIL_ONCE = `import { existsSync, writeFileSync } from "node:fs";
const mark = process.argv[2];
if (!existsSync(mark)) { writeFileSync(mark, ""); console.error("not yet"); process.exit(1); }
`;

describe("--resume after a reverse, when the new sync's write stop was undone", () => {
  it("runs that write stop again before the new sync's commit, and the commit goes through", async () => {
    const c = await cliCutover(made, [], "");
    writeFileSync(join(c.dir, "fail-once.mjs"), FAIL_ONCE);
    const gate = [process.execPath, join(c.dir, "fail-once.mjs"), join(c.dir, "failed")].map((a) => JSON.stringify(a));
    const again =
      "  - { id: stop-again, stopWrites: { use: sim-writes, undo: { use: sim-writes, with: { enabled: true } } } }\n" +
      `  - { id: gate, hook: { use: shell, with: { command: [${gate.join(", ")}] } } }\n` +
      "  - { id: drained-again, waitFor: { canCommit: true, lagBelow: 3 } }\n" +
      "  - { id: commit-again, commit: {} }\n" +
      "  - { id: committed-again, waitFor: { state: COMMITTED } }\n";
    // cliCutover wrote the runbook with no steps: its steps are these
    writeFileSync(
      c.file,
      readFileSync(c.file, "utf8") +
        START_REV +
        READY +
        CHECK +
        STOP +
        DRAINED +
        COMMIT +
        COMMITTED +
        VERIFY +
        REVERSE +
        again,
    );
    const commits = () => c.s.control.counts().instances[0]?.["POST /api/v1/commit"] ?? 0;
    const first = await cli(c.args(), { cwd: c.dir });
    expect(first.code, first.all).toBe(1);
    expect(first.all, first.all).toMatch(/step gate failed/);
    // the undo of the new sync's write stop ran: writes are back on its source
    expect(first.all, first.all).toMatch(/undo hook sim-writes ok/);
    expect(commits(), first.all).toBe(1);

    const resumed = await cli(c.args("--resume"), { cwd: c.dir });
    const where = `${first.all}\n--- resume\n${resumed.all}`;
    expect(resumed.all, where).toMatch(/resume: step 11 "stop-again" runs again: its undo ran: writes went back on/);
    expect(resumed.all, where).not.toMatch(/refused \(writes-stopped\)/);
    expect(resumed.code, where).toBe(0);
    expect(commits(), where).toBe(2);
    expect(c.s.control.state().instances.map((i) => i.state)).toEqual(["COMMITTED"]);
  }, 120_000);
});
