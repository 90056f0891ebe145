import { spawn, spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, expect, it } from "vitest";
import { readJournalState, reconcile } from "../../src/journal/index.js";
import { STEPS, tempDir } from "../support/journal.js";
import { traitsOf } from "../../src/steps/index.js";

let dir: string;
let cleanup: () => void;
beforeEach(() => ({ dir, cleanup } = tempDir()));
afterEach(() => cleanup());

// "A crash also leaves a journal that --resume can use."
it("a runner killed (SIGKILL) right after request.sent leaves a readable journal showing the command unanswered", async () => {
  const script = fileURLToPath(new URL("./crash-child.ts", import.meta.url));
  const child = spawn(process.execPath, ["--import", "tsx", script, dir], { stdio: ["ignore", "pipe", "pipe"] });
  let err = "";
  child.stderr.on("data", (d: Buffer) => (err += d.toString()));
  const file = await new Promise<string>((resolve, reject) => {
    let out = "";
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
      if (out.includes("\n")) resolve(out.trim());
    });
    child.once("exit", (code) => reject(new Error(`child exited ${code}: ${err}`)));
  });
  const exited = new Promise((r) => child.once("exit", (_code, signal) => r(signal)));
  child.kill("SIGKILL");
  expect(await exited).toBe("SIGKILL");

  // the sample of the turn before the kill is in the file (written, never fsynced)
  expect(readFileSync(file, "utf8")).toContain('"type":"progress.sampled"');
  const state = await readJournalState(file, traitsOf);
  expect(state.warnings).toEqual([]);
  expect(state.steps[0]).toEqual({ index: 0, id: "start", kind: "start", started: true });
  expect(state.commandsSent).toEqual([
    {
      op: "start",
      stepIndex: 0,
      instances: ["i0", "i1"],
      answered: "unknown",
      perInstance: [
        { instance: "i0", answered: "unknown" },
        { instance: "i1", answered: "unknown" },
      ],
    },
  ]);
  expect(state.finished).toBeUndefined();

  // and resume can act on it: the fleet shows the start took effect, so it is adopted
  const rb = {
    hash: "h1",
    steps: STEPS.map(({ id, kind }) => ({ id, kind, command: traitsOf(kind).command })),
    args: { status: "rb.yaml", run: "rb.yaml" },
  };
  const r = reconcile(state, rb, [
    { instance: "i0", state: "RUNNING" },
    { instance: "i1", state: "RUNNING" },
  ]);
  expect(r).toMatchObject({ ok: true, resumeAt: 0, adopt: [{ stepIndex: 0, op: "start" }] });
});

// issue 41: the lines that need no fsync are held until the end of the turn; a process that exits
// before then without closing its journal (a forced exit) still writes them
it("a runner that exits in the turn it journaled a sample, without closing the journal, still leaves it in the file", () => {
  const script = fileURLToPath(new URL("./crash-child.ts", import.meta.url));
  const r = spawnSync(process.execPath, ["--import", "tsx", script, dir, "exit"], { encoding: "utf8" });
  expect(r.status, r.stderr).toBe(0);
  const text = readFileSync(r.stdout.trim(), "utf8");
  expect(text).toContain('"type":"progress.sampled"');
  expect(text.endsWith("\n")).toBe(true);
});
