/**
 * The GitHub Action (action.yml, scripts/action.mjs) and the documented workflow (docs/ci.md,
 * docs/examples/github-workflow.yml), tested as far as a machine without GitHub can: every input
 * maps to a real flag of the built CLI (read from its --help), reaches the script, and is
 * documented; the script itself lints and rehearses folders of runbooks as the action would run
 * it; the example workflow parses and uses only the action's real inputs.
 */
import { spawnSync } from "node:child_process";
import {
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parse } from "yaml";

const root = process.cwd();
const cli = join(root, "dist/cli/syncbook.cjs");
const script = join(root, "scripts/action.mjs");

interface ActionInput {
  description: string;
  required?: boolean;
  default?: string;
}
interface Action {
  name: string;
  inputs: Record<string, ActionInput>;
  outputs: Record<string, { value: string }>;
  runs: {
    using: string;
    steps: { id?: string; uses?: string; run?: string; env?: Record<string, string>; "working-directory"?: string }[];
  };
}
const action = parse(readFileSync(join(root, "action.yml"), "utf8")) as Action;

/** Each input that becomes a CLI flag: the command and the flag. */
const FLAGS: Record<string, [command: "lint" | "rehearse", flag: string]> = {
  format: ["lint", "--format"],
  "max-warnings": ["lint", "--max-warnings"],
  "sarif-file": ["lint", "--format"],
  "report-dir": ["rehearse", "--report"],
  renderer: ["rehearse", "--renderer"],
  "time-scale": ["rehearse", "--time-scale"],
};
/** Inputs of the action itself: the command, its arguments, where and with which node it runs. */
const OWN = ["command", "paths", "args", "working-directory", "node-version"];

/** `syncbook <command> --help`, whitespace collapsed (commander wraps long lines). */
function help(command: string): string {
  const r = spawnSync(process.execPath, [cli, command, "--help"], { encoding: "utf8" });
  expect(r.status, r.stderr).toBe(0);
  return r.stdout.replace(/\s+/g, " ");
}
/** The `(choices: "a", "b")` commander prints after a flag's description. */
function choices(command: string, flag: string): string[] {
  const text = help(command);
  const from = text.indexOf(`${flag} <`);
  const at = text.indexOf("(choices: ", from);
  if (from < 0 || at < 0) return [];
  return [...text.slice(at, text.indexOf(")", at)).matchAll(/"([^"]+)"/g)].map((x) => x[1] ?? "");
}

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function workspace(): string {
  const d = mkdtempSync(join(tmpdir(), "syncbook-action-"));
  dirs.push(d);
  return d;
}
/** scripts/action.mjs as action.yml runs it: inputs as SYNCBOOK_INPUT_* variables. */
function runAction(cwd: string, inputs: Record<string, string>, more: Record<string, string> = {}) {
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    GITHUB_OUTPUT: join(cwd, "github-output.txt"),
    GITHUB_STEP_SUMMARY: join(cwd, "summary.md"),
    NO_COLOR: "1",
    ...more,
  };
  for (const [k, v] of Object.entries(inputs)) env[`SYNCBOOK_INPUT_${k.toUpperCase().replace(/-/g, "_")}`] = v;
  const r = spawnSync(process.execPath, [script], { cwd, env, encoding: "utf8", timeout: 120_000 });
  const outputs = Object.fromEntries(
    (existsSync(env.GITHUB_OUTPUT!) ? readFileSync(env.GITHUB_OUTPUT!, "utf8") : "")
      .trim()
      .split("\n")
      .filter(Boolean)
      .map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]),
  );
  return { code: r.status, stdout: r.stdout, stderr: r.stderr, outputs };
}

