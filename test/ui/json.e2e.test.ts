/**
 * `--renderer json` through the built CLI (issue: "one JSON object per line on stdout for every
 * run event (redacted, as the journal), for wrappers and log pipelines; `rehearse --renderer
 * json` ends with the verdict as an event"). Every stdout line is parsed on its own.
 */
import { spawn } from "node:child_process";
import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Simulator } from "../../src/sim/index.js";
import { CLI, cli, COMMIT, READY, runbookFor, sim, START, STOP, tempDir, writeRunbook } from "../support/run.js";

const SECRET = "s3cr3t-9f2b71";
const root = process.cwd();

let s: Simulator | undefined;
const dirs: string[] = [];
afterEach(async () => {
  await s?.close();
  s = undefined;
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const dir = (): string => {
  const d = tempDir();
  dirs.push(d);
  return d;
};

interface Line {
  type: string;
  seq: number;
  at: number;
  [k: string]: unknown;
}

/** Every line of stdout as JSON: fails on the first line that is not one object. */
function parseLines(stdout: string): Line[] {
  expect(stdout.endsWith("\n"), "stdout ends with a newline").toBe(true);
  return stdout
    .slice(0, -1)
    .split("\n")
    .map((l, i) => {
      let v: unknown;
      expect(() => (v = JSON.parse(l)), `line ${i + 1} is JSON: ${l.slice(0, 200)}`).not.toThrow();
      expect(typeof v === "object" && v !== null && !Array.isArray(v), `line ${i + 1} is an object`).toBe(true);
      return v as Line;
    });
}

describe("--renderer json", () => {
  it("run: one line per run event, exactly the journal's lines (redacted the same way); everything else on stderr", async () => {
    s = await sim();
    const d = dir();
    // a plugin that prints to stdout: its output must not land among the JSON lines
    writeFileSync(
      join(d, "noisy.mjs"),
      `export default { name: "noisy", hooks: { shout: async () => { console.log("NOISE from a plugin"); process.stdout.write("more noise\\n"); return { summary: "shouted" }; } } };\n`,
    );
    const steps = `${START}${READY}${STOP}${COMMIT}  - { id: shout, hook: { use: shout } }
  - { id: hello, notify: "token \${env.SYNCBOOK_TEST_SECRET} done" }
`;
    const file = writeRunbook(d, runbookFor(s, steps, "plugins: [./noisy.mjs]\n"));
    const r = await cli(["run", file, "--yes", "--renderer", "json"], {
      cwd: d,
      env: { SYNCBOOK_TEST_SECRET: SECRET },
    });
    expect(r.code, r.stderr).toBe(0);
    const lines = parseLines(r.stdout);
    expect(lines[0]?.type).toBe("run.started");
    expect(lines.at(-1)).toMatchObject({ type: "run.finished", outcome: "ok", exitCode: 0, committed: true });
    for (const t of [
      "step.started",
      "request.sent",
      "response.received",
      "progress.sampled",
      "commit.sent",
      "hook.finished",
    ])
      expect(
        lines.some((l) => l.type === t),
        t,
      ).toBe(true);
    // seq strictly increasing, one line per event
    expect(lines.map((l) => l.seq)).toEqual(lines.map((_, i) => i + 1));
    // the secret is in no line; the notify text is there, redacted, as a log event
    expect(r.stdout).not.toContain(SECRET);
    expect(lines.some((l) => l.type === "log" && String(l.message).startsWith("notify: token "))).toBe(true);
    // the journal holds the same events, line for line, byte for byte (after its header), each with its chain link last
    const jdir = join(d, ".syncbook", "e2e");
    const journal = readFileSync(join(jdir, readdirSync(jdir).find((f) => f.endsWith(".jsonl")) ?? ""), "utf8");
    const jl = journal.trimEnd().split("\n");
    expect(JSON.parse(jl[0] ?? "{}")).toMatchObject({ type: "journal.opened" });
    expect(r.stdout.trimEnd().split("\n")).toEqual(
      jl.slice(1).map((l) => l.replace(/,"chain":"[0-9a-f]{32}"\}$/, "}")),
    );
    // what is not an event went to stderr: the journal path, the notify line, the plugin's noise
    expect(r.stderr).toContain("journal: ");
    expect(r.stderr).toContain("NOISE from a plugin");
    expect(r.stderr).toContain("more noise");
    expect(r.stderr).not.toContain(SECRET);
  });

  it("rehearse: the events, then the verdict as the last line", async () => {
    const r = await cli(["rehearse", join(root, "runbooks/rs-to-sharded.yaml"), "--renderer", "json"], { cwd: dir() });
    expect(r.code, r.stderr).toBe(0);
    const lines = parseLines(r.stdout);
    expect(lines[0]?.type).toBe("run.started");
    expect(lines.at(-2)).toMatchObject({ type: "run.finished", outcome: "ok" });
    const verdict = lines.at(-1);
    expect(verdict).toMatchObject({ type: "rehearsal.verdict", safe: true, writesLost: 0, fleetErrors: [] });
    expect(verdict?.committed).toBe(verdict?.instances);
    expect(verdict?.seq).toBe((lines.at(-2)?.seq ?? 0) + 1);
    expect(typeof verdict?.wallMs).toBe("number");
    expect(verdict?.verifier).toMatchObject({ failedTasks: 0 });
    // the human verdict and the simulator's URLs are on stderr
    expect(r.stderr).toMatch(/rehearsal verdict: SAFE \(exit 0\)\n {2}committed: +COMMITTED/);
    expect(r.stderr).toContain("simulator: ");
  });

  it("run --dry-run: nothing runs, so the plan is the one JSON line", async () => {
    s = await sim();
    const d = dir();
    const file = writeRunbook(d, runbookFor(s, START + READY + STOP + COMMIT));
    const r = await cli(["run", file, "--dry-run", "--renderer", "json"], { cwd: d });
    expect(r.code, r.stderr).toBe(0);
    const lines = parseLines(r.stdout);
    expect(lines).toHaveLength(1);
    const plan = lines[0] as Line & { steps: { id: string; requests: { method: string; path: string }[] }[] };
    expect(plan).toMatchObject({ type: "plan", runbook: "e2e" });
    expect(plan.steps.map((x) => x.id)).toEqual(["start", "ready", "stop-writes", "commit", "committed"]);
    expect(plan.steps[0]?.requests).toContainEqual(expect.objectContaining({ method: "POST", path: "/api/v1/start" }));
    expect(s.control.counts().instances[0]?.["POST /api/v1/start"] ?? 0).toBe(0);
  });

  it("a failed run still ends with run.finished, exit code as usual; errors and hints on stderr", async () => {
    const r = await cli(
      ["rehearse", join(root, "runbooks/rs-to-sharded.yaml"), "--renderer", "json", "--from", "commit"],
      { cwd: dir() },
    );
    expect(r.code).toBe(3);
    const lines = parseLines(r.stdout);
    expect(lines.at(-2)).toMatchObject({ type: "run.finished", outcome: "failed", exitCode: 3 });
    expect(lines.at(-1)).toMatchObject({ type: "rehearsal.verdict", committed: 0 });
    expect(r.stderr).toMatch(/stopped by an interlock/);
  });

  it("a reader that goes away (`| head -1`) stops the lines, never the run", async () => {
    const child = spawn(
      process.execPath,
      [CLI, "rehearse", join(root, "runbooks/rs-to-sharded.yaml"), "--renderer", "json"],
      { cwd: dir(), stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, CI: "1", NO_COLOR: "1" } },
    );
    let stderr = "";
    child.stderr.on("data", (b: Buffer) => (stderr += b.toString()));
    // read the first line, then close our end of the pipe, as `head -1` does
    await new Promise<void>((resolve) => child.stdout.once("data", () => resolve()));
    child.stdout.destroy();
    const code = await new Promise<number | null>((resolve) => child.on("close", (c) => resolve(c)));
    expect(code, stderr).toBe(0);
    expect(stderr).toContain("syncbook: stdout closed (EPIPE): no more JSON lines; the run goes on");
    expect(stderr).toMatch(/rehearsal verdict: SAFE \(exit 0\)\n {2}committed: +COMMITTED/);
  });
});
