/**
 * One broken runbook per rule (test/fixtures/lint/<rule-id>.yaml). Each fixture marks the
 * lines that must be reported with `# expect: <rule-id>`; the test asserts that lint reports
 * exactly those (rule id and line), nothing else (but other rules' `info` notes), and that every
 * rule of the catalogue has a fixture. Each test's name quotes the spec sentence the rule enforces.
 */
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { RULES } from "../../src/lint/index.js";
import { SEQUENCE_RULES } from "../../src/steps/index.js";
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
  // issue 40, point 6: the state model's rules were reported from src/steps, their metadata kept in src/lint
  it("a state-model rule's metadata sits beside the step kind code that reports it", () => {
    const src = (p: string) => readFileSync(new URL(`../../src/${p}`, import.meta.url), "utf8");
    // the kinds' rules are the catalogue's entries, not copies
    for (const r of SEQUENCE_RULES) expect(RULES).toContain(r);
    expect(SEQUENCE_RULES.map((r) => r.id)).toEqual(
      expect.arrayContaining(["start-twice", "command-impossible-state"]),
    );
    // src/lint states none of them again
    const lint = src("lint/sequence.ts");
    expect(SEQUENCE_RULES.filter((r) => lint.includes(`id: "${r.id}"`)).map((r) => r.id)).toEqual([]);
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

// issue 26: "`database: "orders.*"` in a filter is not flagged as a likely regex"
describe("filter-name-looks-like-regex: at the field, with the fix it most likely means", () => {
  it("says what each name selects and what to write instead", async () => {
    const { rules } = await lintFile(fileURLToPath(new URL("filter-name-looks-like-regex.yaml", FIXTURES)));
    const got = rules
      .filter((d) => d.rule === "filter-name-looks-like-regex")
      .map((d) => ({ line: d.line, column: d.column, message: d.message, hint: d.hint }));
    expect(got).toEqual([
      {
        line: 16,
        column: 52,
        message:
          "collection `logs_*` looks like a pattern, but `collections` lists exact names: it selects only a collection named `logs_*`.",
        hint: "Match collections by pattern with `collectionsRegex: { pattern: ... }` on the entry; `collections` lists exact names.",
      },
      {
        line: 17,
        column: 23,
        message:
          "database `sales.customers` looks like a namespace (database.collection), but `database` matches one name exactly (and a database name cannot contain `.`): this entry selects nothing you meant.",
        hint: "A database name holds no `.`: write `database: sales` and put the collection part in `collections` (a name) or `collectionsRegex` (a pattern).",
      },
      {
        line: 19,
        column: 23,
        message:
          "database `orders.*` looks like a pattern, but `database` matches one name exactly (and a database name cannot contain `.`): this entry selects nothing you meant.",
        hint: "To select every collection of `orders`, write `database: orders`; for a pattern use `databaseRegex` / `collectionsRegex` (`{ pattern, options }`).",
      },
    ]);
  });
});