describe("action.yml", () => {
  it("is a composite action that installs the package from its checkout and runs scripts/action.mjs", () => {
    expect(action.runs.using).toBe("composite");
    const steps = action.runs.steps;
    expect(steps.some((s) => s.uses?.startsWith("actions/setup-node@"))).toBe(true);
    expect(steps.some((s) => s.run?.includes("npm ci") && s["working-directory"] === "${{ github.action_path }}")).toBe(
      true,
    );
    const run = steps.find((s) => s.id === "syncbook");
    expect(run?.run).toContain('node "$GITHUB_ACTION_PATH/scripts/action.mjs"');
    for (const [name, o] of Object.entries(action.outputs)) expect(o.value, name).toContain("steps.syncbook.outputs.");
  });

  it("every input is a real CLI flag (from --help) or the action's own, and reaches the script", () => {
    const run = action.runs.steps.find((s) => s.id === "syncbook");
    const source = readFileSync(script, "utf8");
    const actionText = readFileSync(join(root, "action.yml"), "utf8");
    for (const [name, input] of Object.entries(action.inputs)) {
      expect(input.description, name).toBeTruthy();
      if (OWN.includes(name)) continue;
      const mapped = FLAGS[name];
      expect(mapped, `input ${name} maps to no CLI flag: add it to FLAGS or OWN`).toBeDefined();
      const [command, flag] = mapped!;
      expect(help(command), `syncbook ${command} --help lists ${flag}`).toContain(`${flag} <`);
      expect(source, `scripts/action.mjs passes ${flag}`).toContain(`"${flag}"`);
      expect(input.description, `${name}'s description names ${flag}`).toContain(flag);
    }
    // every input the script reads comes from the action, and vice versa
    const read = [...source.matchAll(/input\("([\w-]+)"\)/g)].map((m) => m[1]);
    for (const name of read) expect(action.inputs, `the script reads ${name}`).toHaveProperty(name!);
    for (const name of Object.keys(action.inputs)) {
      if (name === "working-directory" || name === "node-version") {
        expect(actionText).toContain(`\${{ inputs.${name} }}`);
        continue;
      }
      const variable = `SYNCBOOK_INPUT_${name.toUpperCase().replace(/-/g, "_")}`;
      expect(run?.env?.[variable], `${variable} carries ${name}`).toBe(`\${{ inputs.${name} }}`);
      expect(read, `the script reads ${name}`).toContain(name);
    }
    // the commands are the CLI's
    for (const c of ["lint", "rehearse"]) expect(action.inputs.command?.description).toContain(`\`${c}\``);
  });

  it("choice inputs offer exactly the CLI's choices, and their defaults are among them", () => {
    const lintFormats = choices("lint", "--format");
    const renderers = choices("rehearse", "--renderer");
    expect(lintFormats).toContain("sarif");
    expect(renderers).toContain("json");
    expect(lintFormats).toContain(action.inputs.format?.default);
    expect(renderers).toContain(action.inputs.renderer?.default);
    for (const f of lintFormats) expect(action.inputs.format?.description).toContain(f);
    // `default` draws a task list for a terminal: not for a job log
    for (const r of renderers.filter((x) => x !== "default")) expect(action.inputs.renderer?.description).toContain(r);
  });

  it("docs/ci.md documents every input, in a table", () => {
    const doc = readFileSync(join(root, "docs/ci.md"), "utf8");
    for (const name of Object.keys(action.inputs)) expect(doc, name).toMatch(new RegExp(`^\\| \`${name}\` \\|`, "m"));
  });
});

