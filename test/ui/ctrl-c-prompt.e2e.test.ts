/**
 * Issue 26: Ctrl-C at a prompt. In a terminal a prompt puts the keyboard in raw mode, so Ctrl-C
 * reaches inquirer as a key ("User force closed the prompt with SIGINT"), not as SIGINT. It must
 * stop the run as any Ctrl-C does: interrupted, exit 130, undo before commit. In a real terminal.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { Simulator } from "../../src/sim/index.js";
import { inPty } from "../support/pty.js";
import { runbookFor, sim, tempDir, writeRunbook } from "../support/run.js";

let s: Simulator | undefined;
afterEach(async () => {
  await s?.close();
  s = undefined;
});

const CONFIRM = '  - { id: ask, confirm: "Point of no return?" }\n';

describe("Ctrl-C at a prompt, in a terminal", () => {
  for (const renderer of ["default", "simple"])
    it(`a confirm (${renderer} renderer): interrupted, exit 130, no "force closed"`, async () => {
      s = await sim();
      const dir = tempDir();
      const file = writeRunbook(dir, runbookFor(s, CONFIRM));
      const t = inPty(["run", file, "--renderer", renderer], { cwd: dir });
      await t.waitFor(/Point of no return\?[\s\S]*\(y\/N\)/);
      t.type("\x03");
      const r = await t.done;
      expect(r.output).not.toContain("force closed");
      expect(r.output).toMatch(/interrupted/);
      expect(r.code).toBe(130);
    });

  it("a --step choice: interrupted, exit 130", async () => {
    s = await sim();
    const dir = tempDir();
    const file = writeRunbook(dir, runbookFor(s, CONFIRM));
    const t = inPty(["run", file, "--step", "--renderer", "simple"], { cwd: dir });
    await t.waitFor(/Next: step 1/);
    t.type("\x03");
    const r = await t.done;
    expect(r.output, r.output).not.toContain("force closed");
    expect(r.code, r.output).toBe(130);
  });
});
