/**
 * `syncbook lint` end to end: the built CLI (`node dist/cli/syncbook.cjs`, built by `npm test`
 * before vitest) as CI runs it. Issue #2: "Exit 0 when no errors, 1 when errors, 2 on usage
 * or I/O errors."
 */
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { RULES, RULE_CATALOGUE } from "../../src/lint/index.js";
import { PLUGIN_RULES } from "../../src/plugin/index.js";
import { LOADER_RULES } from "../../src/runbook/rules.js";
import { assertWellFormedXml } from "../support/xml.js";

const root = fileURLToPath(new URL("../../", import.meta.url));
const cli = process.env.SYNCBOOK_TEST_CLI ?? join(root, "dist/cli/syncbook.cjs");

function lint(...args: string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [cli, "lint", ...args], {
    cwd: root,
    encoding: "utf8",
    env: { ...process.env, NO_COLOR: "1", FORCE_COLOR: undefined },
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const fixture = (id: string): string => `test/fixtures/lint/${id}.yaml`;

beforeAll(() => {
  // `npm test` builds first; a bare `vitest run` needs `npm run build`.
  expect(() => readFileSync(cli), "dist/cli/syncbook.cjs is missing: run `npm run build`").not.toThrow();
});

describe("exit codes", () => {
  it("0 when there are no errors (the example runbooks folder)", () => {
    const r = lint("runbooks/");
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/✔ \d+ files linted: no problems/);
  });
  it("1 when there are errors", () => {
    expect(lint(fixture("sharding-required")).code).toBe(1);
  });
  it("1 for a runbook that is not schema-valid (the loader's diagnostics count)", () => {
    const dir = mkdtempSync(join(tmpdir(), "syncbook-cli-"));
    writeFileSync(join(dir, "bad.yaml"), "runbook: 1\nname: bad\ninstances: []\nsteps: []\n");
    const r = lint(join(dir, "bad.yaml"), "--format", "json");
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout).errors).toBeGreaterThan(0);
  });
  it("2 for a missing path, with a message and a hint on stderr", () => {
    const r = lint("runbooks/nope.yaml");
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain("no such file or folder: runbooks/nope.yaml");
    expect(r.stderr).toContain("hint:");
  });
  it("2 for a folder without runbooks", () => {
    const dir = mkdtempSync(join(tmpdir(), "syncbook-cli-"));
    writeFileSync(join(dir, "notes.txt"), "not a runbook");
    const r = lint(dir);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/no runbooks in folder .* \(\*\.yaml, \*\.yml\)/);
  });
  it("2 on usage errors: no paths, an unknown format, a bad --max-warnings", () => {
    expect(lint().code).toBe(2);
    expect(lint("runbooks/", "--format", "xml").code).toBe(2);
    expect(lint("runbooks/", "--max-warnings", "lots").code).toBe(2);
  });
});

describe("--format json", () => {
  it('prints exactly {"diagnostics":[{"file","line","column","rule","severity","message","hint"}],"errors":N,"warnings":N}', () => {
    const r = lint(fixture("sharding-required"), fixture("instance-insecure"), "--format", "json");
    expect(r.code).toBe(1);
    const out = JSON.parse(r.stdout);
    expect(Object.keys(out)).toEqual(["diagnostics", "errors", "warnings"]);
    expect(out.errors).toBe(1);
    expect(out.warnings).toBe(1);
    for (const d of out.diagnostics) {
      expect(Object.keys(d)).toEqual(["file", "line", "column", "rule", "severity", "message", "hint"]);
      expect(d.line).toBeGreaterThanOrEqual(1);
      expect(d.column).toBeGreaterThanOrEqual(1);
    }
    const d = out.diagnostics.find((x: { rule: string }) => x.rule === "sharding-required");
    expect(d).toMatchObject({ file: fixture("sharding-required"), severity: "error" });
    // the fixture's marker line (1-based)
    const lines = readFileSync(join(root, fixture("sharding-required")), "utf8").split("\n");
    expect(lines[d.line - 1]).toContain("# expect: sharding-required");
  });
});

describe("--format github", () => {
  it("prints ::error file=…,line=…,col=…,title=RULE::message annotations", () => {
    const r = lint(fixture("cluster-same"), fixture("instance-insecure"), "--format", "github");
    const lines = r.stdout.trimEnd().split("\n");
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(
      /^::error file=test\/fixtures\/lint\/cluster-same\.yaml,line=\d+,col=\d+,title=cluster-same::.+/,
    );
    expect(lines[1]).toMatch(
      /^::warning file=test\/fixtures\/lint\/instance-insecure\.yaml,line=\d+,col=\d+,title=instance-insecure::.+/,
    );
  });
});