describe("scripts/action.mjs (what the action runs)", () => {
  it("lint: annotations, SARIF to the file, the job summary once, exit 1 on findings", () => {
    const ws = workspace();
    mkdirSync(join(ws, "runbooks"));
    cpSync(join(root, "runbooks/rs-to-sharded.yaml"), join(ws, "runbooks/ok.yaml"));
    cpSync(join(root, "test/fixtures/lint/sharding-required.yaml"), join(ws, "runbooks/bad.yaml"));
    const r = runAction(ws, { command: "lint", paths: "runbooks", "sarif-file": "out/syncbook.sarif" });
    expect(r.code, r.stderr).toBe(1);
    expect(r.stdout).toMatch(/^::error file=runbooks\/bad\.yaml,line=\d+,col=\d+,title=sharding-required::/m);
    expect(r.outputs).toEqual({ "sarif-file": "out/syncbook.sarif", "exit-code": "1" });
    const sarif = JSON.parse(readFileSync(join(ws, "out/syncbook.sarif"), "utf8"));
    expect(sarif.version).toBe("2.1.0");
    expect(sarif.runs[0].results.map((x: { ruleId: string }) => x.ruleId)).toContain("sharding-required");
    const summary = readFileSync(join(ws, "summary.md"), "utf8");
    expect(summary.match(/### syncbook lint/g)).toHaveLength(1);
    // clean runbooks, no warnings allowed: exit 0
    rmSync(join(ws, "runbooks/bad.yaml"));
    const ok = runAction(ws, { command: "lint", paths: "runbooks", "max-warnings": "0" });
    expect(ok.code, ok.stdout + ok.stderr).toBe(0);
  });

  // issue 26: "The GitHub Action with `working-directory`: annotation paths become relative to it and miss the
  // pull request's diff; the documented SARIF upload looks in the wrong place"
  it("with working-directory: annotations and SARIF locations relative to the repository root (GITHUB_WORKSPACE), the SARIF file where upload-sarif looks", () => {
    const ws = workspace();
    mkdirSync(join(ws, "ops/db/runbooks"), { recursive: true });
    cpSync(join(root, "test/fixtures/lint/sharding-required.yaml"), join(ws, "ops/db/runbooks/bad.yaml"));
    // the step runs in <workspace>/ops/db (working-directory: ops/db); upload-sarif runs at the root
    const cwd = join(ws, "ops/db");
    const r = runAction(
      cwd,
      { command: "lint", paths: "runbooks", "sarif-file": "syncbook.sarif" },
      { GITHUB_WORKSPACE: ws },
    );
    expect(r.code, r.stderr).toBe(1);
    expect(r.stdout).toMatch(/^::error file=ops\/db\/runbooks\/bad\.yaml,line=\d+,col=\d+,title=sharding-required::/m);
    expect(r.stdout).not.toMatch(/^::error file=runbooks\//m);
    // where the documented `sarif_file: syncbook.sarif` (from the root) finds it, not under ops/db
    expect(existsSync(join(ws, "syncbook.sarif"))).toBe(true);
    expect(existsSync(join(cwd, "syncbook.sarif"))).toBe(false);
    expect(r.outputs["sarif-file"]).toBe("syncbook.sarif");
    const sarif = JSON.parse(readFileSync(join(ws, "syncbook.sarif"), "utf8"));
    const loc = sarif.runs[0].results[0].locations[0].physicalLocation.artifactLocation;
    expect(loc).toEqual({ uri: "ops/db/runbooks/bad.yaml", uriBaseId: "%SRCROOT%" });
    // rehearse: its failure annotations and the report folder it outputs, from the root too
    const rr = runAction(
      cwd,
      { command: "rehearse", paths: "runbooks", "report-dir": "reports", renderer: "silent" },
      { GITHUB_WORKSPACE: ws },
    );
    expect(rr.code).not.toBe(0);
    expect(rr.stdout).toMatch(/^::error file=ops\/db\/runbooks\/bad\.yaml,title=syncbook rehearse::/m);
    expect(rr.outputs["report-dir"]).toBe("ops/db/reports");
  });

  it("rehearse: every runbook of the folder, a report each under report-dir, failures counted, not stopping early", () => {
    const ws = workspace();
    mkdirSync(join(ws, "runbooks/team"), { recursive: true });
    cpSync(join(root, "runbooks/rs-to-sharded.yaml"), join(ws, "runbooks/rs-to-sharded.yaml"));
    cpSync(join(root, "runbooks/sharded-to-sharded.yaml"), join(ws, "runbooks/team/s2s.yaml"));
    cpSync(join(root, "runbooks/hooks"), join(ws, "runbooks/hooks"), { recursive: true });
    const r = runAction(ws, { command: "rehearse", paths: "runbooks", "report-dir": "reports" });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toContain("::group::syncbook rehearse runbooks/rs-to-sharded.yaml");
    expect(r.stdout).toContain("rehearsed 2 runbook(s): 2 passed");
    for (const rb of ["runbooks/rs-to-sharded", "runbooks/team/s2s"])
      for (const f of ["report.html", "report.json", "junit.xml"])
        expect(existsSync(join(ws, "reports", rb, f)), `${rb}/${f}`).toBe(true);
    expect(r.outputs).toEqual({ "report-dir": "reports", "exit-code": "0" });
    expect(readFileSync(join(ws, "summary.md"), "utf8").match(/### syncbook rehearse .*: ✅ COMMITTED/g)).toHaveLength(
      2,
    );
    // a runbook that cannot be rehearsed fails the step, and the others still run
    writeFileSync(join(ws, "runbooks/broken.yaml"), "runbook: 1\nname: broken\n");
    const bad = runAction(ws, { command: "rehearse", paths: "runbooks", "report-dir": "" });
    expect(bad.code).toBe(2);
    expect(bad.stdout).toMatch(/rehearsed 3 runbook\(s\): 2 passed, 1 failed \(runbooks\/broken\.yaml: exit 2\)/);
    expect(bad.stdout).toMatch(/^::error file=runbooks\/broken\.yaml,title=syncbook rehearse::/m);
  });

  it("refuses an unknown command with a clear message (exit 2)", () => {
    const r = runAction(workspace(), { command: "deploy" });
    expect(r.code).toBe(2);
    expect(r.stdout).toContain('::error title=syncbook action::command must be lint or rehearse, not "deploy"');
  });
});

// issue 39, point 6: the action from a checkout by path, the checkout by a repository and ref; no placeholder to replace
describe("the documented workflow takes syncbook by repository and ref and uses the action by its path", () => {
  const text = readFileSync(join(root, "docs/examples/github-workflow.yml"), "utf8");
  const wf = parse(text) as {
    jobs: Record<string, { steps: { uses?: string; with?: Record<string, unknown> }[] }>;
  };

  it("each job checks syncbook out (repository and ref from repository variables) into the path it then uses", () => {
    for (const [name, job] of Object.entries(wf.jobs)) {
      const at = job.steps.findIndex((s) => s.uses === "./.syncbook-action");
      expect(at, name).toBeGreaterThan(0);
      const checkout = job.steps.slice(0, at).find((s) => s.with?.path === ".syncbook-action");
      expect(checkout?.uses, name).toMatch(/^actions\/checkout@/);
      expect(checkout?.with).toEqual({
        repository: "${{ vars.SYNCBOOK_REPOSITORY }}",
        ref: "${{ vars.SYNCBOOK_REF }}",
        path: ".syncbook-action",
      });
      // the repository's own checkout comes first: a later one would wipe .syncbook-action/
      expect(job.steps.findIndex((s) => s.uses?.startsWith("actions/checkout@") && !s.with)).toBeLessThan(
        job.steps.indexOf(checkout!),
      );
    }
  });

  it("no placeholder to replace anywhere the docs show the action or the package", () => {
    for (const f of ["README.md", "docs/ci.md", "docs/examples/github-workflow.yml", "docs/waves.md"]) {
      const t = readFileSync(join(root, f), "utf8");
      expect(t, f).not.toMatch(/your-org|npm install --save-dev syncbook\b/);
    }
  });

  it("the action's script runs from a checkout at another path (a vendored copy): its CLI is found beside it", () => {
    const cwd = workspace();
    const vendored = join(cwd, "vendor", "syncbook");
    mkdirSync(join(cwd, "vendor"));
    symlinkSync(root, vendored);
    mkdirSync(join(cwd, "runbooks"));
    copyFileSync(join(root, "runbooks/rs-to-sharded.yaml"), join(cwd, "runbooks/rs-to-sharded.yaml"));
    const env: Record<string, string> = {
      ...(process.env as Record<string, string>),
      GITHUB_OUTPUT: join(cwd, "out.txt"),
      SYNCBOOK_INPUT_COMMAND: "lint",
      SYNCBOOK_INPUT_PATHS: "runbooks",
      SYNCBOOK_INPUT_FORMAT: "pretty",
    };
    const r = spawnSync(process.execPath, [join(vendored, "scripts/action.mjs")], { cwd, env, encoding: "utf8" });
    expect(r.status, r.stdout + r.stderr).toBe(0);
    expect(readFileSync(env.GITHUB_OUTPUT!, "utf8")).toContain("exit-code=0");
  });
});

describe("the documented workflow", () => {
  const text = readFileSync(join(root, "docs/examples/github-workflow.yml"), "utf8");
  const wf = parse(text) as {
    on: Record<string, unknown>;
    jobs: Record<string, { steps: { uses?: string; if?: string; with?: Record<string, unknown> }[] }>;
  };

  it("parses, and is the one docs/ci.md shows", () => {
    const doc = readFileSync(join(root, "docs/ci.md"), "utf8");
    const block = /```yaml\n([\s\S]*?)```/.exec(doc)?.[1];
    expect(block).toBe(text);
    expect(wf.on).toHaveProperty("pull_request");
  });

  it("lints and rehearses with the action's real inputs, uploads the reports and the SARIF, and fails on findings", () => {
    const steps = Object.values(wf.jobs).flatMap((j) => j.steps);
    const ours = steps.filter((s) => s.uses === "./.syncbook-action");
    expect(ours.map((s) => s.with?.command)).toEqual(["lint", "rehearse"]);
    for (const s of ours)
      for (const k of Object.keys(s.with ?? {})) expect(action.inputs, `with: ${k}`).toHaveProperty(k);
    const lint = ours[0]!.with!;
    const rehearse = ours[1]!.with!;
    expect(lint["max-warnings"]).toBe(0);
    const upload = steps.find((s) => s.uses?.startsWith("actions/upload-artifact@"));
    expect(upload?.with?.path).toBe(`${String(rehearse["report-dir"])}/`);
    expect(upload?.if).toContain("!cancelled()");
    const sarif = steps.find((s) => s.uses?.startsWith("github/codeql-action/upload-sarif@"));
    expect(sarif?.with?.sarif_file).toBe(lint["sarif-file"]);
  });
});
