/**
 * GitHub Actions job summaries (issue: "When GITHUB_STEP_SUMMARY is set, lint, run and rehearse
 * append a Markdown summary to it (verdict, a table of steps with outcome and duration, writes
 * lost, verifier result)"): the file is checked after real commands of the built CLI.
 */
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cell, createRunSummary, lintSummary } from "../../src/cli/step-summary.js";
import type { RunEvent } from "../../src/events.js";
import type { Simulator } from "../../src/sim/index.js";
import { cli, COMMIT, READY, runbookFor, sim, START, STOP, tempDir, writeRunbook } from "../support/run.js";

const root = process.cwd();
const SECRET = "s3cr3t-77aa01";
let s: Simulator | undefined;
const dirs: string[] = [];
afterEach(async () => {
  await s?.close();
  s = undefined;
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function summaryFile(initial = "## earlier step\n\n"): { dir: string; file: string; read(): string } {
  const dir = tempDir();
  dirs.push(dir);
  const file = join(dir, "step-summary.md");
  writeFileSync(file, initial);
  return { dir, file, read: () => readFileSync(file, "utf8") };
}
/** The Markdown table rows (lines starting with `|`) of a summary, header and separator excluded. */
const rows = (md: string): string[] => md.split("\n").filter((l) => l.startsWith("| ") && !l.startsWith("| # |"));

// after a resume the window opened in an earlier run: the row said "writes were not stopped in
// this run" beside a cutover row that said writes stopped 4.2s
describe("the run summary's write-stop window", () => {
  const summary = (window: boolean): string => {
    const { listener, markdown } = createRunSummary();
    let seq = 0;
    const ev = (type: string, payload: object): RunEvent =>
      ({ type, seq: ++seq, at: 1000 + seq, ...payload }) as RunEvent;
    listener(ev("run.started", { runbook: "r", mode: "resume", steps: [], instances: [] }));
    listener(
      ev("run.finished", {
        outcome: "ok",
        exitCode: 0,
        committed: true,
        durationMs: 2000,
        cutover: { durationMs: 60_000, runs: 2 },
        ...(window ? { window: { durationMs: 4200, open: false } } : {}),
      }),
    );
    return markdown("run");
  };
  it("is the cutover's when it opened in an earlier run, in the cutover row's words", () => {
    const md = summary(true);
    expect(md).toContain("| cutover | 1m 00s over 2 runs; writes stopped 4.2s |");
    // "(the window opened …)": after "until the undo turned them back on", a bare ", opened …" read as the undo's
    expect(md).toContain(
      "| write-stop window | writes stopped 4.2s (the window opened in an earlier run of the cutover) |",
    );
    expect(md).not.toContain("not stopped in this run");
  });
  it("says writes were not stopped where no run of the cutover stopped them", () => {
    expect(summary(false)).toContain("| write-stop window | writes were not stopped in this run |");
  });
});

describe("cell: Markdown table cells", () => {
  it("escapes pipes, newlines, HTML and emphasis so a message cannot break the table", () => {
    expect(cell("a|b")).toBe("a\\|b");
    expect(cell("line 1\nline 2\r\nline 3")).toBe("line 1<br>line 2<br>line 3");
    expect(cell("<script>alert(1)</script> & co")).toBe("&lt;script&gt;alert(1)&lt;/script&gt; &amp; co");
    expect(cell("*bold* _it_ `code` [link](x) ~x~ back\\slash")).toBe(
      "\\*bold\\* \\_it\\_ \\`code\\` \\[link\\](x) \\~x\\~ back\\\\slash",
    );
    const md = lintSummary({
      diagnostics: [
        { file: "a|b.yaml", line: 1, column: 2, rule: "schema", severity: "error", message: "x | y\nz", hint: "h|i" },
      ],
      files: ["a|b.yaml"],
      exitCode: 1,
    });
    // one data row, with exactly the table's four cells (five unescaped pipes)
    const row = rows(md).filter((r) => r.includes("schema"));
    expect(row).toHaveLength(1);
    expect(row[0]?.replace(/\\\|/g, "").split("|")).toHaveLength(6);
  });
});

describe("GITHUB_STEP_SUMMARY", () => {
  it("rehearse appends the verdict, a row per step with outcome and duration, writes lost and the verifier", async () => {
    const sum = summaryFile();
    const env = { GITHUB_STEP_SUMMARY: sum.file };
    const r = await cli(["rehearse", join(root, "runbooks/rs-to-sharded.yaml")], { cwd: sum.dir, env });
    expect(r.code, r.all).toBe(0);
    const md = sum.read();
    expect(md.startsWith("## earlier step\n\n")).toBe(true); // appended, never overwritten
    expect(md).toContain("### syncbook rehearse sales-rs-to-sharded: ✅ COMMITTED");
    expect(md).toContain("| verdict | committed on all 1 instance(s) |");
    expect(md).toContain("| writes lost | 0 |");
    expect(md).toMatch(/\| verifier \| phase idle, failedTasks 0, metadataMismatchTasks 0 \|/);
    expect(md).toContain("| exit code | 0 |");
    const ids = [
      "start",
      "copy-started",
      "ready",
      "check",
      "stop-writes",
      "drained",
      "go",
      "commit",
      "committed",
      "destination-writable",
      "verify",
      "announce",
    ];
    const steps = md.split("\n").filter((l) => /^\| \d+ \| /.test(l));
    expect(steps.map((l) => l.split(" | ")[1]?.split(":")[0])).toEqual(ids.map((id) => cell(id)));
    for (const l of steps) expect(l).toMatch(/\| ✅ ok \| \d+(\.\d)?(ms|s|m|h|d)[^|]* \|$/);
    // a second command appends its own summary after the first
    const again = await cli(["rehearse", join(root, "runbooks/rs-to-sharded.yaml"), "--from", "commit"], {
      cwd: sum.dir,
      env,
    });
    expect(again.code).toBe(3);
    const both = sum.read();
    expect(both.startsWith(md)).toBe(true);
    expect(both.slice(md.length)).toContain(
      "### syncbook rehearse sales-rs-to-sharded: ⛔ STOPPED BY AN INTERLOCK (nothing was sent)",
    );
    expect(both.slice(md.length)).toMatch(/\| 1 \| start[^|]*\| start \| ⏭️ skipped/);
  });

  it("run: outcome, steps, the verifier's last result; no secret even when a step shows one", async () => {
    s = await sim();
    const sum = summaryFile("");
    const steps = `${START}${READY}${STOP}${COMMIT}  - { id: hello, notify: "token \${env.SYNCBOOK_TEST_SECRET}" }
  - { id: fail, hook: { use: shell, with: { command: [node, -e, "process.exit(3)"] } } }
`;
    const file = writeRunbook(sum.dir, runbookFor(s, steps));
    const r = await cli(["run", file, "--yes"], {
      cwd: sum.dir,
      env: { GITHUB_STEP_SUMMARY: sum.file, SYNCBOOK_TEST_SECRET: SECRET },
    });
    expect(r.code, r.all).toBe(1);
    const md = sum.read();
    expect(md).toContain("### syncbook run e2e: ❌ FAILED AFTER COMMIT");
    expect(md).toContain("| exit code | 1 |");
    expect(md).toContain("| writes lost | not measured in a real run");
    expect(md).toMatch(/\| 7 \| fail[^|]*\| hook \| ❌ failed<br>/);
    expect(md).toMatch(/\| 6 \| hello[^|]*\| notify \| ✅ ok/);
    expect(md).not.toContain(SECRET);
  });

  it("lint appends its findings (or that it could not run); --list-rules and no variable write nothing", async () => {
    const sum = summaryFile("");
    const env = { GITHUB_STEP_SUMMARY: sum.file };
    const bad = await cli(["lint", "test/fixtures/lint/sharding-required.yaml"], { cwd: root, env });
    expect(bad.code).toBe(1);
    let md = sum.read();
    expect(md).toMatch(/^### syncbook lint: ❌ 1 error, 0 warnings in 1 of 1 runbook/);
    expect(md).toMatch(/\| test/);
    expect(md).toContain("sharding-required");
    expect(md).toContain("Exit code 1.");
    const ok = await cli(["lint", "runbooks"], { cwd: root, env });
    expect(ok.code).toBe(0);
    md = sum.read();
    expect(md).toMatch(/### syncbook lint: ✅ \d+ runbooks linted: no problems/);
    const missing = await cli(["lint", "no/such/folder"], { cwd: root, env });
    expect(missing.code).toBe(2);
    expect(sum.read()).toMatch(/### syncbook lint no\/such\/folder: ❌ did not run/);
    const before = sum.read();
    await cli(["lint", "--list-rules"], { cwd: root, env });
    await cli(["lint", "runbooks"], { cwd: root, env: { GITHUB_STEP_SUMMARY: "" } });
    expect(sum.read()).toBe(before);
  });

  it("a summary file that cannot be written is a warning, never a failure", async () => {
    const sum = summaryFile("");
    const r = await cli(["lint", "runbooks"], {
      cwd: root,
      env: { GITHUB_STEP_SUMMARY: join(sum.dir, "no/dir/x.md") },
    });
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/warning: cannot append the job summary to .*GITHUB_STEP_SUMMARY/);
  });
});
