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

const ESC = String.fromCharCode(27);

// issue 26: "conditions not met yet are red ✗ (they are pending, not failed); the fleet table disappears at
// prompts, including 'Point of no return'; no clock and no time left; the cursor stays hidden after a kill -9"
describe("the live view while it waits, at a prompt, and after a kill -9", () => {
  it("a condition not met yet is pending (○, no ✗); the wall clock and the step's time left are drawn", async () => {
    s = await sim({ instances: 2 });
    s.control.addFault("lag-floor=30");
    const dir = tempDir();
    const file = writeRunbook(dir, runbookFor(s, START + HELD));
    const t = inPty(["run", file], { cwd: dir });
    await t.waitFor(/lagBelow 5: now 30/, 30_000);
    await t.waitFor(/\d\d:\d\d:\d\d · \S+ into this step · \S+( \S+)? left of its 1m 00s time limit/, 10_000);
    await new Promise((r) => setTimeout(r, 2200));
    t.type("\x03");
    const r = await t.done;
    const out = plain(r.output);
    expect(out).toMatch(/○ sync\d\s+lagBelow 5: now 30 \(for /);
    expect(out, "a pending condition drawn as failed").not.toMatch(/✗ sync\d\s+lagBelow/);
    // the clock moves on its own (redrawn each second): two different times drawn
    const clocks = new Set([...out.matchAll(/(\d\d:\d\d:\d\d) · \S+ into this step/g)].map((m) => m[1]));
    expect(clocks.size).toBeGreaterThan(1);
    expect(r.code).toBe(130);
  }, 60_000);

  it('at "Point of no return" the fleet, the clock and the write-stop window stay on screen above the question', async () => {
    s = await sim({ instances: 2 });
    const dir = tempDir();
    const steps =
      START +
      "  - { id: ready, waitFor: { canCommit: true, lagBelow: 5 } }\n" +
      "  - { id: stop-writes, stopWrites: { use: sim-writes, undo: { use: sim-writes, with: { enabled: true } } } }\n" +
      '  - { id: ask, confirm: "Point of no return: commit?" }\n';
    const file = writeRunbook(dir, runbookFor(s, steps));
    const t = inPty(["run", file], { cwd: dir });
    await t.waitFor(/Point of no return: commit\?[\s\S]*\(y\/N\)/, 30_000);
    await new Promise((r) => setTimeout(r, 1500));
    const screen = plain(t.output());
    const ask = screen.lastIndexOf("Point of no return: commit?");
    // the prompt's frame, from its clock line to the question, holds the fleet and the window's clock
    const before = screen.slice(screen.lastIndexOf("into this step", ask), ask);
    // the last frame drawn: the step's live panel right above the question (issue 39, point 3: the
    // context is the panel, redrawn each second, never a copy frozen into the question)
    expect(screen.slice(0, ask)).toMatch(
      /› \d\d:\d\d:\d\d · [^\n]*into this step[^\n]*\n(?:[^\n]*\n){0,3}?[^\n]*sync0\s+RUNNING[^?]*\? $/,
    );
    expect(before).toMatch(/⏱ writes stopped \S+: the application cannot write until the destination takes writes/);
    expect(before).toMatch(/sync0\s+RUNNING/);
    expect(before).toMatch(/sync1\s+RUNNING/);
    t.type("\x03");
    const r = await t.done;
    expect(r.code).toBe(130);
  }, 60_000);

  it("a --resume after a kill -9 inside the window keeps the write-stop clock running from the first run's stop (issue 37)", async () => {
    s = await sim({ instances: 2 });
    const dir = tempDir();
    const steps =
      START +
      "  - { id: ready, waitFor: { canCommit: true, lagBelow: 5 } }\n" +
      "  - { id: stop-writes, stopWrites: { use: sim-writes, undo: { use: sim-writes, with: { enabled: true } } } }\n" +
      '  - { id: ask, confirm: "Point of no return: commit?" }\n';
    const file = writeRunbook(dir, runbookFor(s, steps));
    const first = inPty(["run", file], { cwd: dir });
    await first.waitFor(/Point of no return: commit\?[\s\S]*\(y\/N\)/, 30_000);
    process.kill(await nodePid(first), "SIGKILL");
    await first.done;
    // the second run starts at least 2 s after the stop: its clock must say so, not count from 0
    await new Promise((r) => setTimeout(r, 2000));
    const t = inPty(["run", file, "--resume"], { cwd: dir });
    await t.waitFor(/Point of no return: commit\?[\s\S]*\(y\/N\)/, 30_000);
    await new Promise((r) => setTimeout(r, 1200));
    const screen = plain(t.output());
    const clocks = [...screen.matchAll(/⏱ writes stopped (\d+)s: the application cannot write/g)].map((m) =>
      Number(m[1]),
    );
    expect(clocks.length, "the resumed run's panel draws the write-stop clock").toBeGreaterThan(0);
    expect(Math.max(...clocks), "counted from the first run's stop").toBeGreaterThanOrEqual(2);
    t.type("\x03");
    const r = await t.done;
    expect(r.code).toBe(130);
  }, 90_000);

  it("kill -9 leaves the cursor hidden (no code runs); the next syncbook command shows it first", async () => {
    s = await sim({ instances: 1 });
    s.control.addFault("lag-floor=30");
    const dir = tempDir();
    const file = writeRunbook(dir, runbookFor(s, START + HELD));
    const t = inPty(["run", file], { cwd: dir });
    await t.waitFor(/lagBelow 5: now 30/, 30_000);
    // script(1) runs node under a shell that exec'd it: the child of `script` is that process's parent;
    // kill the node process itself, as kill -9 <pid> would
    const pid = await nodePid(t);
    process.kill(pid, "SIGKILL");
    const r = await t.done;
    const hidden = r.output.lastIndexOf(`${ESC}[?25l`);
    expect(hidden, "the task list hid the cursor").toBeGreaterThanOrEqual(0);
    expect(r.output.indexOf(`${ESC}[?25h`, hidden), "shown again by the killed process").toBe(-1);
    const next = inPty(["status", file], { cwd: dir });
    const n = await next.done;
    expect(n.output.startsWith(`${ESC}[?25h`), JSON.stringify(n.output.slice(0, 40))).toBe(true);
  }, 60_000);
});

/** The pid of the CLI's node process under `script` (its only node descendant). */
async function nodePid(t: ReturnType<typeof inPty>): Promise<number> {
  const { execFileSync } = await import("node:child_process");
  const root = t.pid;
  // by its command line, not its name: Node 24 names its main thread, which is what `comm` shows
  const out = execFileSync("ps", ["-eo", "pid=,ppid=,args="], { encoding: "utf8" });
  const rows = out
    .trim()
    .split("\n")
    .map((l) => /^\s*(\d+)\s+(\d+)\s+(.*)$/.exec(l))
    .filter((m) => m !== null)
    .map((m) => ({ pid: Number(m[1]), ppid: Number(m[2]), args: m[3] ?? "" }));
  const seen = new Set([root]);
  for (let grew = true; grew;) {
    grew = false;
    for (const r of rows)
      if (seen.has(r.ppid) && !seen.has(r.pid)) {
        seen.add(r.pid);
        grew = true;
      }
  }
  const node = rows.find(
    (r) => seen.has(r.pid) && r.pid !== root && r.args.includes("syncbook.cjs") && !r.args.startsWith("script"),
  );
  if (!node) throw new Error(`no node process under script ${root}:\n${out}`);
  return node.pid;
}
