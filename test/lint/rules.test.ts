/**
 * One broken runbook per rule (test/fixtures/lint/<rule-id>.yaml). Each fixture marks the
 * lines that must be reported with `# expect: <rule-id>`; the test asserts that lint reports
 * exactly those (rule id and line), nothing else (but other rules' `info` notes), and that every
 * rule of the catalogue has a fixture. Each test's name quotes the spec sentence the rule enforces.
 */
import { readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { RULES } from "../../src/lint/index.js";
import { FIXTURES, expectedFindings, findings, lintFile, read } from "../support/lint.js";

const fixtureFiles = readdirSync(FIXTURES).filter((f) => f.endsWith(".yaml"));

describe("the rule catalogue", () => {
  it("has unique kebab-case ids, a severity, a description, a spec sentence and a hint for every rule", () => {
    const ids = RULES.map((r) => r.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const r of RULES) {
      expect(r.id).toMatch(/^[a-z]+(-[a-z]+)*$/);
      expect(["error", "warning", "info"]).toContain(r.severity);
      expect(r.description.length).toBeGreaterThan(10);
      expect(r.spec.length).toBeGreaterThan(10);
      expect(r.hint.length).toBeGreaterThan(10);
    }
  });
  it("every rule has a broken fixture, and every fixture belongs to a rule", () => {
    const ids = RULES.map((r) => `${r.id}.yaml`).sort();
    expect(ids.filter((f) => !fixtureFiles.includes(f))).toEqual([]);
    expect(fixtureFiles.filter((f) => !ids.includes(f))).toEqual([]);
  });
});

describe.each(RULES.map((r) => [r.id, r.spec, r] as const))("%s", (id, spec, rule) => {
  it(`enforces: "${spec}"`, async () => {
    const url = new URL(`${id}.yaml`, FIXTURES);
    const text = read(url);
    const want = expectedFindings(text);
    expect(
      want.some((w) => w.startsWith(`${id}@`)),
      "the fixture marks at least one line with its own rule",
    ).toBe(true);
    const { loader, rules } = await lintFile(fileURLToPath(url));
    expect(loader, "fixtures are schema-valid: only the lint rule is broken").toEqual([]);
    // another rule's `info` is a note, not a finding (build-indexes-after-copy notes every start on
    // 1.17+ with a 6.0+ source): it has its own fixture; warnings and errors are all compared
    expect(findings(rules.filter((d) => d.rule === id || d.severity !== "info"))).toEqual(want);
    for (const d of rules.filter((x) => x.rule === id)) {
      expect(d.severity).toBe(rule.severity);
      expect(d.column).toBeGreaterThanOrEqual(1);
      expect(d.message.length).toBeGreaterThan(10);
      expect(d.hint?.length ?? 0).toBeGreaterThan(5);
    }
  });
});
