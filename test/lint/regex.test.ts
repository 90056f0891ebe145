import { describe, expect, it } from "vitest";
import { badOptionLetters, compileServiceRegex, listSelects, selector } from "../../src/runbook/namespaces.js";

// "A regex is `{ pattern, options }`, options any of `i`, `m`, `s`, `x`." (service-facts.md,
// "Filter entry"; the fields are `databaseRegex` and `collectionsRegex`)
describe("service regular expressions", () => {
  it.each([
    "^cust",
    "^(orders|invoices)$",
    "a{2,3}",
    "[]a]",
    "\\d+\\.log$",
    "(?i)^cust",
    "a++b",
    "(?>ab|a)c",
    "\\Aorders\\z",
    "(?P<name>x)(?P=name)",
  ])("accepts PCRE pattern %s", (p) => {
    expect(compileServiceRegex(p).ok).toBe(true);
  });
  it.each(["^cust(omers", "*orders", "[z-a]", "a{3,2}", "orders)", "x\\"])("rejects %s", (p) => {
    const r = compileServiceRegex(p);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.unsupported).toBe(false);
  });
  it("does not judge PCRE constructs JavaScript lacks", () => {
    const r = compileServiceRegex("(a(?R)?b)");
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.unsupported).toBe(true);
  });
  it("applies i, m, s and x", () => {
    const r = compileServiceRegex("^ cust  # customers\n omers$", "xi");
    expect(r.ok && r.regex.test("CUSTOMERS")).toBe(true);
  });
  it("finds unknown and repeated option letters", () => {
    expect(badOptionLetters("imsx")).toEqual({ unknown: [], repeated: [] });
    expect(badOptionLetters("igi")).toEqual({ unknown: ["g"], repeated: ["i"] });
  });
});

describe("filter selection", () => {
  it("is certain for names, and unsure when a pattern cannot be judged", () => {
    const list = [
      selector({ database: "sales", collections: ["orders"] }, 0),
      selector({ database: "crm", collectionsRegex: { pattern: "^cust" } }, 1),
    ];
    expect(listSelects(list, "sales", "orders").selected).toBe(true);
    expect(listSelects(list, "sales", "invoices").selected).toBe(false);
    expect(listSelects(list, "crm", "customers").selected).toBe(true);
    expect(listSelects(list, "crm", "leads").selected).toBe(false);
    const unsure = [selector({ database: "crm", collectionsRegex: { pattern: "(a(?R)?b)" } }, 0)];
    expect(listSelects(unsure, "crm", "leads").selected).toBeUndefined();
  });
  it("a database-only entry selects all collections of that database", () => {
    expect(listSelects([selector({ database: "sales" }, 0)], "sales", "anything").selected).toBe(true);
  });
});
