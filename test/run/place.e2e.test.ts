/**
 * A failing step says where it is in the runbook, as a compiler (and Hurl) does: `file:line:col`,
 * the line and a caret, in the terminal, the report and JUnit (issue 16, point 6).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Simulator } from "../../src/sim/index.js";
import { cli, runbookFor, sim, START, tempDir, writeRunbook } from "../support/run.js";

let s: Simulator | undefined;
afterEach(async () => {
  await s?.close();
  s = undefined;
});

describe("the place of a failing step", () => {
  it("a wait that times out: file:line:col, the line and a caret under its kind key, in the output, report.json and junit.xml", async () => {
    s = await sim({ timeScale: 200 });
    const dir = tempDir();
    // the simulator's lag never drops below its no-op floor (2 s): this wait times out
    const steps = `${START}  - id: too-low\n    waitFor: { lagBelow: 1, timeout: 2s }\n`;
    const file = writeRunbook(dir, runbookFor(s, steps));
    const line = readFileSync(file, "utf8").split("\n").indexOf("    waitFor: { lagBelow: 1, timeout: 2s }") + 1;
    expect(line).toBeGreaterThan(0);
    const r = await cli(["run", file, "--renderer", "simple", "--report", join(dir, "out")], { cwd: dir });
    expect(r.code, r.all).toBe(1);
    const where = `${file}:${line}:5`;
    expect(r.all).toContain(`--> ${where}`);
    expect(r.all).toContain(`${line} |     waitFor: { lagBelow: 1, timeout: 2s }`);
    expect(r.all).toMatch(/\|\s{5}\^{7}\n/);
    const report = JSON.parse(readFileSync(join(dir, "out", "report.json"), "utf8"));
    const failed = report.steps.find((x: { id: string }) => x.id === "too-low");
    expect(failed.place).toMatchObject({ file, line, column: 5, source: "    waitFor: { lagBelow: 1, timeout: 2s }" });
    const junit = readFileSync(join(dir, "out", "junit.xml"), "utf8");
    expect(junit).toContain(`(${where})`);
    expect(readFileSync(join(dir, "out", "report.html"), "utf8")).toContain(`--&gt; ${where}`);
  });
});
