/**
 * Issue 26, the live view in a real terminal (the default renderer, as an operator sees it):
 * "An instance that goes down keeps its last 'RUNNING canCommit' row in the live view". An
 * instance whose progress reads fail is shown as not answering, with the age of its last answer;
 * its last state is never drawn as if it were current.
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

const START = "  - { id: start, start: { source: cluster0, destination: cluster1 } }\n";
// lag held at 30 s: the wait never passes, the panel keeps drawing the fleet
const HELD = "  - { id: ready, waitFor: { canCommit: true, lagBelow: 5, timeout: 60s } }\n";

/** The terminal's text without escape codes. */
const plain = (out: string): string =>
  out.replace(new RegExp(`${String.fromCharCode(27)}\\[[0-9;?]*[A-Za-z]`, "g"), "");

describe("the live view when an instance stops answering", () => {
  it("shows it as not answering, with the age of its last answer, not its last state as current", async () => {
    s = await sim({ instances: 2 });
    s.control.addFault("lag-floor=30");
    const dir = tempDir();
    const file = writeRunbook(dir, runbookFor(s, START + HELD));
    const t = inPty(["run", file], { cwd: dir });
    await t.waitFor(/sync1\s+RUNNING/, 30_000);
    await s.control.down(1);
    await t.waitFor(/sync1\s+not answering for/, 30_000);
    const at = plain(t.output()).lastIndexOf("not answering for");
    // a few refreshes later: every frame drawn since says not answering, none RUNNING
    await new Promise((r) => setTimeout(r, 2500));
    t.type("\x03");
    const r = await t.done;
    const after = plain(r.output).slice(at);
    expect(plain(r.output)).toMatch(
      // its last answer's state (canCommit only where it said so) and why reads fail now (refused, or the
      // kept-alive socket closed under the read)
      /sync1\s+not answering for \S+ · last answer \S+ ago: RUNNING( canCommit)? · progress failed: (cannot connect|connection failed)/,
    );
    expect(after, "the down instance's last state drawn as current").not.toMatch(/sync1\s+RUNNING/);
    expect(r.code).toBe(130);
  }, 90_000);
});
