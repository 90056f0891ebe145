/**
 * Issue 39, point 3: "The `--step` prompt is live." Seen: after `start` succeeded the prompt still
 * showed the instance IDLE (status in another pane said RUNNING); the write-stop clock stood still
 * while the task list counted on; the step asked about showed a spinner as if running; the
 * commit's prompt said nothing of the point of no return and passed on Enter. The real CLI in a
 * real terminal (test/support/pty.ts), the default renderer, as an operator sees it.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { Simulator } from "../../src/sim/index.js";
import { inPty, type PtyRun } from "../support/pty.js";
import { posts, runbookFor, sim, tempDir, writeRunbook } from "../support/run.js";

let s: Simulator | undefined;
afterEach(async () => {
  await s?.close();
  s = undefined;
});

const ESC = String.fromCharCode(27);
/** The terminal's text without escape codes. */
const plain = (out: string): string => out.replace(new RegExp(`${ESC}\\[[0-9;?]*[A-Za-z]`, "g"), "");
/** listr2's spinner frames: a task drawn as running. */
const SPINNER = /[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]/;

/** Resolves when the terminal's plain text after `from` matches; the index of the match's end. */
async function seen(t: PtyRun, re: RegExp, from: number, timeoutMs = 20_000): Promise<number> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const text = plain(t.output());
    const m = re.exec(text.slice(from));
    if (m) return from + m.index + m[0].length;
    if (Date.now() > until) throw new Error(`terminal never showed ${re} after ${from}:\n${text.slice(from)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const START = "  - { id: start, start: { source: cluster0, destination: cluster1 } }\n";
const READY = "  - { id: ready, waitFor: { canCommit: true, lagBelow: 5 } }\n";
const STOP =
  "  - { id: stop-writes, stopWrites: { use: sim-writes, undo: { use: sim-writes, with: { enabled: true } } } }\n";
const COMMIT = "  - { id: commit, commit: {} }\n";
const ENTER = "\r";

describe("--step: the question is live, and the step it asks about is not started", () => {
  it("after start, the next question shows the fleet RUNNING (read while it waits), a moving clock, and no spinner on the step", async () => {
    s = await sim({ instances: 2 });
    const dir = tempDir();
    const file = writeRunbook(dir, runbookFor(s, START + READY));
    const t = inPty(["run", file, "--step"], { cwd: dir });
    let at = await seen(t, /Next: step 1 start/, 0);
    t.type(ENTER); // run start
    at = await seen(t, /Next: step 2 waitFor/, at);
    const asked = at;
    // the fleet as it is now, read while the question waits: RUNNING after start, never IDLE
    await seen(t, /sync0\s+RUNNING[\s\S]*Next: step 2 waitFor/, asked);
    // both instances' reads drawn before the last frame is judged (under a load of 6 the second
    // instance's came after the 2.3 s below once)
    await seen(t, /sync1\s+RUNNING[\s\S]*Next: step 2 waitFor/, asked);
    await new Promise((r) => setTimeout(r, 2300));
    const screen = plain(t.output()).slice(asked);
    // the step asked about reads as not started: the question's mark and words, never a spinner
    expect(screen).toMatch(/\? Wait for[^\n]*— not started: waiting for your answer/);
    const titles = screen.split("\n").filter((l) => l.includes("not started: waiting for your answer"));
    expect(titles.length).toBeGreaterThan(0);
    for (const l of titles) expect(l, "the step asked about drawn as running").not.toMatch(SPINNER);
    // the wall clock moves while the question waits (redrawn each second): two times drawn
    const clocks = new Set([...screen.matchAll(/(\d\d:\d\d:\d\d)(?: ·|\r?\n)/g)].map((m) => m[1]));
    expect(clocks.size, JSON.stringify(screen.slice(-1500))).toBeGreaterThan(1);
    // the last frame, not only an early one, shows the fleet RUNNING
    // (from the screen's start when it is shorter: a negative start would count from its end)
    const last = screen.slice(Math.max(0, screen.lastIndexOf("Next: step 2 waitFor") - 2000));
    expect(last, JSON.stringify(last)).toMatch(/sync1\s+RUNNING/);
    expect(last).not.toMatch(/sync\d\s+IDLE/);
    t.type("\x03");
    const r = await t.done;
    expect(r.code).toBe(130);
  }, 60_000);

  it("the commit's question names the point of no return, its clock moves, and Enter twice never sends commit", async () => {
    s = await sim({ instances: 2 });
    const dir = tempDir();
    const file = writeRunbook(dir, runbookFor(s, START + READY + STOP + COMMIT));
    const t = inPty(["run", file, "--step"], { cwd: dir });
    let at = 0;
    for (const n of [1, 2, 3]) {
      at = await seen(t, new RegExp(`Next: step ${n} `), at);
      t.type(ENTER);
    }
    at = await seen(
      t,
      /Next: step 4 commit "Commit" \(commit\)\s*\n[^\n]*POINT OF NO RETURN: this step sends commit to 2 instances; once sent nothing is undone/,
      at,
    );
    const asked = at;
    await new Promise((r) => setTimeout(r, 2300));
    // the write-stop window's clock runs on while the question waits
    const windows = new Set(
      [
        ...plain(t.output())
          .slice(asked)
          .matchAll(/⏱ writes stopped (\S+(?: \S+)?): the application/g),
      ].map((m) => m[1]),
    );
    expect(windows.size, "the write-stop clock stood still").toBeGreaterThan(1);
    // one clock per frame, the live one: never a copy frozen into the question
    const frames = plain(t.output()).slice(asked).split("↑↓ navigate").slice(1, -1);
    expect(frames.length).toBeGreaterThan(1);
    for (const f of frames) expect(f.match(/⏱ writes stopped/g) ?? [], f).toHaveLength(1);
    t.type(ENTER); // "run" is the choice's default
    at = await seen(
      t,
      /POINT OF NO RETURN: send commit now\? Once sent it is not undone \(no: back to the choices\)/,
      at,
    );
    t.type(ENTER); // the second question's default is no
    // asked again, and nothing was sent
    at = await seen(t, /Next: step 4 commit "Commit" \(commit\)/, at);
    await new Promise((r) => setTimeout(r, 500));
    expect(posts(s, "commit")).toEqual([0, 0]);
    t.type("\x03");
    const r = await t.done;
    expect(r.code).toBe(130);
    expect(posts(s, "commit")).toEqual([0, 0]);
  }, 60_000);

  it("run, then yes, sends commit", async () => {
    s = await sim({ instances: 1 });
    const dir = tempDir();
    const file = writeRunbook(dir, runbookFor(s, START + READY + STOP + COMMIT));
    const t = inPty(["run", file, "--step"], { cwd: dir });
    let at = 0;
    for (const n of [1, 2, 3]) {
      at = await seen(t, new RegExp(`Next: step ${n} `), at);
      t.type(ENTER);
    }
    at = await seen(t, /POINT OF NO RETURN: this step sends commit to 1 instance;/, at);
    t.type(ENTER);
    await seen(t, /send commit now\?/, at);
    t.type("y");
    t.type(ENTER);
    const r = await t.done;
    expect(r.code).toBe(0);
    expect(posts(s, "commit")).toEqual([1]);
  }, 60_000);
});
