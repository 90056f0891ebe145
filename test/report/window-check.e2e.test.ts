/**
 * The write-stop window and a stopWrites `check:` (a trial's report of 2026-12-01: "writes stopped
 * 541ms (service 9ms · runner 529ms)" where the runbook's shell check, a Node start of ~450 ms read
 * again before commit, was charged to the runner, and the window opened only after the stop step's
 * own check, ~380 ms after writes had stopped). The window opens when the stop hook succeeds; each
 * read of the check is the runbook's hook's time ("hooks and other steps"), not the runner's.
 * The built CLI against the simulator; the check is a shell hook that takes 300 ms.
 */
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Report } from "../../src/report/index.js";
import type { Simulator } from "../../src/sim/index.js";
import { cli, COMMIT, DRAINED, READY, runbookFor, sim, START, tempDir, writeRunbook } from "../support/run.js";

const CHECK_MS = 300;
const STOP_CHECKED = `  - id: stop-writes
    stopWrites:
      use: sim-writes
      undo: { use: sim-writes, with: { enabled: true } }
      check: { use: shell, with: { command: [node, -e, "setTimeout(() => {}, ${CHECK_MS})"] } }
`;

type Line = { type: string; at: number; id?: string; undo?: boolean; durationMs?: number; openedAt?: number };

describe("the write-stop window with a stopWrites check (built CLI, simulator)", () => {
  let s: Simulator;
  let lines: Line[];
  let report: Report;
  let output: string;

  beforeAll(async () => {
    s = await sim();
    const dir = tempDir();
    const file = writeRunbook(dir, runbookFor(s, START + READY + STOP_CHECKED + DRAINED + COMMIT));
    const r = await cli(["run", file, "--renderer", "simple", "--yes"], { cwd: dir });
    output = r.all;
    expect(r.code, r.all).toBe(0);
    const folder = join(dir, ".syncbook", "e2e");
    const journal = readdirSync(folder).find((f) => f.endsWith(".jsonl"))!;
    lines = readFileSync(join(folder, journal), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Line);
    const out = join(dir, "report");
    const rep = await cli(["report", join(folder, journal), "--out", out, "--quiet"], { cwd: dir });
    expect(rep.code, rep.all).toBe(0);
    report = JSON.parse(readFileSync(join(out, "report.json"), "utf8")) as Report;
  }, 60_000);

  afterAll(async () => {
    await s?.close();
  });

  it("each read of the check is journaled with its duration: one after the stop, one before commit", () => {
    const reads = lines.filter((l) => l.type === "writes.checked");
    expect(reads.map((l) => l.id)).toEqual(["stop-writes", "commit"]);
    for (const r of reads) expect(r.durationMs).toBeGreaterThanOrEqual(CHECK_MS);
  });

  it("the window opens when the stop hook succeeded, before the stop step's check read the switch", () => {
    const stopHook = lines.find((l) => l.type === "hook.finished" && l.id === "stop-writes" && !l.undo)!;
    const firstCheck = lines.find((l) => l.type === "writes.checked")!;
    const opened = lines.find((l) => l.type === "window.opened")!;
    // the event follows the check (writes seen stopped); the window is dated from the hook's success
    expect(opened.at).toBeGreaterThanOrEqual(firstCheck.at);
    expect(opened.openedAt).toBeGreaterThanOrEqual(stopHook.at);
    expect(opened.openedAt).toBeLessThanOrEqual(firstCheck.at - firstCheck.durationMs!);
    expect(report.window?.openedAt).toBe(opened.openedAt);
    expect(report.window?.measuredMs).toBeGreaterThanOrEqual(2 * CHECK_MS);
  });

  it("both reads of the check are the runbook's time, not the runner's: in 'hooks and other steps'", () => {
    const w = report.window!;
    const checks = w.parts.filter((p) => p.share === "steps");
    expect(checks.map((p) => [p.id, p.what])).toEqual([
      ["stop-writes", "stop-writes: the runbook's shell check of the write switch (its own time)"],
      ["commit", "commit: the runbook's shell check of the write switch (its own time)"],
    ]);
    const read = lines.filter((l) => l.type === "writes.checked").reduce((n, l) => n + l.durationMs!, 0);
    // the parts are whole ms, cut at the events' times: within a ms or two of the reads' own durations
    expect(Math.abs(w.shares.steps - read)).toBeLessThanOrEqual(4);
    expect(w.shares.runner).toBeLessThanOrEqual(w.measuredMs - w.shares.steps - w.shares.service);
    // the run's own line says it too (one fold: src/fleet/window.ts)
    expect(output).toMatch(
      /writes were stopped [\d.]+m?s \(service \d+ms · runner \d+ms · hooks and other steps [\d.]+m?s\)/,
    );
  });
});
