/**
 * `syncbook lint --format sarif` (issue: "SARIF 2.1.0, each result at its file, line and column,
 * with the rule's help text, so findings show in GitHub code scanning"): the built CLI's output
 * validated against the official SARIF 2.1.0 JSON Schema, and checked against the same run's
 * `--format json` findings.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import Ajv from "ajv/dist/ajv.js";
import { afterAll, describe, expect, it } from "vitest";
import { RULES, RULE_CATALOGUE } from "../../src/lint/index.js";
import { SYNCBOOK_VERSION } from "../../src/version.js";
import { repositoryRoot, sarifLog } from "../../src/lint/format/sarif.js";
import { sarifSchema } from "../support/sarif-schema.js";

const root = fileURLToPath(new URL("../../", import.meta.url)).replace(/\/$/, "");
const cli = join(root, "dist/cli/syncbook.cjs");

function lint(args: string[], opts: { cwd?: string; env?: Record<string, string> } = {}) {
  const r = spawnSync(process.execPath, [cli, "lint", ...args], {
    cwd: opts.cwd ?? root,
    encoding: "utf8",
    env: { ...process.env, NO_COLOR: "1", GITHUB_WORKSPACE: "", GITHUB_STEP_SUMMARY: "", ...opts.env },
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

// draft-07, as the schema declares; formats are checked below by hand (ajv-formats is not a dependency)
const validate = new Ajv.default({ strict: false, allErrors: true, validateFormats: false }).compile(sarifSchema());

interface SarifRule {
  id: string;
  shortDescription: { text: string };
  fullDescription: { text: string };
  help: { text: string; markdown: string };
  defaultConfiguration: { level: string };
}
interface SarifResult {
  ruleId: string;
  ruleIndex: number;
  level: string;
  message: { text: string };
  locations: {
    physicalLocation: {
      artifactLocation: { uri: string; uriBaseId?: string };
      region: { startLine: number; startColumn: number; endLine?: number };
    };
  }[];
}
interface SarifRun {
  tool: { driver: { name: string; rules: SarifRule[] } };
  originalUriBaseIds: Record<string, { uri: string }>;
  results: SarifResult[];
}

interface Json {
  diagnostics: { file: string; line: number; column: number; rule: string; severity: string; message: string }[];
}

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe("lint --format sarif", () => {
  const sarif = lint(["test/fixtures/lint", "--format", "sarif"]);
  const json = lint(["test/fixtures/lint", "--format", "json"]);
  const log = JSON.parse(sarif.stdout) as { version: string; $schema: string; runs: SarifRun[] };
  const run = log.runs[0]!;

  it("is valid SARIF 2.1.0 (the official JSON Schema), exits as the other formats do", () => {
    expect(sarif.code).toBe(1);
    expect(sarif.code).toBe(json.code);
    const ok = validate(log);
    expect(validate.errors ?? [], JSON.stringify(validate.errors?.slice(0, 5), null, 2)).toEqual([]);
    expect(ok).toBe(true);
    expect(log.version).toBe("2.1.0");
    expect(log.$schema).toBe("https://json.schemastore.org/sarif-2.1.0.json");
    expect(run.tool.driver.name).toBe("syncbook");
  });

  it("has one result per finding, at its file, line and column, with its rule and level", () => {
    const findings = (JSON.parse(json.stdout) as Json).diagnostics;
    expect(findings.length).toBeGreaterThan(20);
    expect(run.results).toHaveLength(findings.length);
    const level = { error: "error", warning: "warning", info: "note" } as Record<string, string>;
    run.results.forEach((r, i) => {
      const d = findings[i]!;
      const loc = r.locations[0]!.physicalLocation;
      expect(loc.artifactLocation).toEqual({ uri: d.file, uriBaseId: "%SRCROOT%" });
      expect(loc.region.startLine).toBe(d.line);
      expect(loc.region.startColumn).toBe(d.column);
      if (loc.region.endLine !== undefined) expect(loc.region.endLine).toBeGreaterThanOrEqual(d.line);
      expect(r.ruleId).toBe(d.rule);
      expect(run.tool.driver.rules[r.ruleIndex]?.id).toBe(d.rule);
      expect(r.level).toBe(level[d.severity]);
      expect(r.message.text.startsWith(d.message)).toBe(true);
      // the URI resolves, against the root the log gives, to the file that was linted
      const file = fileURLToPath(new URL(loc.artifactLocation.uri, run.originalUriBaseIds["%SRCROOT%"]?.uri));
      expect(file).toBe(join(root, d.file));
      expect(existsSync(file)).toBe(true);
    });
    expect(run.originalUriBaseIds["%SRCROOT%"]?.uri).toBe(`file://${root}/`);
  });

  it("describes every rule of --list-rules: description, the spec sentence it enforces, and the fix as help", () => {
    const rules = new Map(run.tool.driver.rules.map((r) => [r.id, r]));
    for (const r of RULE_CATALOGUE) {
      const d = rules.get(r.id);
      if (!d) throw new Error(`rule ${r.id} missing`);
      expect(d.shortDescription.text).toBe(r.description);
      expect(d.fullDescription.text).toContain(r.spec);
      expect(d.help.text).toContain(r.spec);
      expect(d.help.text).toContain(r.hint);
      expect(d.help.markdown).toContain(r.hint);
      expect(d.defaultConfiguration.level).toBe(r.severity === "info" ? "note" : r.severity);
    }
    // loader findings are rules too: no result points at an undescribed rule
    for (const id of ["schema", "yaml", "interpolation"]) expect(rules.has(id), id).toBe(true);
    expect(new Set(rules.keys()).size).toBe(run.tool.driver.rules.length);
  });

  it("names files relative to the repository root (GITHUB_WORKSPACE), wherever lint runs from", () => {
    const r = lint(["lint/sharding-required.yaml", "--format", "sarif"], {
      cwd: join(root, "test/fixtures"),
      env: { GITHUB_WORKSPACE: root },
    });
    const loc = JSON.parse(r.stdout).runs[0].results[0].locations[0].physicalLocation.artifactLocation;
    expect(loc).toEqual({ uri: "test/fixtures/lint/sharding-required.yaml", uriBaseId: "%SRCROOT%" });
    // without GITHUB_WORKSPACE: the nearest folder with .git
    expect(repositoryRoot(join(root, "test/fixtures"), {})).toBe(
      existsSync(join(root, ".git")) ? root : join(root, "test/fixtures"),
    );
  });

  it("percent-encodes paths, and names a file outside the root by an absolute file: URI (no uriBaseId)", () => {
    const dir = mkdtempSync(join(tmpdir(), "syncbook-sarif-"));
    dirs.push(dir);
    const diag = { line: 2, column: 3, rule: "schema", severity: "error" as const, message: "m" };
    const log = sarifLog(
      {
        diagnostics: [
          { ...diag, file: "run books/a#1.yaml" },
          { ...diag, file: join(tmpdir(), "x.yaml") },
        ],
      },
      { cwd: dir, root: dir },
    );
    expect(validate(log), JSON.stringify(validate.errors)).toBe(true);
    const [inside, outside] = log.runs[0]!.results.map((r) => r.locations[0]!.physicalLocation.artifactLocation);
    expect(inside).toEqual({ uri: "run%20books/a%231.yaml", uriBaseId: "%SRCROOT%" });
    expect(outside).toEqual({ uri: `file://${join(tmpdir(), "x.yaml")}` });
  });

  it("--list-rules --format sarif: the rule catalogue as a log without results", () => {
    const r = lint(["--list-rules", "--format", "sarif"]);
    expect(r.code).toBe(0);
    const l = JSON.parse(r.stdout);
    expect(validate(l)).toBe(true);
    expect(l.runs[0].results).toEqual([]);
    expect(l.runs[0].tool.driver.rules.map((d: { id: string }) => d.id)).toEqual(RULE_CATALOGUE.map((c) => c.id));
    expect(l.runs[0].tool.driver.rules.length).toBeGreaterThan(RULES.length);
    // the tool's version is syncbook's, from its one home
    expect(l.runs[0].tool.driver.semanticVersion).toBe(SYNCBOOK_VERSION);
  });
});
