/**
 * `syncbook report <journal> [--out DIR]` through the built CLI (`dist/cli/syncbook.cjs`, as every
 * end-to-end test: what users run): rebuilds the report from a journal; a truncated last line is
 * a warning; a file that is not a journal is refused with exit 2.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { readJournal } from "../../src/report/index.js";
import { synthRun } from "../support/report-fixture.js";
import { CLI } from "../support/run.js";

const dir = mkdtempSync(join(tmpdir(), "syncbook-report-cli-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function syncbook(...args: string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [CLI, ...args], {
    cwd: dir,
    encoding: "utf8",
    // a damaged journal's warnings can run to megabytes (the case of 150,000 bad lines, before they were grouped)
    maxBuffer: 64 * 1024 * 1024,
    env: { ...process.env, NO_COLOR: "1" },
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const journalText = (): string =>
  synthRun()
    .events.map((e) => JSON.stringify(e))
    .join("\n") + "\n";

describe("syncbook report <journal>", () => {
  it("rebuilds the three files from a journal (default: next to it, <name>.report/)", () => {
    const runDir = join(dir, ".syncbook", "sales");
    mkdirSync(runDir, { recursive: true });
    const journal = join(runDir, "2025-03-14T03-00-00.jsonl");
    writeFileSync(journal, journalText());
    const r = syncbook("report", journal);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const out = join(runDir, "2025-03-14T03-00-00.report");
    expect(r.stdout).toMatch(/run ok, committed/);
    for (const f of ["report.json", "junit.xml", "report.html"]) expect(existsSync(join(out, f)), f).toBe(true);
    const report = JSON.parse(readFileSync(join(out, "report.json"), "utf8"));
    expect(report).toMatchObject({ outcome: "ok", committed: true, warnings: [] });
    expect(report.steps).toHaveLength(7);
  });

  it("--out DIR, and a folder stands for the journal a resume would take (not the newest file time: issue 30)", () => {
    const runDir = join(dir, "runs");
    mkdirSync(runDir, { recursive: true });
    writeFileSync(
      join(runDir, "old.jsonl"),
      synthRun({ refuseCommit: true })
        .events.map((e) => JSON.stringify(e))
        .join("\n"),
    );
    // the newer run's header names the older journal (it was in the folder when the run began):
    // that, not the file times (set the other way round here), orders them
    writeFileSync(
      join(runDir, "new.jsonl"),
      `{"type":"journal.opened","seq":0,"at":1,"after":["old.jsonl"]}\n${journalText()}`,
    );
    utimesSync(join(runDir, "new.jsonl"), new Date(2020, 1, 1), new Date(2020, 1, 1));
    const r = syncbook("report", runDir, "--out", "out/x");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("new.jsonl");
    expect(JSON.parse(readFileSync(join(dir, "out/x/report.json"), "utf8")).outcome).toBe("ok");
  });

  it("a truncated last line (a crash mid-write) is a warning; the report is built from the rest", () => {
    const events = synthRun().events;
    const keep = events.slice(0, 60);
    const half = JSON.stringify(events[60]).slice(0, 25);
    const journal = join(dir, "crashed.jsonl");
    writeFileSync(journal, keep.map((e) => JSON.stringify(e)).join("\n") + "\n" + half);
    const r = syncbook("report", journal, "--out", "crashed");
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/warning: the last line \(61\) is truncated or corrupt/);
    const report = JSON.parse(readFileSync(join(dir, "crashed/report.json"), "utf8"));
    expect(report.outcome).toBe("unfinished");
    expect(report.counts.events).toBe(60);
    expect(report.warnings[0]).toMatch(/last line \(61\) is truncated/);
    expect(readFileSync(join(dir, "crashed/report.html"), "utf8")).toMatch(/UNFINISHED/);
    // a killed run's report names where the way on is (an adversarial run: it named none)
    expect(readFileSync(join(dir, "crashed/report.html"), "utf8")).toMatch(
      /Next: what the fleet and the journal show now, and the way on \(syncbook status /,
    );
  });

  it.each([
    ["garbage.bin", "\u0000\u0001\u0002binary garbage\n\u0000", /not a syncbook journal: it is binary/],
    ["runbook.yaml", "runbook: 1\nname: x\nsteps: []\n", /not a syncbook journal: line 1 is not JSON/],
    ["pretty.json", JSON.stringify({ hello: "world" }, null, 2), /not a syncbook journal: line 1 is not JSON/],
    ["object.jsonl", `${JSON.stringify({ hello: "world" })}\n`, /not a syncbook journal: it holds no run events/],
    ["empty.jsonl", "", /not a syncbook journal: it is empty/],
  ])("refuses a non-journal file (%s) with exit 2 and a clear message", (name, text, message) => {
    writeFileSync(join(dir, name), text);
    const r = syncbook("report", name, "--out", `refused-${name}`);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(r.stderr).toMatch(/hint: a journal is JSON lines of run events/);
    expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
    expect(existsSync(join(dir, `refused-${name}`))).toBe(false);
  });

  it("a missing file is exit 2", () => {
    const r = syncbook("report", "nope.jsonl");
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/cannot read nope\.jsonl: no such file/);
  });

  it("skips corrupt lines in the middle with a warning each, and ignores non-event objects", async () => {
    const lines = synthRun().events.map((e) => JSON.stringify(e));
    lines.splice(5, 0, "{not json", JSON.stringify({ journal: 1, note: "a header-ish object" }));
    writeFileSync(join(dir, "mid.jsonl"), lines.join("\n"));
    const read = await readJournal(join(dir, "mid.jsonl"));
    expect(read.events).toHaveLength(lines.length - 2);
    expect(read.warnings).toEqual(["line 6 of the journal is not JSON: skipped"]);
  });

  it("a damaged journal with 150,000 bad lines: a report, one warning per range of them, no stack overflow", () => {
    const lines = synthRun().events.map((e) => JSON.stringify(e));
    const bad = Array.from({ length: 150_000 }, (_, i) => `garbage ${i}`);
    // a long run of bad lines, then 30 single ones between events (more ranges than are named one by one)
    const mixed = [lines[0]!, ...bad];
    for (let i = 0; i < 30; i++) mixed.push(lines[1 + i] ?? lines[1]!, "{not json");
    mixed.push(...lines.slice(31));
    writeFileSync(join(dir, "damaged.jsonl"), mixed.join("\n") + "\n");
    const r = syncbook("report", "damaged.jsonl", "--out", "damaged");
    expect(r.stderr).not.toMatch(/internal error|call stack/);
    expect(r.code, r.stderr).toBe(0);
    const warnings = r.stderr.split("\n").filter((l) => l.startsWith("syncbook: warning:"));
    expect(warnings[0]).toBe(
      "syncbook: warning: lines 2 to 150001 of the journal (150000 lines) are not JSON: skipped",
    );
    expect(warnings.length).toBeLessThanOrEqual(22);
    expect(r.stderr).toMatch(/11 more ranges of bad lines \(11 lines, from line 150\d+\): skipped/);
    const report = JSON.parse(readFileSync(join(dir, "damaged", "report.json"), "utf8")) as { warnings: string[] };
    expect(report.warnings[0]).toMatch(/^lines 2 to 150001 /);
  }, 60_000);
});