describe("--format junit", () => {
  it("prints well-formed XML, one testsuite per file", () => {
    const r = lint("runbooks/", fixture("cluster-same"), "--format", "junit");
    expect(r.code).toBe(1);
    const doc = assertWellFormedXml(r.stdout);
    expect(doc.root).toBe("testsuites");
    const suites = doc.elements.filter((e) => e.name === "testsuite");
    expect(suites.map((s) => s.attrs.name)).toContain("runbooks/rs-to-sharded.yaml");
    expect(suites.find((s) => s.attrs.name === fixture("cluster-same"))?.attrs.failures).toBe("1");
  });
});

describe("--format pretty", () => {
  it("shows the offending source line with a caret under the column", () => {
    const r = lint(fixture("cluster-same"), "--format", "json");
    const d = JSON.parse(r.stdout).diagnostics[0];
    const src = readFileSync(join(root, fixture("cluster-same")), "utf8").split("\n")[d.line - 1] as string;
    const out = lint(fixture("cluster-same")).stdout.split("\n");
    const at = out.findIndex((l) => l === `${d.line} | ${src}`);
    expect(at, out.join("\n")).toBeGreaterThan(0);
    const caret = out[at + 1] as string;
    expect(caret.indexOf("^") - `${d.line} | `.length).toBe(d.column - 1);
    expect(src.slice(d.column - 1)).toMatch(/^cluster0/);
    expect(out.join("\n")).toContain(`error[cluster-same]`);
    expect(out.join("\n")).toContain(`--> ${fixture("cluster-same")}:${d.line}:${d.column}`);
    expect(out.join("\n")).not.toContain("\u001b["); // no colors when not on a TTY
  });
});

describe("--max-warnings", () => {
  it("fails when there are more warnings than allowed", () => {
    expect(lint(fixture("instance-insecure")).code).toBe(0);
    expect(lint(fixture("instance-insecure"), "--max-warnings", "1").code).toBe(0);
    const r = lint(fixture("instance-insecure"), "--max-warnings", "0");
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("more than --max-warnings 0");
    expect(lint(fixture("instance-insecure"), "--max-warnings", "-1").code).toBe(0);
  });
});

describe("folders", () => {
  it("are searched recursively for *.yaml and *.yml, skipping dot-folders and node_modules", () => {
    const dir = mkdtempSync(join(tmpdir(), "syncbook-cli-"));
    mkdirSync(join(dir, "a/b"), { recursive: true });
    mkdirSync(join(dir, ".git"));
    mkdirSync(join(dir, "node_modules"));
    copyFileSync(join(root, "runbooks/reversible.yaml"), join(dir, "top.yaml"));
    copyFileSync(join(root, fixture("cluster-same")), join(dir, "a/b/deep.yml"));
    copyFileSync(join(root, fixture("cluster-same")), join(dir, ".git/hidden.yaml"));
    copyFileSync(join(root, fixture("cluster-same")), join(dir, "node_modules/dep.yaml"));
    writeFileSync(join(dir, "a/readme.txt"), "x");
    const r = lint(dir, "--format", "junit");
    const names = assertWellFormedXml(r.stdout)
      .elements.filter((e) => e.name === "testsuite")
      .map((e) => e.attrs.name);
    expect(names).toHaveLength(2);
    expect(names.some((n) => n?.endsWith("a/b/deep.yml"))).toBe(true);
    expect(names.some((n) => n?.endsWith("top.yaml"))).toBe(true);
    expect(r.code).toBe(1);
  });
});

describe("--list-rules", () => {
  it("prints every rule with its severity", () => {
    const r = spawnSync(process.execPath, [cli, "lint", "--list-rules"], { cwd: root, encoding: "utf8" });
    expect(r.status).toBe(0);
    for (const rule of RULES) expect(r.stdout).toMatch(new RegExp(`^${rule.id}\\s+${rule.severity}\\s`, "m"));
  });

  it("lists every id a user can meet: the loader's and the plugin checks' too, one catalogue", () => {
    const r = spawnSync(process.execPath, [cli, "lint", "--list-rules", "--format", "json"], {
      cwd: root,
      encoding: "utf8",
    });
    expect(r.status).toBe(0);
    const listed = (JSON.parse(r.stdout) as { rules: { id: string; severity: string }[] }).rules;
    const ids = listed.map((l) => l.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of [
      "yaml",
      "schema",
      "interpolation",
      "reserved-key",
      "secret-too-short",
      ...PLUGIN_RULES.map((p) => p.id),
    ])
      expect(ids).toContain(id);
    expect(listed).toEqual(RULE_CATALOGUE.map((c) => expect.objectContaining({ id: c.id, severity: c.severity })));
    expect(RULE_CATALOGUE.length).toBe(RULES.length + LOADER_RULES.length + PLUGIN_RULES.length);
  });
});
